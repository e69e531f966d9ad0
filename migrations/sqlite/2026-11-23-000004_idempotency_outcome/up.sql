-- Idempotency records keep the outcome of a creation as the core knows it — the created
-- resource's id and a JSON snapshot of it — instead of an HTTP response (status, headers,
-- body): the HTTP edge derives status and headers again when it replays
-- (docs/architecture.md, "Writes"). Forward-only; the PostgreSQL tree holds the same change.
--
-- Records of the old shape cannot be replayed by the new code. They live 24 hours at most
-- and no release has shipped with them, so they are dropped rather than converted
-- (docs/operations.md, "Migrations"). SQLite cannot add a NOT NULL column without a
-- default to a table, even an empty one, so the table is rebuilt.
DROP TABLE idempotency_keys;
CREATE TABLE idempotency_keys (
    owner TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    outcome TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    CONSTRAINT idempotency_keys_pkey PRIMARY KEY (owner, key)
) STRICT;
-- For the hourly purge of expired records.
CREATE INDEX idempotency_keys_expires_at_idx ON idempotency_keys (expires_at);
