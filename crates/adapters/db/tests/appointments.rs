//! The contract of `AppointmentRepository`, checked against both databases with the
//! harness of `common/mod.rs`: slot submissions (insert, configuration changes under
//! their guards, cancellations by the mission), bookings by the guarded seat statement,
//! moves and cancellations, the lists and their indexes, the seat invariant, one active
//! booking per citizen and request or slot, and the limit of a citizen's upcoming
//! bookings, under concurrency (docs/appointments.md "The seat invariant", "Bookings per
//! citizen").
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;

use consular_db::Database;
use consular_domain::{
    Appointment, AppointmentAction, AppointmentChange, AppointmentEntry, AppointmentStatus, BookingRefused,
    CitizenId, MissionId, PrincipalId, PrincipalKind, RequestId, Role, ServiceTypeId, Slot, SlotId, Subject,
};
use consular_ports::{
    AppointmentFilter, AppointmentRepository, AvailabilityQuery, BookOutcome, RepoError, SlotUpsert,
    StartPageRequest, WriteMeta,
};
use time::Duration;

// ---------------------------------------------------------------- fixtures

/// What slots and bookings hang on: a mission, two service types, a citizen with two
/// requests.
struct Setting {
    mission: MissionId,
    passport: ServiceTypeId,
    visa: ServiceTypeId,
    citizen: CitizenId,
    request: RequestId,
    other_request: RequestId,
}

async fn setting(db: &Database) -> Setting {
    let mission = stored_mission(db, "fr-paris").await;
    let passport = stored_service_type(db, "passport").await;
    let visa = stored_service_type(db, "visa").await;
    let alice = stored_citizen(db, mission.id, "AA1").await;
    let r = stored_request(db, request(mission.id, alice.id, &passport)).await;
    let other = stored_request(db, request(mission.id, alice.id, &passport)).await;
    Setting {
        mission: mission.id,
        passport: passport.id,
        visa: visa.id,
        citizen: alice.id,
        request: r.id,
        other_request: other.id,
    }
}

/// `n` more citizens of the setting's mission (a citizen books a slot once).
async fn citizens(db: &Database, s: &Setting, n: usize) -> Vec<CitizenId> {
    let mut stored = Vec::with_capacity(n);
    for i in 0..n {
        let passport = format!("C{i}{}", &uuid::Uuid::now_v7().simple().to_string()[20..]);
        stored.push(stored_citizen(db, s.mission, &passport).await.id);
    }
    stored
}

/// A slot starting `hours` from now, 30 minutes long, serving the passport service.
fn slot(s: &Setting, hours: i64, capacity: u32) -> Slot {
    let start = now() + Duration::hours(hours);
    Slot {
        capacity,
        service_types: vec![s.passport],
        ..consular_domain::fixtures::slot(s.mission, start, now())
    }
}

async fn stored_slot(db: &Database, slot: Slot) -> Slot {
    let upsert = SlotUpsert { slots: vec![(slot.clone(), None)], cancelled: vec![] };
    AppointmentRepository::upsert_slots(db, &upsert, &WriteMeta::default()).await.unwrap();
    slot
}

fn citizen_subject(c: CitizenId) -> Subject {
    Subject { kind: PrincipalKind::Citizen, id: PrincipalId(c.0) }
}

fn booking(s: &Setting, slot: &Slot, request: Option<RequestId>) -> Appointment {
    Appointment::book(slot, s.citizen, s.passport, request, citizen_subject(s.citizen), now())
}

/// `citizen`'s booking of the passport service in `slot`, without a request.
fn booking_of(s: &Setting, slot: &Slot, citizen: CitizenId) -> Appointment {
    Appointment::book(slot, citizen, s.passport, None, citizen_subject(citizen), now())
}

/// The history entry of the change that left `a` as it is, by the citizen.
fn entry_of(a: &Appointment) -> AppointmentEntry {
    let change = match (a.status, a.cancelled_by) {
        (AppointmentStatus::Booked, _) if a.version == 1 => AppointmentChange::Booked,
        (AppointmentStatus::Booked, _) => AppointmentChange::Rescheduled,
        (AppointmentStatus::Attended, _) => AppointmentChange::Attended,
        (AppointmentStatus::NoShow, _) => AppointmentChange::NoShow,
        (AppointmentStatus::Cancelled, Some(consular_domain::CancelledBy::Mission)) => {
            AppointmentChange::CancelledByMission
        }
        (AppointmentStatus::Cancelled, _) => AppointmentChange::Cancelled,
    };
    AppointmentEntry::of(a, change, a.booked_by).unwrap()
}

async fn book(db: &Database, a: &Appointment) -> BookOutcome {
    AppointmentRepository::book(db, a, &entry_of(a), None, now(), &WriteMeta::default()).await.unwrap()
}

/// A booking the citizen makes themself, held to `limit` upcoming bookings at `at`.
async fn book_limited(db: &Database, a: &Appointment, limit: u32, at: time::OffsetDateTime) -> BookOutcome {
    AppointmentRepository::book(db, a, &entry_of(a), Some(limit), at, &audited("appointment", a.id.0))
        .await
        .unwrap()
}

async fn seats(db: &Database, slot: &Slot) -> (i64, i64) {
    db.seats_of(slot.id).await.unwrap()
}

async fn stored(db: &Database, id: SlotId) -> Slot {
    AppointmentRepository::get_slot(db, id).await.unwrap().unwrap()
}

// ---------------------------------------------------------------- slots

async fn slots_are_upserted_by_content_under_their_guards(db: Database) {
    let s = setting(&db).await;
    let mut first = slot(&s, 48, 3);
    first.service_types = vec![s.passport, s.visa];
    first.service_types.sort();
    let upsert =
        SlotUpsert { slots: vec![(first.clone(), None), (slot(&s, 72, 2), None)], cancelled: vec![] };
    AppointmentRepository::upsert_slots(&db, &upsert, &audited("slot", first.id.0)).await.unwrap();
    assert_eq!(stored(&db, first.id).await, first);
    assert_eq!(AppointmentRepository::get_slot(&db, SlotId::new()).await.unwrap(), None);
    let between = db.slots_between(s.mission, now(), now() + Duration::days(30)).await.unwrap();
    assert_eq!(
        between.iter().map(|x| x.id).collect::<Vec<_>>(),
        [first.id, upsert.slots[1].0.id],
        "start order"
    );
    assert!(db.slots_between(MissionId::new(), now(), now() + Duration::days(30)).await.unwrap().is_empty());

    // The same content with another id is the same slot: its key is taken.
    let again =
        SlotUpsert { slots: vec![(Slot { id: SlotId::new(), ..first.clone() }, None)], cancelled: vec![] };
    let taken = AppointmentRepository::upsert_slots(&db, &again, &audited("slot", first.id.0)).await;
    assert!(is_duplicate(&taken, "slots_mission_time"), "{taken:?}");

    // Two bookings, then a configuration change: the seat count is never written from the slot given.
    for citizen in citizens(&db, &s, 2).await {
        assert_eq!(book(&db, &booking_of(&s, &first, citizen)).await, BookOutcome::Booked);
    }
    let mut changed =
        Slot { capacity: 2, service_types: vec![s.passport], booked: 0, version: 2, ..first.clone() };
    changed.cutoffs.booking_minutes = 0;
    let replace = SlotUpsert { slots: vec![(changed.clone(), Some(1))], cancelled: vec![] };
    AppointmentRepository::upsert_slots(&db, &replace, &WriteMeta::default()).await.unwrap();
    assert_eq!(stored(&db, first.id).await, Slot { booked: 2, ..changed.clone() });
    let stale = AppointmentRepository::upsert_slots(&db, &replace, &audited("slot", first.id.0)).await;
    assert!(matches!(stale, Err(RepoError::VersionConflict)), "{stale:?}");

    // Below the seats booked, or closed with bookings: refused whatever the version.
    for wanted in [
        Slot { capacity: 1, version: 3, ..changed.clone() },
        Slot { open: false, version: 3, ..changed.clone() },
    ] {
        let refused = SlotUpsert { slots: vec![(wanted, Some(2))], cancelled: vec![] };
        let result = AppointmentRepository::upsert_slots(&db, &refused, &audited("slot", first.id.0)).await;
        assert!(matches!(result, Err(RepoError::VersionConflict)), "{result:?}");
    }
    let gone = SlotUpsert { slots: vec![(slot(&s, 5, 1), Some(1))], cancelled: vec![] };
    let result = AppointmentRepository::upsert_slots(&db, &gone, &WriteMeta::default()).await;
    assert!(matches!(result, Err(RepoError::NotFound)), "{result:?}");
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 1, "a refused write stores nothing");
    assert_eq!(seats(&db, &first).await, (2, 2));
}

async fn closing_a_slot_cancels_the_bookings_the_mission_names(db: Database) {
    let s = setting(&db).await;
    let hot = stored_slot(&db, slot(&s, 48, 3)).await;
    let mut active = Vec::new();
    for citizen in citizens(&db, &s, 3).await {
        let a = booking_of(&s, &hot, citizen);
        assert_eq!(book(&db, &a).await, BookOutcome::Booked);
        active.push(a);
    }
    let current = stored(&db, hot.id).await;
    let wanted = Slot { id: SlotId::new(), capacity: 1, booked: 0, ..current.clone() };
    let plan = consular_domain::appointment::plan_slot(Some(&current), wanted, &active, true, now()).unwrap();
    assert_eq!(plan.cancel, [active[2].id, active[1].id], "the most recent bookings");
    let cancelled: Vec<(Appointment, i64, AppointmentEntry)> = active
        .iter()
        .filter(|a| plan.cancel.contains(&a.id))
        .map(|a| {
            let mut c = a.clone();
            c.cancel_by_mission(now()).unwrap();
            let entry = entry_of(&c);
            (c, a.version, entry)
        })
        .collect();
    let upsert =
        SlotUpsert { slots: vec![(plan.slot.clone(), plan.expected_version)], cancelled: cancelled.clone() };
    let meta = WriteMeta {
        events: vec![outbox_event("appointment.cancelled_by_mission", active[2].id.0)],
        ..audited("slot", hot.id.0)
    };
    AppointmentRepository::upsert_slots(&db, &upsert, &meta).await.unwrap();
    assert_eq!(seats(&db, &hot).await, (1, 1));
    assert_eq!(stored(&db, hot.id).await.capacity, 1);
    for (c, _, _) in &cancelled {
        assert_eq!(AppointmentRepository::get(&db, c.id).await.unwrap().as_ref(), Some(c));
    }
    // The same cancellations again: the appointments moved on, nothing is stored.
    let meta = WriteMeta {
        events: vec![outbox_event("appointment.cancelled_by_mission", active[2].id.0)],
        ..audited("slot", hot.id.0)
    };
    let again =
        AppointmentRepository::upsert_slots(&db, &SlotUpsert { slots: vec![], cancelled }, &meta).await;
    assert!(matches!(again, Err(RepoError::VersionConflict)), "{again:?}");
    assert_eq!(db.count_rows("outbox_events").await.unwrap(), 1);
}

// ---------------------------------------------------------------- bookings

async fn a_booking_takes_a_seat_or_says_why_not(db: Database) {
    let s = setting(&db).await;
    let two = stored_slot(&db, slot(&s, 48, 2)).await;
    let first = booking(&s, &two, Some(s.request));
    assert_eq!(
        AppointmentRepository::book(
            &db,
            &first,
            &entry_of(&first),
            None,
            now(),
            &audited("appointment", first.id.0)
        )
        .await
        .unwrap(),
        BookOutcome::Booked
    );
    assert_eq!(AppointmentRepository::get(&db, first.id).await.unwrap(), Some(first.clone()));
    // One active booking per citizen and request, wherever.
    let other_slot = stored_slot(&db, slot(&s, 96, 2)).await;
    let twice = booking(&s, &other_slot, Some(s.request));
    assert_eq!(book(&db, &twice).await, BookOutcome::AlreadyBooked(first.id), "naming the one held");
    assert_eq!(seats(&db, &other_slot).await, (0, 0), "the seat was given back");
    assert_eq!(book(&db, &booking(&s, &two, None)).await, BookOutcome::Booked);
    assert_eq!(book(&db, &booking(&s, &two, None)).await, BookOutcome::Refused(BookingRefused::Full));
    assert_eq!(seats(&db, &two).await, (2, 2));

    let closed = stored_slot(&db, Slot { open: false, ..slot(&s, 24 * 5, 2) }).await;
    assert_eq!(book(&db, &booking(&s, &closed, None)).await, BookOutcome::Refused(BookingRefused::Closed));
    let visa_only = stored_slot(&db, Slot { service_types: vec![s.visa], ..slot(&s, 24 * 6, 2) }).await;
    assert_eq!(
        book(&db, &booking(&s, &visa_only, None)).await,
        BookOutcome::Refused(BookingRefused::ServiceNotServed)
    );
    let soon = stored_slot(&db, slot(&s, 0, 2)).await;
    let late = book(&db, &booking(&s, &soon, None)).await;
    assert!(matches!(late, BookOutcome::Refused(BookingRefused::BookingClosed { .. })), "{late:?}");
    let nowhere = booking(&s, &slot(&s, 48, 2), None);
    let unknown =
        AppointmentRepository::book(&db, &nowhere, &entry_of(&nowhere), None, now(), &WriteMeta::default())
            .await;
    assert!(matches!(unknown, Err(RepoError::NotFound)), "{unknown:?}");
    assert_eq!(db.count_rows("appointments").await.unwrap(), 2);
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 1);

    // Cancelled, the request may be booked again.
    let mut cancelled = first.clone();
    cancelled.cancel(Role::Citizen, &two, now()).unwrap();
    AppointmentRepository::cancel(&db, &cancelled, &entry_of(&cancelled), 1, &WriteMeta::default())
        .await
        .unwrap();
    assert_eq!(seats(&db, &two).await, (1, 1), "the seat is free at once");
    let stale =
        AppointmentRepository::cancel(&db, &cancelled, &entry_of(&cancelled), 1, &WriteMeta::default()).await;
    assert!(matches!(stale, Err(RepoError::VersionConflict)), "{stale:?}");
    assert_eq!(book(&db, &twice).await, BookOutcome::Booked);
}

async fn a_reschedule_moves_the_seat_or_changes_nothing(db: Database) {
    let s = setting(&db).await;
    let from = stored_slot(&db, slot(&s, 48, 2)).await;
    let full = stored_slot(&db, slot(&s, 72, 1)).await;
    let free = stored_slot(&db, slot(&s, 96, 1)).await;
    let a = booking(&s, &from, Some(s.request));
    assert_eq!(book(&db, &a).await, BookOutcome::Booked);
    assert_eq!(book(&db, &booking(&s, &full, None)).await, BookOutcome::Booked);

    let mut into_full = a.clone();
    into_full.reschedule(Role::Staff, &from, &Slot { booked: 0, ..full.clone() }, now()).unwrap();
    let refused = AppointmentRepository::reschedule(
        &db,
        &into_full,
        &entry_of(&into_full),
        from.id,
        1,
        now(),
        &audited("appointment", a.id.0),
    )
    .await
    .unwrap();
    assert_eq!(refused, BookOutcome::Refused(BookingRefused::Full));
    assert_eq!(AppointmentRepository::get(&db, a.id).await.unwrap(), Some(a.clone()), "nothing changed");
    assert_eq!((seats(&db, &from).await, seats(&db, &full).await), ((1, 1), (1, 1)));

    let mut moved = a.clone();
    moved.reschedule(Role::Citizen, &from, &stored(&db, free.id).await, now()).unwrap();
    let outcome = AppointmentRepository::reschedule(
        &db,
        &moved,
        &entry_of(&moved),
        from.id,
        1,
        now(),
        &audited("appointment", a.id.0),
    )
    .await
    .unwrap();
    assert_eq!(outcome, BookOutcome::Booked);
    assert_eq!(AppointmentRepository::get(&db, a.id).await.unwrap(), Some(moved.clone()));
    assert_eq!((seats(&db, &from).await, seats(&db, &free).await), ((0, 0), (1, 1)));
    let stale = AppointmentRepository::reschedule(
        &db,
        &moved,
        &entry_of(&moved),
        from.id,
        1,
        now(),
        &WriteMeta::default(),
    )
    .await;
    assert!(matches!(stale, Err(RepoError::VersionConflict)), "{stale:?}");
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 1);

    let mut attended = moved.clone();
    attended.record_attendance(Role::Staff, AppointmentAction::Attend, free.starts_at).unwrap();
    AppointmentRepository::record_attendance(&db, &attended, &entry_of(&attended), 2, &WriteMeta::default())
        .await
        .unwrap();
    assert_eq!(
        AppointmentRepository::get(&db, a.id).await.unwrap().unwrap().status,
        AppointmentStatus::Attended
    );
    assert_eq!(seats(&db, &free).await, (1, 1), "an attended appointment used its seat");

    // The request's timeline: one entry per stored change, none of the refused ones.
    let history = db.request_history(s.request).await.unwrap();
    assert_eq!(history, [entry_of(&a), entry_of(&moved), entry_of(&attended)]);
    let detail = consular_ports::RequestRepository::detail(&db, s.request, false).await.unwrap().unwrap();
    assert_eq!(detail.appointments, history, "the request's detail reads the same changes");
    assert!(db.request_history(RequestId::new()).await.unwrap().is_empty());
}

// ---------------------------------------------------------------- reads

async fn availability_shows_open_future_slots_with_free_seats_in_start_order(db: Database) {
    let s = setting(&db).await;
    let mut expected = Vec::new();
    for hours in [30, 40, 50, 60, 70] {
        expected.push(stored_slot(&db, slot(&s, hours, 1)).await.id);
    }
    let full = stored_slot(&db, slot(&s, 45, 1)).await;
    assert_eq!(book(&db, &booking(&s, &full, None)).await, BookOutcome::Booked);
    stored_slot(&db, Slot { open: false, ..slot(&s, 46, 1) }).await;
    stored_slot(&db, Slot { service_types: vec![s.visa], ..slot(&s, 47, 1) }).await;
    stored_slot(&db, slot(&s, 0, 1)).await; // inside its booking cut-off
    stored_slot(&db, slot(&s, 24 * 40, 1)).await; // after `to`
    let query = AvailabilityQuery {
        mission_id: s.mission,
        service_type_id: s.passport,
        from: now() - Duration::days(1),
        to: now() + Duration::days(30),
        now: now(),
    };
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let page = db.available_slots(query, StartPageRequest { limit: 2, after }).await.unwrap();
        seen.extend(page.items.iter().map(|x| x.id));
        assert!(page.items.iter().all(|x| x.service_types == [s.passport] && x.remaining() > 0));
        match page.next_after {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, expected);
    let other = AvailabilityQuery { mission_id: MissionId::new(), ..query };
    assert!(
        db.available_slots(other, StartPageRequest { limit: 10, after: None })
            .await
            .unwrap()
            .items
            .is_empty()
    );

    for after in [None, Some(consular_domain::StartCursor { starts_at: now(), id: uuid::Uuid::now_v7() })] {
        let plan = db.explain_availability(query, StartPageRequest { limit: 20, after }).await.unwrap();
        assert_no_full_scan(db.backend(), "slot_service_types", &plan, "availability");
        assert_no_full_scan(db.backend(), "slots", &plan, "availability");
        assert_ordered_by_index(&plan, "slot_service_types_availability_idx");
    }
}

async fn appointments_are_listed_in_start_order_by_every_filter(db: Database) {
    let s = setting(&db).await;
    let early = stored_slot(&db, slot(&s, 30, 5)).await;
    let late = stored_slot(&db, slot(&s, 60, 5)).await;
    let mut all = Vec::new();
    // Twice in each slot: once without a request, once for a request.
    for (x, request) in
        [(&late, None), (&early, None), (&late, Some(s.request)), (&early, Some(s.other_request))]
    {
        let a = booking(&s, x, request);
        assert_eq!(book(&db, &a).await, BookOutcome::Booked);
        all.push(a);
    }
    all.sort_by_key(|a| (a.starts_at, a.id));
    let page = StartPageRequest { limit: 100, after: None };
    let ids = |items: &[Appointment]| items.iter().map(|a| a.id).collect::<Vec<_>>();
    let by_mission = AppointmentFilter { mission_id: Some(s.mission), ..Default::default() };
    assert_eq!(ids(&db.list(by_mission.clone(), page).await.unwrap().items), ids(&all));
    let by_slot = AppointmentFilter { slot_id: Some(early.id), ..Default::default() };
    assert_eq!(ids(&db.list(by_slot.clone(), page).await.unwrap().items), ids(&all[..2]));
    let day = AppointmentFilter {
        starts_from: Some(late.starts_at - Duration::hours(1)),
        starts_before: Some(late.starts_at + Duration::hours(1)),
        statuses: vec![AppointmentStatus::Booked],
        ..by_mission.clone()
    };
    assert_eq!(ids(&db.list(day, page).await.unwrap().items), ids(&all[2..]));
    let by_citizen = AppointmentFilter { citizen_id: Some(s.citizen), ..Default::default() };
    let first = db.list(by_citizen.clone(), StartPageRequest { limit: 3, after: None }).await.unwrap();
    let rest =
        db.list(by_citizen.clone(), StartPageRequest { limit: 3, after: first.next_after }).await.unwrap();
    assert_eq!([ids(&first.items), ids(&rest.items)].concat(), ids(&all));
    assert_eq!(rest.next_after, None);
    let cancelled = AppointmentFilter { statuses: vec![AppointmentStatus::Cancelled], ..by_mission.clone() };
    assert!(db.list(cancelled, page).await.unwrap().items.is_empty());

    for (filter, index) in [
        (by_mission, "appointments_mission_idx"),
        (by_citizen, "appointments_citizen_idx"),
        (by_slot, "appointments_slot_idx"),
    ] {
        for after in [None, first.next_after] {
            let plan = db
                .explain_appointment_list(filter.clone(), StartPageRequest { limit: 20, after })
                .await
                .unwrap();
            assert_no_full_scan(db.backend(), "appointments", &plan, index);
            assert_ordered_by_index(&plan, index);
        }
    }
}

/// A representative lists the dependant's appointments of the mandate's services only
/// (docs/representation.md "Acting"): `within_services` keeps the bookings of those
/// service types (none for an empty list, every one without it), with the other filters,
/// the start order and the keyset pages as before.
async fn appointments_are_listed_within_a_mandates_services(db: Database) {
    let s = setting(&db).await;
    let both = |hours| Slot { service_types: vec![s.passport, s.visa], ..slot(&s, hours, 5) };
    let early = stored_slot(&db, both(30)).await;
    let late = stored_slot(&db, both(60)).await;
    let mut all = Vec::new();
    for x in [&late, &early] {
        for service_type in [s.passport, s.visa] {
            let a = Appointment::book(x, s.citizen, service_type, None, citizen_subject(s.citizen), now());
            assert_eq!(book(&db, &a).await, BookOutcome::Booked);
            all.push(a);
        }
    }
    let for_request = booking(&s, &early, Some(s.request));
    assert_eq!(book(&db, &for_request).await, BookOutcome::Booked);
    all.push(for_request);
    all.sort_by_key(|a| (a.starts_at, a.id));
    let of = |types: &[ServiceTypeId]| {
        all.iter().filter(|a| types.contains(&a.service_type_id)).map(|a| a.id).collect::<Vec<_>>()
    };
    // Every page, two at a time: their concatenation must be the whole listing.
    let listed = async |filter: AppointmentFilter| {
        let whole = db.list(filter.clone(), StartPageRequest { limit: 100, after: None }).await.unwrap();
        let mut paged = Vec::new();
        let mut after = None;
        loop {
            let page = db.list(filter.clone(), StartPageRequest { limit: 2, after }).await.unwrap();
            paged.extend(page.items.iter().map(|a| a.id));
            match page.next_after {
                Some(next) => after = Some(next),
                None => break,
            }
        }
        let whole: Vec<_> = whole.items.iter().map(|a| a.id).collect();
        assert_eq!(paged, whole, "pages of {filter:?}");
        whole
    };
    let by_citizen = AppointmentFilter { citizen_id: Some(s.citizen), ..Default::default() };
    let within = |types: &[ServiceTypeId]| AppointmentFilter {
        within_services: Some(types.to_vec()),
        ..by_citizen.clone()
    };
    assert_eq!(of(&[s.passport]).len(), 3);
    assert_eq!(of(&[s.visa]).len(), 2);
    assert_eq!(listed(within(&[s.passport])).await, of(&[s.passport]));
    assert_eq!(listed(within(&[s.visa])).await, of(&[s.visa]));
    assert_eq!(listed(within(&[s.visa, s.passport])).await, of(&[s.passport, s.visa]));
    assert_eq!(listed(within(&[])).await, [], "an empty mandate reaches nothing");
    assert_eq!(listed(within(&[ServiceTypeId::new()])).await, []);
    assert_eq!(listed(by_citizen.clone()).await, of(&[s.passport, s.visa]), "no mandate, no restriction");
    let early_visas = AppointmentFilter { slot_id: Some(early.id), ..within(&[s.visa]) };
    let expected: Vec<_> =
        all.iter().filter(|a| a.slot_id == early.id && a.service_type_id == s.visa).map(|a| a.id).collect();
    assert_eq!(expected.len(), 1);
    assert_eq!(listed(early_visas).await, expected);

    // Still read from the citizen's index, in order.
    for after in [None, Some(consular_domain::StartCursor { starts_at: now(), id: uuid::Uuid::now_v7() })] {
        let plan = db.explain_appointment_list(within(&[s.visa]), StartPageRequest { limit: 20, after });
        let plan = plan.await.unwrap();
        assert_no_full_scan(db.backend(), "appointments", &plan, "within a mandate");
        assert_ordered_by_index(&plan, "appointments_citizen_idx");
    }
}

// ---------------------------------------------------------------- the seat invariant

/// 50 concurrent bookings of a slot of capacity 5: exactly 5 succeed, the rest are told
/// the slot is full, and the seat count equals the active bookings.
async fn concurrent_bookings_never_overbook(db: Database) {
    let s = setting(&db).await;
    let hot = stored_slot(&db, slot(&s, 48, 5)).await;
    let tasks: Vec<_> = citizens(&db, &s, 50)
        .await
        .into_iter()
        .map(|citizen| {
            let (db, a) = (db.clone(), booking_of(&s, &hot, citizen));
            tokio::spawn(async move {
                AppointmentRepository::book(&db, &a, &entry_of(&a), Some(3), now(), &WriteMeta::default())
                    .await
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.unwrap().unwrap());
    }
    let booked = outcomes.iter().filter(|o| **o == BookOutcome::Booked).count();
    let full = outcomes.iter().filter(|o| **o == BookOutcome::Refused(BookingRefused::Full)).count();
    assert_eq!((booked, full), (5, 45));
    assert_eq!(seats(&db, &hot).await, (5, 5));
}

/// What a booking with an `Idempotency-Key` stores: the record, an audit entry and the
/// booking, or nothing.
fn keyed(owner: consular_domain::ClientId, key: &str, a: &Appointment) -> WriteMeta {
    let at = now();
    WriteMeta {
        idempotency: Some(consular_ports::IdempotencyRecord {
            owner,
            key: key.to_owned(),
            fingerprint: "POST /api/v1/appointments 1f2e".to_owned(),
            outcome: consular_ports::StoredOutcome {
                resource_id: a.id.0,
                snapshot: serde_json::json!({ "id": a.id.0, "status": "booked" }),
            },
            created_at: at,
            expires_at: at + Duration::hours(24),
        }),
        ..audited("appointment", a.id.0)
    }
}

/// A booking's writes go out together (one round trip on PostgreSQL for the idempotency
/// record, the audit entry and the seat; one for the appointment and its history), run
/// in the order given, and the first that fails decides the outcome: a used key is
/// `IdempotencyKeyInUse` however the statements after it fared, a place a unique index
/// refuses is `AlreadyBooked`, and either way nothing of the booking is stored. Two
/// bookings of different slots sent at once with the same key: one is booked, the other
/// refused on the key, on a fresh database whose statements are not prepared yet.
async fn a_booking_stores_its_writes_in_order_or_none(db: Database) {
    let s = setting(&db).await;
    let (owner, citizens) = (consular_domain::ClientId::new(), citizens(&db, &s, 2).await);
    let (one, two) = (stored_slot(&db, slot(&s, 48, 2)).await, stored_slot(&db, slot(&s, 72, 2)).await);
    let (a, b) = (booking_of(&s, &one, citizens[0]), booking_of(&s, &two, citizens[1]));
    let tasks: Vec<_> = [a.clone(), b.clone()]
        .into_iter()
        .map(|x| {
            let db = db.clone();
            tokio::spawn(async move {
                AppointmentRepository::book(&db, &x, &entry_of(&x), None, now(), &keyed(owner, "same", &x))
                    .await
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.unwrap());
    }
    let booked = outcomes.iter().filter(|o| matches!(o, Ok(BookOutcome::Booked))).count();
    let in_use = outcomes.iter().filter(|o| matches!(o, Err(RepoError::IdempotencyKeyInUse))).count();
    assert_eq!((booked, in_use), (1, 1), "{outcomes:?}");
    let (winner, loser) = if outcomes[0].is_ok() { (&a, &two) } else { (&b, &one) };
    assert_eq!(seats(&db, loser).await, (0, 0), "the refused booking took no seat");
    assert_eq!(db.count_rows("appointments").await.unwrap(), 1);
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 1);

    // The same place again, with a fresh key: the unique index refuses the appointment
    // after the key, the audit entry and the seat were written; all of it rolls back.
    let again = Appointment { id: consular_domain::AppointmentId::new(), ..winner.clone() };
    let entry = AppointmentEntry { appointment_id: again.id, ..entry_of(&again) };
    let refused =
        AppointmentRepository::book(&db, &again, &entry, None, now(), &keyed(owner, "fresh", &again)).await;
    assert_eq!(refused.unwrap(), BookOutcome::AlreadyBooked(winner.id));
    let slot_of_winner = if winner.id == a.id { &one } else { &two };
    assert_eq!(seats(&db, slot_of_winner).await, (1, 1), "the seat was given back");
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 1);
    // The key was not kept: it books the other citizen's place.
    let other = booking_of(&s, loser, if winner.id == a.id { citizens[1] } else { citizens[0] });
    let booked = AppointmentRepository::book(
        &db,
        &other,
        &entry_of(&other),
        None,
        now(),
        &keyed(owner, "fresh", &other),
    )
    .await;
    assert_eq!(booked.unwrap(), BookOutcome::Booked);
    assert_eq!(seats(&db, loser).await, (1, 1));
}

/// Concurrent moves into a hot slot and cancellations out of it keep every seat count
/// equal to the bookings holding a seat, within capacity.
async fn concurrent_moves_and_cancellations_keep_the_seat_count(db: Database) {
    let s = setting(&db).await;
    let hot = stored_slot(&db, slot(&s, 48, 5)).await;
    let wide = stored_slot(&db, slot(&s, 72, 30)).await;
    let people = citizens(&db, &s, 24).await;
    let mut in_hot = Vec::new();
    for citizen in &people[..4] {
        let a = booking_of(&s, &hot, *citizen);
        assert_eq!(book(&db, &a).await, BookOutcome::Booked);
        in_hot.push(a);
    }
    let mut in_wide = Vec::new();
    for citizen in &people[4..] {
        let a = booking_of(&s, &wide, *citizen);
        assert_eq!(book(&db, &a).await, BookOutcome::Booked);
        in_wide.push(a);
    }
    let hot_now = stored(&db, hot.id).await;
    let wide_now = stored(&db, wide.id).await;
    let mut tasks = Vec::new();
    for a in in_wide {
        let (db, mut moved, from, to) =
            (db.clone(), a.clone(), wide_now.clone(), Slot { booked: 0, ..hot_now.clone() });
        moved.reschedule(Role::Staff, &from, &to, now()).unwrap();
        tasks.push(tokio::spawn(async move {
            AppointmentRepository::reschedule(
                &db,
                &moved,
                &entry_of(&moved),
                from.id,
                1,
                now(),
                &WriteMeta::default(),
            )
            .await
            .map(|o| o == BookOutcome::Booked)
        }));
    }
    for a in in_hot {
        let (db, mut cancelled, slot) = (db.clone(), a.clone(), hot_now.clone());
        cancelled.cancel(Role::Staff, &slot, now()).unwrap();
        tasks.push(tokio::spawn(async move {
            AppointmentRepository::cancel(&db, &cancelled, &entry_of(&cancelled), 1, &WriteMeta::default())
                .await
                .map(|()| false)
        }));
    }
    let mut moves = 0_i64;
    for task in tasks {
        if task.await.unwrap().unwrap() {
            moves += 1;
        }
    }
    let (hot_seats, hot_holding) = seats(&db, &hot).await;
    assert_eq!(hot_seats, hot_holding);
    assert!((1..=5).contains(&hot_seats), "{hot_seats}");
    assert_eq!(hot_seats, moves, "every seat left in the hot slot is a move that succeeded");
    assert_eq!(seats(&db, &wide).await, (20 - moves, 20 - moves));
}

// ---------------------------------------------------------------- one booking per place, the limit

/// Without a request, a citizen holds one active booking per slot and service type: a
/// second is `AlreadyBooked` naming the first and stores nothing, whoever books; a
/// booking for a request, of another service type or of another citizen is another
/// place; a move into the slot is refused the same way; cancelled, the place is free.
async fn one_booking_without_a_request_per_citizen_slot_and_service_type(db: Database) {
    let s = setting(&db).await;
    let mut both = slot(&s, 48, 5);
    both.service_types = vec![s.passport, s.visa];
    both.service_types.sort();
    let both = stored_slot(&db, both).await;
    let first = booking(&s, &both, None);
    assert_eq!(book_limited(&db, &first, 10, now()).await, BookOutcome::Booked);
    let again = booking(&s, &both, None);
    assert_eq!(book_limited(&db, &again, 10, now()).await, BookOutcome::AlreadyBooked(first.id));
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 1, "a refused booking stores nothing");
    assert_eq!(book(&db, &again).await, BookOutcome::AlreadyBooked(first.id), "staff included");
    assert_eq!(seats(&db, &both).await, (1, 1), "the seat was given back");
    assert_eq!(AppointmentRepository::get(&db, again.id).await.unwrap(), None);

    assert_eq!(book(&db, &booking(&s, &both, Some(s.request))).await, BookOutcome::Booked);
    let visa = Appointment::book(&both, s.citizen, s.visa, None, citizen_subject(s.citizen), now());
    assert_eq!(book(&db, &visa).await, BookOutcome::Booked);
    let bob = citizens(&db, &s, 1).await[0];
    assert_eq!(book(&db, &booking_of(&s, &both, bob)).await, BookOutcome::Booked);
    assert_eq!(seats(&db, &both).await, (4, 4));

    let other = stored_slot(&db, slot(&s, 72, 5)).await;
    let elsewhere = booking(&s, &other, None);
    assert_eq!(book(&db, &elsewhere).await, BookOutcome::Booked);
    let mut moved = elsewhere.clone();
    moved.reschedule(Role::Citizen, &other, &stored(&db, both.id).await, now()).unwrap();
    let refused = AppointmentRepository::reschedule(
        &db,
        &moved,
        &entry_of(&moved),
        other.id,
        1,
        now(),
        &WriteMeta::default(),
    )
    .await
    .unwrap();
    assert_eq!(refused, BookOutcome::AlreadyBooked(first.id));
    assert_eq!(AppointmentRepository::get(&db, elsewhere.id).await.unwrap(), Some(elsewhere.clone()));
    assert_eq!((seats(&db, &both).await, seats(&db, &other).await), ((4, 4), (1, 1)), "nothing moved");

    let mut cancelled = first.clone();
    cancelled.cancel(Role::Citizen, &both, now()).unwrap();
    AppointmentRepository::cancel(&db, &cancelled, &entry_of(&cancelled), 1, &WriteMeta::default())
        .await
        .unwrap();
    assert_eq!(book_limited(&db, &again, 10, now()).await, BookOutcome::Booked, "free again");
    assert_eq!(seats(&db, &both).await, (4, 4));
}

/// A citizen booking themself holds at most `limit` upcoming bookings: the next is
/// `LimitReached` and stores nothing (a slot's own refusal comes first); staff book
/// beyond it; an appointment that is over, or cancelled, no longer counts.
async fn a_citizen_holds_at_most_the_limit_of_upcoming_bookings(db: Database) {
    let s = setting(&db).await;
    // Bookable now (its cut-off is an hour before its start), over in two and a half hours.
    let soon = stored_slot(&db, slot(&s, 2, 3)).await;
    let mut later = Vec::new();
    for days in 2..7 {
        later.push(stored_slot(&db, slot(&s, 24 * days, 3)).await);
    }
    assert_eq!(book_limited(&db, &booking(&s, &soon, None), 2, now()).await, BookOutcome::Booked);
    let kept = booking(&s, &later[0], None);
    assert_eq!(book_limited(&db, &kept, 2, now()).await, BookOutcome::Booked);
    let third = booking(&s, &later[1], None);
    assert_eq!(book_limited(&db, &third, 2, now()).await, BookOutcome::LimitReached);
    assert_eq!(seats(&db, &later[1]).await, (0, 0), "the seat was given back");
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 2, "a refused booking stores nothing");
    let full = stored_slot(&db, slot(&s, 24 * 8, 1)).await;
    let bob = citizens(&db, &s, 1).await[0];
    assert_eq!(book(&db, &booking_of(&s, &full, bob)).await, BookOutcome::Booked);
    assert_eq!(
        book_limited(&db, &booking(&s, &full, None), 2, now()).await,
        BookOutcome::Refused(BookingRefused::Full),
        "the slot's reason first"
    );

    assert_eq!(book(&db, &third).await, BookOutcome::Booked, "staff book beyond the limit");
    let fourth = booking(&s, &later[2], None);
    assert_eq!(book_limited(&db, &fourth, 3, now()).await, BookOutcome::LimitReached);
    let after_soon = now() + Duration::hours(3);
    assert_eq!(book_limited(&db, &fourth, 3, after_soon).await, BookOutcome::Booked, "an appointment over");

    let mut cancelled = kept.clone();
    cancelled.cancel(Role::Citizen, &later[0], now()).unwrap();
    AppointmentRepository::cancel(&db, &cancelled, &entry_of(&cancelled), 1, &WriteMeta::default())
        .await
        .unwrap();
    let fifth = booking(&s, &later[3], None);
    assert_eq!(book_limited(&db, &fifth, 3, after_soon).await, BookOutcome::Booked, "a cancellation");
    assert_eq!(
        book_limited(&db, &booking(&s, &later[4], None), 3, after_soon).await,
        BookOutcome::LimitReached
    );
}

/// One citizen's bookings at once: ten in ten slots with a limit of 3 store exactly
/// three; ten in one slot (half with the limit, half by staff) store exactly one, and
/// every other names it.
async fn concurrent_bookings_of_one_citizen_keep_its_rules(db: Database) {
    let s = setting(&db).await;
    let mut spread = Vec::new();
    for hours in 0..10 {
        spread.push(stored_slot(&db, slot(&s, 48 + hours, 5)).await);
    }
    let tasks: Vec<_> = spread
        .iter()
        .map(|x| {
            let (db, a) = (db.clone(), booking(&s, x, None));
            tokio::spawn(async move {
                AppointmentRepository::book(&db, &a, &entry_of(&a), Some(3), now(), &WriteMeta::default())
                    .await
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.unwrap().unwrap());
    }
    let booked = outcomes.iter().filter(|o| **o == BookOutcome::Booked).count();
    let limited = outcomes.iter().filter(|o| **o == BookOutcome::LimitReached).count();
    assert_eq!((booked, limited), (3, 7), "{outcomes:?}");
    let mut taken = 0;
    for x in &spread {
        let (seats, holding) = seats(&db, x).await;
        assert_eq!(seats, holding);
        taken += seats;
    }
    assert_eq!(taken, 3);

    let bob = citizens(&db, &s, 1).await[0];
    let hot = stored_slot(&db, slot(&s, 24 * 7, 20)).await;
    let attempts: Vec<Appointment> = (0..10).map(|_| booking_of(&s, &hot, bob)).collect();
    let tasks: Vec<_> = attempts
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let (db, a) = (db.clone(), a.clone());
            let limit = (i % 2 == 0).then_some(3);
            tokio::spawn(async move {
                AppointmentRepository::book(&db, &a, &entry_of(&a), limit, now(), &WriteMeta::default()).await
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.unwrap().unwrap());
    }
    let winners: Vec<&Appointment> =
        attempts.iter().zip(&outcomes).filter(|(_, o)| **o == BookOutcome::Booked).map(|(a, _)| a).collect();
    assert_eq!(winners.len(), 1, "{outcomes:?}");
    let named = BookOutcome::AlreadyBooked(winners[0].id);
    assert_eq!(outcomes.iter().filter(|o| **o == named).count(), 9, "{outcomes:?}");
    assert_eq!(seats(&db, &hot).await, (1, 1));
}

/// Migration 2026-11-27-000019 on the bookings an older build could store: per citizen,
/// slot and service type without a request, the first booking made stays and the others
/// are cancelled by the mission, their seats released; bookings for a request or of
/// another citizen are untouched, and the index holds afterwards.
async fn the_migration_keeps_the_first_booking_of_a_place(db: Database) {
    let s = setting(&db).await;
    db.drop_one_per_slot().await.unwrap();
    let hot = stored_slot(&db, slot(&s, 48, 6)).await;
    let mut made = Vec::new();
    for _ in 0..3 {
        let a = booking(&s, &hot, None);
        assert_eq!(book(&db, &a).await, BookOutcome::Booked);
        made.push(a);
    }
    let linked = booking(&s, &hot, Some(s.request));
    assert_eq!(book(&db, &linked).await, BookOutcome::Booked);
    let bob = citizens(&db, &s, 1).await[0];
    let bobs = booking_of(&s, &hot, bob);
    assert_eq!(book(&db, &bobs).await, BookOutcome::Booked);
    assert_eq!(seats(&db, &hot).await, (5, 5));

    db.migrate_one_per_slot().await.unwrap();
    for kept in [&made[0], &linked, &bobs] {
        assert_eq!(AppointmentRepository::get(&db, kept.id).await.unwrap().as_ref(), Some(kept));
    }
    for extra in &made[1..] {
        let stored = AppointmentRepository::get(&db, extra.id).await.unwrap().unwrap();
        assert_eq!(
            (stored.status, stored.cancelled_by, stored.version),
            (AppointmentStatus::Cancelled, Some(consular_domain::CancelledBy::Mission), 2)
        );
        assert!(stored.cancelled_at.is_some());
    }
    assert_eq!(seats(&db, &hot).await, (3, 3), "their seats were released");
    assert_eq!(book(&db, &booking(&s, &hot, None)).await, BookOutcome::AlreadyBooked(made[0].id));
}

// ---------------------------------------------------------------- both databases

on_both_databases!(
    slots_are_upserted_by_content_under_their_guards,
    closing_a_slot_cancels_the_bookings_the_mission_names,
    a_booking_takes_a_seat_or_says_why_not,
    a_reschedule_moves_the_seat_or_changes_nothing,
    availability_shows_open_future_slots_with_free_seats_in_start_order,
    appointments_are_listed_in_start_order_by_every_filter,
    appointments_are_listed_within_a_mandates_services,
    concurrent_bookings_never_overbook,
    a_booking_stores_its_writes_in_order_or_none,
    concurrent_moves_and_cancellations_keep_the_seat_count,
    one_booking_without_a_request_per_citizen_slot_and_service_type,
    a_citizen_holds_at_most_the_limit_of_upcoming_bookings,
    concurrent_bookings_of_one_citizen_keep_its_rules,
    the_migration_keeps_the_first_booking_of_a_place,
);
