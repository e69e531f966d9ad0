//! Slots and their rules, all pure: whether a slot takes a booking, whether a booking
//! may be cancelled or moved, and what changing a slot's capacity or closing it does to
//! the bookings it holds (docs/appointments.md "Slot rules", "Changing a slot").

use super::model::{Appointment, AppointmentStatus};
use crate::{AppointmentId, MissionId, Role, ServiceTypeId, SlotId, ValidationErrors};
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime, UtcOffset};
use uuid::Uuid;

/// How long before a slot's start booking closes and citizens can no longer cancel
/// (staff always can). Copied into every slot from the schedule or list that made it,
/// so changing a schedule's cut-offs never changes slots already made by another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Cutoffs {
    pub booking_minutes: u32,
    pub cancellation_minutes: u32,
}

impl Cutoffs {
    /// The longest cut-off accepted: 30 days.
    pub const MAX_MINUTES: u32 = 30 * 24 * 60;
}

impl Default for Cutoffs {
    /// Booking closes one hour before the start; citizens cannot cancel within 24 hours.
    fn default() -> Self {
        Cutoffs { booking_minutes: 60, cancellation_minutes: 24 * 60 }
    }
}

/// The identity of a slot by content: a mission has at most one slot with given start
/// and end (a unique constraint), so submitting the same availability again finds the
/// same slots (docs/appointments.md "Idempotent by content").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SlotKey {
    pub mission_id: MissionId,
    pub starts_at: OffsetDateTime,
    pub ends_at: OffsetDateTime,
}

/// Where a list ordered by start time (then id) continues: slots and appointments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StartCursor {
    pub starts_at: OffsetDateTime,
    pub id: Uuid,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Slot {
    pub id: SlotId,
    pub mission_id: MissionId,
    /// UTC instants; the mission's local time is derived for display only.
    pub starts_at: OffsetDateTime,
    pub ends_at: OffsetDateTime,
    pub capacity: u32,
    /// Seats taken by active (`booked`) appointments. Changed only by the repository's
    /// guarded statements, never written from a read value.
    pub booked: u32,
    /// The service types it serves, sorted, without repeats.
    pub service_types: Vec<ServiceTypeId>,
    pub open: bool,
    pub cutoffs: Cutoffs,
    /// The instant the slot opens to availability reads and bookings, for every caller
    /// (docs/appointments.md "Scheduled release"); `None`: released. Part of the
    /// submitted configuration.
    #[serde(default)]
    pub release_at: Option<OffsetDateTime>,
    /// Moves when the slot's configuration changes (capacity, open, service types,
    /// cut-offs, release), not with bookings.
    pub version: i64,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

/// Why a slot does not take a booking.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BookingRefused {
    #[error("the slot is closed")]
    Closed,
    /// Before the slot's scheduled release.
    #[error("the slot opens for booking at {release_at}")]
    NotReleased { release_at: OffsetDateTime },
    #[error("the slot does not serve this service type")]
    ServiceNotServed,
    #[error("booking closed at {closes_at}")]
    BookingClosed { closes_at: OffsetDateTime },
    #[error("the slot is full")]
    Full,
}

/// Why a citizen may not cancel.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CancelRefused {
    #[error("citizens cannot cancel after {closes_at} (the cancellation cut-off)")]
    InsideCutoff { closes_at: OffsetDateTime },
}

/// Why a booking cannot move from one slot to another.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RescheduleRefused {
    #[error("the appointment is already in that slot")]
    SameSlot,
    #[error("the slot belongs to another mission")]
    OtherMission,
    /// The citizen is inside the cancellation cut-off of the current slot.
    #[error(transparent)]
    Leave(#[from] CancelRefused),
    #[error(transparent)]
    Join(#[from] BookingRefused),
}

/// Changing a slot would drop seats that are booked: refused (409) unless the request
/// asks to cancel those bookings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[error("slot {slot_id} has {booked} booked seat(s); capacity {capacity}, open {open}")]
pub struct SlotConflict {
    pub slot_id: SlotId,
    pub starts_at: OffsetDateTime,
    pub booked: u32,
    pub capacity: u32,
    pub open: bool,
}

/// What submitting a slot does: the slot to store (with `expected_version` when it
/// replaces a stored one; `changed` false when nothing differs) and the bookings the
/// mission cancels to make room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotPlan {
    pub slot: Slot,
    pub expected_version: Option<i64>,
    pub changed: bool,
    pub cancel: Vec<AppointmentId>,
}

impl Slot {
    pub fn key(&self) -> SlotKey {
        SlotKey { mission_id: self.mission_id, starts_at: self.starts_at, ends_at: self.ends_at }
    }

    pub fn remaining(&self) -> u32 {
        self.capacity.saturating_sub(self.booked)
    }

    pub fn serves(&self, service_type: ServiceTypeId) -> bool {
        self.service_types.binary_search(&service_type).is_ok()
    }

    /// The instant booking closes (start minus the booking cut-off).
    pub fn booking_closes_at(&self) -> OffsetDateTime {
        self.starts_at - Duration::minutes(i64::from(self.cutoffs.booking_minutes))
    }

    /// The instant citizens can no longer cancel (start minus the cancellation cut-off).
    pub fn cancellation_closes_at(&self) -> OffsetDateTime {
        self.starts_at - Duration::minutes(i64::from(self.cutoffs.cancellation_minutes))
    }

    /// Whether the slot is released at `now` (no release scheduled, or its instant
    /// reached): listed by availability and bookable.
    pub fn released(&self, now: OffsetDateTime) -> bool {
        self.release_at.is_none_or(|at| at <= now)
    }

    /// Whether the slot takes a booking for `service_type` at `now`: open, released,
    /// serving it, before the booking cut-off, with a free seat. The seat itself is taken
    /// by the repository's guarded statement; this answers why not.
    pub fn check_booking(
        &self,
        service_type: ServiceTypeId,
        now: OffsetDateTime,
    ) -> Result<(), BookingRefused> {
        if !self.open {
            Err(BookingRefused::Closed)
        } else if let Some(release_at) = self.release_at.filter(|_| !self.released(now)) {
            Err(BookingRefused::NotReleased { release_at })
        } else if !self.serves(service_type) {
            Err(BookingRefused::ServiceNotServed)
        } else if now >= self.booking_closes_at() {
            Err(BookingRefused::BookingClosed { closes_at: self.booking_closes_at() })
        } else if self.booked >= self.capacity {
            Err(BookingRefused::Full)
        } else {
            Ok(())
        }
    }

    /// Whether a booking of this slot may be cancelled by `role` at `now`: citizens
    /// before the cancellation cut-off, staff any time.
    pub fn check_cancel(&self, role: Role, now: OffsetDateTime) -> Result<(), CancelRefused> {
        match role {
            Role::Staff => Ok(()),
            Role::Citizen if now < self.cancellation_closes_at() => Ok(()),
            Role::Citizen => Err(CancelRefused::InsideCutoff { closes_at: self.cancellation_closes_at() }),
        }
    }

    /// Whether a booking for `service_type` may move from `from` to `to`: another slot
    /// of the same mission that takes the booking now; the citizen must also be allowed
    /// to leave `from` (its cancellation cut-off), staff always are.
    pub fn check_reschedule(
        from: &Slot,
        to: &Slot,
        service_type: ServiceTypeId,
        role: Role,
        now: OffsetDateTime,
    ) -> Result<(), RescheduleRefused> {
        if from.id == to.id {
            return Err(RescheduleRefused::SameSlot);
        }
        if from.mission_id != to.mission_id {
            return Err(RescheduleRefused::OtherMission);
        }
        from.check_cancel(role, now)?;
        to.check_booking(service_type, now)?;
        Ok(())
    }

    /// Whether the configuration (what an admin submits) differs.
    fn same_configuration(&self, other: &Slot) -> bool {
        (self.capacity, self.open, &self.service_types, self.cutoffs, self.release_at)
            == (other.capacity, other.open, &other.service_types, other.cutoffs, other.release_at)
    }
}

/// Schedules the release of a submission's `slots` at `release_at` (`None`: released at
/// once), kept in UTC to the microsecond as the databases store it, so that submitting
/// the same instant again changes nothing. A release at or after the booking close of
/// one of the slots is refused at `/release_at` (no citizen could book that slot: a
/// mistyped year, say); one in the past is not (the slots are released at once). The
/// instant kept is returned.
pub fn schedule_release(
    slots: &mut [Slot],
    release_at: Option<OffsetDateTime>,
) -> Result<Option<OffsetDateTime>, ValidationErrors> {
    let release_at = release_at.map(|at| {
        let at = at.to_offset(UtcOffset::UTC);
        at.replace_nanosecond(at.nanosecond() / 1_000 * 1_000).unwrap_or(at)
    });
    if let Some(at) = release_at
        && let Some(first) = slots.iter().map(Slot::booking_closes_at).filter(|closes| at >= *closes).min()
    {
        return Err(ValidationErrors::single(
            "/release_at",
            "after_booking_close",
            format!(
                "must be before the booking cut-off of every slot it releases; booking of one closes at {}",
                first.format(&Rfc3339).unwrap_or_else(|_| first.to_string())
            ),
        ));
    }
    for slot in slots {
        slot.release_at = release_at;
    }
    Ok(release_at)
}

/// Decides what submitting `wanted` (a slot made by an expansion, keyed by content) does
/// to `existing`, the stored slot with the same key, whose active bookings are `active`.
///
/// A new slot is inserted. A stored one takes the wanted configuration (a new version
/// only if something differs; its id, bookings and creation time stay). If the new
/// configuration leaves fewer seats than are booked (a lower capacity, or closing), it
/// is a [`SlotConflict`] unless `cancel_bookings`: then the most recent bookings beyond
/// the new capacity are cancelled by the mission (all of them when closing), so the
/// citizens who booked first keep their seats. Bookings whose service type the slot no
/// longer serves keep their seats.
pub fn plan_slot(
    existing: Option<&Slot>,
    wanted: Slot,
    active: &[Appointment],
    cancel_bookings: bool,
    now: OffsetDateTime,
) -> Result<SlotPlan, SlotConflict> {
    let Some(existing) = existing else {
        return Ok(SlotPlan { slot: wanted, expected_version: None, changed: true, cancel: Vec::new() });
    };
    let seats = if wanted.open { wanted.capacity } else { 0 };
    let excess = existing.booked.saturating_sub(seats);
    if excess > 0 && !cancel_bookings {
        return Err(SlotConflict {
            slot_id: existing.id,
            starts_at: existing.starts_at,
            booked: existing.booked,
            capacity: wanted.capacity,
            open: wanted.open,
        });
    }
    let mut newest_first: Vec<&Appointment> =
        active.iter().filter(|a| a.slot_id == existing.id && a.status == AppointmentStatus::Booked).collect();
    newest_first.sort_by_key(|a| std::cmp::Reverse((a.created_at, a.id)));
    let cancel: Vec<AppointmentId> =
        newest_first.into_iter().take(usize::try_from(excess).unwrap_or(usize::MAX)).map(|a| a.id).collect();
    let changed = !existing.same_configuration(&wanted);
    let mut slot = existing.clone();
    if changed {
        slot.capacity = wanted.capacity;
        slot.open = wanted.open;
        slot.service_types = wanted.service_types;
        slot.cutoffs = wanted.cutoffs;
        slot.release_at = wanted.release_at;
        slot.version += 1;
        slot.updated_at = now;
    }
    slot.booked = existing.booked.saturating_sub(u32::try_from(cancel.len()).unwrap_or(u32::MAX));
    Ok(SlotPlan { slot, expected_version: Some(existing.version), changed, cancel })
}
