//! Notifications (docs/notifications.md): the outbox worker's claims on events, what it
//! produces from them, the in-app inbox, email preferences and the email queue; and the
//! [`Mailer`] that sends an email.

use crate::{OutboxEvent, RepoError, WriteMeta};
use async_trait::async_trait;
use consular_domain::notification::{
    AfterAttempt, Email, EmailPreferences, Notification, Produced, Recipient,
};
use consular_domain::{
    Appointment, AppointmentId, EmailId, NotificationId, Page, PageRequest, PrincipalId, RequestId,
};
use time::OffsetDateTime;
use uuid::Uuid;

/// A worker's claim: up to `limit` rows, leased to `node` until `lease_until` (another
/// node takes them over only after that).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// This node's name (`node_id` setting): recorded on what it handles.
    pub node: String,
    pub limit: u32,
    pub now: OffsetDateTime,
    pub lease_until: OffsetDateTime,
}

/// What is waiting: the `/metrics` gauges.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Backlog {
    /// Undelivered outbox events.
    pub pending_events: u64,
    /// When the oldest undelivered event was written.
    pub oldest_pending_at: Option<OffsetDateTime>,
    /// Emails not yet in a final status.
    pub unsent_emails: u64,
}

/// A notification and, when one was made, its email: what staff see of a request's
/// notifications (the email's delivery status, never its text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotificationWithEmail {
    pub notification: Notification,
    pub email: Option<Email>,
}

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait NotificationRepository: Send + Sync {
    // ---------------------------------------------------------------- the outbox worker

    /// Leases up to `claim.limit` undelivered events, oldest first, whose lease is free
    /// or expired, to `claim.node`. Never an event while an earlier undelivered event of
    /// the same aggregate is leased to someone else (events of one aggregate are handled
    /// in order). On PostgreSQL nodes skip the rows another is claiming (`FOR UPDATE SKIP
    /// LOCKED`) and claims are serialised by a transaction-scoped advisory lock, so two
    /// claims never overlap; the claim's transaction ends before it returns.
    async fn claim_events(&self, claim: &Claim) -> Result<Vec<OutboxEvent>, RepoError>;
    /// In one transaction: stores every notification of `produced` whose
    /// `(event_id, recipient_id)` is not stored yet, with its email, and marks the events
    /// `done` delivered at `now` (by `node`). Returns the number of notifications stored
    /// (those already there are skipped, with their emails: an event handled twice
    /// produces nothing twice).
    async fn complete_events(
        &self,
        node: &str,
        done: &[Uuid],
        produced: &[Produced],
        now: OffsetDateTime,
    ) -> Result<u64, RepoError>;
    async fn backlog(&self) -> Result<Backlog, RepoError>;
    /// Booked appointments starting in `(from, until]` that have had no reminder for
    /// that start time, soonest first, up to `limit`.
    async fn reminder_candidates(
        &self,
        from: OffsetDateTime,
        until: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<Appointment>, RepoError>;
    /// Records that `appointment`'s reminder for `starts_at` is scheduled and writes its
    /// outbox event, in one transaction; false (nothing written) when it was already.
    async fn schedule_reminder(
        &self,
        appointment: AppointmentId,
        starts_at: OffsetDateTime,
        event: &OutboxEvent,
    ) -> Result<bool, RepoError>;

    // ------------------------------------------------------------------- the inbox

    /// `recipient`'s notifications (its id, kind and mission all match), newest first (id
    /// descending), before `page.after`; only unread ones when `unread_only`.
    async fn list(
        &self,
        recipient: Recipient,
        unread_only: bool,
        page: PageRequest,
    ) -> Result<Page<Notification>, RepoError>;
    async fn unread_count(&self, recipient: Recipient) -> Result<u64, RepoError>;
    async fn get(&self, id: NotificationId) -> Result<Option<Notification>, RepoError>;
    /// Sets `read_at` to `now` if it is not set (reading twice keeps the first time);
    /// the notification as stored after, None when there is none.
    async fn mark_read(
        &self,
        id: NotificationId,
        now: OffsetDateTime,
    ) -> Result<Option<Notification>, RepoError>;
    /// Marks every unread notification of `recipient` read at `now`; how many were.
    async fn mark_all_read(&self, recipient: Recipient, now: OffsetDateTime) -> Result<u64, RepoError>;
    /// The notifications produced about `request`, newest first, with their emails.
    async fn for_request(&self, request: RequestId) -> Result<Vec<NotificationWithEmail>, RepoError>;

    // -------------------------------------------------------------- preferences

    /// What `principal` turned off (nothing when they never said).
    async fn preferences(&self, principal: PrincipalId) -> Result<EmailPreferences, RepoError>;
    /// Replaces `principal`'s preferences, in one transaction with `meta`.
    async fn set_preferences(
        &self,
        principal: PrincipalId,
        preferences: &EmailPreferences,
        now: OffsetDateTime,
        meta: &WriteMeta,
    ) -> Result<(), RepoError>;

    // ---------------------------------------------------------------- the email queue

    /// Leases up to `claim.limit` emails due at `claim.now` (`pending` or
    /// `temporary_failure` with `next_attempt_at` passed, or `sending` with an expired
    /// lease: a sender died) to `claim.node`, oldest first: each becomes `sending` with
    /// one more attempt.
    async fn claim_emails(&self, claim: &Claim) -> Result<Vec<Email>, RepoError>;
    /// Checks and renews `email`'s lease in one guarded statement: if `node` still holds
    /// it at `now` (`sending`, leased to `node`, the lease not expired by `now`), its
    /// lease runs to `lease_until`; false when the lease was lost (it expired, or another
    /// node took the email over) and nothing was changed. A sender calls it right before
    /// each send and sends only on true (docs/notifications.md "Senders").
    async fn renew_email_lease(
        &self,
        email: EmailId,
        node: &str,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
    ) -> Result<bool, RepoError>;
    /// Records how `email`'s attempt ended, if `node` still holds it (`sending`, leased
    /// to `node`): false when the lease was lost and nothing was changed.
    async fn record_attempt(
        &self,
        email: EmailId,
        node: &str,
        after: AfterAttempt,
        error: Option<String>,
        now: OffsetDateTime,
    ) -> Result<bool, RepoError>;
    /// The email, whatever its status.
    async fn email(&self, id: EmailId) -> Result<Option<Email>, RepoError>;
}

/// Why an email was not sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MailError {
    /// Connection refused or dropped, a timeout, a 4xx reply: another attempt may pass.
    #[error("temporary failure: {0}")]
    Temporary(String),
    /// A 5xx reply (550 no such mailbox), an address the server refuses: final.
    #[error("permanent failure: {0}")]
    Permanent(String),
}

/// Renders an email from its kind, details and language and sends it (SMTP in
/// production). `Ok` means the server accepted it for delivery. A send returns within
/// the deadline the mailer was built with (the `smtp_timeout_secs` setting), a timeout
/// being a [`MailError::Temporary`]: the sender's lease on an email is sized on it.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait Mailer: Send + Sync {
    async fn send(&self, email: &Email) -> Result<(), MailError>;
}
