use consular_domain::{AuditRecord, ClientId};
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

/// A domain event (`request.submitted`, `message.posted`, ...) in the transactional
/// outbox, for notification delivery to consume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxEvent {
    pub id: uuid::Uuid,
    /// `request.submitted`, `request.status_changed`, `request.stage_advanced`,
    /// `request.assigned`, `message.posted`.
    pub kind: String,
    /// The request the event is about.
    pub aggregate_id: uuid::Uuid,
    pub payload: serde_json::Value,
    pub created_at: OffsetDateTime,
}

/// What every write stores besides the change itself, in the same transaction: the
/// audit entries, the domain events (outbox) and, when the request carried an
/// `Idempotency-Key`, its response. A write that fails stores none of them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WriteMeta {
    pub audit: Vec<AuditRecord>,
    pub events: Vec<OutboxEvent>,
    pub idempotency: Option<IdempotencyRecord>,
}
