//! A slot's scheduled release against both databases (docs/appointments.md "Scheduled
//! release"): the guarded seat statement and the availability query compare
//! `release_at` with the `now` they are given (the clock is the caller's), so a slot is
//! refused and hidden before its release and taken and listed at it; the release is part
//! of the stored configuration (set, moved, cleared); and bookings fired at once at the
//! instant of the release take exactly the capacity.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;

use consular_db::Database;
use consular_domain::{
    Appointment, AppointmentChange, AppointmentEntry, BookingRefused, CitizenId, MissionId, PrincipalId,
    PrincipalKind, Role, ServiceTypeId, Slot, Subject,
};
use consular_ports::{
    AppointmentRepository, AvailabilityQuery, BookOutcome, SlotUpsert, StartPageRequest, WriteMeta,
};
use time::{Duration, OffsetDateTime};

struct Setting {
    mission: MissionId,
    passport: ServiceTypeId,
    citizen: CitizenId,
}

async fn setting(db: &Database) -> Setting {
    let mission = stored_mission(db, "fr-paris").await;
    let passport = stored_service_type(db, "passport").await;
    let citizen = stored_citizen(db, mission.id, "AA1").await;
    Setting { mission: mission.id, passport: passport.id, citizen: citizen.id }
}

/// A slot starting `hours` from now serving the passport service, released at `release_at`.
fn slot(s: &Setting, hours: i64, capacity: u32, release_at: Option<OffsetDateTime>) -> Slot {
    Slot {
        capacity,
        service_types: vec![s.passport],
        release_at,
        ..consular_domain::fixtures::slot(s.mission, now() + Duration::hours(hours), now())
    }
}

async fn stored_slot(db: &Database, slot: Slot) -> Slot {
    let upsert = SlotUpsert { slots: vec![(slot.clone(), None)], cancelled: vec![] };
    AppointmentRepository::upsert_slots(db, &upsert, &WriteMeta::default()).await.unwrap();
    slot
}

fn booking_of(s: &Setting, slot: &Slot, citizen: CitizenId) -> Appointment {
    let by = Subject { kind: PrincipalKind::Citizen, id: PrincipalId(citizen.0) };
    Appointment::book(slot, citizen, s.passport, None, by, now())
}

fn entry_of(a: &Appointment, change: AppointmentChange) -> AppointmentEntry {
    AppointmentEntry::of(a, change, a.booked_by).unwrap()
}

/// The booking `a` as the repository judges it at `at`.
async fn book_at(db: &Database, a: &Appointment, at: OffsetDateTime) -> BookOutcome {
    AppointmentRepository::book(
        db,
        a,
        &entry_of(a, AppointmentChange::Booked),
        None,
        at,
        &WriteMeta::default(),
    )
    .await
    .unwrap()
}

/// The ids availability lists at `at`.
async fn listed_at(db: &Database, s: &Setting, at: OffsetDateTime) -> Vec<consular_domain::SlotId> {
    let query = AvailabilityQuery {
        mission_id: s.mission,
        service_type_id: s.passport,
        from: at - Duration::days(1),
        to: at + Duration::days(30),
        now: at,
    };
    let page = db.available_slots(query, StartPageRequest { limit: 100, after: None }).await.unwrap();
    page.items.iter().map(|x| x.id).collect()
}

async fn a_slot_is_refused_and_hidden_before_its_release_and_taken_at_it(db: Database) {
    let s = setting(&db).await;
    let release = now() + Duration::hours(1);
    let before = release - Duration::microseconds(1);
    let scheduled = stored_slot(&db, slot(&s, 48, 2, Some(release))).await;
    let released = stored_slot(&db, slot(&s, 50, 2, None)).await;
    let stored = AppointmentRepository::get_slot(&db, scheduled.id).await.unwrap().unwrap();
    assert_eq!(stored, scheduled, "the release is stored to the microsecond");

    assert_eq!(listed_at(&db, &s, before).await, vec![released.id], "hidden before its release");
    let early = booking_of(&s, &scheduled, s.citizen);
    assert_eq!(
        book_at(&db, &early, before).await,
        BookOutcome::Refused(BookingRefused::NotReleased { release_at: release }),
        "the guarded statement refuses it; the refusal names the release"
    );
    assert_eq!(db.seats_of(scheduled.id).await.unwrap(), (0, 0), "nothing was taken");
    assert_eq!(db.count_rows("appointments").await.unwrap(), 0);

    // A move into it before the release changes nothing.
    let held = booking_of(&s, &released, s.citizen);
    assert_eq!(book_at(&db, &held, before).await, BookOutcome::Booked);
    let mut moved = held.clone();
    moved.reschedule(Role::Staff, &released, &Slot { release_at: None, ..scheduled.clone() }, now()).unwrap();
    let refused = AppointmentRepository::reschedule(
        &db,
        &moved,
        &entry_of(&moved, AppointmentChange::Rescheduled),
        released.id,
        1,
        before,
        &WriteMeta::default(),
    )
    .await
    .unwrap();
    assert_eq!(refused, BookOutcome::Refused(BookingRefused::NotReleased { release_at: release }));
    assert_eq!(AppointmentRepository::get(&db, held.id).await.unwrap(), Some(held.clone()));
    assert_eq!(
        (db.seats_of(released.id).await.unwrap(), db.seats_of(scheduled.id).await.unwrap()),
        ((1, 1), (0, 0))
    );

    // At the release instant it is listed and taken; after it too.
    assert_eq!(listed_at(&db, &s, release).await, vec![scheduled.id, released.id]);
    assert_eq!(book_at(&db, &early, release).await, BookOutcome::Booked);
    let other = stored_citizen(&db, s.mission, "BB2").await;
    assert_eq!(
        book_at(&db, &booking_of(&s, &scheduled, other.id), release + Duration::seconds(1)).await,
        BookOutcome::Booked
    );
    assert_eq!(db.seats_of(scheduled.id).await.unwrap(), (2, 2));
}

async fn the_release_is_part_of_the_stored_configuration(db: Database) {
    let s = setting(&db).await;
    let first = now() + Duration::hours(2);
    let scheduled = stored_slot(&db, slot(&s, 48, 3, Some(first))).await;
    let at = first + Duration::minutes(1);
    assert_eq!(book_at(&db, &booking_of(&s, &scheduled, s.citizen), at).await, BookOutcome::Booked);

    // Moved later: hidden again at `at`, the booking made stays.
    let later = first + Duration::hours(3);
    let moved = Slot { release_at: Some(later), version: 2, booked: 1, ..scheduled.clone() };
    let upsert = SlotUpsert { slots: vec![(moved.clone(), Some(1))], cancelled: vec![] };
    AppointmentRepository::upsert_slots(&db, &upsert, &WriteMeta::default()).await.unwrap();
    assert_eq!(AppointmentRepository::get_slot(&db, scheduled.id).await.unwrap(), Some(moved.clone()));
    assert!(listed_at(&db, &s, at).await.is_empty());
    assert_eq!(db.seats_of(scheduled.id).await.unwrap(), (1, 1), "a release change touches no booking");

    // Cleared: released at once (NULL is written, not the old instant kept).
    let cleared = Slot { release_at: None, version: 3, ..moved };
    let upsert = SlotUpsert { slots: vec![(cleared.clone(), Some(2))], cancelled: vec![] };
    AppointmentRepository::upsert_slots(&db, &upsert, &WriteMeta::default()).await.unwrap();
    assert_eq!(AppointmentRepository::get_slot(&db, scheduled.id).await.unwrap(), Some(cleared));
    assert_eq!(listed_at(&db, &s, now()).await, vec![scheduled.id]);
}

/// Bookings of 40 citizens fired at once at the instant of the release of a slot of
/// capacity 5 take exactly 5 seats (the others are `Full`), and 10 fired at once just
/// before it take none.
async fn concurrent_bookings_at_the_release_instant_take_exactly_the_capacity(db: Database) {
    let s = setting(&db).await;
    let release = now() + Duration::hours(1);
    let hot = stored_slot(&db, slot(&s, 48, 5, Some(release))).await;
    let mut tasks = Vec::new();
    for i in 0..50 {
        let citizen = stored_citizen(
            &db,
            s.mission,
            &format!("R{i}{}", &uuid::Uuid::now_v7().simple().to_string()[20..]),
        )
        .await;
        let at = if i < 10 { release - Duration::microseconds(1) } else { release };
        let (db, a) = (db.clone(), booking_of(&s, &hot, citizen.id));
        tasks.push(tokio::spawn(async move {
            let entry = entry_of(&a, AppointmentChange::Booked);
            (at, AppointmentRepository::book(&db, &a, &entry, Some(3), at, &WriteMeta::default()).await)
        }));
    }
    let mut outcomes = Vec::new();
    for task in tasks {
        let (at, outcome) = task.await.unwrap();
        outcomes.push((at == release, outcome.unwrap()));
    }
    let count = |at_release: bool, outcome: BookOutcome| {
        outcomes.iter().filter(|(r, o)| *r == at_release && *o == outcome).count()
    };
    let not_released = BookOutcome::Refused(BookingRefused::NotReleased { release_at: release });
    assert_eq!(count(false, not_released), 10, "{outcomes:?}");
    assert_eq!(
        (count(true, BookOutcome::Booked), count(true, BookOutcome::Refused(BookingRefused::Full))),
        (5, 35),
        "{outcomes:?}"
    );
    assert_eq!(db.seats_of(hot.id).await.unwrap(), (5, 5));
}

on_both_databases!(
    a_slot_is_refused_and_hidden_before_its_release_and_taken_at_it,
    the_release_is_part_of_the_stored_configuration,
    concurrent_bookings_at_the_release_instant_take_exactly_the_capacity,
);
