//! The appointment use cases against mocked ports: why a booking is refused comes from
//! the repository's guarded statement, re-submitting the same availability writes
//! nothing, closing a booked slot is refused unless asked to cancel, and a citizen
//! cannot cancel inside the cut-off.

use super::*;
use crate::ServiceError;
use crate::fixtures::{any_mission, mission, principal};
use consular_domain::{
    Appointment, AppointmentStatus, Availability, BookingRefused, CitizenId, Cutoffs, ExplicitSlots,
    MissionId, Principal, PrincipalKind, ServiceTypeId, Slot, SlotTemplate, Subject,
};
use consular_ports::{
    BookOutcome, MockAppointmentRepository, MockCitizenRepository, MockIdempotencyRepository,
    MockMissionRepository, MockRateLimitRepository, MockRequestRepository, MockServiceTypeRepository,
    SystemClock,
};
use std::sync::Arc;
use time::{Duration, OffsetDateTime, PrimitiveDateTime};

pub(super) fn service(
    appointments: MockAppointmentRepository,
    missions: MockMissionRepository,
) -> AppointmentService {
    let mut citizens = MockCitizenRepository::new();
    citizens.expect_get().returning(|id| {
        let mission = MissionId(uuid::Uuid::from_u128(1));
        Ok(Some(crate::fixtures::alice(mission).into_citizen(id, OffsetDateTime::UNIX_EPOCH)))
    });
    let mut service_types = MockServiceTypeRepository::new();
    service_types.expect_get().returning(|_| Ok(None));
    // Every attempt is counted once, and is the first of its minute.
    let mut rate_limits = MockRateLimitRepository::new();
    rate_limits.expect_count_attempt().returning(|keys, _| Ok(vec![1; keys.len()]));
    AppointmentService::new(AppointmentPorts {
        appointments: Arc::new(appointments),
        missions: Arc::new(missions),
        citizens: Arc::new(citizens),
        requests: Arc::new(MockRequestRepository::new()),
        service_types: Arc::new(service_types),
        idempotency: Arc::new(MockIdempotencyRepository::new()),
        rate_limits: Arc::new(rate_limits),
        access: crate::fixtures::access_recorder(),
        clock: Arc::new(SystemClock),
    })
}

pub(super) fn here() -> MissionId {
    MissionId(uuid::Uuid::from_u128(1))
}

fn slot(starts_in: Duration, capacity: u32, booked: u32) -> Slot {
    let now = OffsetDateTime::now_utc().replace_nanosecond(0).unwrap();
    Slot {
        capacity,
        booked,
        service_types: vec![ServiceTypeId(uuid::Uuid::from_u128(9))],
        ..consular_domain::fixtures::slot(here(), now + starts_in, now)
    }
}

fn citizen() -> Principal {
    principal(PrincipalKind::Citizen, uuid::Uuid::from_u128(7), "citizen", Some(here()))
}

fn admin() -> Principal {
    principal(PrincipalKind::Admin, uuid::Uuid::now_v7(), "admin", None)
}

fn booking(slot: &Slot) -> NewBooking {
    NewBooking {
        slot_id: slot.id,
        service_type_id: slot.service_types[0],
        citizen_id: None,
        request_id: None,
    }
}

#[tokio::test]
async fn a_full_slot_found_by_the_guarded_statement_is_slot_full() {
    let s = slot(Duration::days(3), 1, 0);
    let found = s.clone();
    let mut repo = MockAppointmentRepository::new();
    repo.expect_get_slot().returning(move |_| Ok(Some(found.clone())));
    repo.expect_book().times(1).returning(|_, _, _, _, _| Ok(BookOutcome::Refused(BookingRefused::Full)));
    let refused = service(repo, any_mission()).book(&citizen(), booking(&s), None).await.unwrap_err();
    assert!(matches!(refused, ServiceError::Conflict { code: "slot_full", .. }), "{refused:?}");
}

/// A booking the repository refuses with `outcome`, made by `actor` (a citizen books
/// themself, an admin for citizen 7), after checking the limit it was given.
async fn booked_with(
    actor: &Principal,
    max: Option<u32>,
    expected_limit: Option<u32>,
    outcome: BookOutcome,
) -> Result<AppointmentView, ServiceError> {
    let s = slot(Duration::days(3), 5, 0);
    let found = s.clone();
    let mut repo = MockAppointmentRepository::new();
    repo.expect_get_slot().returning(move |_| Ok(Some(found.clone())));
    repo.expect_book()
        .withf(move |_, _, limit, _, _| *limit == expected_limit)
        .times(1)
        .returning(move |_, _, _, _, _| Ok(outcome.clone()));
    let mut service = service(repo, any_mission());
    if let Some(max) = max {
        service = service.with_max_active_bookings(max);
    }
    let mut booking = booking(&s);
    if actor.subject.kind != PrincipalKind::Citizen {
        booking.citizen_id = Some(CitizenId(uuid::Uuid::from_u128(7)));
    }
    service.book(actor, booking, None).await.map(|created| created.value)
}

#[tokio::test]
async fn a_citizen_booking_themself_is_held_to_the_limit_and_staff_are_not() {
    booked_with(&citizen(), None, Some(3), BookOutcome::Booked).await.unwrap();
    booked_with(&citizen(), Some(5), Some(5), BookOutcome::Booked).await.unwrap();
    booked_with(&admin(), Some(5), None, BookOutcome::Booked).await.unwrap();
    let refused = booked_with(&citizen(), None, Some(3), BookOutcome::LimitReached).await.unwrap_err();
    let ServiceError::Conflict { code: "booking_limit_reached", detail } = &refused else {
        panic!("{refused:?}")
    };
    assert!(detail.contains("at most 3"), "{detail}");
}

#[tokio::test]
async fn a_duplicate_booking_names_the_one_that_holds_the_place() {
    let existing = consular_domain::AppointmentId::new();
    let refused =
        booked_with(&citizen(), None, Some(3), BookOutcome::AlreadyBooked(existing)).await.unwrap_err();
    let ServiceError::AlreadyBooked { existing: named, detail } = &refused else { panic!("{refused:?}") };
    assert_eq!(*named, existing);
    assert!(detail.contains("in this slot") && detail.contains(&existing.to_string()), "{detail}");
}

#[tokio::test]
async fn a_slot_of_another_mission_is_unknown_and_nothing_is_written() {
    let mut s = slot(Duration::days(3), 5, 0);
    s.mission_id = MissionId::new();
    let found = s.clone();
    let mut repo = MockAppointmentRepository::new();
    repo.expect_get_slot().returning(move |_| Ok(Some(found.clone())));
    repo.expect_book().never();
    let refused = service(repo, any_mission()).book(&citizen(), booking(&s), None).await.unwrap_err();
    let ServiceError::Validation(errors) = refused else { panic!("{refused:?}") };
    assert_eq!(errors.0[0].pointer, "/slot_id");
}

#[tokio::test]
async fn resubmitting_the_same_slots_writes_nothing() {
    let (availability, submission) = released_at(None);
    let stored = availability.expand(here(), "Europe/Paris", OffsetDateTime::now_utc()).unwrap();
    let mut repo = MockAppointmentRepository::new();
    repo.expect_slots_between().returning(move |_, _, _| Ok(stored.clone()));
    repo.expect_upsert_slots().never();
    let mut missions = MockMissionRepository::new();
    missions.expect_get().returning(|id| Ok(Some(mission(id))));
    let report = service(repo, missions).submit_slots(&admin(), submission).await.unwrap();
    assert_eq!((report.created, report.updated, report.unchanged), (0, 0, 1));
}

/// One explicit slot 20 days ahead at 09:00 Paris time, submitted with `release_at`.
fn released_at(release_at: Option<OffsetDateTime>) -> (Availability, SlotSubmission) {
    let day = (OffsetDateTime::now_utc() + Duration::days(20)).date();
    let start = PrimitiveDateTime::new(day, time::Time::from_hms(9, 0, 0).unwrap());
    let template = SlotTemplate {
        slot_minutes: 30,
        capacity: 4,
        service_types: vec![ServiceTypeId(uuid::Uuid::from_u128(9))],
        open: true,
        cutoffs: Cutoffs::default(),
    };
    let availability = Availability::Explicit(ExplicitSlots { starts: vec![start], template });
    let part = SlotPart { pointer: "/slots/0".into(), availability: availability.clone() };
    (
        availability,
        SlotSubmission { mission_id: here(), cancel_bookings: false, release_at, parts: vec![part] },
    )
}

#[tokio::test]
async fn a_release_at_or_after_the_booking_close_is_refused_and_nothing_is_read_or_written() {
    let (availability, _) = released_at(None);
    let slot = availability.expand(here(), "Europe/Paris", OffsetDateTime::now_utc()).unwrap().remove(0);
    for release_at in [slot.booking_closes_at(), slot.starts_at + Duration::days(365)] {
        let mut repo = MockAppointmentRepository::new();
        repo.expect_slots_between().never();
        repo.expect_upsert_slots().never();
        let mut missions = MockMissionRepository::new();
        missions.expect_get().returning(|id| Ok(Some(mission(id))));
        let (_, submission) = released_at(Some(release_at));
        let refused = service(repo, missions).submit_slots(&admin(), submission).await.unwrap_err();
        let ServiceError::Validation(errors) = refused else { panic!("{refused:?}") };
        assert_eq!(
            (errors.0.len(), errors.0[0].pointer.as_str(), errors.0[0].code.as_str()),
            (1, "/release_at", "after_booking_close")
        );
    }
}

#[tokio::test]
async fn a_new_release_moves_the_stored_slots_and_cancels_no_booking() {
    let now = OffsetDateTime::now_utc();
    let (availability, _) = released_at(None);
    let stored: Vec<Slot> = availability
        .expand(here(), "Europe/Paris", now)
        .unwrap()
        .into_iter()
        .map(|s| Slot { booked: 3, ..s })
        .collect();
    let release_at = (now + Duration::days(2)).replace_nanosecond(0).unwrap();
    let stored_id = stored[0].id;
    let mut repo = MockAppointmentRepository::new();
    repo.expect_slots_between().returning(move |_, _, _| Ok(stored.clone()));
    repo.expect_list().never();
    repo.expect_upsert_slots()
        .withf(move |upsert, meta| {
            let [(slot, Some(1))] = upsert.slots.as_slice() else { return false };
            (slot.id, slot.release_at, slot.version, slot.booked) == (stored_id, Some(release_at), 2, 3)
                && upsert.cancelled.is_empty()
                && meta.audit.len() == 1
        })
        .times(1)
        .returning(|_, _| Ok(()));
    let mut missions = MockMissionRepository::new();
    missions.expect_get().returning(|id| Ok(Some(mission(id))));
    let (_, submission) = released_at(Some(release_at));
    let report = service(repo, missions).submit_slots(&admin(), submission).await.unwrap();
    assert_eq!((report.updated, report.release_at), (1, Some(release_at)));
}

#[tokio::test]
async fn a_slot_before_its_release_is_slot_not_released_naming_it() {
    let release_at = (OffsetDateTime::now_utc() + Duration::hours(1)).replace_nanosecond(0).unwrap();
    let s = Slot { release_at: Some(release_at), ..slot(Duration::days(3), 5, 0) };
    let found = s.clone();
    let mut repo = MockAppointmentRepository::new();
    repo.expect_get_slot().returning(move |_| Ok(Some(found.clone())));
    repo.expect_book().never();
    let refused = service(repo, any_mission()).book(&citizen(), booking(&s), None).await.unwrap_err();
    let ServiceError::SlotNotReleased { release_at: named, .. } = refused else { panic!("{refused:?}") };
    assert_eq!(named, release_at);
    // Released by the time the statement ran, or not: the repository's answer decides.
    let refused = booked_with(
        &citizen(),
        None,
        Some(3),
        BookOutcome::Refused(BookingRefused::NotReleased { release_at }),
    )
    .await
    .unwrap_err();
    assert!(matches!(refused, ServiceError::SlotNotReleased { .. }), "{refused:?}");
}

#[tokio::test]
async fn a_citizen_cannot_cancel_inside_the_cut_off() {
    let s = slot(Duration::hours(2), 5, 1);
    let mut appointment = Appointment::book(
        &s,
        CitizenId(uuid::Uuid::from_u128(7)),
        s.service_types[0],
        None,
        Subject { kind: PrincipalKind::Citizen, id: consular_domain::PrincipalId(uuid::Uuid::from_u128(7)) },
        OffsetDateTime::now_utc(),
    );
    appointment.status = AppointmentStatus::Booked;
    let (found, slot_found) = (appointment.clone(), s.clone());
    let mut repo = MockAppointmentRepository::new();
    repo.expect_get().returning(move |_| Ok(Some(found.clone())));
    repo.expect_get_slot().returning(move |_| Ok(Some(slot_found.clone())));
    repo.expect_cancel().never();
    let refused = service(repo, any_mission()).cancel(&citizen(), appointment.id, None).await.unwrap_err();
    assert!(matches!(refused, ServiceError::Conflict { code: "cancellation_closed", .. }), "{refused:?}");
}
