//! Notifications: who hears what, and how an email's delivery goes
//! (docs/notifications.md).
//!
//! [`audience`] is the one table that turns a domain event of the outbox into
//! notifications: which kind, to whom. Internal notes produce no event, so nothing a
//! citizen can see ever comes from one. [`EmailStatus`] and [`RetryPolicy`] are the life
//! of an email (GOV.UK Notify's statuses): temporary failures are retried with
//! exponential backoff and jitter until a horizon, then become permanent.

mod inbox;

pub use inbox::{
    Details, Email, EmailPreferences, EventFacts, Language, Notification, Person, Produced, REMINDER_LEAD,
    Recipient, produce, reminder_due,
};

pub use crate::event::EventKind;

use crate::PrincipalKind;
use crate::text_enum::text_enum;
use time::{Duration, OffsetDateTime};

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

// ------------------------------------------------------------------------------- email

text_enum!(
    /// Where an email stands (GOV.UK Notify's statuses).
    EmailStatus ("email status") {
        /// Waiting for its first or next attempt.
        Pending = "pending",
        /// A sender holds it (a lease until `locked_until`).
        Sending = "sending",
        /// The SMTP server accepted it.
        Delivered = "delivered",
        /// The last attempt failed in a way that may pass; another is scheduled.
        TemporaryFailure = "temporary_failure",
        /// Refused for good (a 5xx reply), or temporary failures past the horizon.
        PermanentFailure = "permanent_failure",
    }
);

impl EmailStatus {
    /// Delivered and permanent failures are final.
    pub fn is_final(self) -> bool {
        matches!(self, EmailStatus::Delivered | EmailStatus::PermanentFailure)
    }
}

/// How an attempt to send ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    Delivered,
    /// Connection refused or dropped, a timeout, a 4xx reply: may pass.
    Temporary,
    /// A 5xx reply (e.g. 550 no such mailbox): retrying cannot help.
    Permanent,
}

/// When temporary failures are retried: `base · 2^(attempt-1)`, capped at `max_delay`,
/// each delay shortened by up to `jitter` of itself so that a backlog does not retry in
/// step, and no attempt later than `horizon` after the email was created.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    pub base: Duration,
    pub max_delay: Duration,
    /// 0.0..=1.0.
    pub jitter: f64,
    pub horizon: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            base: Duration::seconds(30),
            max_delay: Duration::hours(1),
            jitter: 0.2,
            horizon: Duration::hours(72),
        }
    }
}

/// What follows an attempt: the email's new status and, for a temporary failure still
/// within the horizon, when to try again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AfterAttempt {
    pub status: EmailStatus,
    pub next_attempt_at: Option<OffsetDateTime>,
}

impl RetryPolicy {
    /// After attempt number `attempts` (1 for the first) of an email created at
    /// `created_at` ended with `outcome` at `now`; `random` in `[0, 1)` draws the jitter.
    pub fn after(
        &self,
        outcome: AttemptOutcome,
        attempts: u32,
        created_at: OffsetDateTime,
        now: OffsetDateTime,
        random: f64,
    ) -> AfterAttempt {
        let status = match outcome {
            AttemptOutcome::Delivered => EmailStatus::Delivered,
            AttemptOutcome::Permanent => EmailStatus::PermanentFailure,
            AttemptOutcome::Temporary => {
                let next = now + self.delay(attempts, random);
                if next <= created_at + self.horizon {
                    return AfterAttempt {
                        status: EmailStatus::TemporaryFailure,
                        next_attempt_at: Some(next),
                    };
                }
                EmailStatus::PermanentFailure
            }
        };
        AfterAttempt { status, next_attempt_at: None }
    }

    /// The wait after attempt `attempts`, jitter applied.
    pub fn delay(&self, attempts: u32, random: f64) -> Duration {
        let exponent = attempts.saturating_sub(1).min(30);
        let full = self.base.checked_mul(1_i32 << exponent).unwrap_or(self.max_delay).min(self.max_delay);
        let cut = self.jitter.clamp(0.0, 1.0) * random.clamp(0.0, 1.0);
        full - full * cut
    }
}

#[cfg(test)]
mod tests;
