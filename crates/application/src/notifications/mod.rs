//! Notifications (docs/notifications.md): the outbox worker that turns domain events into
//! in-app notifications and emails (`worker.rs`, with what it looks up about each event
//! in `facts.rs`), the email sender (`sending.rs`), the day-before reminders, and the
//! inbox and preferences a caller reads and changes (`inbox.rs`).
//!
//! The worker never holds a transaction across anything slow: it claims a batch of
//! events under a lease, looks up what it needs, and stores what they produce together
//! with marking them delivered in one short transaction; senders claim emails the same
//! way and talk SMTP outside any transaction.

mod facts;
mod inbox;
mod sending;
mod service;
#[cfg(test)]
mod tests;
mod worker;

pub use inbox::{Inbox, RequestDelivery};
pub use sending::{LEASE_MARGIN, Sent, check_send_lease};
pub use service::{NotificationPorts, NotificationService, PREFERENCES_RESOURCE, WorkerConfig};
pub use worker::{BacklogFigures, Dispatched};
