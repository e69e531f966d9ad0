//! Appointments: the `slots`, `slot_service_types`, `appointments` and
//! `appointment_history` tables, their rows,
//! [`AppointmentRepository`] and the plans of its two lists for tests
//! ([`Database::explain_availability`](crate::Database::explain_availability),
//! [`Database::explain_appointment_list`](crate::Database::explain_appointment_list)).
//! The seat invariant and how the tables enforce it: docs/appointments.md.

use crate::failure::Failure;
use crate::shared::columns::{corrupt, subject_from_db};
use crate::shared::repository;
use crate::shared::sql_types::{DbTime, DbUuid};
use consular_domain::{
    Appointment, AppointmentEntry, AppointmentId, Cutoffs, MissionId, RequestId, ServiceTypeId, Slot, SlotId,
    StartCursor,
};
use consular_ports::{
    AppointmentFilter, AppointmentRepository, AvailabilityQuery, BookOutcome, SlotUpsert, StartPage,
    StartPageRequest, WriteMeta,
};
use diesel::QueryResult;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sqlite::Sqlite;
use time::OffsetDateTime;

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableTimestamp, PortableUuid};

    slots (id) {
        id -> PortableUuid,
        mission_id -> PortableUuid,
        starts_at -> PortableTimestamp,
        ends_at -> PortableTimestamp,
        capacity -> Integer,
        booked -> Integer,
        is_open -> Bool,
        booking_cutoff_minutes -> Integer,
        cancellation_cutoff_minutes -> Integer,
        booking_closes_at -> PortableTimestamp,
        version -> BigInt,
        created_at -> PortableTimestamp,
        updated_at -> PortableTimestamp,
        release_at -> Nullable<PortableTimestamp>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableTimestamp, PortableUuid};

    slot_service_types (slot_id, service_type_id) {
        slot_id -> PortableUuid,
        service_type_id -> PortableUuid,
        mission_id -> PortableUuid,
        starts_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableTimestamp, PortableUuid};

    appointments (id) {
        id -> PortableUuid,
        slot_id -> PortableUuid,
        mission_id -> PortableUuid,
        citizen_id -> PortableUuid,
        service_type_id -> PortableUuid,
        request_id -> Nullable<PortableUuid>,
        starts_at -> PortableTimestamp,
        ends_at -> PortableTimestamp,
        status -> Text,
        booked_by_kind -> Text,
        booked_by_id -> PortableUuid,
        cancelled_by -> Nullable<Text>,
        cancelled_at -> Nullable<PortableTimestamp>,
        version -> BigInt,
        created_at -> PortableTimestamp,
        updated_at -> PortableTimestamp,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableTimestamp, PortableUuid};

    appointment_history (appointment_id, version) {
        appointment_id -> PortableUuid,
        version -> BigInt,
        request_id -> Nullable<PortableUuid>,
        change -> Text,
        actor_kind -> Text,
        actor_id -> PortableUuid,
        at -> PortableTimestamp,
        slot_id -> PortableUuid,
        on_behalf_of -> Nullable<PortableUuid>,
        starts_at -> PortableTimestamp,
        ends_at -> PortableTimestamp,
    }
}

/// The constraint of "one active booking per citizen and request" (a unique partial
/// index): a booking that violates it is [`BookOutcome::AlreadyBooked`].
pub(crate) const ONE_PER_REQUEST: &str = "appointments_one_per_request";
/// The constraint of "one active booking per citizen, slot and service type" for
/// bookings without a request (a unique partial index, migration
/// `2026-11-27-000019_one_booking_per_slot`): a booking or a move that violates it is
/// [`BookOutcome::AlreadyBooked`].
pub(crate) const ONE_PER_SLOT: &str = "appointments_one_per_slot";

/// The unique constraints of the area (see `crate::error`).
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] = &[
    ("slots_pkey", "slots.id"),
    ("slots_mission_time", "slots.mission_id, slots.starts_at, slots.ends_at"),
    ("slot_service_types_pkey", "slot_service_types.slot_id, slot_service_types.service_type_id"),
    ("appointments_pkey", "appointments.id"),
    (ONE_PER_REQUEST, "appointments.citizen_id, appointments.request_id"),
    (ONE_PER_SLOT, "appointments.citizen_id, appointments.slot_id, appointments.service_type_id"),
    ("appointment_history_pkey", "appointment_history.appointment_id, appointment_history.version"),
];

repository! {
    impl AppointmentRepository for Database => appointments {
        fn slots_between(mission: MissionId, from: OffsetDateTime, to: OffsetDateTime) -> Vec<Slot>;
        fn upsert_slots(upsert: &SlotUpsert, meta: &WriteMeta);
        fn get_slot(id: SlotId) -> Option<Slot>;
        fn available_slots(query: AvailabilityQuery, page: StartPageRequest) -> StartPage<Slot>;
        fn book(
            appointment: &Appointment,
            entry: &AppointmentEntry,
            limit: Option<u32>,
            now: OffsetDateTime,
            meta: &WriteMeta,
        ) -> BookOutcome;
        fn reschedule(
            appointment: &Appointment,
            entry: &AppointmentEntry,
            from: SlotId,
            expected_version: i64,
            now: OffsetDateTime,
            meta: &WriteMeta,
        ) -> BookOutcome;
        fn cancel(appointment: &Appointment, entry: &AppointmentEntry, expected_version: i64, meta: &WriteMeta);
        fn record_attendance(
            appointment: &Appointment,
            entry: &AppointmentEntry,
            expected_version: i64,
            meta: &WriteMeta,
        );
        fn get(id: AppointmentId) -> Option<Appointment>;
        fn list(filter: AppointmentFilter, page: StartPageRequest) -> StartPage<Appointment>;
    }
}

repository! {
    impl Database => appointments {
        /// The query plan of [`AppointmentRepository::available_slots`], one line per
        /// row; for tests. Read as for
        /// [`explain_request_list`](crate::Database::explain_request_list).
        #[doc(hidden)]
        pub fn explain_availability(query: AvailabilityQuery, page: StartPageRequest) -> Vec<String>;
        /// The query plan of [`AppointmentRepository::list`]; for tests.
        #[doc(hidden)]
        pub fn explain_appointment_list(filter: AppointmentFilter, page: StartPageRequest) -> Vec<String>;
        /// The seat count of a slot and the number of its appointments holding a seat
        /// (every status but `cancelled`), read in one statement each; for tests of the
        /// invariant.
        #[doc(hidden)]
        pub fn seats_of(slot: SlotId) -> (i64, i64);
        /// The history of every appointment linked to `request`, oldest first (then by
        /// appointment and version), alone (the use cases read it with the request's
        /// detail, `RequestRepository::detail`); for tests.
        #[doc(hidden)]
        pub fn request_history(request: RequestId) -> Vec<AppointmentEntry>;
        /// Drops the index `appointments_one_per_slot`, so that a test can store the
        /// bookings an older build could; for tests of the migration.
        #[doc(hidden)]
        pub fn drop_one_per_slot();
        /// Runs migration `2026-11-27-000019_one_booking_per_slot` again (after
        /// [`drop_one_per_slot`](crate::Database::drop_one_per_slot)), in a transaction;
        /// for tests.
        #[doc(hidden)]
        pub fn migrate_one_per_slot();
    }
}

// ------------------------------------------------------------ what the databases differ in

/// What a booking with a limit does differently per database, chosen by the backend of
/// the `Conn` type `queries.rs` is compiled with (docs/appointments.md "Bookings per
/// citizen").
pub(crate) trait BookingDialect {
    /// Whether the transaction locks the citizen's row (`FOR NO KEY UPDATE`) before its
    /// seat statement counts the citizen's upcoming bookings. On PostgreSQL writers run
    /// concurrently (READ COMMITTED): the lock makes a citizen's limited bookings run one
    /// after the other, and the statements after it read a snapshot taken once the one
    /// before has committed, so the count includes it. The lock is `NO KEY`: the
    /// foreign-key checks of other tables' rows of the citizen never wait for it. SQLite's
    /// `BEGIN IMMEDIATE` serialises every writer already.
    const LOCKS_CITIZEN: bool;
    /// The text of migration `2026-11-27-000019_one_booking_per_slot` in this database's
    /// tree, for the test of what it does to bookings stored before it
    /// ([`Database::migrate_one_per_slot`](crate::Database::migrate_one_per_slot)).
    const ONE_PER_SLOT_MIGRATION: &'static str;
}

impl BookingDialect for Pg {
    const LOCKS_CITIZEN: bool = true;
    const ONE_PER_SLOT_MIGRATION: &'static str =
        include_str!("../../../../../migrations/postgres/2026-11-27-000019_one_booking_per_slot/up.sql");
}

impl BookingDialect for Sqlite {
    const LOCKS_CITIZEN: bool = false;
    const ONE_PER_SLOT_MIGRATION: &'static str =
        include_str!("../../../../../migrations/sqlite/2026-11-27-000019_one_booking_per_slot/up.sql");
}

/// `<query> FOR NO KEY UPDATE` on PostgreSQL: the selected rows stay locked until the
/// transaction ends. On SQLite (never run there, see [`BookingDialect`]) the query as
/// it is. `query` must be a whole `SELECT` of one table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Locked<Q>(pub Q);

// The statement of a static query stays static: prepared once per connection.
impl<Q: QueryId> QueryId for Locked<Q> {
    type QueryId = Locked<Q::QueryId>;
    const HAS_STATIC_QUERY_ID: bool = Q::HAS_STATIC_QUERY_ID;
}

impl<Q: Query> Query for Locked<Q> {
    type SqlType = Q::SqlType;
}

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for Locked<Q> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.0.walk_ast(out.reborrow())?;
        out.push_sql(" FOR NO KEY UPDATE");
        Ok(())
    }
}

impl<Q: QueryFragment<Sqlite>> QueryFragment<Sqlite> for Locked<Q> {
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        self.0.walk_ast(out)
    }
}

// ------------------------------------------------------------------------------- rows

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = slots)]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct SlotRow {
    pub id: DbUuid,
    pub mission_id: DbUuid,
    pub starts_at: DbTime,
    pub ends_at: DbTime,
    pub capacity: i32,
    pub booked: i32,
    pub is_open: bool,
    pub booking_cutoff_minutes: i32,
    pub cancellation_cutoff_minutes: i32,
    pub booking_closes_at: DbTime,
    pub version: i64,
    pub created_at: DbTime,
    pub updated_at: DbTime,
    pub release_at: Option<DbTime>,
}

/// What a submission replaces in a stored slot: its configuration, never its identity
/// (id, mission, times) nor its seat count.
#[derive(Debug, Clone, AsChangeset)]
#[diesel(table_name = slots)]
// Without this, a release cleared (`None`) would keep the stored instant.
#[diesel(treat_none_as_null = true)]
pub(crate) struct SlotConfig {
    pub capacity: i32,
    pub is_open: bool,
    pub booking_cutoff_minutes: i32,
    pub cancellation_cutoff_minutes: i32,
    pub booking_closes_at: DbTime,
    pub release_at: Option<DbTime>,
    pub version: i64,
    pub updated_at: DbTime,
}

fn small(what: &str, value: u32) -> Result<i32, Failure> {
    i32::try_from(value).map_err(|e| corrupt(what, e))
}

impl TryFrom<&Slot> for SlotRow {
    type Error = Failure;
    /// A new slot's row: no seat taken yet, whatever `booked` says.
    fn try_from(s: &Slot) -> Result<Self, Failure> {
        let config = SlotConfig::try_from(s)?;
        Ok(SlotRow {
            id: DbUuid(s.id.0),
            mission_id: DbUuid(s.mission_id.0),
            starts_at: DbTime(s.starts_at),
            ends_at: DbTime(s.ends_at),
            capacity: config.capacity,
            booked: 0,
            is_open: config.is_open,
            booking_cutoff_minutes: config.booking_cutoff_minutes,
            cancellation_cutoff_minutes: config.cancellation_cutoff_minutes,
            booking_closes_at: config.booking_closes_at,
            version: s.version,
            created_at: DbTime(s.created_at),
            updated_at: DbTime(s.updated_at),
            release_at: config.release_at,
        })
    }
}

impl TryFrom<&Slot> for SlotConfig {
    type Error = Failure;
    fn try_from(s: &Slot) -> Result<Self, Failure> {
        Ok(SlotConfig {
            capacity: small("slot capacity", s.capacity)?,
            is_open: s.open,
            booking_cutoff_minutes: small("booking cut-off", s.cutoffs.booking_minutes)?,
            cancellation_cutoff_minutes: small("cancellation cut-off", s.cutoffs.cancellation_minutes)?,
            booking_closes_at: DbTime(s.booking_closes_at()),
            release_at: s.release_at.map(DbTime),
            version: s.version,
            updated_at: DbTime(s.updated_at),
        })
    }
}

impl SlotRow {
    /// The slot, given the service types it serves (sorted).
    pub(crate) fn into_slot(self, service_types: Vec<ServiceTypeId>) -> Result<Slot, Failure> {
        let count = |what: &str, value: i32| u32::try_from(value).map_err(|e| corrupt(what, e));
        Ok(Slot {
            id: self.id.0.into(),
            mission_id: self.mission_id.0.into(),
            starts_at: self.starts_at.0,
            ends_at: self.ends_at.0,
            capacity: count("slots.capacity", self.capacity)?,
            booked: count("slots.booked", self.booked)?,
            service_types,
            open: self.is_open,
            cutoffs: Cutoffs {
                booking_minutes: count("slots.booking_cutoff_minutes", self.booking_cutoff_minutes)?,
                cancellation_minutes: count(
                    "slots.cancellation_cutoff_minutes",
                    self.cancellation_cutoff_minutes,
                )?,
            },
            release_at: self.release_at.map(|t| t.0),
            version: self.version,
            created_at: self.created_at.0,
            updated_at: self.updated_at.0,
        })
    }

    pub(crate) fn cursor(&self) -> StartCursor {
        StartCursor { starts_at: self.starts_at.0, id: self.id.0 }
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = slot_service_types)]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct SlotServiceTypeRow {
    pub slot_id: DbUuid,
    pub service_type_id: DbUuid,
    pub mission_id: DbUuid,
    pub starts_at: DbTime,
}

impl SlotServiceTypeRow {
    pub(crate) fn of(slot: &Slot) -> Vec<SlotServiceTypeRow> {
        slot.service_types
            .iter()
            .map(|t| SlotServiceTypeRow {
                slot_id: DbUuid(slot.id.0),
                service_type_id: DbUuid(t.0),
                mission_id: DbUuid(slot.mission_id.0),
                starts_at: DbTime(slot.starts_at),
            })
            .collect()
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(table_name = appointments)]
#[diesel(treat_none_as_default_value = false)]
// Without this, a `None` would keep the stored value instead of writing NULL.
#[diesel(treat_none_as_null = true)]
pub(crate) struct AppointmentRow {
    pub id: DbUuid,
    pub slot_id: DbUuid,
    pub mission_id: DbUuid,
    pub citizen_id: DbUuid,
    pub service_type_id: DbUuid,
    pub request_id: Option<DbUuid>,
    pub starts_at: DbTime,
    pub ends_at: DbTime,
    pub status: String,
    pub booked_by_kind: String,
    pub booked_by_id: DbUuid,
    pub cancelled_by: Option<String>,
    pub cancelled_at: Option<DbTime>,
    pub version: i64,
    pub created_at: DbTime,
    pub updated_at: DbTime,
}

impl From<&Appointment> for AppointmentRow {
    fn from(a: &Appointment) -> Self {
        AppointmentRow {
            id: DbUuid(a.id.0),
            slot_id: DbUuid(a.slot_id.0),
            mission_id: DbUuid(a.mission_id.0),
            citizen_id: DbUuid(a.citizen_id.0),
            service_type_id: DbUuid(a.service_type_id.0),
            request_id: a.request_id.map(|r| DbUuid(r.0)),
            starts_at: DbTime(a.starts_at),
            ends_at: DbTime(a.ends_at),
            status: a.status.as_str().to_owned(),
            booked_by_kind: a.booked_by.kind.as_str().to_owned(),
            booked_by_id: DbUuid(a.booked_by.id.0),
            cancelled_by: a.cancelled_by.map(|c| c.as_str().to_owned()),
            cancelled_at: a.cancelled_at.map(DbTime),
            version: a.version,
            created_at: DbTime(a.created_at),
            updated_at: DbTime(a.updated_at),
        }
    }
}

impl TryFrom<AppointmentRow> for Appointment {
    type Error = Failure;
    fn try_from(row: AppointmentRow) -> Result<Self, Failure> {
        Ok(Appointment {
            id: row.id.0.into(),
            slot_id: row.slot_id.0.into(),
            mission_id: row.mission_id.0.into(),
            citizen_id: row.citizen_id.0.into(),
            service_type_id: row.service_type_id.0.into(),
            request_id: row.request_id.map(|r| r.0.into()),
            starts_at: row.starts_at.0,
            ends_at: row.ends_at.0,
            status: row.status.parse().map_err(|e| corrupt("appointments.status", e))?,
            booked_by: subject_from_db("appointments.booked_by_kind", &row.booked_by_kind, row.booked_by_id)?,
            cancelled_by: row
                .cancelled_by
                .map(|c| c.parse().map_err(|e| corrupt("appointments.cancelled_by", e)))
                .transpose()?,
            cancelled_at: row.cancelled_at.map(|t| t.0),
            version: row.version,
            created_at: row.created_at.0,
            updated_at: row.updated_at.0,
        })
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = appointment_history)]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct EntryRow {
    pub appointment_id: DbUuid,
    pub version: i64,
    pub request_id: Option<DbUuid>,
    pub change: String,
    pub actor_kind: String,
    pub actor_id: DbUuid,
    pub at: DbTime,
    pub slot_id: DbUuid,
    pub on_behalf_of: Option<DbUuid>,
    pub starts_at: DbTime,
    pub ends_at: DbTime,
}

impl From<&AppointmentEntry> for EntryRow {
    fn from(e: &AppointmentEntry) -> Self {
        EntryRow {
            appointment_id: DbUuid(e.appointment_id.0),
            version: e.version,
            request_id: e.request_id.map(|r| DbUuid(r.0)),
            change: e.change.as_str().to_owned(),
            actor_kind: e.actor.kind.as_str().to_owned(),
            actor_id: DbUuid(e.actor.id.0),
            at: DbTime(e.at),
            slot_id: DbUuid(e.slot_id.0),
            on_behalf_of: e.on_behalf_of.map(|c| DbUuid(c.0)),
            starts_at: DbTime(e.starts_at),
            ends_at: DbTime(e.ends_at),
        }
    }
}

impl TryFrom<EntryRow> for AppointmentEntry {
    type Error = Failure;
    fn try_from(row: EntryRow) -> Result<Self, Failure> {
        Ok(AppointmentEntry {
            appointment_id: row.appointment_id.0.into(),
            version: row.version,
            request_id: row.request_id.map(|r| r.0.into()),
            change: row.change.parse().map_err(|e| corrupt("appointment_history.change", e))?,
            actor: subject_from_db("appointment_history.actor_kind", &row.actor_kind, row.actor_id)?,
            on_behalf_of: row.on_behalf_of.map(|c| c.0.into()),
            at: row.at.0,
            slot_id: row.slot_id.0.into(),
            starts_at: row.starts_at.0,
            ends_at: row.ends_at.0,
        })
    }
}
