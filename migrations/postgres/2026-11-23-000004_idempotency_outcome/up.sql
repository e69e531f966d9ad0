-- Idempotency records keep the outcome of a creation as the core knows it — the created
-- resource's id and a JSON snapshot of it — instead of an HTTP response (status, headers,
-- body): the HTTP edge derives status and headers again when it replays
-- (docs/architecture.md, "Writes"). Forward-only; the SQLite tree holds the same change.
--
-- Records of the old shape cannot be replayed by the new code. They live 24 hours at most
-- and no release has shipped with them, so they are dropped rather than converted
-- (docs/operations.md, "Migrations").
DELETE FROM idempotency_keys;
ALTER TABLE idempotency_keys DROP COLUMN status;
ALTER TABLE idempotency_keys DROP COLUMN headers;
ALTER TABLE idempotency_keys RENAME COLUMN body TO outcome;
ALTER TABLE idempotency_keys ADD COLUMN resource_id uuid NOT NULL;
