-- Signing-key rotation and encryption at rest (PostgreSQL; docs/operations.md "Signing
-- keys"). Forward-only; the SQLite tree holds the same schema with SQLite types.
--
-- How each private key is stored: 'clear' (PKCS#8 DER, as every earlier version wrote it)
-- or 'aes-256-gcm' (sealed under the configured key-encryption key: nonce, ciphertext and
-- tag, with the kid as associated data). The bytes stay in `private_pkcs8`, whose name is
-- kept so that the migration is additive: nodes of the previous build keep reading and
-- inserting clear keys during a rolling deployment (the default says what they insert).
-- Rotation adds rows and retirement deletes them: no other column is needed.
ALTER TABLE signing_keys
    ADD COLUMN private_key_protection text NOT NULL DEFAULT 'clear'
        CONSTRAINT signing_keys_protection_check CHECK (private_key_protection IN ('clear', 'aes-256-gcm'));
