//! Booking, reading, listing, rescheduling, cancelling and attendance
//! (docs/appointments.md "States", "The seat invariant").

use super::refusals::{booking_refused, refused};
use super::service::{AppointmentService, RESOURCE, audit, change};
use crate::concurrency::{require_version, retry_unconditional};
use crate::error::{OrNotFound, ServiceError};
use crate::idempotency::{self, Created, IdempotencyRequest};
use consular_domain::appointment::local_day;
use consular_domain::policy::appointments as policy;
use consular_domain::policy::citizens::citizen_of;
use consular_domain::policy::requests::RequestReach;
use consular_domain::policy::{Listing, Owned};
use consular_domain::{AccessEntry, AccessedData};
use consular_domain::{
    Appointment, AppointmentAction, AppointmentId, AppointmentRef, AppointmentStatus, AuditAction, CitizenId,
    DomainEvent, MissionId, Principal, PrincipalKind, RequestId, Role, ServiceTypeId, Slot, SlotId,
};
use consular_ports::{AppointmentFilter, BookOutcome, StartPage, StartPageRequest, WriteMeta};
use std::collections::HashMap;
use time::{Date, OffsetDateTime};

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

/// What a booking asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewBooking {
    pub slot_id: SlotId,
    pub service_type_id: ServiceTypeId,
    /// Required for staff and admins; a citizen books for themself.
    pub citizen_id: Option<CitizenId>,
    pub request_id: Option<RequestId>,
}

/// Staff's record of an appointment whose start has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attendance {
    Attended,
    NoShow,
}

/// What a listing of appointments filters on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppointmentListFilter {
    pub mission_id: Option<MissionId>,
    pub citizen_id: Option<CitizenId>,
    pub slot_id: Option<SlotId>,
    pub statuses: Vec<AppointmentStatus>,
    /// A day of the mission's calendar (its local time).
    pub date: Option<Date>,
}

impl AppointmentService {
    async fn view(&self, appointment: Appointment) -> Result<AppointmentView, ServiceError> {
        let mission = self.mission(appointment.mission_id).await?;
        let service_name = match self.ports.service_types.get(appointment.service_type_id).await? {
            Some(t) => t.name,
            None => String::new(),
        };
        Ok(AppointmentView {
            appointment,
            timezone: mission.timezone,
            mission_name: mission.name,
            mission_city: mission.city,
            service_name,
        })
    }

    /// Books a seat: a citizen for themself, staff and admins for a citizen of their
    /// mission, optionally for one of the citizen's requests.
    pub async fn book(
        &self,
        actor: &Principal,
        booking: NewBooking,
        idempotency_key: Option<&IdempotencyRequest>,
    ) -> Result<Created<AppointmentView>, ServiceError> {
        let ports = &self.ports;
        let now = ports.clock.now();
        policy::book(actor)?;
        let citizen_id = citizen_of(actor, booking.citizen_id)?;
        // Every attempt counts, refused, replayed or booked (docs/appointments.md "Attempt caps").
        self.count_attempt(actor, now).await?;
        if let Some(replayed) = idempotency::replay(&*ports.idempotency, actor, idempotency_key, now).await? {
            return Ok(replayed);
        }
        let citizen = match ports.citizens.get(citizen_id).await? {
            Some(c)
                if policy::book_for(actor, &Owned::new_for(&c, Some(booking.service_type_id))).is_ok() =>
            {
                c
            }
            _ => return Err(ServiceError::unknown("/citizen_id", "no such citizen in your mission")),
        };
        self.refuse_minor_alone(actor, now).await?;
        let slot = match ports.appointments.get_slot(booking.slot_id).await? {
            Some(s) if s.mission_id == citizen.mission_id => s,
            _ => return Err(ServiceError::unknown("/slot_id", "no such slot at the citizen's mission")),
        };
        if let Some(id) = booking.request_id {
            match ports.requests.get(id).await? {
                Some(r) if r.citizen_id == citizen.id => {}
                _ => return Err(ServiceError::unknown("/request_id", "no such request of this citizen")),
            }
        }
        slot.check_booking(booking.service_type_id, now).map_err(booking_refused)?;
        let appointment = Appointment::book(
            &slot,
            citizen.id,
            booking.service_type_id,
            booking.request_id,
            actor.subject,
            now,
        );
        let view = self.view(appointment).await?;
        let appointment = &view.appointment;
        let booked = DomainEvent::AppointmentBooked { appointment: AppointmentRef::of(appointment) };
        let (event, entry) = change(&booked, appointment, actor, now)?;
        let meta = WriteMeta {
            audit: vec![audit(
                actor,
                now,
                AuditAction::Created,
                RESOURCE,
                appointment.id.as_uuid(),
                &["slot_id", "citizen_id", "service_type_id", "request_id"],
            )],
            events: vec![event],
            idempotency: idempotency::record(actor, idempotency_key, appointment.id.as_uuid(), &view, now)?,
        };
        // A citizen booking themself is held to the limit; staff and admins booking for a
        // citizen are not (docs/appointments.md "Bookings per citizen").
        let limit = (actor.subject.kind == PrincipalKind::Citizen).then_some(self.max_active_bookings);
        match ports.appointments.book(appointment, &entry, limit, now, &meta).await? {
            BookOutcome::Booked => {
                self.availability.invalidate(appointment.mission_id);
                Ok(Created::fresh(view))
            }
            BookOutcome::Refused(why) => Err(booking_refused(why)),
            BookOutcome::AlreadyBooked(existing) => Err(already_booked(appointment, existing)),
            BookOutcome::LimitReached => Err(ServiceError::conflict(
                "booking_limit_reached",
                format!(
                    "a citizen may hold at most {} upcoming bookings made by themself; cancel one first, or ask the mission's staff",
                    self.max_active_bookings
                ),
            )),
        }
    }

    async fn found(&self, id: AppointmentId) -> Result<Appointment, ServiceError> {
        self.ports.appointments.get(id).await.or_not_found()
    }

    async fn slot_of(&self, appointment: &Appointment) -> Result<Slot, ServiceError> {
        self.ports.appointments.get_slot(appointment.slot_id).await?.ok_or_else(|| {
            ServiceError::Internal(format!("the slot of appointment {} is gone", appointment.id))
        })
    }

    /// Refuses a minor's own token what a minor does through a parent or guardian.
    async fn refuse_minor_alone(&self, actor: &Principal, now: OffsetDateTime) -> Result<(), ServiceError> {
        let ports = &self.ports;
        crate::acting::refuse_minor_alone(&*ports.citizens, &*ports.missions, actor, now).await
    }

    /// The appointment, if the caller may read it, with what its responses show.
    pub async fn get(&self, actor: &Principal, id: AppointmentId) -> Result<AppointmentView, ServiceError> {
        let appointment = self.found(id).await?;
        policy::read(actor, &Owned::from(&appointment))?;
        let now = self.ports.clock.now();
        let what = AccessedData::Appointment;
        let read = AccessEntry::of_read(actor, appointment.citizen_id, what, appointment.id.as_uuid(), now);
        self.ports.access.record(read)?;
        self.view(appointment).await
    }

    /// Moves the booking to another slot of the mission, atomically; if that slot cannot
    /// take it nothing changes.
    pub async fn reschedule(
        &self,
        actor: &Principal,
        id: AppointmentId,
        to: SlotId,
        expected_versions: Option<&[i64]>,
    ) -> Result<AppointmentView, ServiceError> {
        let mut appointment = self.found(id).await?;
        let role = policy::change(actor, &Owned::from(&appointment))?;
        // A move takes a seat in another slot: it counts as a booking attempt
        // (docs/appointments.md "Attempt caps").
        self.count_attempt(actor, self.ports.clock.now()).await?;
        self.refuse_minor_alone(actor, self.ports.clock.now()).await?;
        let stored_version = appointment.version;
        require_version(expected_versions, stored_version)?;
        let from = self.slot_of(&appointment).await?;
        let to = match self.ports.appointments.get_slot(to).await? {
            Some(s) if s.mission_id == appointment.mission_id => s,
            _ => return Err(ServiceError::unknown("/slot_id", "no such slot in the appointment's mission")),
        };
        let now = self.ports.clock.now();
        let rescheduled = appointment.reschedule(role, &from, &to, now).map_err(refused)?;
        let (event, entry) = change(&rescheduled, &appointment, actor, now)?;
        let meta = WriteMeta {
            audit: vec![audit(
                actor,
                now,
                AuditAction::Updated,
                RESOURCE,
                appointment.id.as_uuid(),
                &["slot_id", "starts_at", "ends_at"],
            )],
            events: vec![event],
            idempotency: None,
        };
        match self
            .ports
            .appointments
            .reschedule(&appointment, &entry, from.id, stored_version, now, &meta)
            .await?
        {
            BookOutcome::Booked => {
                self.availability.invalidate(appointment.mission_id);
                self.view(appointment).await
            }
            BookOutcome::Refused(why) => Err(booking_refused(why)),
            BookOutcome::AlreadyBooked(existing) => Err(already_booked(&appointment, existing)),
            // Moves are not limited: they add no booking.
            BookOutcome::LimitReached => {
                Err(ServiceError::Internal("a move was refused by a booking limit".to_owned()))
            }
        }
    }

    /// Cancels the booking and frees its seat: the citizen before the cancellation
    /// cut-off, staff and admins any time.
    pub async fn cancel(
        &self,
        actor: &Principal,
        id: AppointmentId,
        expected_versions: Option<&[i64]>,
    ) -> Result<(), ServiceError> {
        retry_unconditional(expected_versions, || async {
            let mut appointment = self.found(id).await?;
            let role = policy::change(actor, &Owned::from(&appointment))?;
            self.refuse_minor_alone(actor, self.ports.clock.now()).await?;
            let stored_version = appointment.version;
            require_version(expected_versions, stored_version)?;
            let slot = self.slot_of(&appointment).await?;
            let now = self.ports.clock.now();
            let cancelled = appointment.cancel(role, &slot, now).map_err(refused)?;
            let (event, entry) = change(&cancelled, &appointment, actor, now)?;
            let meta = WriteMeta {
                audit: vec![audit(
                    actor,
                    now,
                    AuditAction::StatusChanged,
                    RESOURCE,
                    appointment.id.as_uuid(),
                    &["status", "cancelled_by"],
                )],
                events: vec![event],
                idempotency: None,
            };
            self.ports.appointments.cancel(&appointment, &entry, stored_version, &meta).await?;
            self.availability.invalidate(appointment.mission_id);
            Ok(())
        })
        .await
    }

    /// Staff and admins of the mission record whether the citizen came, from the start
    /// time on.
    pub async fn record_attendance(
        &self,
        actor: &Principal,
        id: AppointmentId,
        attendance: Attendance,
        expected_versions: Option<&[i64]>,
    ) -> Result<AppointmentView, ServiceError> {
        policy::attend(actor)?;
        let appointment = retry_unconditional(expected_versions, || async {
            let mut appointment = self.found(id).await?;
            policy::attend_of(actor, &Owned::from(&appointment))?;
            let stored_version = appointment.version;
            require_version(expected_versions, stored_version)?;
            let now = self.ports.clock.now();
            let action = match attendance {
                Attendance::Attended => AppointmentAction::Attend,
                Attendance::NoShow => AppointmentAction::MarkNoShow,
            };
            let recorded = appointment.record_attendance(Role::Staff, action, now).map_err(refused)?;
            let (event, entry) = change(&recorded, &appointment, actor, now)?;
            let meta = WriteMeta {
                audit: vec![audit(
                    actor,
                    now,
                    AuditAction::StatusChanged,
                    RESOURCE,
                    appointment.id.as_uuid(),
                    &["status"],
                )],
                events: vec![event],
                idempotency: None,
            };
            self.ports.appointments.record_attendance(&appointment, &entry, stored_version, &meta).await?;
            Ok(appointment)
        })
        .await?;
        self.view(appointment).await
    }

    /// In start order. A citizen sees their own; staff and admins their mission's (a
    /// day's list with `date`); global admins all.
    pub async fn list(
        &self,
        actor: &Principal,
        asked: AppointmentListFilter,
        page: StartPageRequest,
    ) -> Result<StartPage<AppointmentView>, ServiceError> {
        let mut filter = AppointmentFilter {
            mission_id: asked.mission_id,
            citizen_id: asked.citizen_id,
            slot_id: asked.slot_id,
            statuses: asked.statuses,
            starts_from: None,
            starts_before: None,
            within_services: None,
        };
        match policy::list(actor, filter.mission_id, filter.citizen_id) {
            Listing::Within(RequestReach::Citizen(own, mission, services)) => {
                filter.citizen_id = Some(own);
                filter.mission_id = Some(mission);
                filter.within_services = services;
            }
            Listing::Within(RequestReach::Mission(mission)) => {
                filter.mission_id = filter.mission_id.or(mission)
            }
            Listing::Empty => return Ok(StartPage::empty()),
        }
        if let Some(day) = asked.date {
            // The mission's local day; a global admin naming no mission gets the UTC day.
            let timezone = match filter.mission_id.or(actor.mission) {
                Some(mission_id) => match self.ports.missions.get(mission_id).await? {
                    Some(mission) => mission.timezone,
                    // An unknown mission has no appointments: an empty list, as for any filter.
                    None => return Ok(StartPage::empty()),
                },
                None => "UTC".to_owned(),
            };
            let (from, before) = local_day(&timezone, day)
                .ok_or_else(|| ServiceError::Internal(format!("no valid zone `{timezone}`")))?;
            filter.starts_from = Some(from);
            filter.starts_before = Some(before);
        }
        let found = self.ports.appointments.list(filter, page).await?;
        let mut missions = HashMap::new();
        let mut items = Vec::with_capacity(found.items.len());
        for appointment in found.items {
            if let std::collections::hash_map::Entry::Vacant(e) = missions.entry(appointment.mission_id) {
                e.insert(self.mission(appointment.mission_id).await?);
            }
            let mission = &missions[&appointment.mission_id];
            items.push(AppointmentView {
                timezone: mission.timezone.clone(),
                mission_name: mission.name.clone(),
                mission_city: mission.city.clone(),
                service_name: String::new(),
                appointment,
            });
        }
        Ok(StartPage { items, next_after: found.next_after })
    }
}

/// 409 `already_booked` naming the citizen's active booking that `appointment` would
/// duplicate.
fn already_booked(appointment: &Appointment, existing: AppointmentId) -> ServiceError {
    let detail = match appointment.request_id {
        Some(_) => format!("the citizen already has an active booking for this request: {existing}"),
        None => format!(
            "the citizen already has an active booking without a request in this slot for this service type: {existing}"
        ),
    };
    ServiceError::AlreadyBooked { existing, detail }
}
