//! Reading availability (docs/appointments.md "Release morning"): the policy first, for
//! every caller, then this node's page of the question if it holds a current one
//! (`cache.rs`), the database otherwise.

use super::cache::{AvailabilityKey, AvailablePage};
use super::service::AppointmentService;
use crate::error::{OrNotFound, ServiceError};
use consular_domain::policy::appointments as policy;
use consular_domain::{MissionId, Principal, ServiceTypeId};
use consular_ports::{AvailabilityQuery, StartPageRequest};
use std::sync::Arc;
use time::{Duration, OffsetDateTime};

/// How far ahead availability is read when the caller names no end.
const DEFAULT_HORIZON: Duration = Duration::days(366);

impl AppointmentService {
    /// The open, released future slots of a mission serving a service type, with a free
    /// seat before their booking cut-off, starting in `[from, to)` (defaults: now and a
    /// year on), with the mission's time zone and the page's fingerprint. The page may be
    /// up to the cache's TTL old when the change was made on another node, or when a
    /// scheduled release passed (docs/appointments.md "Scheduled release"); a change of
    /// seats, slots or the mission's time zone made through this node is seen at once
    /// (docs/appointments.md "Release morning").
    pub async fn availability(
        &self,
        actor: &Principal,
        mission_id: MissionId,
        service_type_id: ServiceTypeId,
        from: Option<OffsetDateTime>,
        to: Option<OffsetDateTime>,
        page: StartPageRequest,
    ) -> Result<Arc<AvailablePage>, ServiceError> {
        policy::availability(actor, mission_id)?;
        let key = AvailabilityKey::new(mission_id, service_type_id, from, to, page);
        self.availability.get_or_fill(key, || self.read_availability(key, page)).await
    }

    async fn read_availability(
        &self,
        key: AvailabilityKey,
        page: StartPageRequest,
    ) -> Result<AvailablePage, ServiceError> {
        let mission = self.ports.missions.get(key.mission_id).await.or_not_found()?;
        let now = self.ports.clock.now();
        let from = key.from.unwrap_or(now);
        let to = key.to.unwrap_or(from.max(now) + DEFAULT_HORIZON);
        let query = AvailabilityQuery {
            mission_id: key.mission_id,
            service_type_id: key.service_type_id,
            from,
            to,
            now,
        };
        let slots = self.ports.appointments.available_slots(query, page).await?;
        AvailablePage::new(slots, mission.timezone)
            .map_err(|e| ServiceError::Internal(format!("an availability page does not serialize: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::here;
    use super::super::{AvailabilityCache, NewBooking};
    use super::*;
    use crate::fixtures::{any_mission, principal};
    use consular_domain::{PrincipalKind, Slot, fixtures};
    use consular_ports::{BookOutcome, MockAppointmentRepository, StartPage};
    use std::sync::atomic::{AtomicU32, Ordering};
    use uuid::Uuid;

    fn service_type() -> ServiceTypeId {
        ServiceTypeId(Uuid::from_u128(9))
    }

    fn open_slot() -> Slot {
        let now = OffsetDateTime::now_utc();
        Slot {
            capacity: 5,
            service_types: vec![service_type()],
            ..fixtures::slot(here(), now + Duration::days(3), now)
        }
    }

    fn citizen_of(mission: MissionId) -> Principal {
        principal(PrincipalKind::Citizen, Uuid::from_u128(7), "citizen", Some(mission))
    }

    /// The service over `appointments`, citizen 7 of mission 1 known, a cache of a minute.
    fn service(appointments: MockAppointmentRepository) -> AppointmentService {
        super::super::tests::service(appointments, any_mission())
            .with_availability_cache(AvailabilityCache::new(std::time::Duration::from_secs(60)))
    }

    async fn read(
        service: &AppointmentService,
        actor: &Principal,
    ) -> Result<Arc<AvailablePage>, ServiceError> {
        service.availability(actor, here(), service_type(), None, None, StartPageRequest::default()).await
    }

    #[tokio::test]
    async fn a_second_read_is_answered_from_memory_until_a_booking_on_this_node() {
        let slot = open_slot();
        let (listed, booked) = (slot.clone(), slot.clone());
        let seats_taken = Arc::new(AtomicU32::new(0));
        let taken = seats_taken.clone();
        let mut repo = MockAppointmentRepository::new();
        // Once before the booking, once after it: never for the reads in between.
        repo.expect_available_slots().times(2).returning(move |query, _| {
            assert_eq!((query.mission_id, query.service_type_id), (here(), service_type()));
            let slot = Slot { booked: taken.load(Ordering::SeqCst), ..listed.clone() };
            Ok(StartPage { items: vec![slot], next_after: None })
        });
        repo.expect_get_slot().returning(move |_| Ok(Some(booked.clone())));
        let booking = seats_taken.clone();
        repo.expect_book().times(1).returning(move |_, _, _, _, _| {
            booking.fetch_add(1, Ordering::SeqCst);
            Ok(BookOutcome::Booked)
        });
        let service = service(repo);
        let alice = citizen_of(here());

        let first = read(&service, &alice).await.unwrap();
        assert_eq!(first.slots.items[0].booked, 0);
        assert_eq!(first.timezone, "Europe/Paris");
        let second = read(&service, &alice).await.unwrap();
        assert_eq!(second.fingerprint, first.fingerprint, "the same page, from memory");

        let new = NewBooking {
            slot_id: slot.id,
            service_type_id: service_type(),
            citizen_id: None,
            request_id: None,
        };
        service.book(&alice, new, None).await.unwrap();
        let after = read(&service, &alice).await.unwrap();
        assert_eq!(after.slots.items[0].booked, 1, "the booking on this node is seen at once");
        assert_ne!(after.fingerprint, first.fingerprint);
        read(&service, &alice).await.unwrap();
    }

    #[tokio::test]
    async fn a_page_held_for_one_mission_is_never_served_to_a_caller_of_another() {
        let slot = open_slot();
        let mut repo = MockAppointmentRepository::new();
        repo.expect_available_slots()
            .times(1)
            .returning(move |_, _| Ok(StartPage { items: vec![slot.clone()], next_after: None }));
        let service = service(repo);
        read(&service, &citizen_of(here())).await.unwrap();
        let stranger = citizen_of(MissionId(Uuid::from_u128(2)));
        let refused = read(&service, &stranger).await.unwrap_err();
        assert!(matches!(refused, ServiceError::NotFound), "{refused:?}");
        let global = principal(PrincipalKind::Admin, Uuid::now_v7(), "admin", None);
        assert_eq!(read(&service, &global).await.unwrap().slots.items.len(), 1, "one who may read it");
    }
}
