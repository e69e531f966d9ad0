-- Signing-key rotation and encryption at rest (SQLite; docs/operations.md "Signing keys").
-- Forward-only; the PostgreSQL tree holds the same schema with PostgreSQL types.
--
-- How each private key is stored: 'clear' (PKCS#8 DER, as every earlier version wrote it)
-- or 'aes-256-gcm' (sealed under the configured key-encryption key: nonce, ciphertext and
-- tag, with the kid as associated data). The bytes stay in `private_pkcs8`, whose name is
-- kept so that the migration is additive: a node of the previous build keeps reading and
-- inserting clear keys (the default says what it inserts). Rotation adds rows and
-- retirement deletes them: no other column is needed.
ALTER TABLE signing_keys
    ADD COLUMN private_key_protection TEXT NOT NULL DEFAULT 'clear'
        CONSTRAINT signing_keys_protection_check CHECK (private_key_protection IN ('clear', 'aes-256-gcm'));
