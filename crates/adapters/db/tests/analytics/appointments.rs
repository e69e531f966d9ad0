//! The appointments of the overview, per bucket, against slots and bookings written as they would be after the days went by.

use super::*;
use consular_ports::Consistency;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fate {
    Booked,
    Attended,
    NoShow,
    Cancelled,
}

/// A slot to store: mission, citizen, day (from the first day), minutes after UTC
/// midnight, capacity, the fates of its bookings, whether it is closed in the end.
struct Planned {
    mission: MissionId,
    citizen: CitizenId,
    day: i64,
    minute: i64,
    capacity: u32,
    fates: Vec<Fate>,
    closed: bool,
}

fn entry_of(a: &Appointment) -> AppointmentEntry {
    let change = match (a.status, a.cancelled_by) {
        (AppointmentStatus::Booked, _) => AppointmentChange::Booked,
        (AppointmentStatus::Attended, _) => AppointmentChange::Attended,
        (AppointmentStatus::NoShow, _) => AppointmentChange::NoShow,
        (AppointmentStatus::Cancelled, Some(CancelledBy::Mission)) => AppointmentChange::CancelledByMission,
        (AppointmentStatus::Cancelled, _) => AppointmentChange::Cancelled,
    };
    AppointmentEntry::of(a, change, a.booked_by).unwrap()
}

/// Slots and appointments in the past, as they would be after the days went by: booked
/// two days ahead, then attended, missed, cancelled, or still not marked.
async fn appointments_fill_the_overview_per_bucket(db: Database) {
    let here = stored_mission(&db, "fr-appointments").await;
    let there = stored_mission(&db, "de-appointments").await;
    let passport = stored_service_type(&db, "passport").await;
    let alice = stored_citizen(&db, here.id, "AP0001").await.id;
    let bob = stored_citizen(&db, there.id, "AP0002").await.id;
    let now = now();
    let first_day = today("UTC", now) - Duration::days(10);
    let midnight = first_day.midnight().assume_utc();
    use Fate::*;
    let planned = [
        Planned {
            mission: here.id,
            citizen: alice,
            day: 0,
            minute: 600,
            capacity: 3,
            fates: vec![Attended, NoShow, Cancelled],
            closed: false,
        },
        Planned {
            mission: here.id,
            citizen: alice,
            day: 0,
            minute: 840,
            capacity: 2,
            fates: vec![Booked],
            closed: false,
        },
        // Closed from the start: no seat offered.
        Planned {
            mission: here.id,
            citizen: alice,
            day: 1,
            minute: 540,
            capacity: 4,
            fates: vec![],
            closed: true,
        },
        // 23:30 UTC: the UTC day 1, the Paris day 2.
        Planned {
            mission: here.id,
            citizen: alice,
            day: 1,
            minute: 1410,
            capacity: 1,
            fates: vec![NoShow],
            closed: false,
        },
        // Exactly at a UTC boundary: the later bucket.
        Planned {
            mission: here.id,
            citizen: alice,
            day: 2,
            minute: 0,
            capacity: 2,
            fates: vec![Attended, Attended],
            closed: false,
        },
        // Its bookings cancelled, then closed: neither seats nor attendance.
        Planned {
            mission: here.id,
            citizen: alice,
            day: 3,
            minute: 660,
            capacity: 2,
            fates: vec![Cancelled, Cancelled],
            closed: true,
        },
        Planned {
            mission: here.id,
            citizen: alice,
            day: 3,
            minute: 720,
            capacity: 5,
            fates: vec![],
            closed: false,
        },
        // Another mission, the same day.
        Planned {
            mission: there.id,
            citizen: bob,
            day: 0,
            minute: 600,
            capacity: 5,
            fates: vec![NoShow, Attended, Booked],
            closed: false,
        },
    ];

    // (mission, starts_at, capacity, booked, open) and (mission, starts_at, status).
    let mut slots: Vec<(MissionId, OffsetDateTime, u32, u32, bool)> = Vec::new();
    let mut appointments: Vec<(MissionId, OffsetDateTime, Fate)> = Vec::new();
    for p in &planned {
        let starts_at = midnight + Duration::days(p.day) + Duration::minutes(p.minute);
        let booked_at = starts_at - Duration::days(2);
        let slot = Slot {
            capacity: p.capacity,
            service_types: vec![passport.id],
            open: !(p.closed && p.fates.is_empty()),
            ..consular_domain::fixtures::slot(p.mission, starts_at, booked_at - Duration::days(1))
        };
        let upsert = SlotUpsert { slots: vec![(slot.clone(), None)], cancelled: vec![] };
        AppointmentRepository::upsert_slots(&db, &upsert, &WriteMeta::default()).await.unwrap();
        let subject = Subject { kind: PrincipalKind::Citizen, id: PrincipalId(p.citizen.0) };
        for fate in &p.fates {
            let mut a = Appointment::book(&slot, p.citizen, passport.id, None, subject, booked_at);
            let outcome =
                AppointmentRepository::book(&db, &a, &entry_of(&a), None, booked_at, &WriteMeta::default())
                    .await
                    .unwrap();
            assert_eq!(outcome, BookOutcome::Booked);
            match fate {
                Booked => {}
                Attended | NoShow => {
                    let action = if *fate == Attended {
                        AppointmentAction::Attend
                    } else {
                        AppointmentAction::MarkNoShow
                    };
                    a.record_attendance(Role::Staff, action, starts_at + Duration::minutes(5)).unwrap();
                    AppointmentRepository::record_attendance(
                        &db,
                        &a,
                        &entry_of(&a),
                        1,
                        &WriteMeta::default(),
                    )
                    .await
                    .unwrap();
                }
                Cancelled => {
                    a.cancel(Role::Staff, &slot, booked_at + Duration::hours(1)).unwrap();
                    AppointmentRepository::cancel(&db, &a, &entry_of(&a), 1, &WriteMeta::default())
                        .await
                        .unwrap();
                }
            }
            appointments.push((p.mission, starts_at, *fate));
        }
        if p.closed && !p.fates.is_empty() {
            let current = AppointmentRepository::get_slot(&db, slot.id).await.unwrap().unwrap();
            let closed = Slot { open: false, version: current.version + 1, ..current.clone() };
            let upsert = SlotUpsert { slots: vec![(closed, Some(current.version))], cancelled: vec![] };
            AppointmentRepository::upsert_slots(&db, &upsert, &WriteMeta::default()).await.unwrap();
        }
        let stored = AppointmentRepository::get_slot(&db, slot.id).await.unwrap().unwrap();
        let holding = p.fates.iter().filter(|f| **f != Cancelled).count() as u32;
        assert_eq!((stored.booked, stored.open), (holding, !p.closed), "the fixture is what it says");
        slots.push((p.mission, starts_at, p.capacity, holding, !p.closed));
    }

    // The brute force: open slots and appointments by `starts_at` in each bucket.
    let seats = |q: &AnalyticsQuery| -> Vec<SeatCounts> {
        let scoped =
            |m: MissionId| matches!(q.missions, MissionScope::All) || q.missions == MissionScope::One(m);
        q.boundaries
            .windows(2)
            .map(|w| {
                let inside = |t: OffsetDateTime| w[0] <= t && t < w[1];
                let mut c = SeatCounts::default();
                for (m, at, capacity, booked, open) in &slots {
                    if scoped(*m) && inside(*at) && *open {
                        c.booked += u64::from(*booked);
                        c.capacity += u64::from(*capacity);
                    }
                }
                for (m, at, fate) in &appointments {
                    if scoped(*m) && inside(*at) {
                        c.attended += u64::from(*fate == Attended);
                        c.no_show += u64::from(*fate == NoShow);
                    }
                }
                c
            })
            .collect()
    };

    let range = (first_day, first_day + Duration::days(4));
    let cases = [
        (query(MissionScope::All, None, "UTC", range, Granularity::Day, now), "all, UTC days"),
        (query(MissionScope::One(here.id), None, "UTC", range, Granularity::Day, now), "Paris, UTC days"),
        (query(MissionScope::One(here.id), None, "Europe/Paris", range, Granularity::Day, now), "Paris days"),
        (query(MissionScope::One(there.id), None, "UTC", range, Granularity::Week, now), "the other, weeks"),
        (
            query(
                MissionScope::One(here.id),
                Some(ServiceTypeId::new()),
                "UTC",
                range,
                Granularity::Day,
                now,
            ),
            "a type filter does not apply to appointments",
        ),
    ];
    for (q, what) in &cases {
        let overview = AnalyticsRepository::overview(&db, q, &at(now), Consistency::Latest).await.unwrap();
        assert_eq!(overview.appointments, seats(q), "{what}");
        assert_eq!(overview.requests, expected::overview(&[], q, now), "{what}: no request");
    }
    // The figures the fixture was built for, spelled out.
    let all = seats(&cases[0].0);
    assert_eq!(
        all,
        [
            SeatCounts { booked: 2 + 1 + 3, capacity: 3 + 2 + 5, attended: 1 + 1, no_show: 1 + 1 },
            SeatCounts { booked: 1, capacity: 1, attended: 0, no_show: 1 },
            SeatCounts { booked: 2, capacity: 2, attended: 2, no_show: 0 },
            SeatCounts { booked: 0, capacity: 5, attended: 0, no_show: 0 },
            SeatCounts::default(),
        ]
    );
    assert_ne!(seats(&cases[1].0), seats(&cases[2].0), "23:30 UTC is tomorrow in Paris");
}

on_both_databases!(appointments_fill_the_overview_per_bucket,);
