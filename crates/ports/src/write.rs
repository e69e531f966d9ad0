//! What every write stores besides the change itself.

use crate::IdempotencyRecord;
use consular_domain::AuditRecord;
use consular_domain::notification::EventKind;
use serde_json::Value;
use time::OffsetDateTime;

/// A domain event (`request.submitted`, `message.posted`, ...) in the transactional
/// outbox, for notification delivery to consume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxEvent {
    pub id: uuid::Uuid,
    /// An [`EventKind`]'s name (`request.submitted`, `appointment.booked`, ...).
    pub kind: String,
    /// The request the event is about when there is one (so that a request's events form
    /// one stream), else the object itself.
    pub aggregate_id: uuid::Uuid,
    pub payload: Value,
    pub created_at: OffsetDateTime,
}

impl OutboxEvent {
    /// A new event with a fresh, time-ordered id.
    pub fn new(
        kind: EventKind,
        aggregate_id: uuid::Uuid,
        payload: Value,
        created_at: OffsetDateTime,
    ) -> Self {
        OutboxEvent {
            id: uuid::Uuid::now_v7(),
            kind: kind.as_str().to_owned(),
            aggregate_id,
            payload,
            created_at,
        }
    }

    /// The event with `extra`'s fields added to its payload (both JSON objects).
    pub fn with(mut self, extra: Value) -> Self {
        if let (Some(payload), Value::Object(extra)) = (self.payload.as_object_mut(), extra) {
            payload.extend(extra);
        }
        self
    }
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
