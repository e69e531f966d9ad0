-- Foundation schema (SQLite). Migrations are forward-only: there is no down.sql, a
-- mistake is corrected by a new migration. The PostgreSQL tree holds the same schema with
-- native types; keep both trees in step.
--
-- SQLite has no uuid or timestamp type: uuids are stored as lower-case hyphenated text and
-- instants as fixed-width RFC 3339 UTC text with six fractional digits
-- (2026-11-22T10:00:00.123456Z), so that text order is time order. Tables are STRICT, so
-- a value of the wrong storage class is refused as PostgreSQL would refuse it.
--
-- Constraints are named explicitly: the adapter maps a violated constraint name to a
-- stable business name (crates/adapters/db/src/error.rs).

CREATE TABLE missions (
    id TEXT NOT NULL,
    code TEXT NOT NULL,
    name TEXT NOT NULL,
    country TEXT NOT NULL,
    city TEXT NOT NULL,
    timezone TEXT NOT NULL,
    version INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CONSTRAINT missions_pkey PRIMARY KEY (id),
    CONSTRAINT missions_code UNIQUE (code)
) STRICT;

CREATE TABLE api_clients (
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    principal_kind TEXT NOT NULL,
    principal_id TEXT NOT NULL,
    mission_id TEXT NULL,
    scopes TEXT NOT NULL,
    secret_hash BLOB NOT NULL,
    status TEXT NOT NULL,
    version INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CONSTRAINT api_clients_pkey PRIMARY KEY (id),
    CONSTRAINT api_clients_mission_id_fkey FOREIGN KEY (mission_id) REFERENCES missions (id),
    CONSTRAINT api_clients_principal_kind_check CHECK (principal_kind IN ('admin', 'staff', 'citizen')),
    CONSTRAINT api_clients_status_check CHECK (status IN ('active', 'disabled'))
) STRICT;
CREATE INDEX api_clients_mission_id_idx ON api_clients (mission_id);

-- One row per one-time bootstrap step (`first_admin_client`, ...): the primary key makes
-- the step happen once even when several nodes start at the same moment.
CREATE TABLE bootstrap_markers (
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    CONSTRAINT bootstrap_markers_pkey PRIMARY KEY (name)
) STRICT;

CREATE TABLE refresh_tokens (
    hash BLOB NOT NULL,
    client_id TEXT NOT NULL,
    family_id TEXT NOT NULL,
    scopes TEXT NOT NULL,
    access_jti TEXT NOT NULL,
    access_expires_at TEXT NOT NULL,
    issued_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    spent_at TEXT NULL,
    revoked_at TEXT NULL,
    CONSTRAINT refresh_tokens_pkey PRIMARY KEY (hash),
    CONSTRAINT refresh_tokens_client_id_fkey FOREIGN KEY (client_id) REFERENCES api_clients (id)
) STRICT;
CREATE INDEX refresh_tokens_family_id_idx ON refresh_tokens (family_id);
CREATE INDEX refresh_tokens_client_id_idx ON refresh_tokens (client_id);
CREATE INDEX refresh_tokens_expires_at_idx ON refresh_tokens (expires_at);

-- `subject` is the access token's jti (kind access_token) or the client id (kind client).
CREATE TABLE revocations (
    id TEXT NOT NULL,
    kind TEXT NOT NULL,
    subject TEXT NOT NULL,
    expires_at TEXT NULL,
    created_at TEXT NOT NULL,
    CONSTRAINT revocations_pkey PRIMARY KEY (id),
    CONSTRAINT revocations_kind_subject UNIQUE (kind, subject),
    CONSTRAINT revocations_kind_check CHECK (kind IN ('access_token', 'client')),
    -- An access-token revocation ends with the token; a client revocation never ends.
    CONSTRAINT revocations_expiry_check CHECK ((kind = 'access_token') = (expires_at IS NOT NULL))
) STRICT;
CREATE INDEX revocations_created_at_idx ON revocations (created_at);

-- `headers` is a JSON array of [name, value] pairs.
CREATE TABLE idempotency_keys (
    owner TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status INTEGER NOT NULL,
    headers TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    CONSTRAINT idempotency_keys_pkey PRIMARY KEY (owner, key)
) STRICT;
-- For the hourly purge of expired records.
CREATE INDEX idempotency_keys_expires_at_idx ON idempotency_keys (expires_at);

-- `changed_fields` is a JSON array of field names.
CREATE TABLE audit_events (
    id TEXT NOT NULL,
    at TEXT NOT NULL,
    actor_kind TEXT NULL,
    actor_id TEXT NULL,
    client_id TEXT NULL,
    action TEXT NOT NULL,
    resource_type TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    changed_fields TEXT NOT NULL,
    CONSTRAINT audit_events_pkey PRIMARY KEY (id),
    CONSTRAINT audit_events_actor_check CHECK ((actor_kind IS NULL) = (actor_id IS NULL)),
    CONSTRAINT audit_events_actor_kind_check CHECK (actor_kind IN ('admin', 'staff', 'citizen'))
) STRICT;
CREATE INDEX audit_events_resource_idx ON audit_events (resource_type, resource_id, id);
CREATE INDEX audit_events_actor_idx ON audit_events (actor_id, id);

CREATE TABLE signing_keys (
    kid TEXT NOT NULL,
    private_pkcs8 BLOB NOT NULL,
    public_key BLOB NOT NULL,
    created_at TEXT NOT NULL,
    CONSTRAINT signing_keys_pkey PRIMARY KEY (kid)
) STRICT;
