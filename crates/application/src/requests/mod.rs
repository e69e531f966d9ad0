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

use crate::error::{OrNotFound, ServiceError};
use crate::services::Adapters;
use consular_domain::document::checklist;
use consular_domain::policy::requests as policy;
use consular_domain::{
    Action, AppointmentEntry, ChecklistItem, CitizenId, Document, DocumentId, DocumentStatus, HistoryEntry,
    Principal, RequestId, ServiceRequest, ServiceTypeId, StaffId, Subject,
};
use consular_ports::{
    AppointmentRepository, CitizenRepository, Clock, DocumentRepository, IdempotencyRepository, Message,
    Note, QueueGroup, RequestRepository, ServiceTypeRepository, StaffRepository,
};
use std::sync::Arc;
use time::OffsetDateTime;

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
/// now, so that every response agrees with the `overdue` filter (a submission's answer
/// at its submission, which its replays repeat).
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

    /// The request as its submission answered it: judged at its submission, so that a
    /// replay repeats the first answer.
    fn as_submitted(request: ServiceRequest) -> Self {
        let submitted_at = request.submitted_at;
        RequestView::at(request, submitted_at)
    }
}

/// One item of a request's timeline, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimelineItem {
    History(HistoryEntry),
    Message(Message),
    /// Only in the timelines staff and admins read.
    Note(Note),
    /// A document of the request was uploaded, verified, rejected or deleted.
    Document(DocumentEvent),
    /// A booking linked to the request was made, moved, cancelled or attended.
    Appointment(AppointmentEntry),
}

/// Something that happened to one of a request's documents, deleted ones included: a
/// citizen's history does not rewrite itself (docs/documents.md "States").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentEvent {
    pub at: OffsetDateTime,
    pub document_id: DocumentId,
    /// The document kind (`passport_photo`).
    pub kind: String,
    /// What happened: `Uploaded`, `Verified`, `Rejected` or `Deleted`.
    pub status: DocumentStatus,
    /// Who did it (unknown only for a deletion recorded before who deleted was kept).
    pub actor: Option<Subject>,
    /// A rejection's reason.
    pub reason: Option<String>,
}

impl DocumentEvent {
    /// The upload, the decision if there was one, and the deletion if there was one.
    fn of(document: &Document) -> Vec<DocumentEvent> {
        let uploaded = DocumentEvent {
            at: document.created_at,
            document_id: document.id,
            kind: document.kind.clone(),
            status: DocumentStatus::Uploaded,
            actor: Some(document.uploaded_by),
            reason: None,
        };
        let decided = match (document.decided_at, document.decision()) {
            (Some(at), Some(decision)) => Some(DocumentEvent {
                at,
                status: decision,
                actor: document.decided_by,
                reason: document.rejection_reason.as_ref().map(|r| r.as_str().to_owned()),
                ..uploaded.clone()
            }),
            _ => None,
        };
        let deleted = document.deleted_at.map(|at| DocumentEvent {
            at,
            status: DocumentStatus::Deleted,
            actor: document.deleted_by,
            ..uploaded.clone()
        });
        std::iter::once(uploaded).chain(decided).chain(deleted).collect()
    }
}

impl TimelineItem {
    pub fn at(&self) -> OffsetDateTime {
        match self {
            TimelineItem::History(h) => h.at,
            TimelineItem::Message(m) => m.created_at,
            TimelineItem::Note(n) => n.created_at,
            TimelineItem::Document(d) => d.at,
            TimelineItem::Appointment(a) => a.at,
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
    /// One line per document kind the service type requires (docs/documents.md
    /// "Checklist and approval gate").
    pub required_documents: Vec<ChecklistItem>,
}

/// A staff member's queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queue {
    pub staff_id: StaffId,
    pub groups: Vec<QueueGroup>,
}

/// The ports the request use cases need.
#[derive(Clone)]
pub struct RequestPorts {
    pub requests: Arc<dyn RequestRepository>,
    /// The bookings linked to a request, for its timeline.
    pub appointments: Arc<dyn AppointmentRepository>,
    pub citizens: Arc<dyn CitizenRepository>,
    pub service_types: Arc<dyn ServiceTypeRepository>,
    pub staff: Arc<dyn StaffRepository>,
    pub documents: Arc<dyn DocumentRepository>,
    pub idempotency: Arc<dyn IdempotencyRepository>,
    pub clock: Arc<dyn Clock>,
}

impl<D> From<&Adapters<D>> for RequestPorts
where
    D: RequestRepository
        + AppointmentRepository
        + CitizenRepository
        + ServiceTypeRepository
        + StaffRepository
        + DocumentRepository
        + IdempotencyRepository
        + 'static,
{
    fn from(adapters: &Adapters<D>) -> Self {
        let db = &adapters.database;
        RequestPorts {
            requests: db.clone(),
            appointments: db.clone(),
            citizens: db.clone(),
            service_types: db.clone(),
            staff: db.clone(),
            documents: db.clone(),
            idempotency: db.clone(),
            clock: adapters.clock.clone(),
        }
    }
}

#[derive(Clone)]
pub struct RequestService {
    ports: RequestPorts,
}

impl RequestService {
    pub fn new(ports: RequestPorts) -> Self {
        RequestService { ports }
    }

    /// The request's required-documents checklist, from its live documents.
    async fn checklist(&self, request: &ServiceRequest) -> Result<Vec<ChecklistItem>, ServiceError> {
        let required = self
            .ports
            .service_types
            .get(request.service_type_id)
            .await?
            .map(|t| t.required_documents)
            .unwrap_or_default();
        let documents = self.ports.documents.for_request(request.id).await?;
        Ok(checklist(&required, &documents))
    }

    async fn fetch(&self, id: RequestId) -> Result<ServiceRequest, ServiceError> {
        self.ports.requests.get(id).await.or_not_found()
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
