//! The wire of `/api/v1/requests` and `/api/v1/staff/{id}/queue`: a request, its details
//! (history, timeline, required documents), the bodies that submit, change and cancel
//! one, notes and messages, the queue, the list parameters, and the problems these
//! operations document.

use crate::wire::common::{ActorBody, RequestStatusName, StageBody, problem_response};
use consular_application::requests::{
    NewRequest, Queue, RequestDetails, RequestView, StatusChange, TimelineItem,
};
use consular_domain::{
    Action, AppointmentChange, ChecklistItem, ChecklistState, CitizenId, DocumentStatus, HistoryEntry,
    ServiceRequest, ServiceTypeId, StaffId, ValidationErrors,
};
use consular_ports::{Message, Note, RequestFilter};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// The stage a request is at.
#[derive(Debug, Serialize, ToSchema)]
pub struct CurrentStageBody {
    /// 0-based position in `stages`.
    pub index: usize,
    pub name: String,
}

/// A service request.
#[derive(Debug, Serialize, ToSchema)]
pub struct RequestBody {
    pub id: Uuid,
    pub mission_id: Uuid,
    pub citizen_id: Uuid,
    pub service_type_id: Uuid,
    pub status: RequestStatusName,
    pub current_stage: CurrentStageBody,
    /// The service type's stages as they were when the request was submitted.
    pub stages: Vec<StageBody>,
    pub assignee_id: Option<Uuid>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub submitted_at: OffsetDateTime,
    /// Submission plus the type's SLA days.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub sla_due_at: OffsetDateTime,
    /// Open and past `sla_due_at`.
    pub overdue: bool,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub closed_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

impl RequestBody {
    pub fn new(r: &ServiceRequest, overdue: bool) -> Self {
        Self::from_owned(r.clone(), overdue)
    }

    /// The body of a request the caller no longer needs: its stages' text is moved, not
    /// copied (a list page renders some twenty requests of up to four stages each).
    pub fn from_owned(r: ServiceRequest, overdue: bool) -> Self {
        RequestBody {
            id: r.id.as_uuid(),
            mission_id: r.mission_id.as_uuid(),
            citizen_id: r.citizen_id.as_uuid(),
            service_type_id: r.service_type_id.as_uuid(),
            status: r.status.into(),
            current_stage: CurrentStageBody {
                index: r.current_stage,
                name: r.stages.get(r.current_stage).map(|s| s.name.clone()).unwrap_or_default(),
            },
            stages: r
                .stages
                .into_iter()
                .map(|s| StageBody { name: s.name, description: s.description })
                .collect(),
            assignee_id: r.assignee_id.map(|s| s.as_uuid()),
            submitted_at: r.submitted_at,
            sla_due_at: r.sla_due_at,
            overdue,
            closed_at: r.closed_at,
            updated_at: r.updated_at,
        }
    }
}

impl From<RequestView> for RequestBody {
    fn from(v: RequestView) -> Self {
        RequestBody::from_owned(v.request, v.overdue)
    }
}

impl From<&RequestView> for RequestBody {
    fn from(v: &RequestView) -> Self {
        RequestBody::new(&v.request, v.overdue)
    }
}

/// One status or stage change.
#[derive(Debug, Serialize, ToSchema)]
pub struct HistoryEntryBody {
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub at: OffsetDateTime,
    pub actor: Option<ActorBody>,
    /// Whom the actor acted for (`On-Behalf-Of`: the dependant's citizen id); absent
    /// when they acted for themself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_behalf_of: Option<Uuid>,
    /// Absent for the submission.
    pub from_status: Option<RequestStatusName>,
    pub to_status: RequestStatusName,
    pub from_stage: Option<usize>,
    pub to_stage: usize,
    pub reason: Option<String>,
}

impl From<&HistoryEntry> for HistoryEntryBody {
    fn from(h: &HistoryEntry) -> Self {
        HistoryEntryBody {
            at: h.at,
            actor: h.actor.map(ActorBody::from),
            on_behalf_of: h.on_behalf_of.map(|c| c.as_uuid()),
            from_status: h.from_status.map(Into::into),
            to_status: h.to_status.into(),
            from_stage: h.from_stage,
            to_stage: h.to_stage,
            reason: h.reason.clone(),
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TimelineKind {
    Submitted,
    StatusChanged,
    StageAdvanced,
    Message,
    /// Internal notes appear only for staff and admins.
    Note,
    /// A document of the request was uploaded (`document_kind`: its kind).
    DocumentUploaded,
    /// Staff verified a document of the request.
    DocumentVerified,
    /// Staff rejected a document of the request (`text`: the reason).
    DocumentRejected,
    /// A document of the request was deleted (by its owner, staff or an admin; `actor`
    /// null for a deletion recorded before who deleted was kept). The document's earlier
    /// items stay.
    DocumentDeleted,
    /// An appointment was booked for the request (`item_id`: the appointment, with its
    /// `starts_at` and `ends_at`).
    AppointmentBooked,
    /// The appointment moved to another slot (the new times).
    AppointmentRescheduled,
    /// The citizen or staff cancelled the appointment.
    AppointmentCancelled,
    /// The mission closed or shrank the slot and cancelled the appointment.
    AppointmentCancelledByMission,
    /// Staff recorded that the citizen came.
    AppointmentAttended,
    /// Staff recorded that the citizen did not come.
    AppointmentNoShow,
}

/// One event of a request's life, oldest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct TimelineItemBody {
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub at: OffsetDateTime,
    pub kind: TimelineKind,
    pub actor: Option<ActorBody>,
    /// Whom the actor acted for (`On-Behalf-Of`: the dependant's citizen id) on a change,
    /// message, upload or booking change; absent when they acted for themself, and on
    /// notes, document decisions and deletions (those are in the audit trail).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_behalf_of: Option<Uuid>,
    /// For status changes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_status: Option<RequestStatusName>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_status: Option<RequestStatusName>,
    /// For stage changes: the stage reached.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_stage: Option<usize>,
    /// The reason of a change, or the text of a message or note.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The message, note or document id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_id: Option<Uuid>,
    /// For document events: the document kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document_kind: Option<String>,
    /// For appointment events: the appointment's times after the change (UTC).
    #[serde(skip_serializing_if = "Option::is_none", with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub starts_at: Option<OffsetDateTime>,
    #[serde(skip_serializing_if = "Option::is_none", with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub ends_at: Option<OffsetDateTime>,
}

impl TimelineItemBody {
    /// An item with only its time, kind and actor; each kind adds its own fields.
    fn new(at: OffsetDateTime, kind: TimelineKind, actor: Option<ActorBody>) -> Self {
        TimelineItemBody {
            at,
            kind,
            actor,
            on_behalf_of: None,
            from_status: None,
            to_status: None,
            to_stage: None,
            text: None,
            item_id: None,
            document_kind: None,
            starts_at: None,
            ends_at: None,
        }
    }
}

impl From<&TimelineItem> for TimelineItemBody {
    fn from(item: &TimelineItem) -> Self {
        match item {
            TimelineItem::History(h) => {
                let kind = match h.from_status {
                    None => TimelineKind::Submitted,
                    Some(from) if from != h.to_status => TimelineKind::StatusChanged,
                    Some(_) => TimelineKind::StageAdvanced,
                };
                TimelineItemBody {
                    from_status: h.from_status.map(Into::into),
                    to_status: Some(h.to_status.into()),
                    to_stage: Some(h.to_stage),
                    text: h.reason.clone(),
                    on_behalf_of: h.on_behalf_of.map(|c| c.as_uuid()),
                    ..TimelineItemBody::new(h.at, kind, h.actor.map(ActorBody::from))
                }
            }
            TimelineItem::Message(m) => TimelineItemBody {
                text: Some(m.body.clone()),
                item_id: Some(m.id),
                on_behalf_of: m.on_behalf_of.map(|c| c.as_uuid()),
                ..TimelineItemBody::new(m.created_at, TimelineKind::Message, Some(m.author.into()))
            },
            TimelineItem::Note(n) => TimelineItemBody {
                text: Some(n.body.clone()),
                item_id: Some(n.id),
                ..TimelineItemBody::new(n.created_at, TimelineKind::Note, Some(n.author.into()))
            },
            TimelineItem::Document(d) => {
                let kind = match d.status {
                    DocumentStatus::Uploaded => TimelineKind::DocumentUploaded,
                    DocumentStatus::Verified => TimelineKind::DocumentVerified,
                    DocumentStatus::Rejected => TimelineKind::DocumentRejected,
                    DocumentStatus::Deleted => TimelineKind::DocumentDeleted,
                };
                TimelineItemBody {
                    text: d.reason.clone(),
                    item_id: Some(d.document_id.as_uuid()),
                    document_kind: Some(d.kind.clone()),
                    on_behalf_of: d.on_behalf_of.map(|c| c.as_uuid()),
                    ..TimelineItemBody::new(d.at, kind, d.actor.map(Into::into))
                }
            }
            TimelineItem::Appointment(a) => {
                let kind = match a.change {
                    AppointmentChange::Booked => TimelineKind::AppointmentBooked,
                    AppointmentChange::Rescheduled => TimelineKind::AppointmentRescheduled,
                    AppointmentChange::Cancelled => TimelineKind::AppointmentCancelled,
                    AppointmentChange::CancelledByMission => TimelineKind::AppointmentCancelledByMission,
                    AppointmentChange::Attended => TimelineKind::AppointmentAttended,
                    AppointmentChange::NoShow => TimelineKind::AppointmentNoShow,
                };
                TimelineItemBody {
                    item_id: Some(a.appointment_id.as_uuid()),
                    starts_at: Some(a.starts_at),
                    ends_at: Some(a.ends_at),
                    on_behalf_of: a.on_behalf_of.map(|c| c.as_uuid()),
                    ..TimelineItemBody::new(a.at, kind, Some(a.actor.into()))
                }
            }
        }
    }
}

/// Where one required document kind stands.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChecklistStateName {
    Missing,
    Uploaded,
    Verified,
    Rejected,
}

/// One line of the required-documents checklist: the newest live document of the kind
/// decides it.
#[derive(Debug, Serialize, ToSchema)]
pub struct RequiredDocumentBody {
    pub kind: String,
    pub state: ChecklistStateName,
    pub document_id: Option<Uuid>,
    /// Why it was rejected, when it was.
    pub reason: Option<String>,
}

impl From<&ChecklistItem> for RequiredDocumentBody {
    fn from(item: &ChecklistItem) -> Self {
        let (state, reason) = match &item.state {
            ChecklistState::Missing => (ChecklistStateName::Missing, None),
            ChecklistState::Uploaded => (ChecklistStateName::Uploaded, None),
            ChecklistState::Verified => (ChecklistStateName::Verified, None),
            ChecklistState::Rejected { reason } => (ChecklistStateName::Rejected, Some(reason.clone())),
        };
        RequiredDocumentBody {
            kind: item.kind.clone(),
            state,
            document_id: item.document_id.map(|d| d.as_uuid()),
            reason,
        }
    }
}

/// A request with its stage history, timeline and required-documents checklist.
#[derive(Debug, Serialize, ToSchema)]
pub struct RequestDetailsBody {
    #[serde(flatten)]
    pub request: RequestBody,
    pub stage_history: Vec<HistoryEntryBody>,
    pub timeline: Vec<TimelineItemBody>,
    /// For every kind the service type requires, where it stands; approval needs every
    /// line `verified`.
    pub required_documents: Vec<RequiredDocumentBody>,
}

impl From<RequestDetails> for RequestDetailsBody {
    fn from(d: RequestDetails) -> Self {
        RequestDetailsBody {
            stage_history: d.history.iter().map(HistoryEntryBody::from).collect(),
            timeline: d.timeline.iter().map(TimelineItemBody::from).collect(),
            required_documents: d.required_documents.iter().map(RequiredDocumentBody::from).collect(),
            request: RequestBody::from_owned(d.request, d.overdue),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RequestList {
    pub items: Vec<RequestBody>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitRequest {
    /// The citizen the request is for: omitted by citizens (it is themself), required
    /// from staff and admins.
    pub citizen_id: Option<Uuid>,
    pub service_type_id: Uuid,
}

impl From<SubmitRequest> for NewRequest {
    fn from(s: SubmitRequest) -> Self {
        NewRequest {
            citizen_id: s.citizen_id.map(CitizenId),
            service_type_id: ServiceTypeId(s.service_type_id),
        }
    }
}

/// Either a new `status` (with a `reason`) or `advance_stage: true`; either may come with
/// an `assignee_id` (null unassigns), which may also come alone.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangeStatus {
    pub status: Option<RequestStatusName>,
    /// Move to the next stage (within `in_review` or `approved`).
    pub advance_stage: Option<bool>,
    #[schema(min_length = 1, max_length = 4000)]
    pub reason: Option<String>,
    #[serde(default, deserialize_with = "crate::wire::common::present")]
    #[schema(value_type = Option<Uuid>)]
    pub assignee_id: Option<Option<Uuid>>,
}

/// A status and `advance_stage: true` together are refused; the reason a status change
/// needs is the core's rule.
impl TryFrom<ChangeStatus> for StatusChange {
    type Error = ValidationErrors;

    fn try_from(body: ChangeStatus) -> Result<Self, ValidationErrors> {
        let action = match (body.status, body.advance_stage) {
            (Some(_), Some(true)) => {
                return Err(ValidationErrors::single(
                    "/advance_stage",
                    "conflicting",
                    "send a status or advance_stage, not both",
                ));
            }
            (Some(status), _) => Some(Action::To(status.into())),
            (None, Some(true)) => Some(Action::AdvanceStage),
            (None, _) => None,
        };
        Ok(StatusChange { action, reason: body.reason, assignee: body.assignee_id.map(|a| a.map(StaffId)) })
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelRequest {
    #[schema(min_length = 1, max_length = 4000)]
    pub reason: Option<String>,
}

/// An internal note (staff and admins only) or a message of the thread.
#[derive(Debug, Serialize, ToSchema)]
pub struct PostBody {
    pub id: Uuid,
    pub request_id: Uuid,
    pub author: ActorBody,
    /// Whom the author wrote a message for (`On-Behalf-Of`: the dependant's citizen id);
    /// absent when they wrote for themself, and on notes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_behalf_of: Option<Uuid>,
    pub body: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
}

impl From<&Note> for PostBody {
    fn from(n: &Note) -> Self {
        PostBody {
            id: n.id,
            request_id: n.request_id.as_uuid(),
            author: n.author.into(),
            on_behalf_of: None,
            body: n.body.clone(),
            created_at: n.created_at,
        }
    }
}

impl From<&Message> for PostBody {
    fn from(m: &Message) -> Self {
        PostBody {
            id: m.id,
            request_id: m.request_id.as_uuid(),
            author: m.author.into(),
            on_behalf_of: m.on_behalf_of.map(|c| c.as_uuid()),
            body: m.body.clone(),
            created_at: m.created_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PostList {
    pub items: Vec<PostBody>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewPost {
    /// 1 to 4000 characters, not only white space; tab and line breaks but no other
    /// control character.
    #[schema(
        min_length = 1,
        max_length = 4000,
        pattern = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]*$"
    )]
    pub body: String,
}

/// One service type of a queue.
#[derive(Debug, Serialize, ToSchema)]
pub struct QueueGroupBody {
    pub service_type_id: Uuid,
    pub count: i64,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub oldest_submitted_at: OffsetDateTime,
    pub overdue: i64,
}

/// A staff member's open requests by service type.
#[derive(Debug, Serialize, ToSchema)]
pub struct QueueBody {
    pub staff_id: Uuid,
    pub total: i64,
    pub groups: Vec<QueueGroupBody>,
}

impl From<&Queue> for QueueBody {
    fn from(queue: &Queue) -> Self {
        let groups: Vec<QueueGroupBody> = queue
            .groups
            .iter()
            .map(|g| QueueGroupBody {
                service_type_id: g.service_type_id.as_uuid(),
                count: g.count,
                oldest_submitted_at: g.oldest_submitted_at,
                overdue: g.overdue,
            })
            .collect();
        QueueBody { staff_id: queue.staff_id.as_uuid(), total: groups.iter().map(|g| g.count).sum(), groups }
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct RequestListParams {
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page.
    #[param(min_length = 22, max_length = 22, pattern = "^[A-Za-z0-9_-]{22}$")]
    pub cursor: Option<String>,
    /// One or more statuses, repeated (`status=submitted&status=in_review`) or comma
    /// separated (`status=submitted,in_review`; both may be mixed).
    #[serde(default, deserialize_with = "crate::wire::common::comma_separated")]
    #[param(value_type = Option<Vec<RequestStatusName>>, style = Form, explode, inline)]
    pub status: Option<Vec<RequestStatusName>>,
    pub service_type_id: Option<Uuid>,
    /// Submitted at or after this instant (RFC 3339).
    #[serde(default, with = "time::serde::rfc3339::option")]
    #[param(value_type = Option<String>, format = DateTime)]
    pub submitted_from: Option<OffsetDateTime>,
    /// Submitted before this instant (RFC 3339).
    #[serde(default, with = "time::serde::rfc3339::option")]
    #[param(value_type = Option<String>, format = DateTime)]
    pub submitted_to: Option<OffsetDateTime>,
    pub assignee_id: Option<Uuid>,
    pub citizen_id: Option<Uuid>,
    /// `true`: open and past the SLA; `false`: the others.
    pub overdue: Option<bool>,
}

/// The filter of the list; its page (`limit`, `cursor`) is read apart.
impl From<RequestListParams> for RequestFilter {
    fn from(params: RequestListParams) -> Self {
        RequestFilter {
            mission_id: None,
            citizen_id: params.citizen_id.map(CitizenId),
            statuses: params.status.unwrap_or_default().into_iter().map(Into::into).collect(),
            service_type_id: params.service_type_id.map(ServiceTypeId),
            submitted_from: params.submitted_from,
            submitted_to: params.submitted_to,
            assignee_id: params.assignee_id.map(StaffId),
            overdue: params.overdue,
            overdue_at: None,
            // Set by the use case from the caller's mandate, never by the query.
            within_services: None,
        }
    }
}

problem_response! {
    /// 409 of a submission.
    SubmitConflict = 409, "The service type is inactive, the citizen is deregistered, or the Idempotency-Key is in use";
    /// 409 of a status change.
    TransitionConflict = 409, "Not allowed from the current status (`allowed_actions` lists what is), or approval before every required document is verified (`required_documents_missing`, one entry of `errors` per kind)";
    /// 409 of a cancellation.
    CancelConflict = 409, "No longer cancellable by you";
    /// 412 of the changes of a request.
    RequestChanged = 412, "The request changed since you read it";
}
