//! The email sender: claims due emails under a lease (each claim is an attempt), sends
//! them outside any transaction, a few at a time, and records each outcome by the retry
//! policy (GOV.UK Notify's statuses, docs/notifications.md "Emails").

use super::NotificationService;
use crate::ServiceError;
use consular_domain::notification::{AttemptOutcome, Email, EmailStatus};
use consular_ports::MailError;
use futures_util::StreamExt;

/// What one pass of the sender did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sent {
    pub claimed: usize,
    pub delivered: usize,
    pub temporary_failures: usize,
    pub permanent_failures: usize,
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
        let emails = self.ports.notifications.claim_emails(&self.claim(self.config.email_batch)).await?;
        let mut sent = Sent { claimed: emails.len(), ..Sent::default() };
        let mut attempts = futures_util::stream::iter(emails)
            .map(|email| {
                let mailer = mailer.clone();
                async move {
                    let result = mailer.send(&email).await;
                    (email, result)
                }
            })
            .buffer_unordered(self.config.send_concurrency.max(1));
        while let Some((email, result)) = attempts.next().await {
            let (outcome, error) = match result {
                Ok(()) => (AttemptOutcome::Delivered, None),
                Err(MailError::Temporary(why)) => (AttemptOutcome::Temporary, Some(why)),
                Err(MailError::Permanent(why)) => (AttemptOutcome::Permanent, Some(why)),
            };
            let now = self.ports.clock.now();
            let after = self.config.retry.after(outcome, email.attempts, email.created_at, now, draw(&email));
            match after.status {
                EmailStatus::Delivered => sent.delivered += 1,
                EmailStatus::TemporaryFailure => sent.temporary_failures += 1,
                _ => sent.permanent_failures += 1,
            }
            if let Some(why) = &error {
                tracing::info!(email = %email.id, attempts = email.attempts, status = %after.status, error = %why, "email not delivered");
            }
            let recorded = self
                .ports
                .notifications
                .record_attempt(email.id, &self.config.node, after, error, now)
                .await?;
            if !recorded {
                tracing::warn!(email = %email.id, "an email's lease expired while it was being sent; another sender owns it now");
            }
        }
        Ok(sent)
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
}
