//! The caps on booking attempts per minute, counted across nodes in the database
//! (docs/appointments.md "Attempt caps"): each `book` and `reschedule` counts itself
//! here, after the access checks and before anything else is read.

use super::service::AppointmentService;
use crate::error::ServiceError;
use consular_domain::Principal;
use consular_domain::rate::{self, Capped};
use time::OffsetDateTime;

impl AppointmentService {
    /// Counts one booking attempt by `actor` at `now` under each cap that applies (the
    /// citizen's own, the client's), in one statement that commits whatever happens next,
    /// and refuses it when a count went over its cap. Nothing is counted when every cap
    /// is disabled.
    pub(super) async fn count_attempt(
        &self,
        actor: &Principal,
        now: OffsetDateTime,
    ) -> Result<(), ServiceError> {
        let counters = self.caps.counters(actor);
        if counters.is_empty() {
            return Ok(());
        }
        let keys: Vec<_> = counters.iter().map(|c| c.key.clone()).collect();
        let counts = self.ports.rate_limits.count_attempt(&keys, rate::window_of(now)).await?;
        rate::decide(&counters, &counts, now).map_err(|capped: Capped| ServiceError::RateLimited {
            retry_after: capped.retry_after,
            detail: capped.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::here;
    use super::super::{AppointmentPorts, NewBooking};
    use super::*;
    use crate::fixtures::principal;
    use consular_domain::rate::BookingCaps;
    use consular_domain::{
        Appointment, AppointmentId, CitizenId, PrincipalKind, ServiceTypeId, SlotId, Subject,
    };
    use consular_ports::{
        MockAppointmentRepository, MockCitizenRepository, MockIdempotencyRepository, MockMissionRepository,
        MockRateLimitRepository, MockRequestRepository, MockServiceTypeRepository, SystemClock,
    };
    use std::sync::Arc;

    /// A service whose ports expect nothing but what the test gives: any other call
    /// panics (a mock without an expectation), so a test passing shows nothing else was
    /// read or written.
    fn service(
        appointments: MockAppointmentRepository,
        rate_limits: MockRateLimitRepository,
    ) -> AppointmentService {
        AppointmentService::new(AppointmentPorts {
            appointments: Arc::new(appointments),
            missions: Arc::new(MockMissionRepository::new()),
            citizens: Arc::new(MockCitizenRepository::new()),
            requests: Arc::new(MockRequestRepository::new()),
            service_types: Arc::new(MockServiceTypeRepository::new()),
            idempotency: Arc::new(MockIdempotencyRepository::new()),
            rate_limits: Arc::new(rate_limits),
            access: crate::fixtures::access_recorder(),
            clock: Arc::new(SystemClock),
        })
    }

    /// Counters that answer `counts` once, checking the keys they were given.
    fn counting(keys: usize, counts: Vec<u32>) -> MockRateLimitRepository {
        let mut rate_limits = MockRateLimitRepository::new();
        rate_limits
            .expect_count_attempt()
            .withf(move |given, _| given.len() == keys)
            .times(1)
            .returning(move |_, _| Ok(counts.clone()));
        rate_limits
    }

    fn citizen() -> consular_domain::Principal {
        principal(PrincipalKind::Citizen, uuid::Uuid::from_u128(7), "citizen", Some(here()))
    }

    fn booking() -> NewBooking {
        NewBooking {
            slot_id: SlotId(uuid::Uuid::from_u128(3)),
            service_type_id: ServiceTypeId(uuid::Uuid::from_u128(9)),
            citizen_id: None,
            request_id: None,
        }
    }

    #[tokio::test]
    async fn a_capped_booking_stops_before_any_other_port_is_called() {
        for counts in [vec![11, 1], vec![1, 121]] {
            let refused = service(MockAppointmentRepository::new(), counting(2, counts.clone()))
                .book(&citizen(), booking(), None)
                .await
                .unwrap_err();
            let ServiceError::RateLimited { retry_after, detail } = &refused else { panic!("{refused:?}") };
            assert!((1..=60).contains(retry_after), "{retry_after}");
            let cap = if counts[0] > 10 {
                "at most 10 booking attempts a minute per citizen"
            } else {
                "at most 120 booking attempts a minute per client"
            };
            assert!(detail.starts_with(cap), "{detail}");
        }
    }

    #[tokio::test]
    async fn staff_count_per_client_only_and_disabled_caps_count_nothing() {
        let staff = principal(PrincipalKind::Staff, uuid::Uuid::now_v7(), "staff", Some(here()));
        let for_citizen = NewBooking { citizen_id: Some(CitizenId(uuid::Uuid::from_u128(7))), ..booking() };
        let refused = service(MockAppointmentRepository::new(), counting(1, vec![121]))
            .book(&staff, for_citizen, None)
            .await;
        assert!(matches!(refused, Err(ServiceError::RateLimited { .. })), "{refused:?}");
        // Both caps off: the counters are never asked (the mock expects nothing), and the
        // booking goes on to its first read (here a citizen nobody knows: 422).
        let mut citizens = MockCitizenRepository::new();
        citizens.expect_get().times(1).returning(|_| Ok(None));
        let mut uncapped = service(MockAppointmentRepository::new(), MockRateLimitRepository::new())
            .with_booking_caps(BookingCaps::OFF);
        uncapped.ports.citizens = Arc::new(citizens);
        let unknown = uncapped.book(&citizen(), booking(), None).await;
        assert!(matches!(unknown, Err(ServiceError::Validation(_))), "{unknown:?}");
    }

    #[tokio::test]
    async fn a_capped_reschedule_stops_after_reading_the_appointment_its_access_check_needs() {
        let owner = citizen();
        let slot = consular_domain::fixtures::slot(
            here(),
            time::OffsetDateTime::now_utc() + time::Duration::days(3),
            time::OffsetDateTime::now_utc(),
        );
        let appointment = Appointment::book(
            &slot,
            CitizenId(owner.subject.id.as_uuid()),
            ServiceTypeId(uuid::Uuid::from_u128(9)),
            None,
            Subject { kind: PrincipalKind::Citizen, id: owner.subject.id },
            time::OffsetDateTime::now_utc(),
        );
        let mut appointments = MockAppointmentRepository::new();
        appointments.expect_get().times(1).returning(move |_| Ok(Some(appointment.clone())));
        let refused = service(appointments, counting(2, vec![11, 11]))
            .reschedule(&owner, AppointmentId::new(), SlotId(uuid::Uuid::from_u128(4)), Some(&[1]))
            .await
            .unwrap_err();
        assert!(matches!(refused, ServiceError::RateLimited { .. }), "{refused:?}");
    }
}
