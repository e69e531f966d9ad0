use crate::RepoError;
use async_trait::async_trait;
use consular_domain::{ClientId, ScopeSet};
use time::OffsetDateTime;
use uuid::Uuid;

/// A stored refresh token. Only the SHA-256 of the token is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshTokenRecord {
    pub hash: Vec<u8>,
    pub client_id: ClientId,
    /// All tokens descended by rotation from one grant share a family; reuse of a spent
    /// token revokes the whole family.
    pub family_id: Uuid,
    pub scopes: ScopeSet,
    /// The access token issued together with this refresh token.
    pub access_jti: Uuid,
    pub access_expires_at: OffsetDateTime,
    pub issued_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
}

/// The new refresh token that replaces a spent one; family and scopes are inherited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefreshReplacement {
    pub hash: Vec<u8>,
    pub access_jti: Uuid,
    pub access_expires_at: OffsetDateTime,
    pub issued_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefreshOutcome {
    /// The token was live and is now spent; the replacement is stored. Carries the
    /// spent record (its family and scopes).
    Rotated(RefreshTokenRecord),
    /// The token had already been spent: its whole family is now revoked.
    Reused,
    /// Unknown, expired, revoked, or another client's token.
    Invalid,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RevocationKind {
    /// One access token, refused until it would have expired anyway.
    AccessToken { jti: Uuid, expires_at: OffsetDateTime },
    /// Every token of a client (the client was disabled).
    Client { client_id: ClientId },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Revocation {
    pub id: Uuid,
    pub kind: RevocationKind,
    pub created_at: OffsetDateTime,
}

/// Refresh tokens and revocations.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait TokenRepository: Send + Sync {
    async fn insert_refresh(&self, record: &RefreshTokenRecord) -> Result<(), RepoError>;
    /// Atomically spends the refresh token `hash` of `client_id` and stores its
    /// replacement. A token that is already spent revokes its family: every refresh token
    /// of the family and every unexpired access token issued with one (as revocations).
    async fn rotate_refresh(
        &self,
        client_id: ClientId,
        hash: &[u8],
        replacement: &RefreshReplacement,
        now: OffsetDateTime,
    ) -> Result<RefreshOutcome, RepoError>;
    /// Revokes the family of refresh token `hash` if it belongs to `client_id`, with its
    /// unexpired access tokens. `Ok(false)` when there was nothing of this client's to revoke.
    async fn revoke_refresh(
        &self,
        client_id: ClientId,
        hash: &[u8],
        now: OffsetDateTime,
    ) -> Result<bool, RepoError>;
    /// Records a revocation; recording the same access token twice is not an error.
    async fn insert_revocation(&self, revocation: &Revocation) -> Result<(), RepoError>;
    /// Revocations recorded at or after `since`, oldest first (for the per-node cache).
    async fn revocations_since(&self, since: OffsetDateTime) -> Result<Vec<Revocation>, RepoError>;
    /// Every revocation that still matters at `now`: client revocations and access-token
    /// revocations whose token has not expired (to fill the cache at start).
    async fn active_revocations(&self, now: OffsetDateTime) -> Result<Vec<Revocation>, RepoError>;
    /// Whether access token `jti` of `client_id` is revoked (used when the cache is stale).
    async fn is_revoked(&self, jti: Uuid, client_id: ClientId) -> Result<bool, RepoError>;
    /// Deletes refresh tokens, revocations and idempotency records that expired before
    /// `now`; returns the count.
    async fn purge_expired(&self, now: OffsetDateTime) -> Result<u64, RepoError>;
}

/// How a stored private signing key is protected (docs/operations.md "Signing keys").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyProtection {
    /// PKCS#8 DER in clear: no key-encryption key configured, or written by an earlier
    /// version.
    Clear,
    /// Sealed with AES-256-GCM under the key-encryption key: a random 96-bit nonce, then
    /// the ciphertext and its 128-bit tag; the kid is the associated data.
    Aes256Gcm,
}

impl KeyProtection {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            KeyProtection::Clear => "clear",
            KeyProtection::Aes256Gcm => "aes-256-gcm",
        }
    }

    pub fn parse(text: &str) -> Option<KeyProtection> {
        [KeyProtection::Clear, KeyProtection::Aes256Gcm].into_iter().find(|p| p.as_str() == text)
    }
}

/// A token signing key pair (Ed25519) shared by all server nodes through the database.
/// The repository stores the private key as the opaque bytes it is given; sealing and
/// opening them is the application's business.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningKeyRecord {
    pub kid: String,
    /// The private key as stored: PKCS#8 DER, or sealed (see `protection`).
    pub private_key: Vec<u8>,
    pub protection: KeyProtection,
    /// The raw 32-byte public key.
    pub public_key: Vec<u8>,
    pub created_at: OffsetDateTime,
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait SigningKeyRepository: Send + Sync {
    /// All keys, newest first. The newest signs; all verify.
    async fn all(&self) -> Result<Vec<SigningKeyRecord>, RepoError>;
    /// The kids of all keys, newest first: what each node polls to notice a rotation or a
    /// retirement without reading the keys themselves.
    async fn kids(&self) -> Result<Vec<String>, RepoError>;
    /// Stores `key` only when no key exists yet (several nodes may start at once);
    /// `Ok(false)` when a key was already there.
    async fn insert_first(&self, key: &SigningKeyRecord) -> Result<bool, RepoError>;
    /// Stores `key` as the successor of `newest_kid` only if that is still the newest key
    /// (nodes rotating at once create one key); `Ok(false)` when another key came first.
    async fn insert_successor(&self, key: &SigningKeyRecord, newest_kid: &str) -> Result<bool, RepoError>;
    /// Replaces the private key of `kid` with `private_key` under `protection`, only while
    /// it is still stored in clear; `Ok(false)` when it no longer is (or is gone).
    async fn protect(
        &self,
        kid: &str,
        private_key: &[u8],
        protection: KeyProtection,
    ) -> Result<bool, RepoError>;
    /// Deletes the keys `kids`, except the newest key, which is never retired; returns how
    /// many went.
    async fn retire(&self, kids: &[String]) -> Result<u64, RepoError>;
}
