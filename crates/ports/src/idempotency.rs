//! Idempotency records: the outcome of a creation that carried an `Idempotency-Key`, and
//! the port that finds them again.

use crate::RepoError;
use async_trait::async_trait;
use consular_domain::ClientId;
use time::OffsetDateTime;

/// What a creation produced, as the core knows it, kept so that a retried request with
/// the same `Idempotency-Key` receives the same answer: the created resource's id and a
/// JSON snapshot of the created object (written and read by the use case that created
/// it). Nothing HTTP: the delivery layer derives status and headers from the object
/// again when it replays (docs/architecture.md, "Writes").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredOutcome {
    pub resource_id: uuid::Uuid,
    pub snapshot: serde_json::Value,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyRecord {
    /// The client that sent the key: keys are scoped per client.
    pub owner: ClientId,
    pub key: String,
    /// Hash of method, path and body of the first request.
    pub fingerprint: String,
    pub outcome: StoredOutcome,
    pub created_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
}

/// Stored outcomes of requests that carried an `Idempotency-Key`. They are written by
/// every other repository, inside the transaction of the change ([`WriteMeta`](crate::WriteMeta)).
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait IdempotencyRepository: Send + Sync {
    /// The unexpired record for `key` sent by `owner`, if any.
    async fn find(
        &self,
        owner: ClientId,
        key: &str,
        now: OffsetDateTime,
    ) -> Result<Option<IdempotencyRecord>, RepoError>;
}
