//! Retention and erasure (docs/data-protection.md "Retention and erasure"): erasing a
//! citizen (`DELETE /api/v1/citizens/{id}`) and the daily retention sweep.

use crate::ServiceError;
use crate::adapters::Adapters;
use crate::error::OrNotFound;
use consular_domain::erasure::{self, KeptRequest};
use consular_domain::policy::erasure as policy;
use consular_domain::{
    AuditAction, AuditRecord, CitizenId, PageRequest, Principal, RegistrationStatus, RequestId,
};
use consular_ports::{
    BlobStore, CitizenRepository, Clock, Erasure, ErasureRepository, RepoError, ServiceTypeFilter,
    ServiceTypeRepository, WriteMeta,
};
use std::sync::Arc;
use time::{Duration, OffsetDateTime};

/// The ports erasure needs.
#[derive(Clone)]
pub struct ErasurePorts {
    pub erasure: Arc<dyn ErasureRepository>,
    pub citizens: Arc<dyn CitizenRepository>,
    pub service_types: Arc<dyn ServiceTypeRepository>,
    pub blobs: Arc<dyn BlobStore>,
    pub clock: Arc<dyn Clock>,
}

impl<D> From<&Adapters<D>> for ErasurePorts
where
    D: ErasureRepository + CitizenRepository + ServiceTypeRepository + 'static,
{
    fn from(adapters: &Adapters<D>) -> Self {
        ErasurePorts {
            erasure: adapters.database.clone(),
            citizens: adapters.database.clone(),
            service_types: adapters.database.clone(),
            blobs: adapters.blobs.clone(),
            clock: adapters.clock.clone(),
        }
    }
}

/// The answer of an erasure: when the citizen was erased, and the requests kept, each
/// with why and until when. Erasing again answers the same report (less what retention
/// let go since).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErasureReport {
    pub citizen_id: CitizenId,
    pub erased_at: OffsetDateTime,
    pub kept: Vec<KeptRequest>,
}

/// The personal fields an erasure blanks: the names its audit entry lists (never the
/// values).
const ERASED_FIELDS: [&str; 14] = [
    "given_name",
    "family_name",
    "date_of_birth",
    "place_of_birth",
    "nationality",
    "passport_number",
    "passport_expiry",
    "email",
    "phone",
    "address",
    "emergency_contact",
    "preferred_language",
    "registration_status",
    "requests",
];

/// How many attempts an erasure makes when the citizen changes under it.
const ATTEMPTS: usize = 3;

/// How many expired requests one transaction of the retention sweep deletes.
pub const SWEEP_BATCH: i64 = 100;

#[derive(Clone)]
pub struct ErasureService {
    ports: ErasurePorts,
}

impl ErasureService {
    pub fn new(ports: ErasurePorts) -> Self {
        ErasureService { ports }
    }

    /// Erases what no retention period holds of citizen `id`: the requests that ended
    /// more than their type's `retention_days` ago (with everything attached), every
    /// document not on a request that stays (a scrubbed tombstone, its bytes deleted after
    /// the commit), the citizen's appointments, notifications and emails, and their
    /// personal fields (status `erased`). Idempotent: an erased citizen is not written
    /// again, only what retention let go since is deleted.
    pub async fn erase(&self, actor: &Principal, id: CitizenId) -> Result<ErasureReport, ServiceError> {
        let mut attempt = 1;
        loop {
            match self.erase_once(actor, id).await {
                Err(ServiceError::PreconditionFailed) if attempt < ATTEMPTS => attempt += 1,
                // The row moved under every attempt: someone keeps changing it.
                Err(ServiceError::PreconditionFailed) => {
                    return Err(ServiceError::Unavailable(
                        "the citizen kept changing during the erasure".into(),
                    ));
                }
                other => return other,
            }
        }
    }

    async fn erase_once(&self, actor: &Principal, id: CitizenId) -> Result<ErasureReport, ServiceError> {
        let citizen = self.ports.citizens.get(id).await.or_not_found()?;
        policy::erase(actor, citizen.mission_id)?;
        let now = self.ports.clock.now();
        let plan = erasure::plan(&self.ports.erasure.requests_of(id).await?, now);
        let first = citizen.registration_status != RegistrationStatus::Erased;
        let erased_at = erasure::erased_at(&citizen).unwrap_or(now);
        let report = ErasureReport { citizen_id: id, erased_at, kept: plan.keep };
        if !first && plan.delete.is_empty() {
            return Ok(report);
        }
        let fields: Vec<String> = if first {
            ERASED_FIELDS.iter().map(|f| (*f).to_owned()).collect()
        } else {
            vec!["requests".to_owned()]
        };
        let meta = WriteMeta {
            audit: vec![AuditRecord::new(
                Some(actor),
                now,
                AuditAction::Erased,
                "citizen",
                id.as_uuid(),
                fields,
            )],
            ..WriteMeta::default()
        };
        let order = Erasure {
            citizen: first.then(|| (erasure::erased(&citizen, now), citizen.version)),
            citizen_id: id,
            requests: plan.delete,
            at: now,
        };
        let erased = self.ports.erasure.erase(&order, &meta).await.map_err(|e| match e {
            RepoError::VersionConflict => ServiceError::PreconditionFailed,
            other => other.into(),
        })?;
        self.delete_blobs(&erased.blob_keys).await;
        Ok(report)
    }

    /// Applies retention to every citizen's requests: those that ended more than their
    /// type's `retention_days` ago are deleted as an erasure deletes them, in
    /// transactions of [`SWEEP_BATCH`], each with an audit entry per request (by the
    /// system). Returns how many went.
    pub async fn sweep_retention(&self) -> Result<usize, ServiceError> {
        let now = self.ports.clock.now();
        let mut swept = 0;
        let mut page = PageRequest { limit: 100, after: None };
        loop {
            let types = self.ports.service_types.list(ServiceTypeFilter::default(), page).await?;
            for service_type in &types.items {
                let ended_before = now - Duration::days(i64::from(service_type.retention_days));
                swept += self.sweep_type(service_type.id, ended_before, now).await?;
            }
            match types.next_after {
                Some(after) => page.after = Some(after),
                _ => return Ok(swept),
            }
        }
    }

    async fn sweep_type(
        &self,
        service_type: consular_domain::ServiceTypeId,
        ended_before: OffsetDateTime,
        now: OffsetDateTime,
    ) -> Result<usize, ServiceError> {
        let mut swept = 0;
        loop {
            let expired =
                self.ports.erasure.expired_requests(service_type, ended_before, SWEEP_BATCH).await?;
            if expired.is_empty() {
                return Ok(swept);
            }
            let listed = expired.len();
            let mut doomed = expired;
            // Another node's sweep may delete some of them first: then nothing was
            // written, and the rest go again, with an audit entry each of its own.
            while !doomed.is_empty() {
                let meta = WriteMeta {
                    audit: doomed.iter().map(|id| retention_entry(*id, now)).collect(),
                    ..WriteMeta::default()
                };
                let erased = self.ports.erasure.delete_requests(&doomed, now, &meta).await?;
                if erased.gone.is_empty() {
                    self.delete_blobs(&erased.blob_keys).await;
                    swept += doomed.len();
                    break;
                }
                doomed.retain(|id| !erased.gone.contains(id));
            }
            if listed < SWEEP_BATCH as usize {
                return Ok(swept);
            }
        }
    }

    /// Deletes the bytes of documents made tombstones; a failure is logged and left to
    /// the orphan sweep, which collects blobs no live document references.
    async fn delete_blobs(&self, keys: &[String]) {
        for key in keys {
            if let Err(error) = self.ports.blobs.delete(key).await {
                tracing::warn!(%key, %error, "the blob of an erased document is left for the orphan sweep");
            }
        }
    }
}

/// The audit entry of a request the retention sweep deleted.
fn retention_entry(id: RequestId, now: OffsetDateTime) -> AuditRecord {
    AuditRecord::new(
        None,
        now,
        AuditAction::Erased,
        "service_request",
        id.as_uuid(),
        vec!["retention".to_owned()],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{admin_with, principal};
    use consular_domain::erasure::{Hold, RetainedRequest};
    use consular_domain::{MissionId, PrincipalKind, RequestStatus, ServiceTypeId, fixtures};
    use consular_ports::{
        Erased, MockBlobStore, MockCitizenRepository, MockClock, MockErasureRepository,
        MockServiceTypeRepository,
    };
    use std::sync::Mutex;
    use time::macros::datetime;

    const NOW: OffsetDateTime = datetime!(2031-03-01 09:00 UTC);

    struct World {
        citizens: MockCitizenRepository,
        erasure: MockErasureRepository,
        service_types: MockServiceTypeRepository,
        blobs: MockBlobStore,
    }

    impl World {
        fn new() -> World {
            World {
                citizens: MockCitizenRepository::new(),
                erasure: MockErasureRepository::new(),
                service_types: MockServiceTypeRepository::new(),
                blobs: MockBlobStore::new(),
            }
        }

        fn service(self) -> ErasureService {
            let mut clock = MockClock::new();
            clock.expect_now().return_const(NOW);
            ErasureService::new(ErasurePorts {
                erasure: Arc::new(self.erasure),
                citizens: Arc::new(self.citizens),
                service_types: Arc::new(self.service_types),
                blobs: Arc::new(self.blobs),
                clock: Arc::new(clock),
            })
        }
    }

    fn ended(days_ago: i64, retention_days: i32) -> RetainedRequest {
        RetainedRequest {
            request_id: RequestId::new(),
            service_type_id: ServiceTypeId::new(),
            status: RequestStatus::Completed,
            closed_at: Some(NOW - Duration::days(days_ago)),
            retention_days,
        }
    }

    #[tokio::test]
    async fn an_erasure_deletes_what_retention_lets_go_reports_the_rest_and_deletes_the_blobs_after() {
        let mission = MissionId::new();
        let alice = fixtures::citizen(mission, NOW - Duration::days(400));
        let (gone, held) = (ended(40, 30), ended(10, 30));
        let mut world = World::new();
        let stored = alice.clone();
        world.citizens.expect_get().returning(move |_| Ok(Some(stored.clone())));
        world.erasure.expect_requests_of().returning(move |_| Ok(vec![gone, held]));
        let ordered = Arc::new(Mutex::new(None));
        let seen = ordered.clone();
        world.erasure.expect_erase().times(1).returning(move |order, meta| {
            *seen.lock().unwrap() = Some((order.clone(), meta.audit.clone()));
            Ok(Erased { blob_keys: vec!["documents/a".into(), "documents/b".into()], gone: Vec::new() })
        });
        // A blob that cannot be deleted now is left to the orphan sweep: the erasure stands.
        world.blobs.expect_delete().times(2).returning(|key| match key {
            "documents/a" => Err(consular_ports::BlobError::Unavailable("down".into())),
            _ => Ok(()),
        });
        let admin = admin_with("admin", Some(mission));
        let report = world.service().erase(&admin, alice.id).await.unwrap();

        assert_eq!(report.erased_at, NOW);
        assert_eq!(report.kept.len(), 1);
        assert_eq!(report.kept[0].request, held);
        assert_eq!(report.kept[0].hold, Hold::Retained { until: NOW + Duration::days(20) });
        let (order, audit) = ordered.lock().unwrap().take().unwrap();
        assert_eq!(order.requests, [gone.request_id]);
        let (erased, version) = order.citizen.unwrap();
        assert_eq!((erased.registration_status, version), (RegistrationStatus::Erased, alice.version));
        assert_eq!(audit.len(), 1);
        assert_eq!((audit[0].action.as_str(), audit[0].resource_id), ("erased", alice.id.as_uuid()));
        let entry = format!("{:?}", audit[0]);
        for value in [&alice.given_name, &alice.family_name, &alice.email, &alice.passport_number] {
            assert!(!entry.contains(value.as_str()), "the audit entry names {value}");
        }
    }

    #[tokio::test]
    async fn erasing_again_writes_nothing_unless_retention_let_something_go_since() {
        let mission = MissionId::new();
        let alice = fixtures::citizen(mission, NOW - Duration::days(400));
        let erased = erasure::erased(&alice, NOW - Duration::days(3));
        let admin = admin_with("admin", None);

        let mut world = World::new();
        let stored = erased.clone();
        world.citizens.expect_get().returning(move |_| Ok(Some(stored.clone())));
        let held = ended(1, 30);
        world.erasure.expect_requests_of().returning(move |_| Ok(vec![held]));
        world.erasure.expect_erase().never();
        let report = world.service().erase(&admin, alice.id).await.unwrap();
        assert_eq!(report.erased_at, NOW - Duration::days(3), "the first erasure's time");
        assert_eq!(report.kept.len(), 1);

        let mut world = World::new();
        let stored = erased.clone();
        world.citizens.expect_get().returning(move |_| Ok(Some(stored.clone())));
        let gone = ended(31, 30);
        world.erasure.expect_requests_of().returning(move |_| Ok(vec![gone]));
        world.erasure.expect_erase().times(1).returning(move |order, _| {
            assert!(order.citizen.is_none(), "an erased row is not written again");
            assert_eq!(order.requests, [gone.request_id]);
            Ok(Erased::default())
        });
        let report = world.service().erase(&admin, alice.id).await.unwrap();
        assert!(report.kept.is_empty());
    }

    #[tokio::test]
    async fn a_citizen_changed_under_the_erasure_is_read_again() {
        let mission = MissionId::new();
        let alice = fixtures::citizen(mission, NOW - Duration::days(400));
        let mut world = World::new();
        let stored = alice.clone();
        world.citizens.expect_get().times(2).returning(move |_| Ok(Some(stored.clone())));
        world.erasure.expect_requests_of().returning(|_| Ok(Vec::new()));
        let mut calls = 0;
        world.erasure.expect_erase().times(2).returning(move |_, _| {
            calls += 1;
            if calls == 1 { Err(RepoError::VersionConflict) } else { Ok(Erased::default()) }
        });
        let admin = admin_with("admin", Some(mission));
        assert!(world.service().erase(&admin, alice.id).await.is_ok());
    }

    #[tokio::test]
    async fn who_may_not_erase_erases_nothing() {
        let mission = MissionId::new();
        let alice = fixtures::citizen(mission, NOW);
        let callers = [
            (admin_with("admin", Some(MissionId::new())), "404"),
            (principal(PrincipalKind::Staff, uuid::Uuid::now_v7(), "staff", Some(mission)), "403"),
            (principal(PrincipalKind::Citizen, alice.id.as_uuid(), "citizen", Some(mission)), "403"),
        ];
        for (caller, expected) in callers {
            let mut world = World::new();
            let stored = alice.clone();
            world.citizens.expect_get().returning(move |_| Ok(Some(stored.clone())));
            world.erasure.expect_requests_of().never();
            world.erasure.expect_erase().never();
            let refused = world.service().erase(&caller, alice.id).await.unwrap_err();
            let status = match refused {
                ServiceError::NotFound => "404",
                ServiceError::Forbidden(_) | ServiceError::InsufficientScope { .. } => "403",
                other => panic!("{other:?}"),
            };
            assert_eq!(status, expected, "{:?}", caller.subject.kind);
        }
    }

    #[tokio::test]
    async fn the_retention_sweep_deletes_each_types_expired_requests_in_batches() {
        let mut world = World::new();
        let mut short = fixtures::service_type(NOW);
        short.retention_days = 0;
        let mut long = fixtures::service_type(NOW);
        long.retention_days = 3650;
        let (short_id, long_id) = (short.id, long.id);
        world.service_types.expect_list().times(1).returning(move |_, _| {
            Ok(consular_domain::Page { items: vec![short.clone(), long.clone()], next_after: None })
        });
        let full: Vec<RequestId> = (0..SWEEP_BATCH).map(|_| RequestId::new()).collect();
        let batches = Arc::new(Mutex::new(vec![vec![RequestId::new()], full]));
        world.erasure.expect_expired_requests().returning(move |service_type, before, limit| {
            assert_eq!(limit, SWEEP_BATCH);
            if service_type == long_id {
                assert_eq!(before, NOW - Duration::days(3650));
                return Ok(Vec::new());
            }
            assert_eq!((service_type, before), (short_id, NOW));
            Ok(batches.lock().unwrap().pop().unwrap_or_default())
        });
        world.erasure.expect_delete_requests().times(2).returning(|ids, at, meta| {
            assert_eq!(at, NOW);
            assert_eq!(meta.audit.len(), ids.len(), "an entry per request");
            assert!(meta.audit.iter().all(|a| a.actor.is_none() && a.action == "erased"));
            Ok(Erased { blob_keys: vec!["documents/c".into()], gone: Vec::new() })
        });
        world.blobs.expect_delete().times(2).returning(|_| Ok(()));
        assert_eq!(world.service().sweep_retention().await.unwrap(), SWEEP_BATCH as usize + 1);
    }

    #[tokio::test]
    async fn requests_another_sweep_deleted_first_are_left_out_and_the_rest_audited_once() {
        let mut world = World::new();
        let short = fixtures::service_type(NOW);
        world.service_types.expect_list().times(1).returning(move |_, _| {
            Ok(consular_domain::Page { items: vec![short.clone()], next_after: None })
        });
        let (taken, left) = (RequestId::new(), RequestId::new());
        let listed = Arc::new(Mutex::new(vec![vec![taken, left]]));
        world
            .erasure
            .expect_expired_requests()
            .returning(move |_, _, _| Ok(listed.lock().unwrap().pop().unwrap_or_default()));
        let mut calls = mockall::Sequence::new();
        world.erasure.expect_delete_requests().times(1).in_sequence(&mut calls).returning(
            move |ids, _, _| {
                assert_eq!(ids, [taken, left]);
                // Another node's sweep deleted one: nothing was written.
                Ok(Erased { blob_keys: Vec::new(), gone: vec![taken] })
            },
        );
        world.erasure.expect_delete_requests().times(1).in_sequence(&mut calls).returning(
            move |ids, _, meta| {
                assert_eq!(ids, [left]);
                let audited: Vec<_> = meta.audit.iter().map(|a| a.resource_id).collect();
                assert_eq!(
                    audited,
                    [left.as_uuid()],
                    "an audit entry for the request this sweep deletes only"
                );
                Ok(Erased { blob_keys: vec!["documents/d".into()], gone: Vec::new() })
            },
        );
        world.blobs.expect_delete().times(1).returning(|_| Ok(()));
        assert_eq!(world.service().sweep_retention().await.unwrap(), 1);
    }
}
