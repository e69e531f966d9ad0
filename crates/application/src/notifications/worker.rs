//! The outbox worker: claims a batch of events, decides what each produces, and stores
//! that with the events marked delivered in one transaction; and the reminder sweep,
//! which writes an `appointment.reminder` event the day before each booked appointment.

use super::facts::Lookups;
use super::service::NotificationService;
use crate::ServiceError;
use consular_domain::notification::{REMINDER_LEAD, produce, reminder_due};
use consular_domain::{AppointmentRef, DomainEvent};
use consular_ports::{Claim, OutboxEvent};
use time::Duration;

/// Reminders scheduled per sweep at most (the next sweep takes the rest).
const REMINDER_BATCH: u32 = 500;

/// What one pass of the worker did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dispatched {
    /// Events claimed and marked delivered.
    pub events: usize,
    /// Notifications stored: one per recipient (some events are heard by nobody, others
    /// by a citizen and their representatives), none the second time an event is handled.
    pub notifications: u64,
}

/// The backlog as `/metrics` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BacklogFigures {
    /// Undelivered outbox events.
    pub pending_events: u64,
    /// How long the oldest of them has waited (zero when there is none).
    pub oldest_pending_age: Duration,
    /// Emails neither delivered nor failed for good.
    pub unsent_emails: u64,
}

impl NotificationService {
    /// A claim of `limit` rows at the clock's now, under this node's lease.
    pub(super) fn claim(&self, limit: u32) -> Claim {
        let now = self.ports.clock.now();
        Claim { node: self.config.node.clone(), limit, now, lease_until: now + self.config.lease }
    }

    /// One pass: claims up to a batch of events and handles them. A failed lookup leaves
    /// the whole batch to be claimed again when its lease expires (nothing is stored).
    pub async fn dispatch(&self) -> Result<Dispatched, ServiceError> {
        let events = self.ports.notifications.claim_events(&self.claim(self.config.batch)).await?;
        if events.is_empty() {
            return Ok(Dispatched::default());
        }
        let now = self.ports.clock.now();
        let mut cache = Lookups::default();
        let mut produced = Vec::new();
        for event in &events {
            let Some(facts) = self.facts(&mut cache, event, now).await? else { continue };
            for mut made in produce(&facts, now) {
                if !self.sends_email() {
                    made.email = None;
                }
                produced.push(made);
            }
        }
        let done: Vec<_> = events.iter().map(|e| e.id).collect();
        let notifications =
            self.ports.notifications.complete_events(&self.config.node, &done, &produced, now).await?;
        Ok(Dispatched { events: events.len(), notifications })
    }

    /// Writes the reminder event of every booked appointment whose day-before window is
    /// open (`reminder_due`), once per appointment and start time (a moved appointment is
    /// reminded of its new time). Returns how many were written.
    pub async fn schedule_reminders(&self) -> Result<usize, ServiceError> {
        let now = self.ports.clock.now();
        let candidates =
            self.ports.notifications.reminder_candidates(now, now + REMINDER_LEAD, REMINDER_BATCH).await?;
        let mut scheduled = 0;
        for appointment in candidates.iter().filter(|a| reminder_due(a.starts_at, a.updated_at, now)) {
            let reminder = DomainEvent::AppointmentReminder { appointment: AppointmentRef::of(appointment) };
            let event = OutboxEvent::new(&reminder, now)?;
            if self
                .ports
                .notifications
                .schedule_reminder(appointment.id, appointment.starts_at, &event)
                .await?
            {
                scheduled += 1;
            }
        }
        Ok(scheduled)
    }

    /// What is waiting (the `/metrics` gauges), the oldest event's age by this node's
    /// clock.
    pub async fn backlog(&self) -> Result<BacklogFigures, ServiceError> {
        let backlog = self.ports.notifications.backlog().await?;
        let now = self.ports.clock.now();
        Ok(BacklogFigures {
            pending_events: backlog.pending_events,
            oldest_pending_age: backlog
                .oldest_pending_at
                .map_or(Duration::ZERO, |at| (now - at).max(Duration::ZERO)),
            unsent_emails: backlog.unsent_emails,
        })
    }
}
