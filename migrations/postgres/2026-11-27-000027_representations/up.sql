-- Representations: who acts for whom (PostgreSQL; docs/representation.md).
-- Forward-only; the SQLite tree holds the same table with SQLite types.
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
    id uuid NOT NULL,
    dependant_id uuid NOT NULL,
    representative_id uuid NOT NULL,
    mission_id uuid NOT NULL,
    kind text NOT NULL,
    service_type_ids jsonb NULL,
    valid_from date NOT NULL,
    valid_until date NULL,
    evidence_document_id uuid NOT NULL,
    created_by_kind text NOT NULL,
    created_by_id uuid NOT NULL,
    created_at timestamptz NOT NULL,
    ended_at timestamptz NULL,
    ended_by_kind text NULL,
    ended_by_id uuid NULL,
    end_reason text NULL,
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
        CHECK (jsonb_typeof(service_type_ids) = 'array' AND jsonb_array_length(service_type_ids) BETWEEN 1 AND 50),
    CONSTRAINT representations_valid_check CHECK (valid_until >= valid_from),
    CONSTRAINT representations_created_by_kind_check CHECK (created_by_kind IN ('admin', 'staff', 'citizen')),
    CONSTRAINT representations_ended_by_kind_check CHECK (ended_by_kind IN ('admin', 'staff', 'citizen')),
    -- Ended all at once: when, by whom and why, or none of them.
    CONSTRAINT representations_ended_check CHECK (
        (ended_at IS NULL) = (ended_by_kind IS NULL)
        AND (ended_at IS NULL) = (ended_by_id IS NULL)
        AND (ended_at IS NULL) = (end_reason IS NULL)
    ),
    CONSTRAINT representations_end_reason_check CHECK (char_length(end_reason) BETWEEN 1 AND 500)
);
-- One representation not ended per dependant, representative and kind, enforced by the
-- database: of two creations at once, the second insert fails and is answered 409 with
-- the first's id. It also serves `between` (a dependant and a representative).
CREATE UNIQUE INDEX representations_one_open ON representations (dependant_id, representative_id, kind)
    WHERE ended_at IS NULL;
-- What a representative holds (`held_by`, `between`). Not partial: an erasure of the
-- representative finds their ended representations through it too.
CREATE INDEX representations_representative_idx ON representations (representative_id, dependant_id);
-- A dependant's representations, newest first (and an erasure of the dependant).
CREATE INDEX representations_dependant_idx ON representations (dependant_id, id);

-- Nothing is written for an erased citizen (migration 000025): a representation naming
-- one, as dependant or as representative, is refused (`citizen_erased`, which the adapter
-- maps to "not found"). `citizen_not_erased()` reads `citizen_id`, which this table has
-- not; this function checks both parties the same way, each with a key-share lock on the
-- citizen's row (what the foreign keys take anyway; 000025 says why not a share lock), so
-- an insert racing an erasure of either party is erased with the rest or refused.
CREATE FUNCTION representation_parties_not_erased() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    party uuid;
    erased timestamptz;
BEGIN
    FOREACH party IN ARRAY ARRAY[NEW.dependant_id, NEW.representative_id] LOOP
        SELECT erased_at INTO erased FROM citizens WHERE id = party FOR KEY SHARE;
        IF erased IS NOT NULL THEN
            RAISE EXCEPTION 'citizen_erased: citizen % was erased', party;
        END IF;
    END LOOP;
    RETURN NEW;
END
$$;

CREATE TRIGGER representations_parties_not_erased BEFORE INSERT ON representations
    FOR EACH ROW EXECUTE FUNCTION representation_parties_not_erased();
