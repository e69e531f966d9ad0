-- Representations: who acts for whom (SQLite; docs/representation.md).
-- Forward-only; the PostgreSQL tree holds the same table with native types.
--
-- One row per representation a mission's staff created: the dependant, the citizen who
-- acts for them (`representative_id`), the kind, the services it covers
-- (`service_type_ids`: a JSON array of 1 to 50 distinct ids, sorted; NULL for every
-- service), the days it is in force (dates in the mission's time zone, inclusive), the
-- evidence the staff checked (a document of the dependant's) and who created it. Ending
-- one fills `ended_at`, `ended_by_*` and `end_reason` together; the row stays, as the
-- trace of who could act. An erasure deletes the rows where the erased citizen is either
-- party (docs/data-protection.md "Retention and erasure").
CREATE TABLE representations (
    id TEXT NOT NULL,
    dependant_id TEXT NOT NULL,
    representative_id TEXT NOT NULL,
    mission_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    service_type_ids TEXT NULL,
    valid_from TEXT NOT NULL,
    valid_until TEXT NULL,
    evidence_document_id TEXT NOT NULL,
    created_by_kind TEXT NOT NULL,
    created_by_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    ended_at TEXT NULL,
    ended_by_kind TEXT NULL,
    ended_by_id TEXT NULL,
    end_reason TEXT NULL,
    CONSTRAINT representations_pkey PRIMARY KEY (id),
    CONSTRAINT representations_dependant_id_fkey FOREIGN KEY (dependant_id) REFERENCES citizens (id),
    CONSTRAINT representations_representative_id_fkey
        FOREIGN KEY (representative_id) REFERENCES citizens (id),
    CONSTRAINT representations_mission_id_fkey FOREIGN KEY (mission_id) REFERENCES missions (id),
    CONSTRAINT representations_evidence_document_id_fkey
        FOREIGN KEY (evidence_document_id) REFERENCES documents (id),
    CONSTRAINT representations_kind_check CHECK (kind IN ('parent', 'guardian', 'authorised_representative')),
    -- Nobody represents themself.
    CONSTRAINT representations_parties_check CHECK (dependant_id <> representative_id),
    CONSTRAINT representations_service_type_ids_check
        CHECK (json_type(service_type_ids) = 'array' AND json_array_length(service_type_ids) BETWEEN 1 AND 50),
    CONSTRAINT representations_valid_from_check
        CHECK (valid_from GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    CONSTRAINT representations_valid_until_check
        CHECK (valid_until GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'),
    -- Dates as ISO text compare as dates.
    CONSTRAINT representations_valid_check CHECK (valid_until >= valid_from),
    CONSTRAINT representations_created_by_kind_check CHECK (created_by_kind IN ('admin', 'staff', 'citizen')),
    CONSTRAINT representations_ended_by_kind_check CHECK (ended_by_kind IN ('admin', 'staff', 'citizen')),
    -- Ended all at once: when, by whom and why, or none of them.
    CONSTRAINT representations_ended_check CHECK (
        (ended_at IS NULL) = (ended_by_kind IS NULL)
        AND (ended_at IS NULL) = (ended_by_id IS NULL)
        AND (ended_at IS NULL) = (end_reason IS NULL)
    ),
    CONSTRAINT representations_end_reason_check CHECK (length(end_reason) BETWEEN 1 AND 500)
) STRICT;
-- One representation not ended per dependant, representative and kind, enforced by the
-- database: of two creations at once, the second insert fails ("UNIQUE constraint failed:
-- representations.dependant_id, representations.representative_id, representations.kind",
-- mapped to its business name in crates/adapters/db/src/representations/mod.rs) and is
-- answered 409 with the first's id. It also serves `between` (a dependant and a
-- representative).
CREATE UNIQUE INDEX representations_one_open ON representations (dependant_id, representative_id, kind)
    WHERE ended_at IS NULL;
-- What a representative holds (`held_by`, `between`). Not partial: an erasure of the
-- representative finds their ended representations through it too.
CREATE INDEX representations_representative_idx ON representations (representative_id, dependant_id);
-- A dependant's representations, newest first (and an erasure of the dependant).
CREATE INDEX representations_dependant_idx ON representations (dependant_id, id);

-- Nothing is written for an erased citizen (migration 000025): a representation naming
-- one, as dependant or as representative, is refused (`citizen_erased`, which the adapter
-- maps to "not found"). SQLite runs one writer at a time (`BEGIN IMMEDIATE`), so an
-- insert either commits before an erasure starts (and is erased with the rest) or runs
-- after it and is refused here.
CREATE TRIGGER representations_parties_not_erased BEFORE INSERT ON representations
    WHEN (SELECT erased_at FROM citizens WHERE id = NEW.dependant_id) IS NOT NULL
        OR (SELECT erased_at FROM citizens WHERE id = NEW.representative_id) IS NOT NULL
BEGIN
    SELECT RAISE(ABORT, 'citizen_erased');
END;
