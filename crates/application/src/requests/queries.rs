//! Reading requests: the list, one request with its history and timeline, and a staff
//! member's queue (docs/requests.md "Reading").

use super::service::{RequestService, RequestView};
use crate::error::{OrNotFound, ServiceError};
use crate::reads::own_writes;
use consular_domain::document::checklist;
use consular_domain::policy::requests::{self as policy, RequestReach};
use consular_domain::policy::{Listing, Owned};
use consular_domain::{AccessEntry, AccessedData};
use consular_domain::{
    AppointmentEntry, ChecklistItem, CitizenId, Document, DocumentId, DocumentStatus, HistoryEntry, Page,
    PageRequest, Principal, RequestId, ServiceRequest, StaffId, Subject,
};
use consular_ports::{Consistency, Message, Note, QueueGroup, RequestFilter};
use time::OffsetDateTime;

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
    /// Whom the actor acted for: set on an upload made for the document's owner
    /// (`Document::on_behalf_of`); a decision or deletion records it in the audit trail.
    pub on_behalf_of: Option<CitizenId>,
    /// A rejection's reason.
    pub reason: Option<String>,
}

impl DocumentEvent {
    /// The upload, the decision if there was one, and the deletion if there was one.
    pub(super) fn of(document: &Document) -> Vec<DocumentEvent> {
        let uploaded = DocumentEvent {
            at: document.created_at,
            document_id: document.id,
            kind: document.kind.clone(),
            status: DocumentStatus::Uploaded,
            actor: Some(document.uploaded_by),
            on_behalf_of: document.on_behalf_of,
            reason: None,
        };
        let decided = match (document.decided_at, document.decision()) {
            (Some(at), Some(decision)) => Some(DocumentEvent {
                at,
                status: decision,
                actor: document.decided_by,
                on_behalf_of: None,
                reason: document.rejection_reason.as_ref().map(|r| r.as_str().to_owned()),
                ..uploaded.clone()
            }),
            _ => None,
        };
        let deleted = document.deleted_at.map(|at| DocumentEvent {
            at,
            status: DocumentStatus::Deleted,
            actor: document.deleted_by,
            on_behalf_of: None,
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

impl RequestService {
    /// Newest first. A citizen sees their own requests; staff and mission admins their
    /// mission's; global admins all.
    pub async fn list(
        &self,
        actor: &Principal,
        mut filter: RequestFilter,
        page: PageRequest,
    ) -> Result<Page<RequestView>, ServiceError> {
        // Staff and admins' lists are tolerant (docs/operations.md "Read replicas"); a
        // citizen's is read current: it is small, and they open it after a notification of
        // someone else's change (their request decided), which a replica may not show yet.
        let consistency = match policy::list(actor, filter.mission_id, filter.citizen_id) {
            Listing::Within(RequestReach::Citizen(own, mission, services)) => {
                filter.citizen_id = Some(own);
                filter.mission_id = Some(mission);
                filter.within_services = services;
                Consistency::Latest
            }
            Listing::Within(RequestReach::Mission(mission)) => {
                filter.mission_id = mission;
                own_writes(actor)
            }
            Listing::Empty => return Ok(Page::empty()),
        };
        let now = self.ports.clock.now();
        if filter.overdue.is_some() {
            filter.overdue_at = Some(now);
        }
        let page = self.ports.requests.list(filter, page, consistency).await?;
        Ok(Page {
            items: page.items.into_iter().map(|r| RequestView::at(r, now)).collect(),
            next_after: page.next_after,
        })
    }

    /// The request with its stage history, its required-documents checklist and a
    /// timeline of status and stage changes, messages, document uploads and decisions,
    /// and the changes of the bookings linked to it; staff and admins also get the
    /// internal notes in it. Everything comes from one read of the repository (one
    /// snapshot, one connection: docs/requests.md "Reading"). Notes are read only for a
    /// caller who may work on requests at all, and kept only if they may work on this one.
    pub async fn get(&self, actor: &Principal, id: RequestId) -> Result<RequestDetails, ServiceError> {
        let record = self.ports.requests.detail(id, policy::work(actor).is_ok()).await.or_not_found()?;
        let request = record.request;
        let owned = Owned::from(&request);
        policy::read(actor, &owned)?;
        let notes = match policy::work_on(actor, &owned) {
            Ok(()) => record.notes.unwrap_or_default(),
            Err(_) => Vec::new(),
        };
        let mut timeline: Vec<TimelineItem> =
            record.history.iter().cloned().map(TimelineItem::History).collect();
        timeline.extend(record.messages.into_iter().map(TimelineItem::Message));
        timeline.extend(notes.into_iter().map(TimelineItem::Note));
        timeline.extend(record.documents.iter().flat_map(DocumentEvent::of).map(TimelineItem::Document));
        timeline.extend(record.appointments.into_iter().map(TimelineItem::Appointment));
        timeline.sort_by_key(TimelineItem::at);
        let required_documents = checklist(&record.required_documents, &record.documents);
        let now = self.ports.clock.now();
        let read =
            AccessEntry::of_read(actor, request.citizen_id, AccessedData::Request, request.id.as_uuid(), now);
        self.ports.access.record(read)?;
        let overdue = request.is_overdue(now);
        Ok(RequestDetails { request, overdue, history: record.history, timeline, required_documents })
    }

    /// A staff member's open requests by service type (the member themself, or an admin
    /// of their mission).
    pub async fn queue(&self, actor: &Principal, staff_id: StaffId) -> Result<Queue, ServiceError> {
        policy::work(actor)?;
        let member = self.ports.staff.get(staff_id).await.or_not_found()?;
        policy::queue(actor, member.id, member.mission_id)?;
        let groups = self.ports.requests.queue(member.id, self.ports.clock.now()).await?;
        Ok(Queue { staff_id: member.id, groups })
    }
}
