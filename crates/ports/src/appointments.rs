use crate::{RepoError, WriteMeta};
use async_trait::async_trait;
use consular_domain::{
    Appointment, AppointmentEntry, AppointmentId, AppointmentStatus, BookingRefused, CitizenId, MissionId,
    Page, PageRequest, ServiceTypeId, Slot, SlotId, StartCursor,
};
use time::OffsetDateTime;

/// A page of a list ordered by start time, then id (slots, appointments): keyset, no
/// OFFSET, no count.
pub type StartPageRequest = PageRequest<StartCursor>;
pub type StartPage<T> = Page<T, StartCursor>;

/// The availability of one service type at one mission (docs/appointments.md
/// "Availability"): open slots serving it, starting in `[from, to)` and after `now`,
/// whose booking cut-off has not passed at `now`, with at least one free seat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AvailabilityQuery {
    pub mission_id: MissionId,
    pub service_type_id: ServiceTypeId,
    pub from: OffsetDateTime,
    pub to: OffsetDateTime,
    pub now: OffsetDateTime,
}

/// Which appointments a listing shows; every filter present must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppointmentFilter {
    pub mission_id: Option<MissionId>,
    pub citizen_id: Option<CitizenId>,
    pub slot_id: Option<SlotId>,
    /// Any of these statuses (empty: all).
    pub statuses: Vec<AppointmentStatus>,
    /// `starts_at >= starts_from` (a day's list: the day's first instant in the mission's
    /// zone).
    pub starts_from: Option<OffsetDateTime>,
    /// `starts_at < starts_before`.
    pub starts_before: Option<OffsetDateTime>,
    /// Only appointments for these service types (a representative's mandate,
    /// docs/representation.md "Acting"); `None`: any.
    pub within_services: Option<Vec<consular_domain::ServiceTypeId>>,
}

/// A submission of availability as the use case planned it with `plan_slot`: each slot
/// with the version it was read at (`None`: a new slot), and the bookings the mission
/// cancels to make room, already cancelled (`Appointment::cancel_by_mission`), each with
/// the version it was read at, and the history entry of its cancellation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SlotUpsert {
    pub slots: Vec<(Slot, Option<i64>)>,
    pub cancelled: Vec<(Appointment, i64, AppointmentEntry)>,
}

/// What a booking (or the seat half of a reschedule) came to. Only `Booked` stored
/// anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BookOutcome {
    Booked,
    /// The guarded seat statement updated no row: the slot's state says why (`Full`
    /// when the slot looks bookable again by the time it is read: it was full then).
    Refused(BookingRefused),
    /// The citizen already has an active (`booked`) booking for this request (the unique
    /// partial index `appointments_one_per_request`) or, without a request, in this slot
    /// for this service type (`appointments_one_per_slot`): the one named, read after the
    /// index refused the row (docs/appointments.md "The seat invariant").
    AlreadyBooked(AppointmentId),
    /// The citizen already holds the `limit` given to [`AppointmentRepository::book`] in
    /// upcoming bookings (docs/appointments.md "Bookings per citizen").
    LimitReached,
}

/// Slots and appointments (docs/appointments.md). The seat count of a slot (`booked`)
/// equals the number of its `booked` appointments after every committed write: seats are
/// taken only by a guarded statement (`booked < capacity`) in the transaction that stores
/// the booking, released in the transaction that cancels or moves it, and the table
/// refuses `booked > capacity` and bookings in a closed slot (CHECK constraints). Every
/// write that changes an appointment also stores its [`AppointmentEntry`] (the history),
/// in the same transaction.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait AppointmentRepository: Send + Sync {
    /// Every slot of `mission` starting in `[from, to)`, in start order (then id): what a
    /// submission is planned against (matched by `Slot::key`).
    async fn slots_between(
        &self,
        mission: MissionId,
        from: OffsetDateTime,
        to: OffsetDateTime,
    ) -> Result<Vec<Slot>, RepoError>;
    /// Stores a planned submission in one transaction with `meta`: the cancellations
    /// (each appointment still `booked` at its version, its seat released), then each
    /// slot inserted (a taken key is `Duplicate { constraint: "slots_mission_time" }`:
    /// another submission came first) or its configuration replaced if its version is
    /// still the one read and its bookings still fit (`booked <= capacity`, none if
    /// closed); `booked` is never written from the value given. `VersionConflict` when a
    /// slot or an appointment moved on, or bookings arrived so that the plan no longer
    /// holds; `NotFound` when one is gone. Any failure stores nothing: plan again.
    async fn upsert_slots(&self, upsert: &SlotUpsert, meta: &WriteMeta) -> Result<(), RepoError>;
    async fn get_slot(&self, id: SlotId) -> Result<Option<Slot>, RepoError>;
    /// The query's slots in start order (then id), after `page.after`, through the index
    /// `(mission, service type, start)`: never past slots.
    async fn available_slots(
        &self,
        query: AvailabilityQuery,
        page: StartPageRequest,
    ) -> Result<StartPage<Slot>, RepoError>;
    /// Takes a seat in `appointment.slot_id` and stores the (new, `booked`) appointment,
    /// in one transaction with `meta`. The seat is taken by one guarded `UPDATE` (open,
    /// serving the service type, before the booking cut-off at `now`, `booked <
    /// capacity`, and with a `limit`, fewer than `limit` upcoming bookings of the
    /// citizen); when it updates no row nothing is stored and the outcome is `Refused`
    /// (the slot's reason first) or `LimitReached`. Upcoming bookings are the citizen's
    /// `booked` appointments ending after `now`; bookings with a limit run one at a time
    /// per citizen, so concurrent ones never exceed it. An active booking of the same
    /// citizen for the same request, or without a request in the same slot for the same
    /// service type, is `AlreadyBooked` naming it, whatever the timing of the two
    /// (nothing stored). An unknown slot is `NotFound`.
    async fn book(
        &self,
        appointment: &Appointment,
        entry: &AppointmentEntry,
        limit: Option<u32>,
        now: OffsetDateTime,
        meta: &WriteMeta,
    ) -> Result<BookOutcome, RepoError>;
    /// Moves a booking: `appointment` is the rescheduled one (its new slot, version
    /// bumped), `from` the slot it leaves. In one transaction with `meta`: a seat taken in
    /// the new slot by the guarded statement (else `Refused`, nothing changes), the seat in
    /// `from` released, the appointment replaced if still `booked` at `expected_version`
    /// (`VersionConflict` / `NotFound` otherwise, nothing changes). A booking without a
    /// request moved into a slot where the citizen already has one for the same service
    /// type is `AlreadyBooked` naming that one (nothing changes).
    async fn reschedule(
        &self,
        appointment: &Appointment,
        entry: &AppointmentEntry,
        from: SlotId,
        expected_version: i64,
        now: OffsetDateTime,
        meta: &WriteMeta,
    ) -> Result<BookOutcome, RepoError>;
    /// Stores the cancelled `appointment` if it is still `booked` at `expected_version`
    /// and releases its seat at once, in one transaction with `meta`.
    /// `VersionConflict` / `NotFound` otherwise (nothing changes).
    async fn cancel(
        &self,
        appointment: &Appointment,
        entry: &AppointmentEntry,
        expected_version: i64,
        meta: &WriteMeta,
    ) -> Result<(), RepoError>;
    /// Stores `appointment` as `attended` or `no_show` if it is still `booked` at
    /// `expected_version`, in one transaction with `meta` (a seat stays taken: the
    /// citizen used it). `VersionConflict` / `NotFound` otherwise; any other status given
    /// is `Other`.
    async fn record_attendance(
        &self,
        appointment: &Appointment,
        entry: &AppointmentEntry,
        expected_version: i64,
        meta: &WriteMeta,
    ) -> Result<(), RepoError>;
    async fn get(&self, id: AppointmentId) -> Result<Option<Appointment>, RepoError>;
    /// Appointments in start order (then id), after `page.after`, through an index that
    /// yields that order for the mission, citizen or slot filter.
    async fn list(
        &self,
        filter: AppointmentFilter,
        page: StartPageRequest,
    ) -> Result<StartPage<Appointment>, RepoError>;
}
