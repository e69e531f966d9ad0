//! What every write stores besides the change itself.

use crate::{IdempotencyRecord, RepoError};
use consular_domain::{AuditRecord, DomainEvent};
use serde_json::Value;
use time::OffsetDateTime;

/// A domain event (`request.submitted`, `message.posted`, ...) in the transactional
/// outbox, for notification delivery to consume: a row of `outbox_events`, in the stored
/// form `DomainEvent` describes. The adapters store and read it as it is; only
/// [`OutboxEvent::new`] makes one and [`OutboxEvent::event`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxEvent {
    pub id: uuid::Uuid,
    /// An [`EventKind`](consular_domain::notification::EventKind)'s name
    /// (`request.submitted`, `appointment.booked`, ...).
    pub kind: String,
    /// The request the event is about when there is one (so that a request's events form
    /// one stream), else the object itself (`DomainEvent::aggregate_id`).
    pub aggregate_id: uuid::Uuid,
    pub payload: Value,
    pub created_at: OffsetDateTime,
}

impl OutboxEvent {
    /// `event` as raised at `created_at`, with a fresh, time-ordered id.
    pub fn new(event: &DomainEvent, created_at: OffsetDateTime) -> Result<Self, RepoError> {
        let payload = event
            .payload()
            .map_err(|e| RepoError::Other(format!("a {} event cannot be stored: {e}", event.kind())))?;
        Ok(OutboxEvent {
            id: uuid::Uuid::now_v7(),
            kind: event.kind().as_str().to_owned(),
            aggregate_id: event.aggregate_id(),
            payload,
            created_at,
        })
    }

    /// The domain event stored; an error for a kind this version does not know or a
    /// payload that is not its kind's.
    pub fn event(&self) -> Result<DomainEvent, serde_json::Error> {
        DomainEvent::decode(&self.kind, self.aggregate_id, &self.payload)
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
