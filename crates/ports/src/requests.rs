use crate::{Consistency, RepoError, WriteMeta};
use async_trait::async_trait;
use consular_domain::{
    AppointmentEntry, CitizenId, Document, HistoryEntry, MissionId, Page, PageRequest, RequestId,
    RequestStatus, ServiceRequest, ServiceTypeId, StaffId, Subject,
};
use time::OffsetDateTime;
use uuid::Uuid;

/// Which requests a listing shows; every filter present must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestFilter {
    pub mission_id: Option<MissionId>,
    pub citizen_id: Option<CitizenId>,
    /// Any of these statuses (empty: all).
    pub statuses: Vec<RequestStatus>,
    pub service_type_id: Option<ServiceTypeId>,
    /// `submitted_at >= submitted_from`.
    pub submitted_from: Option<OffsetDateTime>,
    /// `submitted_at < submitted_to`.
    pub submitted_to: Option<OffsetDateTime>,
    pub assignee_id: Option<StaffId>,
    /// `Some(true)`: open and `sla_due_at < overdue_at`; `Some(false)`: the others.
    pub overdue: Option<bool>,
    /// The instant "overdue" is judged at (now).
    pub overdue_at: Option<OffsetDateTime>,
    /// Only requests of these service types (a representative's mandate,
    /// docs/representation.md "Acting"); `None`: any.
    pub within_services: Option<Vec<ServiceTypeId>>,
}

/// One group of a staff member's queue: their open requests of one service type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueGroup {
    pub service_type_id: ServiceTypeId,
    pub count: i64,
    pub oldest_submitted_at: OffsetDateTime,
    pub overdue: i64,
}

/// A staff-only note on a request.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Note {
    pub id: Uuid,
    pub request_id: RequestId,
    pub author: Subject,
    pub body: String,
    pub created_at: OffsetDateTime,
}

/// A message of a request's thread between the citizen and the mission's staff.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Message {
    pub id: Uuid,
    pub request_id: RequestId,
    pub author: Subject,
    /// Whom the author wrote for, when acting for someone (docs/representation.md
    /// "Traceability").
    #[serde(default)]
    pub on_behalf_of: Option<CitizenId>,
    pub body: String,
    pub created_at: OffsetDateTime,
}

/// A request with everything its detail shows, read from one snapshot
/// ([`RequestRepository::detail`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    pub request: ServiceRequest,
    /// The document kinds its service type requires.
    pub required_documents: Vec<String>,
    /// Stage history, oldest first.
    pub history: Vec<HistoryEntry>,
    /// The whole thread, oldest first.
    pub messages: Vec<Message>,
    /// The staff notes, oldest first, when they were asked for.
    pub notes: Option<Vec<Note>>,
    /// Its documents, tombstones included (the timeline keeps a deleted document's
    /// history; the checklist counts live ones only), oldest first.
    pub documents: Vec<Document>,
    /// The changes of the bookings linked to it.
    pub appointments: Vec<AppointmentEntry>,
}

/// Service requests with their stage history, notes and messages.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait RequestRepository: Send + Sync {
    /// The active staff member of `mission` assigned to `service_type` with the fewest
    /// open requests (ties: the smallest id); `None` when nobody is assigned.
    async fn least_loaded_staff(
        &self,
        mission: MissionId,
        service_type: ServiceTypeId,
    ) -> Result<Option<StaffId>, RepoError>;
    /// Inserts a new request with its first history entry, in one transaction with `meta`.
    async fn insert(
        &self,
        request: &ServiceRequest,
        first: &HistoryEntry,
        meta: &WriteMeta,
    ) -> Result<(), RepoError>;
    /// Replaces the stored request if its version is still `expected_version`, appending
    /// `entry` to its history when given (a pure reassignment appends none).
    async fn update(
        &self,
        request: &ServiceRequest,
        expected_version: i64,
        entry: Option<HistoryEntry>,
        meta: &WriteMeta,
    ) -> Result<(), RepoError>;
    async fn get(&self, id: RequestId) -> Result<Option<ServiceRequest>, RepoError>;
    /// The request with its service type's required documents, history, messages, notes
    /// (only when `notes`), documents (tombstones too) and booking changes, read in one snapshot on one
    /// connection (docs/requests.md "Reading"); `None` when there is no such request.
    async fn detail(&self, id: RequestId, notes: bool) -> Result<Option<RequestRecord>, RepoError>;
    /// Requests newest first (id descending), before `page.after`, through indexes only
    /// (keyset, no OFFSET, no count). Tolerant: a read replica may serve it ([`Consistency`]).
    async fn list(
        &self,
        filter: RequestFilter,
        page: PageRequest,
        consistency: Consistency,
    ) -> Result<Page<ServiceRequest>, RepoError>;
    /// The open requests assigned to `staff`, grouped by service type (by type id);
    /// overdue counts those with `sla_due_at < now`.
    async fn queue(&self, staff: StaffId, now: OffsetDateTime) -> Result<Vec<QueueGroup>, RepoError>;
    async fn add_note(&self, note: &Note, meta: &WriteMeta) -> Result<(), RepoError>;
    /// Notes oldest first (id ascending), after `page.after`.
    async fn notes(&self, request: RequestId, page: PageRequest) -> Result<Page<Note>, RepoError>;
    async fn add_message(&self, message: &Message, meta: &WriteMeta) -> Result<(), RepoError>;
    /// Messages oldest first (id ascending), after `page.after`.
    async fn messages(&self, request: RequestId, page: PageRequest) -> Result<Page<Message>, RepoError>;
}
