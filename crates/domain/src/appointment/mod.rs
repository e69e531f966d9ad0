//! Appointments: bookable slots of a mission's counter time, the bookings citizens (or
//! staff for them) make, and the rules between them (docs/appointments.md).
//!
//! ```text
//! booked → attended | no_show   (staff, at or after the start)
//! booked → cancelled            (the citizen before the cancellation cut-off, staff any
//!                                time, the mission when it closes or shrinks a slot)
//! booked → booked               (reschedule: the booking moves to another slot)
//! ```
//! `attended`, `no_show` and `cancelled` are final. The appointment as stored and its
//! statuses are in `model.rs`, what its history records in `history.rs`. The slot rules (capacity, the service
//! types served, open/closed, cut-offs) are in `slot.rs`; recurring schedules and their
//! expansion to UTC slots across daylight-saving changes in `schedule.rs`.

mod history;
mod model;
mod schedule;
mod slot;

pub use history::{AppointmentChange, AppointmentEntry, ChangeMismatch};
pub use model::{Appointment, AppointmentStatus, CancelledBy};

pub use schedule::{
    Availability, ExplicitSlots, LocalSlot, OpeningHours, RecurringSchedule, SlotTemplate, local_day,
};
pub use slot::{
    BookingRefused, CancelRefused, Cutoffs, RescheduleRefused, Slot, SlotConflict, SlotKey, SlotPlan,
    StartCursor, plan_slot, schedule_release,
};

use crate::event::{AppointmentRef, DomainEvent};
use crate::{AppointmentId, CitizenId, RequestId, Role, ServiceTypeId, Subject};

use time::OffsetDateTime;

/// A change asked of an appointment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AppointmentAction {
    Reschedule,
    Cancel,
    Attend,
    MarkNoShow,
}

impl AppointmentAction {
    pub const ALL: [AppointmentAction; 4] = [Self::Reschedule, Self::Cancel, Self::Attend, Self::MarkNoShow];
}

/// Whether `role` may take `action` on an appointment in `status`, time aside (the
/// cut-offs and the start time are the slot's rules): only a booked appointment changes;
/// the citizen reschedules and cancels, staff (and admins, who act as staff) also record
/// attendance.
pub fn may(role: Role, status: AppointmentStatus, action: AppointmentAction) -> bool {
    use AppointmentAction::*;
    status == AppointmentStatus::Booked && (matches!(action, Reschedule | Cancel) || role == Role::Staff)
}

/// Why a change of an appointment was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppointmentRefused {
    /// The state machine refuses it: the actions allowed instead.
    #[error("a {from} appointment cannot be changed that way by {role:?}")]
    Illegal {
        from: AppointmentStatus,
        action: AppointmentAction,
        role: Role,
        allowed: Vec<AppointmentAction>,
    },
    #[error(transparent)]
    Cancel(#[from] CancelRefused),
    #[error(transparent)]
    Reschedule(#[from] RescheduleRefused),
    /// Attendance is recorded at or after the start time only.
    #[error("attendance can be recorded from {starts_at} on")]
    NotStarted { starts_at: OffsetDateTime },
    /// The slot given is not the appointment's.
    #[error("the slot given is not the appointment's")]
    WrongSlot,
}

impl Appointment {
    /// A new `booked` appointment at version 1 in `slot`, after `slot.check_booking`
    /// (the seat itself is taken by the repository's guarded statement).
    pub fn book(
        slot: &Slot,
        citizen_id: CitizenId,
        service_type_id: ServiceTypeId,
        request_id: Option<RequestId>,
        booked_by: Subject,
        now: OffsetDateTime,
    ) -> Appointment {
        Appointment {
            id: AppointmentId::new(),
            slot_id: slot.id,
            mission_id: slot.mission_id,
            citizen_id,
            service_type_id,
            request_id,
            starts_at: slot.starts_at,
            ends_at: slot.ends_at,
            status: AppointmentStatus::Booked,
            booked_by,
            cancelled_by: None,
            cancelled_at: None,
            version: 1,
            created_at: now,
            updated_at: now,
        }
    }

    /// The actions `role` may take now, time aside.
    pub fn allowed_actions(&self, role: Role) -> Vec<AppointmentAction> {
        AppointmentAction::ALL.into_iter().filter(|a| may(role, self.status, *a)).collect()
    }

    fn check(&self, role: Role, action: AppointmentAction) -> Result<(), AppointmentRefused> {
        if may(role, self.status, action) {
            Ok(())
        } else {
            Err(AppointmentRefused::Illegal {
                from: self.status,
                action,
                role,
                allowed: self.allowed_actions(role),
            })
        }
    }

    fn check_slot(&self, slot: &Slot) -> Result<(), AppointmentRefused> {
        if slot.id == self.slot_id { Ok(()) } else { Err(AppointmentRefused::WrongSlot) }
    }

    /// Moves the booking to `to` (its own slot is `from`): the citizen within the
    /// cancellation cut-off of `from`, staff any time; `to` must take the booking
    /// (`Slot::check_reschedule`). `appointment.rescheduled`, at the new time.
    pub fn reschedule(
        &mut self,
        role: Role,
        from: &Slot,
        to: &Slot,
        now: OffsetDateTime,
    ) -> Result<DomainEvent, AppointmentRefused> {
        self.check(role, AppointmentAction::Reschedule)?;
        self.check_slot(from)?;
        Slot::check_reschedule(from, to, self.service_type_id, role, now)?;
        self.slot_id = to.id;
        self.starts_at = to.starts_at;
        self.ends_at = to.ends_at;
        self.touch(now);
        Ok(DomainEvent::AppointmentRescheduled {
            appointment: AppointmentRef::of(self),
            from_slot_id: from.id,
        })
    }

    /// Cancels the booking: the citizen before the cancellation cut-off, staff any time.
    /// `appointment.cancelled`, naming who.
    pub fn cancel(
        &mut self,
        role: Role,
        slot: &Slot,
        now: OffsetDateTime,
    ) -> Result<DomainEvent, AppointmentRefused> {
        self.check(role, AppointmentAction::Cancel)?;
        self.check_slot(slot)?;
        slot.check_cancel(role, now)?;
        let by = match role {
            Role::Citizen => CancelledBy::Citizen,
            Role::Staff => CancelledBy::Staff,
        };
        self.close_as_cancelled(by, now);
        Ok(DomainEvent::AppointmentCancelled { appointment: AppointmentRef::of(self), cancelled_by: by })
    }

    /// The mission cancels the booking (its slot is closed or shrunk,
    /// `plan_slot`): no cut-off applies. Only a booked appointment.
    /// `appointment.cancelled_by_mission`.
    pub fn cancel_by_mission(&mut self, now: OffsetDateTime) -> Result<DomainEvent, AppointmentRefused> {
        self.check(Role::Staff, AppointmentAction::Cancel)?;
        self.close_as_cancelled(CancelledBy::Mission, now);
        Ok(DomainEvent::AppointmentCancelledByMission { appointment: AppointmentRef::of(self) })
    }

    /// Staff record that the citizen came (`Attend`) or not (`MarkNoShow`), at or after the
    /// start time: `appointment.attended` or `appointment.no_show`.
    pub fn record_attendance(
        &mut self,
        role: Role,
        action: AppointmentAction,
        now: OffsetDateTime,
    ) -> Result<DomainEvent, AppointmentRefused> {
        self.check(role, action)?;
        let appointment = AppointmentRef::of(self);
        let (status, event) = match action {
            AppointmentAction::Attend => {
                (AppointmentStatus::Attended, DomainEvent::AppointmentAttended { appointment })
            }
            AppointmentAction::MarkNoShow => {
                (AppointmentStatus::NoShow, DomainEvent::AppointmentNoShow { appointment })
            }
            other => {
                return Err(AppointmentRefused::Illegal {
                    from: self.status,
                    action: other,
                    role,
                    allowed: self.allowed_actions(role),
                });
            }
        };
        if now < self.starts_at {
            return Err(AppointmentRefused::NotStarted { starts_at: self.starts_at });
        }
        self.status = status;
        self.touch(now);
        Ok(event)
    }

    fn close_as_cancelled(&mut self, by: CancelledBy, now: OffsetDateTime) {
        self.status = AppointmentStatus::Cancelled;
        self.cancelled_by = Some(by);
        self.cancelled_at = Some(now);
        self.touch(now);
    }

    /// Every change makes a new version.
    fn touch(&mut self, now: OffsetDateTime) {
        self.version += 1;
        self.updated_at = now;
    }
}

#[cfg(test)]
mod tests;
