-- One live document per citizen, request and kind, enforced by the database
-- (PostgreSQL; docs/documents.md "Re-upload"). Forward-only; the SQLite tree holds the
-- same change with SQLite types.
--
-- The use case checks the rule before it streams the bytes, but two uploads of one kind
-- running at once both passed that check and both were kept. The index makes the second
-- insert fail (`documents_one_live_kind`, mapped to its business name in
-- crates/adapters/db/src/documents/mod.rs); the use case answers it 409
-- `document_already_present` naming the winner and removes the loser's blob.
--
-- "Live" is what the rule counts: `uploaded` (awaiting review) or `verified`; a rejected
-- document or a tombstone blocks nothing. A document attached to no request is one of
-- the citizen's documents "of no request": the missing request counts as one value
-- (all-zero uuid, never a request id), so that two such uploads of a kind collide too.
--
-- Before the index can exist, the duplicates the race left are resolved the way the rule
-- would have: per citizen, request and kind, the verified document stays (else the
-- first uploaded, the smallest id); the others become tombstones, as a deletion makes
-- them (status `deleted`, `deleted_at` now, a new version). Their bytes are then
-- unreferenced and the hourly orphan sweep removes them (docs/operations.md).
UPDATE documents
SET status = 'deleted', deleted_at = now(), updated_at = now(), version = version + 1
WHERE id IN (
    SELECT id FROM (
        SELECT id, row_number() OVER (
            PARTITION BY citizen_id, request_id, kind
            ORDER BY (status = 'verified') DESC, id
        ) AS rank
        FROM documents
        WHERE status IN ('uploaded', 'verified')
    ) AS ranked
    WHERE rank > 1
);
CREATE UNIQUE INDEX documents_one_live_kind ON documents (
    citizen_id, coalesce(request_id, '00000000-0000-0000-0000-000000000000'::uuid), kind
) WHERE status IN ('uploaded', 'verified');
