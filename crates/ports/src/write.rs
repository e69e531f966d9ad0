use consular_domain::{AuditRecord, ClientId};
use time::OffsetDateTime;

/// A response as it was first sent, kept so that a retried request with the same
/// `Idempotency-Key` receives exactly the same answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyRecord {
    /// The client that sent the key: keys are scoped per client.
    pub owner: ClientId,
    pub key: String,
    /// Hash of method, path and body of the first request.
    pub fingerprint: String,
    pub response: StoredResponse,
    pub created_at: OffsetDateTime,
    pub expires_at: OffsetDateTime,
}

/// What every write stores besides the change itself, in the same transaction: the
/// audit entries and, when the request carried an `Idempotency-Key`, its response.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteMeta {
    pub audit: Vec<AuditRecord>,
    pub idempotency: Option<IdempotencyRecord>,
}
