//! What every write stores besides the change itself.

use crate::IdempotencyRecord;
use consular_domain::AuditRecord;
use time::OffsetDateTime;

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
