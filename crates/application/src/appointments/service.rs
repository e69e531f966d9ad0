//! The appointment use cases' service and its ports, and what they share to store a
//! change (`bookings.rs`, `slots.rs`): what they all use, apart from the module that
//! declares them.

use super::cache::{AvailabilityCache, DEFAULT_TTL};
use crate::ServiceError;
use crate::access_log::AccessRecorder;
use crate::adapters::Adapters;
use consular_domain::rate::BookingCaps;
use consular_domain::{
    Appointment, AppointmentEntry, AuditAction, AuditRecord, DomainEvent, Mission, MissionId, Principal,
};
use consular_ports::{
    AppointmentRepository, CitizenRepository, Clock, IdempotencyRepository, MissionRepository, OutboxEvent,
    RateLimitRepository, RequestRepository, ServiceTypeRepository,
};
use std::sync::Arc;
use time::OffsetDateTime;
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
    /// The attempt counters of the booking caps (docs/appointments.md "Attempt caps").
    pub rate_limits: Arc<dyn RateLimitRepository>,
    /// The node's access log recorder, shared by every use case (`Services::new`).
    pub access: AccessRecorder,
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
        + RateLimitRepository
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
            rate_limits: db.clone(),
            access: adapters.access.clone(),
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
    pub(super) ports: AppointmentPorts,
    /// The most upcoming bookings a citizen may hold when booking themself.
    pub(super) max_active_bookings: u32,
    /// This node's availability pages (`cache.rs`).
    pub(super) availability: AvailabilityCache,
    /// The booking attempts allowed per minute, counted across nodes.
    pub(super) caps: BookingCaps,
}

impl AppointmentService {
    pub fn new(ports: AppointmentPorts) -> Self {
        AppointmentService {
            ports,
            max_active_bookings: DEFAULT_MAX_ACTIVE_BOOKINGS,
            availability: AvailabilityCache::new(DEFAULT_TTL),
            caps: BookingCaps::DEFAULT,
        }
    }

    /// The booking attempts (books and reschedules) a citizen and a client may make per
    /// minute (`booking_attempts_per_*_per_minute`, docs/appointments.md "Attempt caps");
    /// 0 disables a cap.
    pub fn with_booking_caps(mut self, caps: BookingCaps) -> Self {
        self.caps = caps;
        self
    }

    /// This node's availability pages (`availability_cache_ms`, docs/appointments.md
    /// "Release morning"), shared with the missions' service, which invalidates a
    /// mission's pages when it changes the mission.
    pub fn with_availability_cache(mut self, cache: AvailabilityCache) -> Self {
        self.availability = cache;
        self
    }

    /// The most upcoming bookings a citizen may hold when booking themself (at least 1).
    pub fn with_max_active_bookings(mut self, max: u32) -> Self {
        self.max_active_bookings = max.max(1);
        self
    }

    pub(super) async fn mission(&self, id: MissionId) -> Result<Mission, ServiceError> {
        self.ports
            .missions
            .get(id)
            .await?
            .ok_or_else(|| ServiceError::Internal(format!("mission {id:?} is gone")))
    }
}

/// A change of an appointment as it is stored beside it: `event`, the `appointment.*`
/// event the domain returned for it, in the outbox, and its history entry (the request's
/// timeline), both made by `actor`.
pub(super) fn change(
    event: &DomainEvent,
    appointment: &Appointment,
    actor: &Principal,
    now: OffsetDateTime,
) -> Result<(OutboxEvent, AppointmentEntry), ServiceError> {
    let change = event.appointment_change().ok_or_else(|| {
        ServiceError::Internal(format!("a {} event is no change of an appointment", event.kind()))
    })?;
    let entry = AppointmentEntry::of(appointment, change, actor)
        .map_err(|mismatch| ServiceError::Internal(mismatch.to_string()))?;
    Ok((OutboxEvent::new(event, now)?, entry))
}

pub(super) fn audit(
    actor: &Principal,
    now: OffsetDateTime,
    action: AuditAction,
    resource: &str,
    id: Uuid,
    fields: &[&str],
) -> AuditRecord {
    AuditRecord::new(Some(actor), now, action, resource, id, fields.iter().map(|f| (*f).to_owned()).collect())
}
