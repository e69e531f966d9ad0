//! Schedules expand to the right UTC instants across daylight-saving changes (Europe/Paris
//! and America/New_York, spring forward and fall back), with the decisions of
//! docs/appointments.md for times that do not exist or exist twice.

use super::*;
use time::macros::{date, datetime, time};
use uuid::Uuid;

const NOW: OffsetDateTime = datetime!(2026-01-01 00:00 UTC);

fn template(slot_minutes: u32) -> SlotTemplate {
    SlotTemplate {
        slot_minutes,
        capacity: 5,
        service_types: vec![
            ServiceTypeId(Uuid::from_u128(2)),
            ServiceTypeId(Uuid::from_u128(1)),
            ServiceTypeId(Uuid::from_u128(2)),
        ],
        open: true,
        cutoffs: Cutoffs::default(),
    }
}

fn every_day(first: Date, last: Date, hours: &[(Time, Time)], slot_minutes: u32) -> Availability {
    Availability::Recurring(RecurringSchedule {
        first_day: first,
        last_day: last,
        weekdays: vec![
            Weekday::Monday,
            Weekday::Tuesday,
            Weekday::Wednesday,
            Weekday::Thursday,
            Weekday::Friday,
            Weekday::Saturday,
            Weekday::Sunday,
        ],
        hours: hours.iter().map(|&(opens, closes)| OpeningHours { opens, closes }).collect(),
        excluded_dates: Vec::new(),
        template: template(slot_minutes),
    })
}

fn starts(availability: &Availability, zone: &str) -> Vec<OffsetDateTime> {
    availability
        .expand(MissionId(Uuid::from_u128(7)), zone, NOW)
        .unwrap()
        .iter()
        .map(|s| s.starts_at)
        .collect()
}

/// The first slot (09:00 local) of each day of a week around a change, in UTC.
#[test]
fn a_morning_slot_follows_the_local_clock_across_every_change() {
    let weeks = [
        (
            "Europe/Paris",
            date!(2026 - 03 - 26),
            [
                datetime!(2026-03-26 08:00 UTC),
                datetime!(2026-03-27 08:00 UTC),
                datetime!(2026-03-28 08:00 UTC),
                datetime!(2026-03-29 07:00 UTC),
                datetime!(2026-03-30 07:00 UTC),
            ],
        ),
        (
            "Europe/Paris",
            date!(2026 - 10 - 22),
            [
                datetime!(2026-10-22 07:00 UTC),
                datetime!(2026-10-23 07:00 UTC),
                datetime!(2026-10-24 07:00 UTC),
                datetime!(2026-10-25 08:00 UTC),
                datetime!(2026-10-26 08:00 UTC),
            ],
        ),
        (
            "America/New_York",
            date!(2026 - 03 - 05),
            [
                datetime!(2026-03-05 14:00 UTC),
                datetime!(2026-03-06 14:00 UTC),
                datetime!(2026-03-07 14:00 UTC),
                datetime!(2026-03-08 13:00 UTC),
                datetime!(2026-03-09 13:00 UTC),
            ],
        ),
        (
            "America/New_York",
            date!(2026 - 10 - 29),
            [
                datetime!(2026-10-29 13:00 UTC),
                datetime!(2026-10-30 13:00 UTC),
                datetime!(2026-10-31 13:00 UTC),
                datetime!(2026-11-01 14:00 UTC),
                datetime!(2026-11-02 14:00 UTC),
            ],
        ),
    ];
    for (zone, first, expected) in weeks {
        let last = first + time::Duration::days(4);
        let schedule =
            every_day(first, last, &[(time!(9:00), time!(12:00)), (time!(14:00), time!(16:00))], 60);
        let all = starts(&schedule, zone);
        assert_eq!(all.len(), 5 * 5, "{zone}: three morning and two afternoon slots a day");
        let mornings: Vec<OffsetDateTime> = all.iter().copied().step_by(5).collect();
        assert_eq!(mornings, expected, "{zone} from {first}");
        let afternoons: Vec<OffsetDateTime> = all.iter().copied().skip(3).step_by(5).collect();
        for (morning, afternoon) in mornings.iter().zip(afternoons) {
            assert_eq!(
                afternoon - *morning,
                time::Duration::hours(5),
                "{zone}: 14:00 is five hours after 09:00"
            );
        }
    }
}

/// Slots laid over the changes themselves, in the night they happen.
#[test]
fn times_that_do_not_exist_make_no_slot_and_repeated_times_are_their_first_occurrence() {
    let night = [(time!(1:00), time!(4:00))];
    let cases: &[(&str, Date, u32, &[OffsetDateTime])] = &[
        // 02:00 and 02:30 do not exist: the slots at 01:30 CET and 03:00 CEST touch.
        (
            "Europe/Paris",
            date!(2026 - 03 - 29),
            30,
            &[
                datetime!(2026-03-29 0:00 UTC),
                datetime!(2026-03-29 0:30 UTC),
                datetime!(2026-03-29 1:00 UTC),
                datetime!(2026-03-29 1:30 UTC),
            ],
        ),
        // 02:00 and 02:30 happen twice: the first time (CEST); the repeated hour is empty.
        (
            "Europe/Paris",
            date!(2026 - 10 - 25),
            30,
            &[
                datetime!(2026-10-24 23:00 UTC),
                datetime!(2026-10-24 23:30 UTC),
                datetime!(2026-10-25 0:00 UTC),
                datetime!(2026-10-25 0:30 UTC),
                datetime!(2026-10-25 2:00 UTC),
                datetime!(2026-10-25 2:30 UTC),
            ],
        ),
        // 90-minute slots: 01:00 EST, then 02:30, which does not exist.
        ("America/New_York", date!(2026 - 03 - 08), 90, &[datetime!(2026-03-08 6:00 UTC)]),
        (
            "America/New_York",
            date!(2026 - 11 - 01),
            60,
            &[datetime!(2026-11-01 5:00 UTC), datetime!(2026-11-01 7:00 UTC), datetime!(2026-11-01 8:00 UTC)],
        ),
    ];
    for (zone, day, minutes, expected) in cases {
        let schedule = every_day(*day, *day, &night, *minutes);
        let slots = schedule.expand(MissionId::new(), zone, NOW).unwrap();
        let got: Vec<OffsetDateTime> = slots.iter().map(|s| s.starts_at).collect();
        assert_eq!(&got, expected, "{zone} {day}");
        for s in &slots {
            assert_eq!(
                s.ends_at - s.starts_at,
                time::Duration::minutes(i64::from(*minutes)),
                "a slot lasts its length"
            );
        }
        assert!(slots.windows(2).all(|w| w[0].ends_at <= w[1].starts_at), "{zone} {day}: no overlap");
    }
    let paris_gap =
        every_day(date!(2026 - 03 - 29), date!(2026 - 03 - 29), &[(time!(0:00), time!(6:00))], 90);
    assert_eq!(
        starts(&paris_gap, "Europe/Paris"),
        [datetime!(2026-03-28 23:00 UTC), datetime!(2026-03-29 0:30 UTC), datetime!(2026-03-29 2:30 UTC)],
        "03:00 CEST starts inside the 01:30 CET slot: not made"
    );
}

#[test]
fn explicit_start_times_resolve_the_same_way_or_are_refused() {
    let explicit = |starts: Vec<PrimitiveDateTime>| {
        Availability::Explicit(ExplicitSlots { starts, template: template(30) })
    };
    let ok =
        explicit(vec![datetime!(2026-10-25 02:30), datetime!(2026-03-29 03:00), datetime!(2026-06-01 09:00)]);
    assert_eq!(
        starts(&ok, "Europe/Paris"),
        [datetime!(2026-03-29 1:00 UTC), datetime!(2026-06-01 7:00 UTC), datetime!(2026-10-25 0:30 UTC)],
        "sorted by start; a repeated time is its first occurrence"
    );
    let bad = explicit(vec![
        datetime!(2026-03-29 02:30),
        datetime!(2025-12-31 09:00),
        datetime!(2026-06-01 09:00),
        datetime!(2026-06-01 09:00),
    ]);
    let errors = bad.expand(MissionId::new(), "Europe/Paris", NOW).unwrap_err();
    let found: Vec<(&str, &str)> = errors.0.iter().map(|e| (e.pointer.as_str(), e.code.as_str())).collect();
    assert_eq!(
        found,
        [("/starts/0", "nonexistent_local_time"), ("/starts/1", "in_the_past"), ("/starts/3", "duplicate")]
    );
}

#[test]
fn the_same_content_makes_the_same_keys() {
    let schedule =
        every_day(date!(2026 - 03 - 23), date!(2026 - 04 - 05), &[(time!(9:00), time!(12:00))], 20);
    let mission = MissionId::new();
    let first = schedule.expand(mission, "Europe/Paris", NOW).unwrap();
    let again = schedule.expand(mission, "Europe/Paris", NOW).unwrap();
    let keys = |slots: &[Slot]| slots.iter().map(Slot::key).collect::<Vec<_>>();
    assert_eq!(keys(&first), keys(&again));
    assert_eq!(first.len(), 14 * 9);
    let s = &first[0];
    assert_eq!((s.capacity, s.booked, s.version, s.open), (5, 0, 1, true));
    assert_eq!(
        s.service_types,
        [ServiceTypeId(Uuid::from_u128(1)), ServiceTypeId(Uuid::from_u128(2))],
        "sorted, no repeats"
    );
    // Slots already started are not made: the rest of a schedule that has begun.
    let later = schedule.expand(mission, "Europe/Paris", datetime!(2026-04-05 08:30 UTC)).unwrap();
    assert_eq!(keys(&later), keys(&first[first.len() - 4..]));
}

#[test]
fn weekdays_and_excluded_dates_choose_the_days() {
    let Availability::Recurring(mut schedule) =
        every_day(date!(2026 - 06 - 01), date!(2026 - 06 - 14), &[(time!(9:00), time!(10:00))], 60)
    else {
        unreachable!()
    };
    schedule.weekdays = vec![Weekday::Monday, Weekday::Wednesday];
    schedule.excluded_dates = vec![date!(2026 - 06 - 03), date!(2026 - 07 - 01)];
    let days: Vec<Date> =
        starts(&Availability::Recurring(schedule), "UTC").iter().map(|s| s.date()).collect();
    assert_eq!(days, [date!(2026 - 06 - 01), date!(2026 - 06 - 08), date!(2026 - 06 - 10)]);
}

#[test]
fn every_invalid_field_is_reported_at_once() {
    let schedule = Availability::Recurring(RecurringSchedule {
        first_day: date!(2026 - 06 - 10),
        last_day: date!(2026 - 06 - 01),
        weekdays: vec![],
        hours: vec![
            OpeningHours { opens: time!(12:00), closes: time!(9:00) },
            OpeningHours { opens: time!(8:00:30), closes: time!(13:00) },
        ],
        excluded_dates: vec![],
        template: SlotTemplate {
            slot_minutes: 2,
            capacity: 0,
            service_types: vec![],
            open: true,
            cutoffs: Cutoffs { booking_minutes: 50_000, cancellation_minutes: 0 },
        },
    });
    let errors = schedule.expand(MissionId::new(), "Mars/Olympus", NOW).unwrap_err();
    let pointers: Vec<&str> = errors.0.iter().map(|e| e.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        ["/booking_cutoff_minutes", "/capacity", "/service_types", "/slot_minutes", "/timezone"]
    );
    let errors = schedule.expand(MissionId::new(), "Europe/Paris", NOW).unwrap_err();
    let pointers: Vec<&str> = errors.0.iter().map(|e| e.pointer.as_str()).collect();
    assert_eq!(
        pointers,
        [
            "/booking_cutoff_minutes",
            "/capacity",
            "/hours",
            "/hours/0/closes",
            "/hours/1",
            "/last_day",
            "/service_types",
            "/slot_minutes",
            "/weekdays"
        ]
    );
    let long = every_day(date!(2026 - 01 - 01), date!(2027 - 01 - 02), &[(time!(9:00), time!(10:00))], 60);
    let errors = long.expand(MissionId::new(), "UTC", NOW).unwrap_err();
    assert_eq!(errors.0[0].pointer, "/last_day");
    let dense = every_day(date!(2026 - 01 - 02), date!(2026 - 12 - 31), &[(time!(0:00), time!(23:55))], 5);
    assert_eq!(dense.expand(MissionId::new(), "UTC", NOW).unwrap_err().0[0].code, "too_many_slots");
}

#[test]
fn a_slot_shows_in_the_missions_local_time() {
    let schedule = every_day(date!(2026 - 10 - 25), date!(2026 - 10 - 25), &[(time!(2:00), time!(3:00))], 60);
    let slot = &schedule.expand(MissionId::new(), "Europe/Paris", NOW).unwrap()[0];
    let local = LocalSlot::of(slot, "Europe/Paris").unwrap();
    assert_eq!(
        (local.starts_at, local.ends_at),
        (datetime!(2026-10-25 02:00 +2), datetime!(2026-10-25 02:00 +1))
    );
    assert_eq!(LocalSlot::of(slot, "Nowhere/City"), None);
}
