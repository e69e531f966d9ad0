//! Appointments: the availability an admin submits (`slots.rs`), and the bookings
//! citizens (or staff for them) make, move, cancel and attend (`bookings.rs`)
//! (docs/appointments.md).
//!
//! Every use case asks `consular_domain::policy::appointments` first; another
//! principal's appointment is 404. Seats are taken and released only by the repository's
//! guarded statements, in the transaction that stores the change with its audit entries
//! and outbox events; the slot rules here only say why a booking was refused.

mod availability;
mod bookings;
mod cache;
mod caps;
mod refusals;
mod service;
mod slots;
#[cfg(test)]
mod tests;

pub use bookings::{AppointmentListFilter, AppointmentView, Attendance, NewBooking};
pub use cache::{AvailabilityCache, AvailabilityKey, AvailablePage, DEFAULT_TTL as DEFAULT_AVAILABILITY_TTL};
pub use service::{
    AppointmentPorts, AppointmentService, DEFAULT_MAX_ACTIVE_BOOKINGS, RESOURCE, SLOT_RESOURCE,
};
pub use slots::{SlotPart, SlotReport, SlotSubmission};
