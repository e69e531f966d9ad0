-- Foundation schema (PostgreSQL). Migrations are forward-only: there is no down.sql, a
-- mistake is corrected by a new migration. The SQLite tree holds the same schema with
-- SQLite types; keep both trees in step.
--
-- Constraints are named explicitly: the adapter maps a violated constraint name to a
-- stable business name (crates/adapters/db/src/error.rs).

CREATE TABLE missions (
    id uuid NOT NULL,
    code text NOT NULL,
    name text NOT NULL,
    country text NOT NULL,
    city text NOT NULL,
    timezone text NOT NULL,
    version bigint NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT missions_pkey PRIMARY KEY (id),
    CONSTRAINT missions_code UNIQUE (code)
);

CREATE TABLE api_clients (
    id uuid NOT NULL,
    name text NOT NULL,
    principal_kind text NOT NULL,
    principal_id uuid NOT NULL,
    mission_id uuid NULL,
    scopes text NOT NULL,
    secret_hash bytea NOT NULL,
    status text NOT NULL,
    version bigint NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CONSTRAINT api_clients_pkey PRIMARY KEY (id),
    CONSTRAINT api_clients_mission_id_fkey FOREIGN KEY (mission_id) REFERENCES missions (id),
    CONSTRAINT api_clients_principal_kind_check CHECK (principal_kind IN ('admin', 'staff', 'citizen')),
    CONSTRAINT api_clients_status_check CHECK (status IN ('active', 'disabled'))
);
CREATE INDEX api_clients_mission_id_idx ON api_clients (mission_id);

-- One row per one-time bootstrap step (`first_admin_client`, ...): the primary key makes
-- the step happen once even when several nodes start at the same moment.
CREATE TABLE bootstrap_markers (
    name text NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT bootstrap_markers_pkey PRIMARY KEY (name)
);

CREATE TABLE refresh_tokens (
    hash bytea NOT NULL,
    client_id uuid NOT NULL,
    family_id uuid NOT NULL,
    scopes text NOT NULL,
    access_jti uuid NOT NULL,
    access_expires_at timestamptz NOT NULL,
    issued_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    spent_at timestamptz NULL,
    revoked_at timestamptz NULL,
    CONSTRAINT refresh_tokens_pkey PRIMARY KEY (hash),
    CONSTRAINT refresh_tokens_client_id_fkey FOREIGN KEY (client_id) REFERENCES api_clients (id)
);
CREATE INDEX refresh_tokens_family_id_idx ON refresh_tokens (family_id);
CREATE INDEX refresh_tokens_client_id_idx ON refresh_tokens (client_id);
CREATE INDEX refresh_tokens_expires_at_idx ON refresh_tokens (expires_at);

-- `subject` is the access token's jti (kind access_token) or the client id (kind client).
CREATE TABLE revocations (
    id uuid NOT NULL,
    kind text NOT NULL,
    subject uuid NOT NULL,
    expires_at timestamptz NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT revocations_pkey PRIMARY KEY (id),
    CONSTRAINT revocations_kind_subject UNIQUE (kind, subject),
    CONSTRAINT revocations_kind_check CHECK (kind IN ('access_token', 'client')),
    -- An access-token revocation ends with the token; a client revocation never ends.
    CONSTRAINT revocations_expiry_check CHECK ((kind = 'access_token') = (expires_at IS NOT NULL))
);
CREATE INDEX revocations_created_at_idx ON revocations (created_at);

-- `headers` is a JSON array of [name, value] pairs.
CREATE TABLE idempotency_keys (
    owner uuid NOT NULL,
    key text NOT NULL,
    fingerprint text NOT NULL,
    status integer NOT NULL,
    headers text NOT NULL,
    body text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT idempotency_keys_pkey PRIMARY KEY (owner, key)
);
-- For the hourly purge of expired records.
CREATE INDEX idempotency_keys_expires_at_idx ON idempotency_keys (expires_at);

-- `changed_fields` is a JSON array of field names.
CREATE TABLE audit_events (
    id uuid NOT NULL,
    at timestamptz NOT NULL,
    actor_kind text NULL,
    actor_id uuid NULL,
    client_id uuid NULL,
    action text NOT NULL,
    resource_type text NOT NULL,
    resource_id uuid NOT NULL,
    changed_fields text NOT NULL,
    CONSTRAINT audit_events_pkey PRIMARY KEY (id),
    CONSTRAINT audit_events_actor_check CHECK ((actor_kind IS NULL) = (actor_id IS NULL)),
    CONSTRAINT audit_events_actor_kind_check CHECK (actor_kind IN ('admin', 'staff', 'citizen'))
);
CREATE INDEX audit_events_resource_idx ON audit_events (resource_type, resource_id, id);
CREATE INDEX audit_events_actor_idx ON audit_events (actor_id, id);

CREATE TABLE signing_keys (
    kid text NOT NULL,
    private_pkcs8 bytea NOT NULL,
    public_key bytea NOT NULL,
    created_at timestamptz NOT NULL,
    CONSTRAINT signing_keys_pkey PRIMARY KEY (kid)
);
