//! Notifications: who hears what, and how an email's delivery goes
//! (docs/notifications.md).
//!
//! [`audience`] is the one table that turns a domain event of the outbox into
//! notifications: which kind, to whom. Internal notes produce no event, so nothing a
//! citizen can see ever comes from one. [`EmailStatus`] and [`RetryPolicy`] are the life
//! of an email (GOV.UK Notify's statuses): temporary failures are retried with
//! exponential backoff and jitter until a horizon, then become permanent.
//!
//! `kind.rs` holds the kinds and the table, `email.rs` an email's life, `inbox.rs` what
//! an event becomes and `represented.rs` which of a citizen's representatives hear of it
//! too; this module only gathers them.

mod email;
mod inbox;
mod kind;
mod represented;

pub use email::{AfterAttempt, AttemptOutcome, EmailStatus, RetryPolicy};
pub use inbox::{
    Details, Email, EmailPreferences, EventFacts, Language, Notification, Person, Produced, REMINDER_LEAD,
    Recipient, produce, reminder_due,
};

pub use kind::{Audience, Category, NotificationKind, audience};
pub use represented::representatives_hearing;

pub use crate::event::EventKind;

#[cfg(test)]
mod tests;
