//! Notifications: who hears what, and how an email's delivery goes
//! (docs/notifications.md).
//!
//! [`audience`] is the one table that turns a domain event of the outbox into
//! notifications: which kind, to whom. Internal notes produce no event, so nothing a
//! citizen can see ever comes from one. [`EmailStatus`] and [`RetryPolicy`] are the life
//! of an email (GOV.UK Notify's statuses): temporary failures are retried with
//! exponential backoff and jitter until a horizon, then become permanent.

use crate::PrincipalKind;
use std::fmt;
use std::str::FromStr;
use time::{Duration, OffsetDateTime};

fn parse_name<T: Copy>(all: &[T], name: fn(T) -> &'static str, s: &str, what: &str) -> Result<T, String> {
    all.iter().copied().find(|v| name(*v) == s).ok_or_else(|| format!("unknown {what} `{s}`"))
}

macro_rules! names {
    ($ty:ident, $what:literal, { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $ty {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                parse_name(Self::ALL, Self::as_str, s, $what)
            }
        }
    };
}

/// The kinds of domain events in the outbox (`OutboxEvent::kind`), and the reminder the
/// day before an appointment, which no write produces: a daily sweep does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventKind {
    RequestSubmitted,
    RequestStatusChanged,
    RequestStageAdvanced,
    RequestAssigned,
    MessagePosted,
    DocumentUploaded,
    DocumentVerified,
    DocumentRejected,
    DocumentDeleted,
    AppointmentBooked,
    AppointmentRescheduled,
    AppointmentCancelled,
    AppointmentCancelledByMission,
    AppointmentAttended,
    AppointmentNoShow,
    AppointmentReminder,
}

names!(EventKind, "event kind", {
    RequestSubmitted => "request.submitted",
    RequestStatusChanged => "request.status_changed",
    RequestStageAdvanced => "request.stage_advanced",
    RequestAssigned => "request.assigned",
    MessagePosted => "message.posted",
    DocumentUploaded => "document.uploaded",
    DocumentVerified => "document.verified",
    DocumentRejected => "document.rejected",
    DocumentDeleted => "document.deleted",
    AppointmentBooked => "appointment.booked",
    AppointmentRescheduled => "appointment.rescheduled",
    AppointmentCancelled => "appointment.cancelled",
    AppointmentCancelledByMission => "appointment.cancelled_by_mission",
    AppointmentAttended => "appointment.attended",
    AppointmentNoShow => "appointment.no_show",
    AppointmentReminder => "appointment.reminder",
});

/// What a notification tells its recipient.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotificationKind {
    RequestSubmitted,
    RequestStatusChanged,
    RequestStageAdvanced,
    /// To the staff member a request was assigned to.
    RequestAssigned,
    /// To the citizen: staff wrote on their request.
    MessageFromStaff,
    /// To the assigned staff member: the citizen wrote.
    MessageFromCitizen,
    DocumentVerified,
    DocumentRejected,
    AppointmentBooked,
    AppointmentRescheduled,
    AppointmentCancelled,
    AppointmentCancelledByMission,
    AppointmentReminder,
}

names!(NotificationKind, "notification kind", {
    RequestSubmitted => "request_submitted",
    RequestStatusChanged => "request_status_changed",
    RequestStageAdvanced => "request_stage_advanced",
    RequestAssigned => "request_assigned",
    MessageFromStaff => "message_from_staff",
    MessageFromCitizen => "message_from_citizen",
    DocumentVerified => "document_verified",
    DocumentRejected => "document_rejected",
    AppointmentBooked => "appointment_booked",
    AppointmentRescheduled => "appointment_rescheduled",
    AppointmentCancelled => "appointment_cancelled",
    AppointmentCancelledByMission => "appointment_cancelled_by_mission",
    AppointmentReminder => "appointment_reminder",
});

/// The groups a citizen turns email on or off by (in-app is always on).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Submission, status changes, stage advances.
    Requests,
    Messages,
    Documents,
    Appointments,
    /// Staff only: work assigned to them.
    Assignments,
}

names!(Category, "notification category", {
    Requests => "requests",
    Messages => "messages",
    Documents => "documents",
    Appointments => "appointments",
    Assignments => "assignments",
});

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

/// Where an email stands (GOV.UK Notify's statuses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EmailStatus {
    /// Waiting for its first or next attempt.
    Pending,
    /// A sender holds it (a lease until `locked_until`).
    Sending,
    /// The SMTP server accepted it.
    Delivered,
    /// The last attempt failed in a way that may pass; another is scheduled.
    TemporaryFailure,
    /// Refused for good (a 5xx reply), or temporary failures past the horizon.
    PermanentFailure,
}

names!(EmailStatus, "email status", {
    Pending => "pending",
    Sending => "sending",
    Delivered => "delivered",
    TemporaryFailure => "temporary_failure",
    PermanentFailure => "permanent_failure",
});

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
