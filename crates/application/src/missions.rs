//! Missions: listed and read by any authenticated caller, created and changed by global
//! admins only.

use crate::adapters::Adapters;
use crate::appointments::AvailabilityCache;
use crate::error::{OrNotFound, ServiceError};
use crate::idempotency::{self, Created, IdempotencyRequest};
use consular_domain::policy::missions as policy;
use consular_domain::{
    AuditAction, AuditRecord, Mission, MissionChanges, MissionId, NewMission, Page, PageRequest, Principal,
};
use consular_ports::{Clock, IdempotencyRepository, MissionRepository, WriteMeta};
use std::sync::Arc;

pub const RESOURCE: &str = "mission";

/// The ports the mission use cases need.
#[derive(Clone)]
pub struct MissionPorts {
    pub missions: Arc<dyn MissionRepository>,
    pub idempotency: Arc<dyn IdempotencyRepository>,
    pub clock: Arc<dyn Clock>,
}

impl<D: MissionRepository + IdempotencyRepository + 'static> From<&Adapters<D>> for MissionPorts {
    fn from(adapters: &Adapters<D>) -> Self {
        let db = &adapters.database;
        MissionPorts { missions: db.clone(), idempotency: db.clone(), clock: adapters.clock.clone() }
    }
}

#[derive(Clone)]
pub struct MissionService {
    ports: MissionPorts,
    availability: Option<AvailabilityCache>,
}

impl MissionService {
    pub fn new(ports: MissionPorts) -> Self {
        MissionService { ports, availability: None }
    }

    /// Tells this node's availability pages at once when a mission changes (each page
    /// carries its mission's time zone; other nodes see the change when their pages
    /// expire, docs/appointments.md "Release morning").
    pub fn with_availability_cache(mut self, cache: AvailabilityCache) -> Self {
        self.availability = Some(cache);
        self
    }

    pub async fn list(&self, actor: &Principal, page: PageRequest) -> Result<Page<Mission>, ServiceError> {
        policy::read(actor)?;
        Ok(self.ports.missions.list(page).await?)
    }

    pub async fn get(&self, actor: &Principal, id: MissionId) -> Result<Mission, ServiceError> {
        policy::read(actor)?;
        self.ports.missions.get(id).await.or_not_found()
    }

    /// Creates a mission; with an idempotency key, the mission is also stored as the
    /// key's outcome, and a retry answers with it.
    pub async fn create(
        &self,
        actor: &Principal,
        input: NewMission,
        idempotency_key: Option<&IdempotencyRequest>,
    ) -> Result<Created<Mission>, ServiceError> {
        policy::manage(actor)?;
        let now = self.ports.clock.now();
        if let Some(replayed) =
            idempotency::replay(&*self.ports.idempotency, actor, idempotency_key, now).await?
        {
            return Ok(replayed);
        }
        input.validate()?;
        let mission = input.into_mission(MissionId::new(), now);
        let meta = WriteMeta {
            events: Vec::new(),
            audit: vec![AuditRecord::new(
                Some(actor),
                now,
                AuditAction::Created,
                RESOURCE,
                mission.id.as_uuid(),
                vec!["code".into(), "name".into(), "country".into(), "city".into(), "timezone".into()],
            )],
            idempotency: idempotency::record(actor, idempotency_key, mission.id.as_uuid(), &mission, now)?,
        };
        self.ports.missions.insert(&mission, &meta).await.map_err(|e| match e {
            consular_ports::RepoError::Duplicate { .. } => ServiceError::conflict(
                "mission_code_taken",
                format!("mission code `{}` is taken", mission.code),
            ),
            other => other.into(),
        })?;
        Ok(Created::fresh(mission))
    }

    /// Applies `changes` if the mission is still at one of `expected_versions` (the
    /// `If-Match`; `None` for `*`).
    pub async fn update(
        &self,
        actor: &Principal,
        id: MissionId,
        changes: MissionChanges,
        expected_versions: Option<&[i64]>,
    ) -> Result<Mission, ServiceError> {
        policy::manage(actor)?;
        changes.validate()?;
        let mut mission = self.ports.missions.get(id).await.or_not_found()?;
        let stored_version = mission.version;
        crate::concurrency::require_version(expected_versions, stored_version)?;
        let now = self.ports.clock.now();
        let changed = mission.apply(changes, now);
        if changed.is_empty() {
            return Ok(mission);
        }
        let meta = WriteMeta {
            events: Vec::new(),
            audit: vec![AuditRecord::new(
                Some(actor),
                now,
                AuditAction::Updated,
                RESOURCE,
                id.as_uuid(),
                changed,
            )],
            idempotency: None,
        };
        self.ports.missions.update(&mission, stored_version, &meta).await?;
        if let Some(availability) = &self.availability {
            availability.invalidate(id);
        }
        Ok(mission)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::admin_with as principal;

    use crate::appointments::{AvailabilityKey, AvailablePage};
    use consular_domain::ServiceTypeId;
    use consular_ports::{
        MockClock, MockIdempotencyRepository, MockMissionRepository, RepoError, StartPage, StartPageRequest,
    };
    use std::sync::atomic::{AtomicUsize, Ordering};
    use time::OffsetDateTime;
    use uuid::Uuid;

    fn clock() -> Arc<MockClock> {
        let mut clock = MockClock::new();
        clock.expect_now().returning(|| OffsetDateTime::UNIX_EPOCH);
        Arc::new(clock)
    }

    fn paris() -> NewMission {
        consular_domain::fixtures::new_mission()
    }

    fn service(missions: MockMissionRepository, idem: MockIdempotencyRepository) -> MissionService {
        MissionService::new(MissionPorts {
            missions: Arc::new(missions),
            idempotency: Arc::new(idem),
            clock: clock(),
        })
    }

    #[tokio::test]
    async fn a_global_admin_creates_a_mission_with_its_audit_entry() {
        let mut missions = MockMissionRepository::new();
        missions
            .expect_insert()
            .withf(|m, meta| {
                m.code == "fr-paris" && meta.audit.len() == 1 && meta.audit[0].action == "created"
            })
            .times(1)
            .returning(|_, _| Ok(()));
        let written = service(missions, MockIdempotencyRepository::new())
            .create(&principal("admin", None), paris(), None)
            .await
            .unwrap();
        assert_eq!(written.value.code, "fr-paris");
        assert!(!written.replayed);
    }

    #[tokio::test]
    async fn mission_admins_staff_and_citizens_cannot_create_missions() {
        for (scopes, mission) in [("admin", Some(MissionId::new())), ("staff", None), ("citizen", None)] {
            let result = service(MockMissionRepository::new(), MockIdempotencyRepository::new())
                .create(&principal(scopes, mission), paris(), None)
                .await;
            assert!(
                matches!(result, Err(ServiceError::Forbidden(_) | ServiceError::InsufficientScope { .. })),
                "{scopes}"
            );
        }
    }

    #[tokio::test]
    async fn invalid_input_writes_nothing() {
        let mut bad = paris();
        bad.country = "ZZ".into();
        let result = service(MockMissionRepository::new(), MockIdempotencyRepository::new())
            .create(&principal("admin", None), bad, None)
            .await;
        assert!(matches!(result, Err(ServiceError::Validation(_))));
    }

    #[tokio::test]
    async fn a_repeated_idempotency_key_replays_or_refuses() {
        let actor = principal("admin", None);
        let owner = actor.client_id;
        let first = paris().into_mission(MissionId::new(), clock().now());
        let stored = consular_ports::StoredOutcome {
            resource_id: first.id.as_uuid(),
            snapshot: serde_json::to_value(&first).unwrap(),
        };
        let mut idem = MockIdempotencyRepository::new();
        idem.expect_find().returning(move |_, key, now| {
            Ok(Some(consular_ports::IdempotencyRecord {
                owner,
                key: key.to_owned(),
                fingerprint: "f1".into(),
                outcome: stored.clone(),
                created_at: now,
                expires_at: now,
            }))
        });
        let svc = service(MockMissionRepository::new(), idem);
        let same = IdempotencyRequest { key: "k".into(), fingerprint: "f1".into() };
        let written = svc.create(&actor, paris(), Some(&same)).await.unwrap();
        assert!(written.replayed);
        assert_eq!(written.value, first, "the mission the first request created, not a new one");
        let other = IdempotencyRequest { key: "k".into(), fingerprint: "f2".into() };
        let refused = svc.create(&actor, paris(), Some(&other)).await;
        assert!(matches!(refused, Err(ServiceError::IdempotencyKeyMismatch)));
    }

    #[tokio::test]
    async fn a_taken_code_is_a_conflict() {
        let mut missions = MockMissionRepository::new();
        missions
            .expect_insert()
            .returning(|_, _| Err(RepoError::Duplicate { constraint: "missions_code".into() }));
        let result = service(missions, MockIdempotencyRepository::new())
            .create(&principal("admin", None), paris(), None)
            .await;
        assert!(matches!(result, Err(ServiceError::Conflict { code: "mission_code_taken", .. })));
    }

    #[tokio::test]
    async fn a_stale_if_match_is_refused_before_writing() {
        let stored = paris().into_mission(MissionId::new(), OffsetDateTime::UNIX_EPOCH);
        let id = stored.id;
        let mut missions = MockMissionRepository::new();
        missions.expect_get().returning(move |_| Ok(Some(stored.clone())));
        let changes = MissionChanges { name: Some("New name".into()), ..Default::default() };
        let result = service(missions, MockIdempotencyRepository::new())
            .update(&principal("admin", None), id, changes, Some(&[7]))
            .await;
        assert!(matches!(result, Err(ServiceError::PreconditionFailed)));
    }

    #[tokio::test]
    async fn an_update_stores_the_changed_fields_against_the_read_version() {
        let stored = paris().into_mission(MissionId::new(), OffsetDateTime::UNIX_EPOCH);
        let id = stored.id;
        let mut missions = MockMissionRepository::new();
        missions.expect_get().returning(move |_| Ok(Some(stored.clone())));
        missions
            .expect_update()
            .withf(|m, expected, meta| {
                m.version == 2 && *expected == 1 && meta.audit[0].changed_fields == ["city"]
            })
            .times(1)
            .returning(|_, _, _| Ok(()));
        let changes = MissionChanges { city: Some("Lyon".into()), ..Default::default() };
        let updated = service(missions, MockIdempotencyRepository::new())
            .update(&principal("admin", None), id, changes, Some(&[1]))
            .await
            .unwrap();
        assert_eq!(updated.city, "Lyon");
    }

    /// A read of `mission`'s availability through `cache`, counting the queries it sends.
    async fn read_availability(cache: &AvailabilityCache, mission: MissionId, queries: &AtomicUsize) {
        let service_type = ServiceTypeId(Uuid::from_u128(9));
        let key = AvailabilityKey::new(mission, service_type, None, None, StartPageRequest::default());
        cache
            .get_or_fill(key, || async {
                queries.fetch_add(1, Ordering::SeqCst);
                let slots = StartPage { items: Vec::new(), next_after: None };
                AvailablePage::new(slots, "Europe/Paris".into())
            })
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn a_stored_update_invalidates_the_missions_availability_pages_on_this_node() {
        let (here, there) = (MissionId(Uuid::from_u128(1)), MissionId(Uuid::from_u128(2)));
        let stored = paris().into_mission(here, OffsetDateTime::UNIX_EPOCH);
        let mut missions = MockMissionRepository::new();
        missions.expect_get().returning(move |_| Ok(Some(stored.clone())));
        missions.expect_update().times(1).returning(|_, _, _| Ok(()));
        let cache = AvailabilityCache::new(std::time::Duration::from_secs(60));
        let service =
            service(missions, MockIdempotencyRepository::new()).with_availability_cache(cache.clone());
        let admin = principal("admin", None);
        let queries = AtomicUsize::new(0);
        read_availability(&cache, here, &queries).await;
        read_availability(&cache, there, &queries).await;
        read_availability(&cache, here, &queries).await;
        assert_eq!(queries.load(Ordering::SeqCst), 2, "the second read of a page is from memory");

        let unchanged = MissionChanges { city: Some("Paris".into()), ..Default::default() };
        service.update(&admin, here, unchanged, Some(&[1])).await.unwrap();
        read_availability(&cache, here, &queries).await;
        assert_eq!(queries.load(Ordering::SeqCst), 2, "an update that stores nothing keeps the pages");

        let moved = MissionChanges { timezone: Some("Europe/Berlin".into()), ..Default::default() };
        service.update(&admin, here, moved, Some(&[1])).await.unwrap();
        read_availability(&cache, here, &queries).await;
        assert_eq!(queries.load(Ordering::SeqCst), 3, "the changed mission's page is read again");
        read_availability(&cache, there, &queries).await;
        assert_eq!(queries.load(Ordering::SeqCst), 3, "another mission's page is still served");
    }
}
