//! The email sender: claims due emails under a lease (each claim is an attempt), sends
//! them outside any transaction, a few at a time, and records each outcome by the retry
//! policy (GOV.UK Notify's statuses, docs/notifications.md "Emails").
//!
//! A send never starts without the lease: right before each email the sender renews its
//! lease in one guarded statement (`renew_email_lease`: still ours, not expired, now runs
//! to now + `lease`), and sends only if that held. The lease is longer than the longest
//! send by [`LEASE_MARGIN`] ([`check_send_lease`], checked at start), so an email is held
//! for the whole of its send and nobody else can claim it meanwhile; and a pass claims no
//! more than its sending slots can start while the claim's lease holds
//! ([`WorkerConfig::email_claim`]).

use super::service::{NotificationService, WorkerConfig};
use crate::ServiceError;
use consular_domain::notification::{AttemptOutcome, Email, EmailStatus};
use consular_ports::{MailError, Mailer};
use futures_util::StreamExt;
use time::Duration;

/// How much longer than the longest send ([`WorkerConfig::send_timeout`]) an email's
/// lease must run: room for what happens between the renewal and the start of the send,
/// for the record of its outcome after it, and for the skew between the clocks of the
/// nodes (each claims and renews by its own).
pub const LEASE_MARGIN: Duration = Duration::seconds(1);

/// Whether a `lease` covers a send that may take `send_timeout` ([`LEASE_MARGIN`]
/// included); the reason when it does not.
pub fn check_send_lease(lease: Duration, send_timeout: Duration) -> Result<(), String> {
    if lease < send_timeout + LEASE_MARGIN {
        return Err(format!(
            "an email's lease ({} s) must outlast its send: at least the SMTP timeout ({} s) + {} s",
            lease.whole_seconds(),
            send_timeout.whole_seconds(),
            LEASE_MARGIN.whole_seconds()
        ));
    }
    Ok(())
}

impl WorkerConfig {
    /// Emails claimed per pass: `email_batch`, but no more than `send_concurrency ×
    /// ⌊lease / send_timeout⌋`. Each of the `send_concurrency` slots sends its share one
    /// after another, each send taking at most `send_timeout`, so the last email of a
    /// slot starts at most `(⌊lease / send_timeout⌋ - 1) × send_timeout ≤ lease -
    /// send_timeout` after the claim: while the claim's lease still holds, with a whole
    /// send's time to spare. (An email whose lease was lost anyway, the database being
    /// slow, is not sent: the renewal refuses it.) With the defaults, 60 s and 30 s: 2
    /// per slot, 16 per pass.
    pub fn email_claim(&self) -> u32 {
        let timeout = self.send_timeout.whole_milliseconds().max(1);
        let per_slot = (self.lease.whole_milliseconds() / timeout).max(1);
        let fits = per_slot.saturating_mul(self.send_concurrency.max(1) as i128);
        u32::try_from(fits).unwrap_or(u32::MAX).min(self.email_batch)
    }
}

/// What one pass of the sender did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sent {
    pub claimed: usize,
    pub delivered: usize,
    pub temporary_failures: usize,
    pub permanent_failures: usize,
    /// Claimed but not sent: the lease was lost before the send could start (it is
    /// another sender's to send, or will be once claimed again).
    pub lost: usize,
}

/// The jitter draw of an attempt, in `[0, 1)`: from the email's id and the attempt
/// number, so that a backlog's retries spread out (ids differ) and a test can predict
/// them.
fn draw(email: &Email) -> f64 {
    let bytes = email.id.as_uuid().as_u128() ^ u128::from(email.attempts).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mixed = (bytes as u64) ^ ((bytes >> 64) as u64);
    let mixed = mixed.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    (mixed >> 11) as f64 / (1u64 << 53) as f64
}

impl NotificationService {
    /// One pass: claims up to a batch of due emails and sends them. Without a mailer
    /// nothing is claimed (no email is made either).
    pub async fn send_emails(&self) -> Result<Sent, ServiceError> {
        let Some(mailer) = self.ports.mailer.clone() else {
            return Ok(Sent::default());
        };
        let emails = self.ports.notifications.claim_emails(&self.claim(self.config.email_claim())).await?;
        let mut sent = Sent { claimed: emails.len(), ..Sent::default() };
        // Each email's whole attempt (renewal, send, record) runs inside the stream: a
        // query awaited out here, between two polls of the stream, could wait for a
        // connection that an attempt in the stream holds and cannot give back until the
        // stream is polled again (SQLite has one).
        let mut attempts = futures_util::stream::iter(emails)
            .map(|email| self.attempt(mailer.as_ref(), email))
            .buffer_unordered(self.config.send_concurrency.max(1));
        while let Some(attempt) = attempts.next().await {
            match attempt? {
                None => sent.lost += 1,
                Some(EmailStatus::Delivered) => sent.delivered += 1,
                Some(EmailStatus::TemporaryFailure) => sent.temporary_failures += 1,
                Some(_) => sent.permanent_failures += 1,
            }
        }
        Ok(sent)
    }

    /// One attempt at `email`: if this node still holds its lease, renewed first to now +
    /// `lease` (which outlasts the send) by the database in one guarded statement, sends
    /// it and records the outcome by the retry policy; the status it recorded, or none
    /// when the lease was lost (nothing sent, nothing recorded).
    async fn attempt(&self, mailer: &dyn Mailer, email: Email) -> Result<Option<EmailStatus>, ServiceError> {
        let node = &self.config.node;
        let now = self.ports.clock.now();
        let held =
            self.ports.notifications.renew_email_lease(email.id, node, now, now + self.config.lease).await?;
        if !held {
            tracing::warn!(email = %email.id, "an email's lease was lost before it was sent; not sending it");
            return Ok(None);
        }
        let (outcome, error) = match mailer.send(&email).await {
            Ok(()) => (AttemptOutcome::Delivered, None),
            Err(MailError::Temporary(why)) => (AttemptOutcome::Temporary, Some(why)),
            Err(MailError::Permanent(why)) => (AttemptOutcome::Permanent, Some(why)),
        };
        let now = self.ports.clock.now();
        let after = self.config.retry.after(outcome, email.attempts, email.created_at, now, draw(&email));
        if let Some(why) = &error {
            tracing::info!(email = %email.id, attempts = email.attempts, status = %after.status, error = %why, "email not delivered");
        }
        let status = after.status;
        if !self.ports.notifications.record_attempt(email.id, node, after, error, now).await? {
            tracing::warn!(email = %email.id, "an email's outcome was not recorded: another sender took it over after its send outlasted the lease");
        }
        Ok(Some(status))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_in_range_and_differ_between_emails_and_attempts() {
        let email = |attempts| Email { attempts, ..crate::notifications::tests::email() };
        let (a, b) = (draw(&email(1)), draw(&email(2)));
        assert!((0.0..1.0).contains(&a) && (0.0..1.0).contains(&b));
        assert_ne!(a, b);
        assert_ne!(draw(&crate::notifications::tests::email()), draw(&crate::notifications::tests::email()));
    }

    #[test]
    fn the_lease_must_outlast_a_send_by_the_margin() {
        let s = Duration::seconds;
        assert!(check_send_lease(s(60), s(30)).is_ok());
        assert!(check_send_lease(s(31), s(30)).is_ok());
        let error = check_send_lease(s(30), s(30)).unwrap_err();
        assert!(error.contains("(30 s)") && error.contains("+ 1 s"), "{error}");
        assert!(check_send_lease(s(3), s(2)).is_ok());
        assert!(check_send_lease(s(2), s(2)).is_err());
    }

    #[test]
    fn a_claim_holds_no_more_than_its_slots_can_start_under_the_lease() {
        let config = |lease: i64, timeout: i64, concurrency: usize| WorkerConfig {
            lease: Duration::seconds(lease),
            send_timeout: Duration::seconds(timeout),
            send_concurrency: concurrency,
            ..WorkerConfig::default()
        };
        // The defaults: 60 s / 30 s = 2 sends per slot, 8 slots.
        assert_eq!(WorkerConfig::default().email_claim(), 16);
        // The numbers: 50 claimed under 60 s, 8 at a time, 12 s each, took 84 s.
        assert_eq!(config(60, 12, 8).email_claim(), 40, "5 sends per slot: the last starts by 48 s");
        assert_eq!(config(3, 2, 8).email_claim(), 8);
        assert_eq!(config(3600, 1, 8).email_claim(), 50, "never more than email_batch");
        assert_eq!(config(31, 30, 0).email_claim(), 1, "at least one slot");
    }
}
