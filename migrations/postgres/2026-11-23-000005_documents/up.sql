-- Documents (PostgreSQL): the metadata of the identity documents citizens upload. The
-- bytes are never here: they live in the blob store under `blob_key`, a fresh key the
-- server generates before writing them (never derived from the file name, which is kept
-- as metadata only). A deleted document stays as a tombstone row (status `deleted`,
-- `deleted_at` set) for the audit log; listings never show it (docs/documents.md).
-- Forward-only; the SQLite tree holds the same schema with SQLite types; keep both
-- trees in step.
--
-- Constraints are named explicitly: the adapter maps a violated constraint name to a
-- stable business name (crates/adapters/db/src/error.rs).
CREATE TABLE documents (
    id uuid NOT NULL,
    mission_id uuid NOT NULL,
    citizen_id uuid NOT NULL,
    request_id uuid NULL,
    kind text NOT NULL,
    status text NOT NULL,
    file_name text NOT NULL,
    media_type text NOT NULL,
    size_bytes bigint NOT NULL,
    sha256 text NOT NULL,
    blob_key text NOT NULL,
    scan text NOT NULL,
    rejection_reason text NULL,
    uploaded_by_kind text NOT NULL,
    uploaded_by_id uuid NOT NULL,
    decided_by_kind text NULL,
    decided_by_id uuid NULL,
    decided_at timestamptz NULL,
    deleted_at timestamptz NULL,
    version bigint NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT documents_pkey PRIMARY KEY (id),
    -- The orphan-blob sweep asks which keys a row still references: one row per blob.
    CONSTRAINT documents_blob_key UNIQUE (blob_key),
    CONSTRAINT documents_mission_id_fkey FOREIGN KEY (mission_id) REFERENCES missions (id),
    CONSTRAINT documents_citizen_id_fkey FOREIGN KEY (citizen_id) REFERENCES citizens (id),
    CONSTRAINT documents_request_id_fkey FOREIGN KEY (request_id) REFERENCES service_requests (id),
    CONSTRAINT documents_status_check CHECK (status IN ('uploaded', 'verified', 'rejected', 'deleted')),
    CONSTRAINT documents_scan_check CHECK (scan IN ('clean', 'not_configured')),
    CONSTRAINT documents_file_name_check CHECK (char_length(file_name) BETWEEN 1 AND 255),
    CONSTRAINT documents_size_bytes_check CHECK (size_bytes > 0),
    CONSTRAINT documents_sha256_check CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    CONSTRAINT documents_blob_key_check CHECK (blob_key <> ''),
    CONSTRAINT documents_uploaded_by_kind_check CHECK (uploaded_by_kind IN ('admin', 'staff', 'citizen')),
    CONSTRAINT documents_decided_by_kind_check CHECK (decided_by_kind IN ('admin', 'staff', 'citizen')),
    -- Who decided and when are set together, by a verification or a rejection.
    CONSTRAINT documents_decided_check CHECK (
        (decided_by_kind IS NULL) = (decided_by_id IS NULL) AND (decided_by_id IS NULL) = (decided_at IS NULL)
    ),
    -- A rejection always says why (the reason stays on the tombstone).
    CONSTRAINT documents_rejection_reason_check CHECK (status <> 'rejected' OR rejection_reason IS NOT NULL),
    CONSTRAINT documents_deleted_at_check CHECK ((status = 'deleted') = (deleted_at IS NOT NULL))
);
-- The listing is newest first (id descending, keyset on id): one index per equality
-- filter, each ending with the keyset column, so a filter and `ORDER BY id DESC LIMIT n`
-- are served by one backward index scan (tombstones, few, are filtered on the way). No
-- filter at all reads the primary key backwards. The first three also cover the foreign
-- keys; `documents_request_id_idx` serves a request's documents (its checklist).
CREATE INDEX documents_mission_id_idx ON documents (mission_id, id);
CREATE INDEX documents_citizen_id_idx ON documents (citizen_id, id);
CREATE INDEX documents_request_id_idx ON documents (request_id, id);
CREATE INDEX documents_kind_idx ON documents (kind, id);
CREATE INDEX documents_status_idx ON documents (status, id);
