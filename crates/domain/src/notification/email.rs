//! The life of an email (GOV.UK Notify's statuses): temporary failures are retried with
//! exponential backoff and jitter until a horizon, then become permanent
//! (docs/notifications.md "Delivery").

use crate::text_enum::text_enum;
use time::{Duration, OffsetDateTime};

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
