-- One live document per citizen, request and kind, enforced by the database (SQLite;
-- docs/documents.md "Re-upload"). Forward-only; the PostgreSQL tree holds the same
-- change with native types.
--
-- The use case checks the rule before it streams the bytes, but two uploads of one kind
-- running at once both passed that check and both were kept. The index makes the second
-- insert fail (SQLite reports an index on an expression by its name, "UNIQUE constraint
-- failed: index 'documents_one_live_kind'", mapped to its business name in
-- crates/adapters/db/src/documents/mod.rs); the use case answers it 409
-- `document_already_present` naming the winner and removes the loser's blob.
--
-- "Live" is what the rule counts: `uploaded` (awaiting review) or `verified`; a rejected
-- document or a tombstone blocks nothing. A document attached to no request is one of
-- the citizen's documents "of no request": the missing request counts as one value ('',
-- never a request id), so that two such uploads of a kind collide too.
--
-- Before the index can exist, the duplicates the race left are resolved the way the rule
-- would have: per citizen, request and kind, the verified document stays (else the
-- first uploaded, the smallest id); the others become tombstones, as a deletion makes
-- them (status `deleted`, `deleted_at` now in the stored format, a new version). Their
-- bytes are then unreferenced and the hourly orphan sweep removes them
-- (docs/operations.md).
UPDATE documents
SET status = 'deleted',
    deleted_at = strftime('%Y-%m-%dT%H:%M:%S', 'now') || '.000000Z',
    updated_at = strftime('%Y-%m-%dT%H:%M:%S', 'now') || '.000000Z',
    version = version + 1
WHERE id IN (
    SELECT id FROM (
        SELECT id, row_number() OVER (
            PARTITION BY citizen_id, request_id, kind
            ORDER BY (status = 'verified') DESC, id
        ) AS rank
        FROM documents
        WHERE status IN ('uploaded', 'verified')
    )
    WHERE rank > 1
);
CREATE UNIQUE INDEX documents_one_live_kind ON documents (
    citizen_id, coalesce(request_id, ''), kind
) WHERE status IN ('uploaded', 'verified');
