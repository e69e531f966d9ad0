//! Service requests: submission, the workflow, internal notes, the message thread and
//! staff queues (docs/requests.md). Who may do what is the domain's access policy
//! (`consular_domain::policy::requests`): a citizen sees their own requests; staff and
//! admins those of their mission (global admins all). Internal notes never reach a
//! citizen.

mod notes_messages;
mod queries;
mod submit;
#[cfg(test)]
mod tests;
mod transitions;

use crate::ServiceError;
use consular_domain::policy::requests as policy;
use consular_domain::{
    Action, CitizenId, HistoryEntry, Principal, RequestId, ServiceRequest, ServiceTypeId, StaffId,
};
use consular_ports::{
    CitizenRepository, Clock, IdempotencyRepository, Message, Note, OutboxEvent, QueueGroup,
    RequestRepository, ServiceTypeRepository, StaffRepository,
};
use std::sync::Arc;
use time::OffsetDateTime;
use uuid::Uuid;

pub const RESOURCE: &str = "service_request";

/// What a submission asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRequest {
    /// Required from staff and admins; a citizen submits for themself.
    pub citizen_id: Option<CitizenId>,
    pub service_type_id: ServiceTypeId,
}

/// A change asked through `PATCH /requests/{id}/status`, as sent: the use case parses it
/// into a domain `RequestChange` (the reason rule included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusChange {
    pub action: Option<Action>,
    pub reason: Option<String>,
    /// `Some(None)` unassigns; `Some(Some(id))` reassigns.
    pub assignee: Option<Option<StaffId>>,
}

/// A request as of the use case's clock: `overdue` is judged at the injected `Clock`'s
/// now, so that every response agrees with the `overdue` filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestView {
    pub request: ServiceRequest,
    /// Open and past its SLA.
    pub overdue: bool,
}

impl RequestView {
    fn at(request: ServiceRequest, now: OffsetDateTime) -> Self {
        let overdue = request.is_overdue(now);
        RequestView { request, overdue }
    }
}

/// One item of a request's timeline, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimelineItem {
    History(HistoryEntry),
    Message(Message),
    /// Only in the timelines staff and admins read.
    Note(Note),
}

impl TimelineItem {
    pub fn at(&self) -> OffsetDateTime {
        match self {
            TimelineItem::History(h) => h.at,
            TimelineItem::Message(m) => m.created_at,
            TimelineItem::Note(n) => n.created_at,
        }
    }
}

/// A request with its stage history and timeline, as the caller may see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestDetails {
    pub request: ServiceRequest,
    /// Open and past its SLA, at the use case's clock.
    pub overdue: bool,
    pub history: Vec<HistoryEntry>,
    pub timeline: Vec<TimelineItem>,
}

/// A staff member's queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queue {
    pub staff_id: StaffId,
    pub groups: Vec<QueueGroup>,
}

#[derive(Clone)]
pub struct RequestService {
    requests: Arc<dyn RequestRepository>,
    citizens: Arc<dyn CitizenRepository>,
    service_types: Arc<dyn ServiceTypeRepository>,
    staff: Arc<dyn StaffRepository>,
    idempotency: Arc<dyn IdempotencyRepository>,
    clock: Arc<dyn Clock>,
}

fn event(
    kind: &str,
    request: &ServiceRequest,
    payload: serde_json::Value,
    now: OffsetDateTime,
) -> OutboxEvent {
    OutboxEvent {
        id: Uuid::now_v7(),
        kind: kind.to_owned(),
        aggregate_id: request.id.as_uuid(),
        payload,
        created_at: now,
    }
}

impl RequestService {
    pub fn new(
        requests: Arc<dyn RequestRepository>,
        citizens: Arc<dyn CitizenRepository>,
        service_types: Arc<dyn ServiceTypeRepository>,
        staff: Arc<dyn StaffRepository>,
        idempotency: Arc<dyn IdempotencyRepository>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        RequestService { requests, citizens, service_types, staff, idempotency, clock }
    }

    async fn fetch(&self, id: RequestId) -> Result<ServiceRequest, ServiceError> {
        self.requests.get(id).await?.ok_or(ServiceError::NotFound)
    }

    /// The request, if the caller may read it (and its thread).
    async fn readable(&self, actor: &Principal, id: RequestId) -> Result<ServiceRequest, ServiceError> {
        let request = self.fetch(id).await?;
        policy::read(actor, request.citizen_id, request.mission_id)?;
        Ok(request)
    }

    /// The request, if the caller may work on it (change it, write or read its notes);
    /// the scope is checked before the request is looked up.
    async fn workable(&self, actor: &Principal, id: RequestId) -> Result<ServiceRequest, ServiceError> {
        policy::work(actor)?;
        let request = self.fetch(id).await?;
        policy::work_on(actor, request.citizen_id, request.mission_id)?;
        Ok(request)
    }
}
