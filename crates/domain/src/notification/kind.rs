//! What a notification tells and whom an event concerns: the table of
//! docs/notifications.md "Who hears what" ([`audience`]).

use crate::PrincipalKind;
use crate::event::EventKind;
use crate::text_enum::text_enum;

text_enum!(
    /// What a notification tells its recipient.
    NotificationKind ("notification kind") {
        RequestSubmitted = "request_submitted",
        RequestStatusChanged = "request_status_changed",
        RequestStageAdvanced = "request_stage_advanced",
        /// To the staff member a request was assigned to.
        RequestAssigned = "request_assigned",
        /// To the citizen: staff wrote on their request.
        MessageFromStaff = "message_from_staff",
        /// To the assigned staff member: the citizen wrote.
        MessageFromCitizen = "message_from_citizen",
        DocumentVerified = "document_verified",
        DocumentRejected = "document_rejected",
        AppointmentBooked = "appointment_booked",
        AppointmentRescheduled = "appointment_rescheduled",
        AppointmentCancelled = "appointment_cancelled",
        AppointmentCancelledByMission = "appointment_cancelled_by_mission",
        AppointmentReminder = "appointment_reminder",
    }
);

text_enum!(
    /// The groups a citizen turns email on or off by (in-app is always on).
    Category ("notification category") {
        /// Submission, status changes, stage advances.
        Requests = "requests",
        Messages = "messages",
        Documents = "documents",
        Appointments = "appointments",
        /// Staff only: work assigned to them.
        Assignments = "assignments",
    }
);

impl NotificationKind {
    pub fn category(self) -> Category {
        use NotificationKind as K;
        match self {
            K::RequestSubmitted | K::RequestStatusChanged | K::RequestStageAdvanced => Category::Requests,
            K::RequestAssigned => Category::Assignments,
            K::MessageFromStaff | K::MessageFromCitizen => Category::Messages,
            K::DocumentVerified | K::DocumentRejected => Category::Documents,
            K::AppointmentBooked
            | K::AppointmentRescheduled
            | K::AppointmentCancelled
            | K::AppointmentCancelledByMission
            | K::AppointmentReminder => Category::Appointments,
        }
    }
}

/// Who a notification goes to, relative to the event's request or appointment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Audience {
    /// The citizen the request or appointment belongs to.
    Citizen,
    /// The staff member the request is assigned to (after the event), if any.
    Assignee,
}

/// Who hears an event, and what they are told: the table of docs/notifications.md "Who
/// hears what". `author` is who wrote a `message.posted` (ignored for other events).
/// Events nobody hears (uploads the citizen made themself, deletions, attendance) are
/// `None`.
pub fn audience(event: EventKind, author: Option<PrincipalKind>) -> Option<(NotificationKind, Audience)> {
    use Audience::{Assignee, Citizen};
    use EventKind as E;
    use NotificationKind as K;
    let heard = match event {
        E::RequestSubmitted => (K::RequestSubmitted, Citizen),
        E::RequestStatusChanged => (K::RequestStatusChanged, Citizen),
        E::RequestStageAdvanced => (K::RequestStageAdvanced, Citizen),
        E::RequestAssigned => (K::RequestAssigned, Assignee),
        E::MessagePosted => match author {
            Some(PrincipalKind::Citizen) => (K::MessageFromCitizen, Assignee),
            Some(PrincipalKind::Staff | PrincipalKind::Admin) => (K::MessageFromStaff, Citizen),
            None => return None,
        },
        E::DocumentVerified => (K::DocumentVerified, Citizen),
        E::DocumentRejected => (K::DocumentRejected, Citizen),
        E::AppointmentBooked => (K::AppointmentBooked, Citizen),
        E::AppointmentRescheduled => (K::AppointmentRescheduled, Citizen),
        E::AppointmentCancelled => (K::AppointmentCancelled, Citizen),
        E::AppointmentCancelledByMission => (K::AppointmentCancelledByMission, Citizen),
        E::AppointmentReminder => (K::AppointmentReminder, Citizen),
        E::DocumentUploaded | E::DocumentDeleted | E::AppointmentAttended | E::AppointmentNoShow => {
            return None;
        }
    };
    Some(heard)
}
