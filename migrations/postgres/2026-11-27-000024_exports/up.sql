-- Exports of a citizen's data (PostgreSQL; docs/data-protection.md "Export").
-- Forward-only; the SQLite tree holds the same table with SQLite types.
--
-- One row per export asked for. A node building it holds a lease (`claimed_by`,
-- `locked_until`); a node that dies leaves it `running` until the lease expires and
-- another node takes it again. A ready export's archive is in the blob store under
-- `blob_key` until `expires_at`; the hourly sweep then deletes it and the row becomes
-- `expired` (the row stays: the citizen can still read that it existed).
CREATE TABLE exports (
    id uuid NOT NULL,
    citizen_id uuid NOT NULL,
    mission_id uuid NOT NULL,
    requested_by_kind text NOT NULL,
    requested_by_id uuid NOT NULL,
    state text NOT NULL,
    created_at timestamptz NOT NULL,
    started_at timestamptz NULL,
    finished_at timestamptz NULL,
    expires_at timestamptz NULL,
    blob_key text NULL,
    size_bytes bigint NULL,
    failure text NULL,
    claimed_by text NULL,
    locked_until timestamptz NULL,
    CONSTRAINT exports_pkey PRIMARY KEY (id),
    CONSTRAINT exports_citizen_id_fkey FOREIGN KEY (citizen_id) REFERENCES citizens (id),
    CONSTRAINT exports_mission_id_fkey FOREIGN KEY (mission_id) REFERENCES missions (id),
    CONSTRAINT exports_state_check CHECK (state IN ('pending', 'running', 'ready', 'failed', 'expired')),
    CONSTRAINT exports_ready_check CHECK ((state = 'ready') = (blob_key IS NOT NULL))
);
-- One running (pending or running) export per citizen, enforced by the database: of two
-- requests at once, the second insert fails and is answered 409 with the first's id.
CREATE UNIQUE INDEX exports_one_running ON exports (citizen_id) WHERE state IN ('pending', 'running');
-- What the builders claim (the oldest pending, or running with an expired lease) and
-- what the sweep expires.
CREATE INDEX exports_state_idx ON exports (state, id);
