-- The shared service secrets (the download-URL signing key) sealed at rest like the
-- private signing keys (SQLite; docs/operations.md "Encryption at rest"). Forward-only;
-- the PostgreSQL tree holds the same schema with PostgreSQL types.
--
-- How each value is stored: 'clear' (as every earlier version wrote it) or 'aes-256-gcm'
-- (sealed under the configured key-encryption key: nonce, ciphertext and tag, with the
-- secret's name as associated data). Additive, so that a node of the previous build keeps
-- reading and inserting clear values.
ALTER TABLE service_secrets
    ADD COLUMN protection TEXT NOT NULL DEFAULT 'clear'
        CONSTRAINT service_secrets_protection_check CHECK (protection IN ('clear', 'aes-256-gcm'));
