//! Table tests of the appointment state machine and of every slot rule.
#![allow(clippy::type_complexity)]

use super::*;
use crate::{MissionId, PrincipalId, PrincipalKind, SlotId};
use AppointmentAction::*;
use AppointmentStatus::*;
use time::Duration;
use time::macros::datetime;
use uuid::Uuid;

const SERVED: ServiceTypeId = ServiceTypeId(Uuid::from_u128(0x5e4));
const OTHER_SERVICE: ServiceTypeId = ServiceTypeId(Uuid::from_u128(0x07e4));
const START: OffsetDateTime = datetime!(2026-06-01 10:00 UTC);

pub(crate) fn slot(capacity: u32, booked: u32) -> Slot {
    let created = START - Duration::days(30);
    Slot {
        capacity,
        booked,
        service_types: vec![SERVED],
        ..crate::fixtures::slot(MissionId(Uuid::from_u128(0x4e4e)), START, created)
    }
}

fn citizen() -> Subject {
    Subject { kind: PrincipalKind::Citizen, id: PrincipalId::new() }
}

fn booking(slot: &Slot, status: AppointmentStatus) -> Appointment {
    let booked_by = citizen();
    let mut a = Appointment::book(
        slot,
        CitizenId(booked_by.id.0),
        SERVED,
        None,
        booked_by,
        START - Duration::days(7),
    );
    a.status = status;
    a
}

/// Takes `action` as `role` at `now`, rescheduling into a fresh slot with room.
fn take(
    a: &mut Appointment,
    from: &Slot,
    role: Role,
    action: AppointmentAction,
    now: OffsetDateTime,
) -> Result<crate::DomainEvent, AppointmentRefused> {
    match action {
        Reschedule => {
            let to = Slot {
                id: SlotId::new(),
                starts_at: START + Duration::days(1),
                ends_at: START + Duration::days(1) + Duration::minutes(30),
                ..from.clone()
            };
            a.reschedule(role, from, &to, now)
        }
        Cancel => a.cancel(role, from, now),
        Attend | MarkNoShow => a.record_attendance(role, action, now),
    }
}

/// Every (state, action, role) triple with the state it leads to (`None`: refused), at a
/// time when every cut-off allows it: before the cut-offs for a change of booking, after
/// the start for attendance.
#[test]
fn transition_table() {
    use Role::{Citizen, Staff};
    let table: &[(AppointmentStatus, AppointmentAction, Role, Option<AppointmentStatus>)] = &[
        (Booked, Reschedule, Citizen, Some(Booked)),
        (Booked, Reschedule, Staff, Some(Booked)),
        (Booked, Cancel, Citizen, Some(Cancelled)),
        (Booked, Cancel, Staff, Some(Cancelled)),
        (Booked, Attend, Citizen, None),
        (Booked, Attend, Staff, Some(Attended)),
        (Booked, MarkNoShow, Citizen, None),
        (Booked, MarkNoShow, Staff, Some(AppointmentStatus::NoShow)),
    ];
    let mut rows: Vec<_> = table.to_vec();
    for from in [Attended, AppointmentStatus::NoShow, Cancelled] {
        for action in AppointmentAction::ALL {
            rows.push((from, action, Citizen, None));
            rows.push((from, action, Staff, None));
        }
    }
    assert_eq!(rows.len(), AppointmentStatus::ALL.len() * AppointmentAction::ALL.len() * 2);
    let from_slot = slot(5, 1);
    for (from, action, role, expected) in rows {
        let now = match action {
            Attend | MarkNoShow => START + Duration::minutes(5),
            Reschedule | Cancel => START - Duration::days(3),
        };
        let mut a = booking(&from_slot, from);
        let before = a.clone();
        let result = take(&mut a, &from_slot, role, action, now);
        match expected {
            Some(to) => {
                assert!(result.is_ok(), "{role:?} {action:?} on {from}: {result:?}");
                assert_eq!(
                    (a.status, a.version, a.updated_at),
                    (to, 2, now),
                    "{role:?} {action:?} on {from}"
                );
            }
            None => {
                let Err(AppointmentRefused::Illegal { allowed, .. }) = result else {
                    panic!("{role:?} {action:?} on {from}: {result:?}");
                };
                assert_eq!(allowed, before.allowed_actions(role));
                assert!(!allowed.contains(&action));
                assert_eq!(a, before, "a refused change changes nothing");
            }
        }
    }
}

#[test]
fn a_cancellation_records_who_and_when_and_a_reschedule_moves_the_times() {
    let s = slot(5, 1);
    let now = START - Duration::days(2);
    for (role, by) in [(Role::Citizen, CancelledBy::Citizen), (Role::Staff, CancelledBy::Staff)] {
        let mut a = booking(&s, Booked);
        a.cancel(role, &s, now).unwrap();
        assert_eq!((a.status, a.cancelled_by, a.cancelled_at), (Cancelled, Some(by), Some(now)));
    }
    let mut a = booking(&s, Booked);
    a.cancel_by_mission(now).unwrap();
    assert_eq!((a.cancelled_by, a.version), (Some(CancelledBy::Mission), 2));
    assert!(matches!(a.cancel_by_mission(now), Err(AppointmentRefused::Illegal { .. })));

    let mut a = booking(&s, Booked);
    let later = Slot {
        id: SlotId::new(),
        starts_at: START + Duration::hours(2),
        ends_at: START + Duration::hours(3),
        ..s.clone()
    };
    a.reschedule(Role::Citizen, &s, &later, now).unwrap();
    assert_eq!(
        (a.slot_id, a.starts_at, a.ends_at, a.status),
        (later.id, later.starts_at, later.ends_at, Booked)
    );
    let wrong = a.cancel(Role::Citizen, &s, now);
    assert_eq!(wrong, Err(AppointmentRefused::WrongSlot), "the slot given must be the appointment's");
}

#[test]
fn time_rules_of_the_machine_refuse_and_change_nothing() {
    let s = slot(5, 1);
    let inside = s.cancellation_closes_at();
    let mut a = booking(&s, Booked);
    let before = a.clone();
    let refused = a.cancel(Role::Citizen, &s, inside);
    assert_eq!(refused, Err(AppointmentRefused::Cancel(CancelRefused::InsideCutoff { closes_at: inside })));
    assert_eq!(a, before);
    a.cancel(Role::Staff, &s, START + Duration::minutes(1)).unwrap();

    let mut a = booking(&s, Booked);
    let early = a.record_attendance(Role::Staff, Attend, START - Duration::seconds(1));
    assert_eq!(early, Err(AppointmentRefused::NotStarted { starts_at: START }));
    a.record_attendance(Role::Staff, MarkNoShow, START).unwrap();
    assert_eq!(a.status, AppointmentStatus::NoShow, "from the start time on");
}

/// `check_booking` for every reason, in the order they are judged.
#[test]
fn booking_rule_table() {
    let open = slot(2, 1);
    let closes = open.booking_closes_at();
    assert_eq!(closes, START - Duration::hours(1));
    let before = closes - Duration::seconds(1);
    let cases: &[(&str, Slot, ServiceTypeId, OffsetDateTime, Result<(), BookingRefused>)] = &[
        ("a free seat before the cut-off", open.clone(), SERVED, before, Ok(())),
        ("the last seat", slot(2, 1), SERVED, before, Ok(())),
        ("full", slot(2, 2), SERVED, before, Err(BookingRefused::Full)),
        ("closed", Slot { open: false, ..open.clone() }, SERVED, before, Err(BookingRefused::Closed)),
        ("closed and full", Slot { open: false, ..slot(2, 2) }, SERVED, before, Err(BookingRefused::Closed)),
        ("another service type", open.clone(), OTHER_SERVICE, before, Err(BookingRefused::ServiceNotServed)),
        (
            "at the cut-off",
            open.clone(),
            SERVED,
            closes,
            Err(BookingRefused::BookingClosed { closes_at: closes }),
        ),
        (
            "after the start",
            open.clone(),
            SERVED,
            START + Duration::hours(1),
            Err(BookingRefused::BookingClosed { closes_at: closes }),
        ),
        (
            "full after the cut-off",
            slot(2, 2),
            SERVED,
            closes,
            Err(BookingRefused::BookingClosed { closes_at: closes }),
        ),
        (
            "no cut-off: up to the start",
            Slot { cutoffs: Cutoffs { booking_minutes: 0, cancellation_minutes: 0 }, ..open.clone() },
            SERVED,
            START - Duration::seconds(1),
            Ok(()),
        ),
        ("capacity zero", slot(0, 0), SERVED, before, Err(BookingRefused::Full)),
    ];
    for (what, s, service, now, expected) in cases {
        assert_eq!(&s.check_booking(*service, *now), expected, "{what}");
    }
    assert_eq!((open.remaining(), slot(2, 2).remaining(), slot(1, 3).remaining()), (1, 0, 0));
}

/// A scheduled release: refused before it, taken at and after it; judged after
/// `Closed` and before every other reason.
#[test]
fn booking_rule_table_with_a_release() {
    let release_at = START - Duration::days(7);
    let scheduled = Slot { release_at: Some(release_at), ..slot(2, 1) };
    let not_released = Err(BookingRefused::NotReleased { release_at });
    let early = release_at - Duration::microseconds(1);
    let closes = scheduled.booking_closes_at();
    let cases: &[(&str, Slot, ServiceTypeId, OffsetDateTime, Result<(), BookingRefused>)] = &[
        ("before the release", scheduled.clone(), SERVED, early, not_released.clone()),
        (
            "a day before the release",
            scheduled.clone(),
            SERVED,
            release_at - Duration::days(1),
            not_released.clone(),
        ),
        ("at the release", scheduled.clone(), SERVED, release_at, Ok(())),
        ("after the release", scheduled.clone(), SERVED, release_at + Duration::seconds(1), Ok(())),
        ("no release scheduled", slot(2, 1), SERVED, early, Ok(())),
        (
            "closed before the release",
            Slot { open: false, ..scheduled.clone() },
            SERVED,
            early,
            Err(BookingRefused::Closed),
        ),
        (
            "full before the release",
            Slot { booked: 2, ..scheduled.clone() },
            SERVED,
            early,
            not_released.clone(),
        ),
        (
            "another service type before the release",
            scheduled.clone(),
            OTHER_SERVICE,
            early,
            not_released.clone(),
        ),
        (
            "another service type at the release",
            scheduled.clone(),
            OTHER_SERVICE,
            release_at,
            Err(BookingRefused::ServiceNotServed),
        ),
        (
            "full at the release",
            Slot { booked: 2, ..scheduled.clone() },
            SERVED,
            release_at,
            Err(BookingRefused::Full),
        ),
        (
            "after the cut-off",
            scheduled.clone(),
            SERVED,
            closes,
            Err(BookingRefused::BookingClosed { closes_at: closes }),
        ),
    ];
    for (what, s, service, now, expected) in cases {
        assert_eq!(&s.check_booking(*service, *now), expected, "{what}");
        assert_eq!(s.released(*now), s.release_at.is_none_or(|at| at <= *now), "{what}");
    }
    let to = Slot { id: SlotId::new(), ..scheduled.clone() };
    let from = slot(2, 1);
    assert_eq!(
        Slot::check_reschedule(&from, &to, SERVED, Role::Staff, early),
        Err(RescheduleRefused::Join(BookingRefused::NotReleased { release_at })),
        "a move into an unreleased slot is refused as a booking"
    );
}

/// `schedule_release`: every slot of the submission gets the instant (in UTC, to the
/// microsecond), unless one of them closes for booking at or before it.
#[test]
fn a_release_is_set_on_every_slot_and_refused_at_or_after_a_booking_close() {
    let later = Slot { starts_at: START + Duration::days(1), ..slot(2, 0) };
    let first_close = slot(2, 0).booking_closes_at();
    let mut slots = vec![slot(2, 0), later.clone()];
    let given = datetime!(2026-05-20 09:00:00.123_456_789 +02:00);
    let kept = datetime!(2026-05-20 07:00:00.123_456 UTC);
    assert_eq!(schedule_release(&mut slots, Some(given)), Ok(Some(kept)));
    assert!(slots.iter().all(|s| s.release_at == Some(kept) && s.release_at.unwrap().offset().is_utc()));
    assert_eq!(schedule_release(&mut slots, None), Ok(None));
    assert!(slots.iter().all(|s| s.release_at.is_none()), "no release: released at once");
    let past = START - Duration::days(400);
    schedule_release(&mut slots, Some(past)).unwrap();
    assert!(slots.iter().all(|s| s.release_at == Some(past)), "a past release is allowed");
    for refused in [first_close, first_close + Duration::days(365)] {
        let mut slots = vec![slot(2, 0), later.clone()];
        let errors = schedule_release(&mut slots, Some(refused)).unwrap_err();
        assert_eq!(
            (errors.0.len(), errors.0[0].pointer.as_str(), errors.0[0].code.as_str()),
            (1, "/release_at", "after_booking_close")
        );
        assert!(errors.0[0].message.contains("2026-06-01T09:00:00Z"), "{}", errors.0[0].message);
        assert!(slots.iter().all(|s| s.release_at.is_none()), "a refused release sets nothing");
    }
    let mut just_in_time = vec![slot(2, 0), later];
    schedule_release(&mut just_in_time, Some(first_close - Duration::microseconds(1))).unwrap();
}

#[test]
fn cancellation_rule_table() {
    let s = slot(2, 1);
    let closes = s.cancellation_closes_at();
    assert_eq!(closes, START - Duration::hours(24));
    let cases = [
        (Role::Citizen, closes - Duration::seconds(1), true),
        (Role::Citizen, closes, false),
        (Role::Citizen, START + Duration::hours(1), false),
        (Role::Staff, closes - Duration::seconds(1), true),
        (Role::Staff, closes, true),
        (Role::Staff, START + Duration::hours(1), true),
    ];
    for (role, now, ok) in cases {
        assert_eq!(s.check_cancel(role, now).is_ok(), ok, "{role:?} at {now}");
    }
}

#[test]
fn reschedule_rule_table() {
    let from = slot(2, 1);
    let to = Slot {
        id: SlotId::new(),
        starts_at: START + Duration::days(1),
        ends_at: START + Duration::days(1) + Duration::minutes(30),
        ..slot(2, 0)
    };
    let early = START - Duration::days(2);
    let inside = from.cancellation_closes_at();
    let cases: &[(&str, Slot, Role, OffsetDateTime, Result<(), RescheduleRefused>)] = &[
        ("citizen, early", to.clone(), Role::Citizen, early, Ok(())),
        ("staff inside the cut-off", to.clone(), Role::Staff, inside, Ok(())),
        (
            "citizen inside the cut-off",
            to.clone(),
            Role::Citizen,
            inside,
            Err(CancelRefused::InsideCutoff { closes_at: inside }.into()),
        ),
        ("same slot", from.clone(), Role::Staff, early, Err(RescheduleRefused::SameSlot)),
        (
            "other mission",
            Slot { mission_id: MissionId::new(), ..to.clone() },
            Role::Staff,
            early,
            Err(RescheduleRefused::OtherMission),
        ),
        ("full", Slot { booked: 2, ..to.clone() }, Role::Staff, early, Err(BookingRefused::Full.into())),
        (
            "closed",
            Slot { open: false, ..to.clone() },
            Role::Citizen,
            early,
            Err(BookingRefused::Closed.into()),
        ),
        (
            "not serving",
            Slot { service_types: vec![OTHER_SERVICE], ..to.clone() },
            Role::Staff,
            early,
            Err(BookingRefused::ServiceNotServed.into()),
        ),
    ];
    for (what, target, role, now, expected) in cases {
        assert_eq!(&Slot::check_reschedule(&from, target, SERVED, *role, *now), expected, "{what}");
        let mut a = booking(&from, Booked);
        let before = a.clone();
        let moved = a.reschedule(*role, &from, target, *now);
        assert_eq!(moved.is_ok(), expected.is_ok(), "{what}");
        if moved.is_err() {
            assert_eq!(a, before, "{what}: nothing changes");
        }
    }
}

/// Bookings made one after the other in `s`, oldest first.
fn bookings(s: &Slot, n: u32) -> Vec<Appointment> {
    (0..n)
        .map(|i| Appointment {
            created_at: START - Duration::days(10) + Duration::minutes(i64::from(i)),
            ..booking(s, Booked)
        })
        .collect()
}

#[test]
fn changing_a_slot_keeps_the_earliest_bookings_or_refuses() {
    let now = START - Duration::days(5);
    let stored = slot(4, 3);
    let active = bookings(&stored, 3);
    let wanted = |capacity: u32, open: bool| Slot {
        id: SlotId::new(),
        capacity,
        open,
        booked: 0,
        version: 1,
        ..stored.clone()
    };
    let ids = |range: std::ops::Range<usize>| active[range].iter().rev().map(|a| a.id).collect::<Vec<_>>();

    // (capacity, open, cancel_bookings) → Ok(bookings cancelled, newest first) or a conflict.
    let cases: &[(u32, bool, bool, Result<Vec<AppointmentId>, ()>)] = &[
        (4, true, false, Ok(vec![])),
        (3, true, false, Ok(vec![])),
        (10, true, false, Ok(vec![])),
        (2, true, false, Err(())),
        (2, true, true, Ok(ids(2..3))),
        (1, true, true, Ok(ids(1..3))),
        (4, false, false, Err(())),
        (4, false, true, Ok(ids(0..3))),
    ];
    for (capacity, open, cancel, expected) in cases {
        let plan = plan_slot(Some(&stored), wanted(*capacity, *open), &active, *cancel, now);
        match expected {
            Ok(cancelled) => {
                let plan = plan.unwrap();
                assert_eq!(&plan.cancel, cancelled, "capacity {capacity} open {open}");
                assert_eq!(plan.slot.booked, 3 - cancelled.len() as u32);
                assert_eq!(
                    (plan.slot.id, plan.expected_version),
                    (stored.id, Some(1)),
                    "the stored slot is kept"
                );
                assert_eq!((plan.slot.capacity, plan.slot.open), (*capacity, *open));
                assert_eq!(plan.changed, *capacity != 4 || !open);
                assert_eq!(plan.slot.version, if plan.changed { 2 } else { 1 });
            }
            Err(()) => {
                let conflict = plan.unwrap_err();
                assert_eq!(
                    (conflict.slot_id, conflict.booked, conflict.capacity, conflict.open),
                    (stored.id, 3, *capacity, *open)
                );
            }
        }
    }
    let unchanged = plan_slot(Some(&stored), wanted(4, true), &active, false, now).unwrap();
    assert!(!unchanged.changed && unchanged.slot == stored, "the same content changes nothing");
    // The release is part of the configuration: set, moved, cleared, each a new version;
    // the same instant again changes nothing.
    let release = |at: Option<OffsetDateTime>| Slot { release_at: at, ..wanted(4, true) };
    let at = Some(START - Duration::days(2));
    let scheduled = plan_slot(Some(&stored), release(at), &active, false, now).unwrap();
    assert!(scheduled.changed && scheduled.cancel.is_empty());
    assert_eq!((scheduled.slot.release_at, scheduled.slot.version, scheduled.slot.booked), (at, 2, 3));
    let again = plan_slot(Some(&scheduled.slot), release(at), &active, false, now).unwrap();
    assert!(!again.changed && again.slot == scheduled.slot, "the same release again changes nothing");
    let moved = Some(START - Duration::days(1));
    let moved = plan_slot(Some(&scheduled.slot), release(moved), &active, false, now).unwrap();
    assert_eq!(
        (moved.changed, moved.slot.release_at, moved.slot.booked),
        (true, Some(START - Duration::days(1)), 3)
    );
    let cleared = plan_slot(Some(&moved.slot), release(None), &active, false, now).unwrap();
    assert_eq!((cleared.changed, cleared.slot.release_at, cleared.slot.version), (true, None, 4));
    let fresh = wanted(2, true);
    let new = plan_slot(None, fresh.clone(), &[], false, now).unwrap();
    assert_eq!((new.slot, new.expected_version, new.changed, new.cancel), (fresh, None, true, vec![]));
}

#[test]
fn names_read_back_and_snapshots_round_trip() {
    for status in AppointmentStatus::ALL {
        assert_eq!(status.as_str().parse::<AppointmentStatus>(), Ok(status));
        assert_eq!(serde_json::to_value(status).unwrap(), status.as_str());
    }
    for by in CancelledBy::ALL {
        assert_eq!(by.as_str().parse::<CancelledBy>(), Ok(by));
    }
    assert!("gone".parse::<AppointmentStatus>().is_err() && "system".parse::<CancelledBy>().is_err());
    let s = slot(3, 1);
    let mut a = booking(&s, Booked);
    a.cancel(Role::Staff, &s, START).unwrap();
    let json = serde_json::to_value(&a).unwrap();
    assert_eq!(serde_json::from_value::<Appointment>(json).unwrap(), a);
    assert_eq!(serde_json::from_value::<Slot>(serde_json::to_value(&s).unwrap()).unwrap(), s);
}

/// An entry made by a representative records the dependant it acted for; one made by a
/// subject alone, nobody.
#[test]
fn a_history_entry_records_whom_its_actor_acted_for() {
    let a = booking(&slot(3, 1), Booked);
    let parent = crate::fixtures::acting_for(a.mission_id, a.citizen_id);
    let entry = AppointmentEntry::of(&a, AppointmentChange::Booked, &parent).unwrap();
    assert_eq!((entry.actor, entry.on_behalf_of), (parent.subject, Some(a.citizen_id)));
    let own = AppointmentEntry::of(&a, AppointmentChange::Booked, a.booked_by).unwrap();
    assert_eq!((own.actor, own.on_behalf_of), (a.booked_by, None));
}

/// Each change's entry is accepted exactly for the state that change leaves.
#[test]
fn history_entries_match_the_change_that_left_the_appointment() {
    use AppointmentChange as C;
    let from = slot(5, 1);
    let staff = Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() };
    let early = START - Duration::days(3);
    let late = START + Duration::minutes(5);
    let booked = booking(&from, Booked);
    let mut moved = booked.clone();
    take(&mut moved, &from, Role::Citizen, Reschedule, early).expect("reschedule");
    let mut cancelled = booked.clone();
    cancelled.cancel(Role::Citizen, &from, early).expect("cancel");
    let mut by_mission = booked.clone();
    by_mission.cancel_by_mission(early).expect("cancel by mission");
    let mut attended = booked.clone();
    attended.record_attendance(Role::Staff, Attend, late).expect("attend");
    let mut missed = booked.clone();
    missed.record_attendance(Role::Staff, MarkNoShow, late).expect("no show");
    let states: [(&Appointment, C); 6] = [
        (&booked, C::Booked),
        (&moved, C::Rescheduled),
        (&cancelled, C::Cancelled),
        (&by_mission, C::CancelledByMission),
        (&attended, C::Attended),
        (&missed, C::NoShow),
    ];
    for (appointment, left_by) in states {
        for change in C::ALL {
            let entry = AppointmentEntry::of(appointment, change, staff);
            assert_eq!(entry.is_ok(), change == left_by, "{change} of a state left by {left_by}");
            if let Ok(entry) = entry {
                assert_eq!(
                    (entry.version, entry.at, entry.slot_id, entry.starts_at),
                    (appointment.version, appointment.updated_at, appointment.slot_id, appointment.starts_at)
                );
            }
        }
        assert_eq!(left_by.as_str().parse::<C>(), Ok(left_by));
    }
}
