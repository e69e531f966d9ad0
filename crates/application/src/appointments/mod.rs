//! Appointments: the availability an admin submits (`slots.rs`), and the bookings
//! citizens (or staff for them) make, move, cancel and attend (`bookings.rs`)
//! (docs/appointments.md).
//!
//! Every use case asks `consular_domain::policy::appointments` first; another
//! principal's appointment is 404. Seats are taken and released only by the repository's
//! guarded statements, in the transaction that stores the change with its audit entries
//! and outbox events; the slot rules here only say why a booking was refused.

mod bookings;
mod slots;
#[cfg(test)]
mod tests;

pub use bookings::{AppointmentListFilter, Attendance, NewBooking};
pub use slots::{SlotPart, SlotReport, SlotSubmission};

use crate::ServiceError;
use crate::services::Adapters;
use consular_domain::{
    Appointment, AppointmentAction, AppointmentEntry, AppointmentRefused, AuditAction, AuditRecord,
    BookingRefused, CancelRefused, DomainEvent, Mission, MissionId, Principal, RescheduleRefused,
    ValidationErrors,
};
use consular_ports::{
    AppointmentRepository, CitizenRepository, Clock, IdempotencyRepository, MissionRepository, OutboxEvent,
    RequestRepository, ServiceTypeRepository,
};
use std::sync::Arc;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use uuid::Uuid;

pub const RESOURCE: &str = "appointment";
pub const SLOT_RESOURCE: &str = "slot";

/// The ports the appointment use cases need.
#[derive(Clone)]
pub struct AppointmentPorts {
    pub appointments: Arc<dyn AppointmentRepository>,
    pub missions: Arc<dyn MissionRepository>,
    pub citizens: Arc<dyn CitizenRepository>,
    pub requests: Arc<dyn RequestRepository>,
    pub service_types: Arc<dyn ServiceTypeRepository>,
    pub idempotency: Arc<dyn IdempotencyRepository>,
    pub clock: Arc<dyn Clock>,
}

impl<D> From<&Adapters<D>> for AppointmentPorts
where
    D: AppointmentRepository
        + MissionRepository
        + CitizenRepository
        + RequestRepository
        + ServiceTypeRepository
        + IdempotencyRepository
        + 'static,
{
    fn from(adapters: &Adapters<D>) -> Self {
        let db = &adapters.database;
        AppointmentPorts {
            appointments: db.clone(),
            missions: db.clone(),
            citizens: db.clone(),
            requests: db.clone(),
            service_types: db.clone(),
            idempotency: db.clone(),
            clock: adapters.clock.clone(),
        }
    }
}

/// How many upcoming bookings a citizen may hold when booking themself, unless
/// configured otherwise (`max_active_bookings_per_citizen`, docs/appointments.md
/// "Bookings per citizen").
pub const DEFAULT_MAX_ACTIVE_BOOKINGS: u32 = 3;

#[derive(Clone)]
pub struct AppointmentService {
    ports: AppointmentPorts,
    /// The most upcoming bookings a citizen may hold when booking themself.
    max_active_bookings: u32,
}

impl AppointmentService {
    pub fn new(ports: AppointmentPorts) -> Self {
        AppointmentService { ports, max_active_bookings: DEFAULT_MAX_ACTIVE_BOOKINGS }
    }

    /// The most upcoming bookings a citizen may hold when booking themself (at least 1).
    pub fn with_max_active_bookings(mut self, max: u32) -> Self {
        self.max_active_bookings = max.max(1);
        self
    }

    async fn mission(&self, id: MissionId) -> Result<Mission, ServiceError> {
        self.ports
            .missions
            .get(id)
            .await?
            .ok_or_else(|| ServiceError::Internal(format!("mission {id:?} is gone")))
    }
}

/// An appointment with what a response shows beside it: its mission's time zone (local
/// times) and, for calendar files, the mission's and the service type's names. Stored as
/// the idempotency snapshot of a booking.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AppointmentView {
    pub appointment: Appointment,
    pub timezone: String,
    pub mission_name: String,
    pub mission_city: String,
    pub service_name: String,
}

fn invalid(pointer: &str, code: &str, message: &str) -> ServiceError {
    ValidationErrors::single(pointer, code, message).into()
}

fn rfc3339(at: OffsetDateTime) -> String {
    at.format(&Rfc3339).unwrap_or_else(|_| at.to_string())
}

/// A slot that does not take the booking: 409 with the rule's code, except a service
/// type the slot does not serve, which is a field error.
fn booking_refused(refused: BookingRefused) -> ServiceError {
    match refused {
        BookingRefused::Full => ServiceError::conflict("slot_full", "the slot has no free seat"),
        BookingRefused::Closed => ServiceError::conflict("slot_closed", "the slot is closed"),
        BookingRefused::BookingClosed { closes_at } => ServiceError::conflict(
            "booking_closed",
            format!("booking this slot closed at {}", rfc3339(closes_at)),
        ),
        BookingRefused::ServiceNotServed => {
            invalid("/service_type_id", "not_served", "the slot does not serve this service type")
        }
    }
}

fn cancel_refused(refused: CancelRefused) -> ServiceError {
    let CancelRefused::InsideCutoff { closes_at } = refused;
    ServiceError::conflict(
        "cancellation_closed",
        format!(
            "citizens cannot cancel or move this appointment after {} (the cancellation cut-off)",
            rfc3339(closes_at)
        ),
    )
}

fn refused(refused: AppointmentRefused) -> ServiceError {
    match refused {
        AppointmentRefused::Illegal { ref allowed, .. } => ServiceError::IllegalTransition {
            allowed: allowed.iter().map(|a| action_name(*a).to_owned()).collect(),
            detail: refused.to_string(),
        },
        AppointmentRefused::Cancel(c) | AppointmentRefused::Reschedule(RescheduleRefused::Leave(c)) => {
            cancel_refused(c)
        }
        AppointmentRefused::Reschedule(RescheduleRefused::Join(b)) => booking_refused(b),
        AppointmentRefused::Reschedule(RescheduleRefused::SameSlot) => {
            invalid("/slot_id", "same_slot", "the appointment is already in that slot")
        }
        AppointmentRefused::Reschedule(RescheduleRefused::OtherMission) => {
            ServiceError::unknown("/slot_id", "no such slot in the appointment's mission")
        }
        AppointmentRefused::NotStarted { starts_at } => ServiceError::conflict(
            "not_started",
            format!("attendance can be recorded from {} on", rfc3339(starts_at)),
        ),
        AppointmentRefused::WrongSlot => ServiceError::Internal("an appointment's slot mismatch".to_owned()),
    }
}

fn action_name(action: AppointmentAction) -> &'static str {
    match action {
        AppointmentAction::Reschedule => "reschedule",
        AppointmentAction::Cancel => "cancel",
        AppointmentAction::Attend => "attend",
        AppointmentAction::MarkNoShow => "mark_no_show",
    }
}

/// A change of an appointment as it is stored beside it: `event`, the `appointment.*`
/// event the domain returned for it, in the outbox, and its history entry (the request's
/// timeline), both made by `actor`.
fn change(
    event: &DomainEvent,
    appointment: &Appointment,
    actor: &Principal,
    now: OffsetDateTime,
) -> Result<(OutboxEvent, AppointmentEntry), ServiceError> {
    let change = event.appointment_change().ok_or_else(|| {
        ServiceError::Internal(format!("a {} event is no change of an appointment", event.kind()))
    })?;
    let entry = AppointmentEntry::of(appointment, change, actor.subject)
        .map_err(|mismatch| ServiceError::Internal(mismatch.to_string()))?;
    Ok((OutboxEvent::new(event, now)?, entry))
}

fn audit(
    actor: &Principal,
    now: OffsetDateTime,
    action: AuditAction,
    resource: &str,
    id: Uuid,
    fields: &[&str],
) -> AuditRecord {
    AuditRecord::new(Some(actor), now, action, resource, id, fields.iter().map(|f| (*f).to_owned()).collect())
}
