//! Domain events: what a change of a request, a document or an appointment tells the rest
//! of the system. The state machines return them (`ServiceRequest::submit` and `change`,
//! `Document::verify`, `Appointment::cancel`, ...); the use cases store them in the
//! transactional outbox, in the change's own transaction, with `OutboxEvent::new`
//! (docs/architecture.md "Writes: change, audit, events and idempotency in one transaction");
//! the notification worker decodes each one and matches on its variant
//! (docs/notifications.md "Who hears what").

use crate::text_enum::text_enum;
use crate::{
    Appointment, AppointmentChange, AppointmentId, CancelledBy, CitizenId, Document, DocumentId, MissionId,
    PrincipalKind, RequestId, RequestStatus, ServiceTypeId, SlotId, StaffId,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;
use uuid::Uuid;

/// Writes [`DomainEvent`], [`EventKind`] and [`DomainEvent::kind`] from one list, so that
/// each event's stored name is written once: the variant's serde tag and its kind's text
/// are the same literal.
macro_rules! domain_events {
    ($($(#[$doc:meta])* $variant:ident = $text:literal { $($fields:tt)* })+) => {
        /// A domain event, one variant per [`EventKind`].
        ///
        /// **Stored form** (`outbox_events`, through `OutboxEvent`): the `kind` column is the
        /// serde tag (the variant's name, `request.submitted`, ...) and the `payload` column
        /// is its content, a JSON object of the variant's fields under their own names
        /// (`DomainEvent::payload`, `DomainEvent::decode`). The events about a request
        /// (`request.*`, `message.posted`) do not repeat their request in the payload: it is
        /// the row's `aggregate_id` (`request_id` is skipped when writing and taken from the
        /// aggregate when reading). These are the names and shapes the events have always
        /// been stored with, so every row already in the outbox decodes, and a new row is
        /// byte for byte what earlier versions wrote; a field added to an event must be
        /// optional for the same reason. Times are RFC 3339.
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(tag = "kind", content = "payload")]
        pub enum DomainEvent {
            $($(#[$doc])* #[serde(rename = $text)] $variant { $($fields)* },)+
        }

        text_enum!(
            /// The kinds of domain events in the outbox (`OutboxEvent::kind`), the variants of
            /// [`DomainEvent`] by name; among them the reminder the day before an appointment,
            /// which no write produces: a daily sweep does.
            EventKind ("event kind") {
                $($variant = $text,)+
            }
        );

        impl DomainEvent {
            /// Its kind, the name it is stored under.
            pub fn kind(&self) -> EventKind {
                match self {
                    $(DomainEvent::$variant { .. } => EventKind::$variant,)+
                }
            }
        }
    };
}

domain_events! {
    /// A request was submitted (`ServiceRequest::submit`).
    RequestSubmitted = "request.submitted" {
        #[serde(skip_serializing)]
        request_id: RequestId,
        citizen_id: CitizenId,
        service_type_id: ServiceTypeId,
        mission_id: MissionId,
    }
    /// A request moved to another status, with the reason given (`ServiceRequest::change`).
    RequestStatusChanged = "request.status_changed" {
        #[serde(skip_serializing)]
        request_id: RequestId,
        #[serde(with = "status_text")]
        from: RequestStatus,
        #[serde(with = "status_text")]
        to: RequestStatus,
        reason: Option<String>,
    }
    /// A request moved to its next stage (`ServiceRequest::change`).
    RequestStageAdvanced = "request.stage_advanced" {
        #[serde(skip_serializing)]
        request_id: RequestId,
        from_stage: usize,
        to_stage: usize,
        /// The name of the stage it is at now.
        stage: Option<String>,
    }
    /// A request was assigned to someone else, or to nobody (`ServiceRequest::submit`,
    /// `change`, `reassign`).
    RequestAssigned = "request.assigned" {
        #[serde(skip_serializing)]
        request_id: RequestId,
        assignee_id: Option<StaffId>,
        previous_assignee_id: Option<StaffId>,
    }
    /// Someone wrote on a request's message thread (internal notes raise no event).
    MessagePosted = "message.posted" {
        #[serde(skip_serializing)]
        request_id: RequestId,
        message_id: Uuid,
        author_kind: PrincipalKind,
        /// The citizen the request belongs to.
        citizen_id: CitizenId,
    }
    /// A document was uploaded (`Document::upload`).
    DocumentUploaded = "document.uploaded" {
        #[serde(flatten)]
        document: DocumentRef,
        media_type: String,
    }
    /// Staff verified a document (`Document::verify`).
    DocumentVerified = "document.verified" {
        #[serde(flatten)]
        document: DocumentRef,
    }
    /// Staff rejected a document, with the reason the citizen reads (`Document::reject`).
    DocumentRejected = "document.rejected" {
        #[serde(flatten)]
        document: DocumentRef,
        reason: String,
    }
    /// A document became a tombstone (`Document::delete`).
    DocumentDeleted = "document.deleted" {
        #[serde(flatten)]
        document: DocumentRef,
    }
    /// A seat was booked (`Appointment::book`).
    AppointmentBooked = "appointment.booked" {
        #[serde(flatten)]
        appointment: AppointmentRef,
    }
    /// A booking moved to another slot (`Appointment::reschedule`); `appointment` is at
    /// its new time.
    AppointmentRescheduled = "appointment.rescheduled" {
        #[serde(flatten)]
        appointment: AppointmentRef,
        from_slot_id: SlotId,
    }
    /// The citizen or staff cancelled a booking (`Appointment::cancel`).
    AppointmentCancelled = "appointment.cancelled" {
        #[serde(flatten)]
        appointment: AppointmentRef,
        cancelled_by: CancelledBy,
    }
    /// The mission closed or shrank a slot and cancelled the booking
    /// (`Appointment::cancel_by_mission`).
    AppointmentCancelledByMission = "appointment.cancelled_by_mission" {
        #[serde(flatten)]
        appointment: AppointmentRef,
    }
    /// Staff recorded that the citizen came (`Appointment::record_attendance`).
    AppointmentAttended = "appointment.attended" {
        #[serde(flatten)]
        appointment: AppointmentRef,
    }
    /// Staff recorded that the citizen did not come (`Appointment::record_attendance`).
    AppointmentNoShow = "appointment.no_show" {
        #[serde(flatten)]
        appointment: AppointmentRef,
    }
    /// The day before a booked appointment, written by the reminder sweep
    /// (docs/notifications.md "Delivery").
    AppointmentReminder = "appointment.reminder" {
        #[serde(flatten)]
        appointment: AppointmentRef,
    }
}

/// The document a document event is about, as every such event carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentRef {
    pub document_id: DocumentId,
    pub citizen_id: CitizenId,
    pub request_id: Option<RequestId>,
    /// The document's kind (`passport_photo`).
    pub kind: String,
}

impl DocumentRef {
    pub fn of(document: &Document) -> Self {
        DocumentRef {
            document_id: document.id,
            citizen_id: document.citizen_id,
            request_id: document.request_id,
            kind: document.kind.clone(),
        }
    }
}

/// The appointment an appointment event is about, as the change left it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppointmentRef {
    pub appointment_id: AppointmentId,
    pub citizen_id: CitizenId,
    pub mission_id: MissionId,
    pub slot_id: SlotId,
    pub request_id: Option<RequestId>,
    #[serde(with = "time::serde::rfc3339")]
    pub starts_at: OffsetDateTime,
}

impl AppointmentRef {
    pub fn of(appointment: &Appointment) -> Self {
        AppointmentRef {
            appointment_id: appointment.id,
            citizen_id: appointment.citizen_id,
            mission_id: appointment.mission_id,
            slot_id: appointment.slot_id,
            request_id: appointment.request_id,
            starts_at: appointment.starts_at,
        }
    }
}

/// A request's status as its text (`in_review`), as the outbox has always stored it.
mod status_text {
    use crate::RequestStatus;
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(status: &RequestStatus, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(status.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<RequestStatus, D::Error> {
        String::deserialize(deserializer)?.parse().map_err(D::Error::custom)
    }
}

/// The events whose request is their row's `aggregate_id` rather than a payload field.
fn request_is_aggregate(kind: EventKind) -> bool {
    use EventKind as E;
    matches!(
        kind,
        E::RequestSubmitted
            | E::RequestStatusChanged
            | E::RequestStageAdvanced
            | E::RequestAssigned
            | E::MessagePosted
    )
}

/// What an event is about: one request, document or appointment.
enum About<'a> {
    Request(RequestId),
    Document(&'a DocumentRef),
    Appointment(&'a AppointmentRef),
}

impl DomainEvent {
    fn about(&self) -> About<'_> {
        use DomainEvent as E;
        match self {
            E::RequestSubmitted { request_id, .. }
            | E::RequestStatusChanged { request_id, .. }
            | E::RequestStageAdvanced { request_id, .. }
            | E::RequestAssigned { request_id, .. }
            | E::MessagePosted { request_id, .. } => About::Request(*request_id),
            E::DocumentUploaded { document, .. }
            | E::DocumentVerified { document }
            | E::DocumentRejected { document, .. }
            | E::DocumentDeleted { document } => About::Document(document),
            E::AppointmentBooked { appointment }
            | E::AppointmentRescheduled { appointment, .. }
            | E::AppointmentCancelled { appointment, .. }
            | E::AppointmentCancelledByMission { appointment }
            | E::AppointmentAttended { appointment }
            | E::AppointmentNoShow { appointment }
            | E::AppointmentReminder { appointment } => About::Appointment(appointment),
        }
    }

    /// The request the event is about, if any (a document or an appointment may be
    /// attached to one).
    pub fn request_id(&self) -> Option<RequestId> {
        match self.about() {
            About::Request(id) => Some(id),
            About::Document(document) => document.request_id,
            About::Appointment(appointment) => appointment.request_id,
        }
    }

    /// What the outbox files the event under: its request when there is one, so that a
    /// request's events form one stream handled in order, else the document or the
    /// appointment itself.
    pub fn aggregate_id(&self) -> Uuid {
        let own = match self.about() {
            About::Request(id) => id.as_uuid(),
            About::Document(document) => document.document_id.as_uuid(),
            About::Appointment(appointment) => appointment.appointment_id.as_uuid(),
        };
        self.request_id().map_or(own, |request| request.as_uuid())
    }

    /// The document of a `document.*` event.
    pub fn document(&self) -> Option<&DocumentRef> {
        match self.about() {
            About::Document(document) => Some(document),
            _ => None,
        }
    }

    /// The appointment of an `appointment.*` event.
    pub fn appointment(&self) -> Option<&AppointmentRef> {
        match self.about() {
            About::Appointment(appointment) => Some(appointment),
            _ => None,
        }
    }

    /// The stored change of an appointment this event records (its history entry's kind);
    /// `None` for the reminder, which changes nothing, and for other events.
    pub fn appointment_change(&self) -> Option<AppointmentChange> {
        use AppointmentChange as C;
        use DomainEvent as E;
        match self {
            E::AppointmentBooked { .. } => Some(C::Booked),
            E::AppointmentRescheduled { .. } => Some(C::Rescheduled),
            E::AppointmentCancelled { .. } => Some(C::Cancelled),
            E::AppointmentCancelledByMission { .. } => Some(C::CancelledByMission),
            E::AppointmentAttended { .. } => Some(C::Attended),
            E::AppointmentNoShow { .. } => Some(C::NoShow),
            _ => None,
        }
    }

    /// The `payload` column of the event's stored form (see the type).
    pub fn payload(&self) -> Result<Value, serde_json::Error> {
        let mut tagged = serde_json::to_value(self)?;
        Ok(tagged.get_mut("payload").map(Value::take).unwrap_or_default())
    }

    /// The event stored as `kind`, `aggregate_id` and `payload`; an error for a kind this
    /// version does not know, or a payload that is not that kind's.
    pub fn decode(kind: &str, aggregate_id: Uuid, payload: &Value) -> Result<DomainEvent, serde_json::Error> {
        let mut payload = payload.clone();
        if let Ok(kind) = kind.parse::<EventKind>()
            && request_is_aggregate(kind)
            && let Value::Object(fields) = &mut payload
        {
            fields.insert("request_id".to_owned(), Value::String(aggregate_id.to_string()));
        }
        let mut tagged = serde_json::Map::new();
        tagged.insert("kind".to_owned(), Value::String(kind.to_owned()));
        tagged.insert("payload".to_owned(), payload);
        serde_json::from_value(Value::Object(tagged))
    }
}

#[cfg(test)]
mod tests;
