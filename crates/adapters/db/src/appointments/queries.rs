//! The queries of appointments. Seats change only here, by guarded statements in the
//! transaction of the booking, move or cancellation (docs/appointments.md "The seat
//! invariant"). Every write locks the appointment row first and slot rows after it, in id
//! order, so two writes never wait on each other in a cycle; a booking with a limit locks
//! its citizen's row (PostgreSQL) before its slot's. A write sends its statements in
//! batches ([`Batch`], pipelined on PostgreSQL, in the order written): each batch ends
//! with the statement whose row count decides what follows (the seat taken, the
//! appointment replaced), so a booking is `BEGIN`, two round trips and `COMMIT`
//! (docs/benchmarks.md "A booking's statements").

use super::{Backend, Batch, BatchError, BoxedSelect, Conn, explain, write_meta};
use crate::appointments::{
    AppointmentRow, BookingDialect, EntryRow, Locked, ONE_PER_REQUEST, ONE_PER_SLOT, SlotConfig, SlotRow,
    SlotServiceTypeRow, appointment_history, appointments, slot_service_types, slots,
};
use crate::citizens::citizens;
use crate::failure::Failure;
use crate::shared::columns::service_type_ids;
use crate::shared::not_updated;
use crate::shared::sql_types::{DbTime, DbUuid};
use consular_domain::{
    Appointment, AppointmentEntry, AppointmentId, AppointmentStatus, CitizenId, MissionId, RequestId,
    ServiceTypeId, Slot, SlotId,
};
use consular_ports::{
    AppointmentFilter, AvailabilityQuery, BookOutcome, RepoError, SlotUpsert, StartPage, StartPageRequest,
    WriteMeta,
};
use diesel::dsl::{AsSelect, InnerJoin, IntoBoxed, Select};
use diesel::prelude::*;
use diesel_async::{RunQueryDsl, SimpleAsyncConnection};
use std::collections::HashMap;
use time::OffsetDateTime;
use uuid::Uuid;

/// How many slot ids one statement binds: well under SQLite's limit on parameters.
const IDS_PER_STATEMENT: usize = 500;

/// How many times a booking or a move is tried when a unique index of bookings refused it
/// but the booking holding the place was gone by the time it was read (cancelled in
/// between): the next try may well succeed.
const ATTEMPTS: usize = 3;

/// Why a write transaction stopped: a failure, a refusal that rolls it back and is
/// answered as an outcome, or a unique index of bookings that refused the row
/// (`appointments_one_per_request`, `appointments_one_per_slot`), whose holder is read
/// once the transaction has rolled back (PostgreSQL reads nothing more in a transaction
/// after an error).
enum Stop {
    Failed(Failure),
    Refused(BookOutcome),
    Taken,
}

impl From<diesel::result::Error> for Stop {
    fn from(error: diesel::result::Error) -> Self {
        Stop::Failed(error.into())
    }
}

impl From<Failure> for Stop {
    fn from(failure: Failure) -> Self {
        Stop::Failed(failure)
    }
}

/// `Taken` when `failure` is the violation of one of the unique indexes of bookings.
fn taken(failure: Failure) -> Stop {
    match RepoError::from(failure) {
        RepoError::Duplicate { constraint }
            if constraint == ONE_PER_REQUEST || constraint == ONE_PER_SLOT =>
        {
            Stop::Taken
        }
        other => Stop::Failed(Failure::Outcome(other)),
    }
}

/// The outcome of a booking's transaction: a place a unique index refused is named by
/// the booking holding it; `None` (try again) when that one was cancelled in between.
async fn settle(
    conn: &mut Conn,
    result: Result<(), Stop>,
    appointment: &Appointment,
) -> Result<Option<BookOutcome>, Failure> {
    match result {
        Ok(()) => Ok(Some(BookOutcome::Booked)),
        Err(Stop::Refused(outcome)) => Ok(Some(outcome)),
        // The place is taken: by whom (`None`, to try again, when that booking was
        // cancelled in between).
        Err(Stop::Taken) => Ok(holder(conn, appointment).await?.map(BookOutcome::AlreadyBooked)),
        Err(Stop::Failed(failure)) => Err(failure),
    }
}

/// The active booking other than `appointment` that holds its place under the rules of
/// the unique indexes: the citizen's booking for the same request or, without one, the
/// citizen's booking without a request in the same slot for the same service type.
async fn holder(conn: &mut Conn, appointment: &Appointment) -> Result<Option<AppointmentId>, Failure> {
    let query = appointments::table
        .select(appointments::id)
        .filter(appointments::citizen_id.eq(DbUuid(appointment.citizen_id.0)))
        .filter(appointments::status.eq(AppointmentStatus::Booked.as_str()))
        .filter(appointments::id.ne(DbUuid(appointment.id.0)))
        .into_boxed();
    let query = match appointment.request_id {
        Some(request) => query.filter(appointments::request_id.eq(DbUuid(request.0))),
        None => query
            .filter(appointments::request_id.is_null())
            .filter(appointments::slot_id.eq(DbUuid(appointment.slot_id.0)))
            .filter(appointments::service_type_id.eq(DbUuid(appointment.service_type_id.0))),
    };
    let found: Option<DbUuid> = query.first(conn).await.optional()?;
    Ok(found.map(|id| id.0.into()))
}

/// After [`ATTEMPTS`] tries, each refused by a unique index whose holder was gone.
fn kept_colliding(appointment: &Appointment) -> Failure {
    Failure::Outcome(RepoError::Unavailable(format!(
        "the booking {} kept colliding with bookings cancelled at once",
        appointment.id
    )))
}

/// The slots of `rows` with the service types each serves.
async fn with_service_types(conn: &mut Conn, rows: Vec<SlotRow>) -> Result<Vec<Slot>, Failure> {
    let mut served: HashMap<Uuid, Vec<ServiceTypeId>> = HashMap::new();
    let ids: Vec<DbUuid> = rows.iter().map(|r| r.id).collect();
    for batch in ids.chunks(IDS_PER_STATEMENT) {
        let pairs: Vec<(DbUuid, DbUuid)> = slot_service_types::table
            .filter(slot_service_types::slot_id.eq_any(batch.to_vec()))
            .select((slot_service_types::slot_id, slot_service_types::service_type_id))
            .load(conn)
            .await?;
        for (slot, service_type) in pairs {
            served.entry(slot.0).or_default().push(service_type.0.into());
        }
    }
    rows.into_iter()
        .map(|row| {
            let mut types = served.remove(&row.id.0).unwrap_or_default();
            types.sort();
            row.into_slot(types)
        })
        .collect()
}

pub(crate) async fn slots_between(
    conn: &mut Conn,
    mission: MissionId,
    from: OffsetDateTime,
    to: OffsetDateTime,
) -> Result<Vec<Slot>, Failure> {
    let rows: Vec<SlotRow> = slots::table
        .filter(slots::mission_id.eq(DbUuid(mission.0)))
        .filter(slots::starts_at.ge(DbTime(from)))
        .filter(slots::starts_at.lt(DbTime(to)))
        .order((slots::starts_at.asc(), slots::id.asc()))
        .select(SlotRow::as_select())
        .load(conn)
        .await?;
    with_service_types(conn, rows).await
}

pub(crate) async fn get_slot(conn: &mut Conn, id: SlotId) -> Result<Option<Slot>, Failure> {
    let row: Option<SlotRow> =
        slots::table.find(DbUuid(id.0)).select(SlotRow::as_select()).first(conn).await.optional()?;
    Ok(with_service_types(conn, row.into_iter().collect()).await?.pop())
}

/// The cancellations first (each releasing its seat), then each slot inserted or its
/// configuration replaced under its guards.
pub(crate) async fn upsert_slots(
    conn: &mut Conn,
    upsert: &SlotUpsert,
    meta: &WriteMeta,
) -> Result<(), Failure> {
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        write_meta::store(conn, meta).await?;
        for (appointment, expected, entry) in &upsert.cancelled {
            if appointment.status != AppointmentStatus::Cancelled {
                return Err(Failure::Outcome(RepoError::Other(
                    "a cancellation must be cancelled".to_owned(),
                )));
            }
            let mut batch = Batch::new(conn);
            replace_booked(&mut batch, appointment, *expected).await;
            let counts = sent(batch).await?;
            replaced(conn, appointment, count(&counts, 0)?).await?;
            let mut batch = Batch::new(conn);
            record(&mut batch, appointment, entry).await?;
            release_seat(&mut batch, appointment.slot_id).await;
            sent(batch).await?;
        }
        for (slot, expected) in &upsert.slots {
            match expected {
                None => {
                    diesel::insert_into(slots::table).values(SlotRow::try_from(slot)?).execute(conn).await?;
                }
                Some(expected) => replace_configuration(conn, slot, *expected).await?,
            }
            for row in SlotServiceTypeRow::of(slot) {
                diesel::insert_into(slot_service_types::table).values(row).execute(conn).await?;
            }
        }
        Ok(())
    })
    .await
}

/// Replaces a stored slot's configuration if its version is `expected` and its bookings
/// fit the new one; its service types are removed, for the caller to insert anew.
async fn replace_configuration(conn: &mut Conn, slot: &Slot, expected: i64) -> Result<(), Failure> {
    let config = SlotConfig::try_from(slot)?;
    let target = slots::table.find(DbUuid(slot.id.0)).filter(slots::version.eq(expected));
    // The guard of the seat invariant: a configuration that would leave bookings without
    // a seat updates no row (the CHECKs would refuse it anyway).
    let updated = if slot.open {
        diesel::update(target.filter(slots::booked.le(config.capacity))).set(&config).execute(conn).await?
    } else {
        diesel::update(target.filter(slots::booked.eq(0))).set(&config).execute(conn).await?
    };
    if updated == 0 {
        let exists = diesel::select(diesel::dsl::exists(slots::table.find(DbUuid(slot.id.0))))
            .get_result::<bool>(conn)
            .await?;
        return Err(not_updated(exists));
    }
    diesel::delete(slot_service_types::table.filter(slot_service_types::slot_id.eq(DbUuid(slot.id.0))))
        .execute(conn)
        .await?;
    Ok(())
}

/// The citizen's limit of upcoming bookings, for the seat statement to check.
#[derive(Debug, Clone, Copy)]
struct Limit {
    citizen: CitizenId,
    max: u32,
}

/// How many upcoming bookings (`booked`, ending after `now`) the citizen holds, as a
/// subquery (`Nullable<BigInt>`), through `appointments_citizen_idx`.
macro_rules! upcoming_of {
    ($citizen:expr, $now:expr) => {
        appointments::table
            .filter(appointments::citizen_id.eq(DbUuid($citizen.0)))
            .filter(appointments::status.eq(AppointmentStatus::Booked.as_str()))
            .filter(appointments::ends_at.gt(DbTime($now)))
            .count()
            .single_value()
    };
}

/// Whether a slot is released at `now` (no release scheduled, or its instant reached):
/// a condition of the seat statement and of the availability query, so that the database
/// decides when a slot opens (docs/appointments.md "Scheduled release").
macro_rules! released_at {
    ($now:expr) => {
        slots::release_at.is_null().or(slots::release_at.le(DbTime($now)))
    };
}

/// Queues the statement that takes a seat in `slot` for `service_type` if it is open,
/// released, serves it, is before its booking cut-off at `now` and has one free, and with
/// a `limit`, if the citizen holds fewer upcoming bookings than it: the one statement
/// that can fill a slot. It took the seat when its row count is 1; it ends its batch.
async fn take_seat(
    batch: &mut Batch<'_>,
    slot: SlotId,
    service_type: ServiceTypeId,
    limit: Option<Limit>,
    now: OffsetDateTime,
) {
    let serves = slot_service_types::table
        .filter(slot_service_types::slot_id.eq(DbUuid(slot.0)))
        .filter(slot_service_types::service_type_id.eq(DbUuid(service_type.0)));
    let target = slots::table
        .find(DbUuid(slot.0))
        .filter(slots::is_open.eq(true))
        .filter(slots::booked.lt(slots::capacity))
        .filter(slots::booking_closes_at.gt(DbTime(now)))
        .filter(released_at!(now))
        .filter(diesel::dsl::exists(serves));
    let take = slots::booked.eq(slots::booked + 1);
    match limit {
        None => batch.add(diesel::update(target).set(take)).await,
        Some(Limit { citizen, max }) => {
            batch
                .add(diesel::update(target.filter(upcoming_of!(citizen, now).lt(i64::from(max)))).set(take))
                .await
        }
    }
}

/// Why `take_seat` took none, from the slot as it is now: `NotFound` for an unknown slot,
/// the slot's own refusal, `LimitReached` when the citizen holds their limit, or `Full`
/// (it was full when the statement ran).
async fn refusal(
    conn: &mut Conn,
    slot: SlotId,
    service_type: ServiceTypeId,
    limit: Option<Limit>,
    now: OffsetDateTime,
) -> Stop {
    let slot = match get_slot(conn, slot).await {
        Err(failure) => return Stop::Failed(failure),
        Ok(None) => return Stop::Failed(Failure::Outcome(RepoError::NotFound)),
        Ok(Some(slot)) => slot,
    };
    if let Err(refused) = slot.check_booking(service_type, now) {
        return Stop::Refused(BookOutcome::Refused(refused));
    }
    if let Some(Limit { citizen, max }) = limit {
        match diesel::select(upcoming_of!(citizen, now)).get_result::<Option<i64>>(conn).await {
            Err(error) => return Stop::Failed(error.into()),
            Ok(held) if held.unwrap_or(0) >= i64::from(max) => {
                return Stop::Refused(BookOutcome::LimitReached);
            }
            Ok(_) => {}
        }
    }
    Stop::Refused(BookOutcome::Refused(consular_domain::BookingRefused::Full))
}

/// Queues the lock of the citizen's row until the transaction ends, where the database
/// runs writers at once ([`BookingDialect`]).
async fn lock_citizen(batch: &mut Batch<'_>, citizen: CitizenId) {
    if <Backend as BookingDialect>::LOCKS_CITIZEN {
        batch.add(Locked(citizens::table.find(DbUuid(citizen.0)).select(citizens::id))).await;
    }
}

async fn release_seat(batch: &mut Batch<'_>, slot: SlotId) {
    batch
        .add(diesel::update(slots::table.find(DbUuid(slot.0))).set(slots::booked.eq(slots::booked - 1)))
        .await;
}

/// Queues the history entry of the change that left `appointment` as it is.
async fn record(
    batch: &mut Batch<'_>,
    appointment: &Appointment,
    entry: &AppointmentEntry,
) -> Result<(), Failure> {
    if (entry.appointment_id, entry.version) != (appointment.id, appointment.version) {
        return Err(Failure::Outcome(RepoError::Other(
            "a history entry must be of the appointment's version".to_owned(),
        )));
    }
    batch.add(diesel::insert_into(appointment_history::table).values(EntryRow::from(entry))).await;
    Ok(())
}

/// Sends `batch`: the row counts of its statements, in order.
async fn sent(batch: Batch<'_>) -> Result<Vec<usize>, Failure> {
    batch.run().await.map_err(|failed| failed.error.into())
}

/// The row count of the statement at `index` of a batch's answer.
fn count(counts: &[usize], index: usize) -> Result<usize, Failure> {
    counts.get(index).copied().ok_or_else(|| {
        Failure::Outcome(RepoError::Other(format!("a batch of {} statements has no {index}th", counts.len())))
    })
}

/// Queues the replacement of the appointment if it is still `booked` at `expected`;
/// [`replaced`] reads its row count. It ends its batch.
async fn replace_booked(batch: &mut Batch<'_>, appointment: &Appointment, expected: i64) {
    batch
        .add(
            diesel::update(
                appointments::table
                    .find(DbUuid(appointment.id.0))
                    .filter(appointments::version.eq(expected))
                    .filter(appointments::status.eq(AppointmentStatus::Booked.as_str())),
            )
            .set(AppointmentRow::from(appointment)),
        )
        .await;
}

/// After [`replace_booked`] updated `updated` rows: `NotFound` or `VersionConflict` when
/// it updated none.
async fn replaced(conn: &mut Conn, appointment: &Appointment, updated: usize) -> Result<(), Failure> {
    if updated == 1 {
        return Ok(());
    }
    let exists = diesel::select(diesel::dsl::exists(appointments::table.find(DbUuid(appointment.id.0))))
        .get_result::<bool>(conn)
        .await?;
    Err(not_updated(exists))
}

/// One round trip: what every write stores ([`write_meta::queue`]) and the replacement of
/// the appointment if it is still `booked` at `expected`, refused as [`replaced`] says.
/// Cancel and attendance start with it; a reschedule maps a refused replacement itself.
async fn store_replacing(
    conn: &mut Conn,
    meta: &WriteMeta,
    appointment: &Appointment,
    expected: i64,
) -> Result<(), Failure> {
    let mut batch = Batch::new(conn);
    write_meta::queue(&mut batch, meta).await?;
    let replace = batch.len();
    replace_booked(&mut batch, appointment, expected).await;
    let counts = sent(batch).await?;
    replaced(conn, appointment, count(&counts, replace)?).await
}

pub(crate) async fn book(
    conn: &mut Conn,
    appointment: &Appointment,
    entry: &AppointmentEntry,
    limit: Option<u32>,
    now: OffsetDateTime,
    meta: &WriteMeta,
) -> Result<BookOutcome, Failure> {
    let row = AppointmentRow::from(appointment);
    let (slot, service_type) = (appointment.slot_id, appointment.service_type_id);
    let limit = limit.map(|max| Limit { citizen: appointment.citizen_id, max });
    for _ in 0..ATTEMPTS {
        let attempt = write_tx!(conn, async |conn: &mut Conn| -> Result<(), Stop> {
            // One round trip: what every write stores, the citizen's lock, the seat.
            let mut batch = Batch::new(conn);
            write_meta::queue(&mut batch, meta).await?;
            if let Some(limit) = limit {
                lock_citizen(&mut batch, limit.citizen).await;
            }
            let seat = batch.len();
            take_seat(&mut batch, slot, service_type, limit, now).await;
            if count(&sent(batch).await?, seat)? != 1 {
                return Err(refusal(conn, slot, service_type, limit, now).await);
            }
            // A second: the appointment (which a unique index of bookings may refuse) and
            // its history entry.
            let mut batch = Batch::new(conn);
            batch.add(diesel::insert_into(appointments::table).values(&row)).await;
            record(&mut batch, appointment, entry).await?;
            match batch.run().await {
                Ok(_) => Ok(()),
                Err(BatchError { index: 0, error }) => Err(taken(error.into())),
                Err(failed) => Err(failed.error.into()),
            }
        })
        .await;
        if let Some(outcome) = settle(conn, attempt, appointment).await? {
            return Ok(outcome);
        }
    }
    Err(kept_colliding(appointment))
}

pub(crate) async fn reschedule(
    conn: &mut Conn,
    appointment: &Appointment,
    entry: &AppointmentEntry,
    from: SlotId,
    expected_version: i64,
    now: OffsetDateTime,
    meta: &WriteMeta,
) -> Result<BookOutcome, Failure> {
    let (to, service_type) = (appointment.slot_id, appointment.service_type_id);
    for _ in 0..ATTEMPTS {
        let attempt = write_tx!(conn, async |conn: &mut Conn| -> Result<(), Stop> {
            // One round trip: what every write stores and the appointment.
            let mut batch = Batch::new(conn);
            write_meta::queue(&mut batch, meta).await?;
            let replace = batch.len();
            replace_booked(&mut batch, appointment, expected_version).await;
            let counts = match batch.run().await {
                Ok(counts) => counts,
                // A booking without a request moved next to another of the citizen's for
                // the service type breaks `appointments_one_per_slot`.
                Err(failed) if failed.index == replace => return Err(taken(failed.error.into())),
                Err(failed) => return Err(failed.error.into()),
            };
            replaced(conn, appointment, count(&counts, replace)?).await?;
            // A second: the history entry and the seats, slot rows in id order (see the
            // module comment). A seat released after a refused one is rolled back.
            let mut batch = Batch::new(conn);
            record(&mut batch, appointment, entry).await?;
            if from < to {
                release_seat(&mut batch, from).await;
            }
            let seat = batch.len();
            take_seat(&mut batch, to, service_type, None, now).await;
            if from > to {
                release_seat(&mut batch, from).await;
            }
            if count(&sent(batch).await?, seat)? != 1 {
                return Err(refusal(conn, to, service_type, None, now).await);
            }
            Ok(())
        })
        .await;
        if let Some(outcome) = settle(conn, attempt, appointment).await? {
            return Ok(outcome);
        }
    }
    Err(kept_colliding(appointment))
}

pub(crate) async fn cancel(
    conn: &mut Conn,
    appointment: &Appointment,
    entry: &AppointmentEntry,
    expected_version: i64,
    meta: &WriteMeta,
) -> Result<(), Failure> {
    if appointment.status != AppointmentStatus::Cancelled {
        return Err(Failure::Outcome(RepoError::Other(
            "only a cancelled appointment is stored by cancel".to_owned(),
        )));
    }
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        // One round trip for what every write stores and the appointment, one for the
        // history entry and the seat.
        store_replacing(conn, meta, appointment, expected_version).await?;
        let mut batch = Batch::new(conn);
        record(&mut batch, appointment, entry).await?;
        release_seat(&mut batch, appointment.slot_id).await;
        sent(batch).await?;
        Ok(())
    })
    .await
}

pub(crate) async fn record_attendance(
    conn: &mut Conn,
    appointment: &Appointment,
    entry: &AppointmentEntry,
    expected_version: i64,
    meta: &WriteMeta,
) -> Result<(), Failure> {
    if !matches!(appointment.status, AppointmentStatus::Attended | AppointmentStatus::NoShow) {
        return Err(Failure::Outcome(RepoError::Other("attendance is attended or no_show".to_owned())));
    }
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        store_replacing(conn, meta, appointment, expected_version).await?;
        let mut batch = Batch::new(conn);
        record(&mut batch, appointment, entry).await?;
        sent(batch).await?;
        Ok(())
    })
    .await
}

pub(crate) async fn request_history(
    conn: &mut Conn,
    request: RequestId,
) -> Result<Vec<AppointmentEntry>, Failure> {
    let rows: Vec<EntryRow> = request_history_query(request).load(conn).await?;
    rows.into_iter().map(AppointmentEntry::try_from).collect()
}

/// The changes of the bookings linked to a request, in the order they happened.
pub(crate) fn request_history_query(request: RequestId) -> BoxedSelect<appointment_history::table, EntryRow> {
    appointment_history::table
        .select(EntryRow::as_select())
        .into_boxed()
        .filter(appointment_history::request_id.eq(DbUuid(request.0)))
        .order((appointment_history::at, appointment_history::appointment_id, appointment_history::version))
}

pub(crate) async fn get(conn: &mut Conn, id: AppointmentId) -> Result<Option<Appointment>, Failure> {
    let row: Option<AppointmentRow> = appointments::table
        .find(DbUuid(id.0))
        .select(AppointmentRow::as_select())
        .first(conn)
        .await
        .optional()?;
    row.map(Appointment::try_from).transpose()
}

type AvailabilityListQuery = IntoBoxed<
    'static,
    Select<InnerJoin<slot_service_types::table, slots::table>, AsSelect<SlotRow, Backend>>,
    Backend,
>;

/// Open, released slots with a free seat serving the service type, in start order, read
/// from `slot_service_types_availability_idx` from `max(from, now)` (or the cursor) up:
/// past slots are never read. The slot row is fetched by primary key for the seat,
/// cut-off and release conditions.
fn availability_query(query: &AvailabilityQuery, page: &StartPageRequest) -> AvailabilityListQuery {
    let lower = match page.after {
        Some(after) => query.from.max(query.now).max(after.starts_at),
        None => query.from.max(query.now),
    };
    let mut q = slot_service_types::table
        .inner_join(slots::table)
        .select(SlotRow::as_select())
        .into_boxed()
        .filter(slot_service_types::mission_id.eq(DbUuid(query.mission_id.0)))
        .filter(slot_service_types::service_type_id.eq(DbUuid(query.service_type_id.0)))
        .filter(slot_service_types::starts_at.ge(DbTime(lower)))
        .filter(slot_service_types::starts_at.lt(DbTime(query.to)))
        .filter(slots::is_open.eq(true))
        .filter(slots::booked.lt(slots::capacity))
        .filter(slots::booking_closes_at.gt(DbTime(query.now)))
        .filter(released_at!(query.now))
        .order((slot_service_types::starts_at.asc(), slot_service_types::slot_id.asc()))
        .limit(page.fetch_limit());
    if let Some(after) = page.after {
        q = q.filter(
            slot_service_types::starts_at
                .gt(DbTime(after.starts_at))
                .or(slot_service_types::slot_id.gt(DbUuid(after.id))),
        );
    }
    q
}

pub(crate) async fn available_slots(
    conn: &mut Conn,
    query: AvailabilityQuery,
    page: StartPageRequest,
) -> Result<StartPage<Slot>, Failure> {
    let rows: Vec<SlotRow> = availability_query(&query, &page).load(conn).await?;
    let rows = StartPage::from_rows(rows, &page, SlotRow::cursor);
    Ok(StartPage { items: with_service_types(conn, rows.items).await?, next_after: rows.next_after })
}

pub(crate) async fn explain_availability(
    conn: &mut Conn,
    query: AvailabilityQuery,
    page: StartPageRequest,
) -> Result<Vec<String>, Failure> {
    explain(conn, availability_query(&query, &page)).await
}

type AppointmentListQuery = BoxedSelect<appointments::table, AppointmentRow>;

/// Appointments in start order (then id): the mission, citizen and slot filters each have
/// an index `(column, starts_at, id)` that yields that order from the keyset bound; a
/// mandate's services (`within_services`) are checked on the rows the citizen's index reads.
fn list_query(filter: &AppointmentFilter, page: &StartPageRequest) -> AppointmentListQuery {
    let mut q = appointments::table
        .select(AppointmentRow::as_select())
        .into_boxed()
        .order((appointments::starts_at.asc(), appointments::id.asc()))
        .limit(page.fetch_limit());
    if let Some(mission) = filter.mission_id {
        q = q.filter(appointments::mission_id.eq(DbUuid(mission.0)));
    }
    if let Some(citizen) = filter.citizen_id {
        q = q.filter(appointments::citizen_id.eq(DbUuid(citizen.0)));
    }
    if let Some(slot) = filter.slot_id {
        q = q.filter(appointments::slot_id.eq(DbUuid(slot.0)));
    }
    match filter.statuses.as_slice() {
        [] => {}
        [status] => q = q.filter(appointments::status.eq(status.as_str())),
        statuses => {
            let statuses: Vec<&'static str> = statuses.iter().map(|s| s.as_str()).collect();
            q = q.filter(appointments::status.eq_any(statuses));
        }
    }
    if let Some(from) = filter.starts_from {
        q = q.filter(appointments::starts_at.ge(DbTime(from)));
    }
    if let Some(before) = filter.starts_before {
        q = q.filter(appointments::starts_at.lt(DbTime(before)));
    }
    if let Some(within) = &filter.within_services {
        q = q.filter(appointments::service_type_id.eq_any(service_type_ids(within)));
    }
    if let Some(after) = page.after {
        q = q.filter(appointments::starts_at.ge(DbTime(after.starts_at))).filter(
            appointments::starts_at.gt(DbTime(after.starts_at)).or(appointments::id.gt(DbUuid(after.id))),
        );
    }
    q
}

pub(crate) async fn list(
    conn: &mut Conn,
    filter: AppointmentFilter,
    page: StartPageRequest,
) -> Result<StartPage<Appointment>, Failure> {
    let rows: Vec<AppointmentRow> = list_query(&filter, &page).load(conn).await?;
    let found = rows.into_iter().map(Appointment::try_from).collect::<Result<Vec<_>, _>>()?;
    Ok(StartPage::from_rows(found, &page, |a| consular_domain::StartCursor {
        starts_at: a.starts_at,
        id: a.id.0,
    }))
}

pub(crate) async fn explain_appointment_list(
    conn: &mut Conn,
    filter: AppointmentFilter,
    page: StartPageRequest,
) -> Result<Vec<String>, Failure> {
    explain(conn, list_query(&filter, &page)).await
}

pub(crate) async fn seats_of(conn: &mut Conn, slot: SlotId) -> Result<(i64, i64), Failure> {
    let booked: i32 = slots::table.find(DbUuid(slot.0)).select(slots::booked).first(conn).await?;
    let holding: i64 = appointments::table
        .filter(appointments::slot_id.eq(DbUuid(slot.0)))
        .filter(appointments::status.ne(AppointmentStatus::Cancelled.as_str()))
        .count()
        .get_result(conn)
        .await?;
    Ok((i64::from(booked), holding))
}

pub(crate) async fn drop_one_per_slot(conn: &mut Conn) -> Result<(), Failure> {
    diesel::sql_query(format!("DROP INDEX {ONE_PER_SLOT}")).execute(conn).await?;
    Ok(())
}

pub(crate) async fn migrate_one_per_slot(conn: &mut Conn) -> Result<(), Failure> {
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        conn.batch_execute(<Backend as BookingDialect>::ONE_PER_SLOT_MIGRATION).await?;
        Ok(())
    })
    .await
}
