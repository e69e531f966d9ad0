//! Citizens: registered by admins of their mission (optionally with an API client in the
//! same call), read by themselves, their mission's staff and admins, changed by admins —
//! and by the citizens themselves, for their contact details only.

use crate::access_log::AccessRecorder;
use crate::adapters::Adapters;
use crate::clients::{self, IssuedClient, WithClient};
use crate::error::{OrNotFound, ServiceError};
use crate::idempotency::{self, Created, IdempotencyRequest};
use crate::reads::own_writes;
use consular_domain::policy::Listing;
use consular_domain::policy::citizens::{self as policy, Editor};
use consular_domain::{AccessEntry, AccessedData};
use consular_domain::{
    AuditAction, AuditRecord, Citizen, CitizenChanges, CitizenId, NewCitizen, Page, PageRequest, Principal,
    PrincipalKind, Scope, ScopeSet, Subject, ValidationErrors,
};
use consular_ports::{
    CitizenFilter, CitizenRepository, Clock, IdempotencyRepository, MissionRepository, RepoError, WriteMeta,
};
use std::sync::Arc;

pub const RESOURCE: &str = "citizen";

/// The ports the citizen use cases need.
#[derive(Clone)]
pub struct CitizenPorts {
    pub citizens: Arc<dyn CitizenRepository>,
    pub missions: Arc<dyn MissionRepository>,
    pub idempotency: Arc<dyn IdempotencyRepository>,
    /// The node's access log recorder, shared by every use case (`Services::new`).
    pub access: AccessRecorder,
    pub clock: Arc<dyn Clock>,
}

impl<D> From<&Adapters<D>> for CitizenPorts
where
    D: CitizenRepository + MissionRepository + IdempotencyRepository + 'static,
{
    fn from(adapters: &Adapters<D>) -> Self {
        let db = &adapters.database;
        CitizenPorts {
            citizens: db.clone(),
            missions: db.clone(),
            idempotency: db.clone(),
            access: adapters.access.clone(),
            clock: adapters.clock.clone(),
        }
    }
}

#[derive(Clone)]
pub struct CitizenService {
    ports: CitizenPorts,
}

/// The fields a registration sets, for its audit entry.
fn citizen_fields(input: &NewCitizen) -> Vec<String> {
    let mut fields = vec![
        "mission_id",
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
        "preferred_language",
        "registration_status",
    ];
    if input.emergency_contact.is_some() {
        fields.push("emergency_contact");
    }
    fields.into_iter().map(str::to_owned).collect()
}

impl CitizenService {
    pub fn new(ports: CitizenPorts) -> Self {
        CitizenService { ports }
    }

    /// Admins only; a mission admin sees only their mission's citizens.
    pub async fn list(
        &self,
        actor: &Principal,
        mut filter: CitizenFilter,
        page: PageRequest,
    ) -> Result<Page<Citizen>, ServiceError> {
        match policy::list(actor, filter.mission_id)? {
            Listing::Within(mission) => filter.mission_id = mission,
            Listing::Empty => return Ok(Page::empty()),
        }
        let page = self.ports.citizens.list(filter, page, own_writes(actor)).await?;
        // Each profile on the page is a read of that citizen's data.
        let now = self.ports.clock.now();
        let reads = page.items.iter().filter_map(|c| {
            AccessEntry::of_read(actor, c.id, AccessedData::CitizenList, c.id.as_uuid(), now)
        });
        self.ports.access.record(reads.collect::<Vec<_>>())?;
        Ok(page)
    }

    pub async fn get(&self, actor: &Principal, id: CitizenId) -> Result<Citizen, ServiceError> {
        let citizen = self.ports.citizens.get(id).await.or_not_found()?;
        policy::read(actor, citizen.id, citizen.mission_id)?;
        let now = self.ports.clock.now();
        let read = AccessEntry::of_read(actor, citizen.id, AccessedData::Profile, citizen.id.as_uuid(), now);
        self.ports.access.record(read)?;
        Ok(citizen)
    }

    /// Registers a citizen (admins of the mission). With `issue_client`, a citizen API
    /// client is created in the same transaction and returned once with its secret.
    pub async fn register(
        &self,
        actor: &Principal,
        input: NewCitizen,
        issue_client: bool,
        idempotency_key: Option<&IdempotencyRequest>,
    ) -> Result<Created<WithClient<Citizen>>, ServiceError> {
        policy::register(actor, input.mission_id)?;
        let now = self.ports.clock.now();
        if let Some(replayed) =
            idempotency::replay(&*self.ports.idempotency, actor, idempotency_key, now).await?
        {
            return Ok(replayed);
        }
        let mut errors = ValidationErrors::new();
        errors.extend(input.validate(now.date()));
        if self.ports.missions.get(input.mission_id).await?.is_none() {
            errors.unknown("/mission_id", "no such mission");
        }
        errors.into_result()?;
        let fields = citizen_fields(&input);
        let citizen = input.into_citizen(CitizenId::new(), now);
        let issued = if issue_client {
            let name = format!("{} {}", citizen.given_name, citizen.family_name);
            let subject = Subject { kind: PrincipalKind::Citizen, id: citizen.id.as_uuid().into() };
            Some(clients::issue(
                name,
                ScopeSet::only(Scope::Citizen),
                subject,
                Some(citizen.mission_id),
                now,
            )?)
        } else {
            None
        };
        let mut audit = vec![AuditRecord::new(
            Some(actor),
            now,
            AuditAction::Created,
            RESOURCE,
            citizen.id.as_uuid(),
            fields,
        )];
        audit.extend(issued.as_ref().map(|c| clients::creation_audit(Some(actor), &c.client)));
        let registered = WithClient { value: citizen, client: issued.map(IssuedClient::from) };
        let meta = WriteMeta {
            events: Vec::new(),
            audit,
            idempotency: idempotency::record(
                actor,
                idempotency_key,
                registered.value.id.as_uuid(),
                &registered,
                now,
            )?,
        };
        let client = registered.client.as_ref().map(|c| c.client.clone());
        self.ports.citizens.insert(&registered.value, client, &meta).await.map_err(|e| match e {
            RepoError::Duplicate { .. } => ServiceError::conflict(
                "passport_already_registered",
                "a citizen with this passport number is already registered with the mission",
            ),
            other => other.into(),
        })?;
        Ok(Created::fresh(registered))
    }

    /// Changes a profile if it is still at one of `expected_versions`. The citizen may
    /// change only contact fields (others are 422); admins of the mission change anything.
    pub async fn update(
        &self,
        actor: &Principal,
        id: CitizenId,
        changes: CitizenChanges,
        expected_versions: Option<&[i64]>,
    ) -> Result<Citizen, ServiceError> {
        let mut citizen = self.ports.citizens.get(id).await.or_not_found()?;
        let editor = policy::change(actor, citizen.id, citizen.mission_id)?;
        let now = self.ports.clock.now();
        // Every failing field at once: fields a citizen may not edit, and invalid values.
        let mut errors = ValidationErrors::new();
        if editor == Editor::Themself {
            errors.extend(changes.validate_contact_only());
        }
        errors.extend(changes.validate(&citizen, now.date()));
        errors.into_result()?;
        let stored_version = citizen.version;
        crate::concurrency::require_version(expected_versions, stored_version)?;
        let status_change = changes.registration_status.is_some_and(|s| s != citizen.registration_status);
        let changed = citizen.apply(changes, now);
        if changed.is_empty() {
            return Ok(citizen);
        }
        let action = if status_change && changed.len() == 1 {
            AuditAction::StatusChanged
        } else {
            AuditAction::Updated
        };
        let meta = WriteMeta {
            events: Vec::new(),
            audit: vec![AuditRecord::new(Some(actor), now, action, RESOURCE, id.as_uuid(), changed)],
            idempotency: None,
        };
        self.ports.citizens.update(&citizen, stored_version, &meta).await.map_err(|e| match e {
            RepoError::Duplicate { .. } => ServiceError::conflict(
                "passport_already_registered",
                "a citizen with this passport number is already registered with the mission",
            ),
            other => other.into(),
        })?;
        Ok(citizen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{alice, any_mission as missions, principal};
    use consular_domain::MissionId;
    use consular_ports::{MockCitizenRepository, MockIdempotencyRepository, SystemClock};
    use time::OffsetDateTime;

    fn admin(mission: Option<MissionId>) -> Principal {
        principal(PrincipalKind::Admin, uuid::Uuid::now_v7(), "admin", mission)
    }

    fn service(citizens: MockCitizenRepository) -> CitizenService {
        CitizenService::new(CitizenPorts {
            citizens: Arc::new(citizens),
            missions: Arc::new(missions()),
            idempotency: Arc::new(MockIdempotencyRepository::new()),
            access: crate::fixtures::access_recorder(),
            clock: Arc::new(SystemClock),
        })
    }

    fn stored(mission: MissionId) -> Citizen {
        alice(mission).into_citizen(CitizenId::new(), OffsetDateTime::UNIX_EPOCH)
    }

    /// Reads of `citizen` through a log that answers `append` with `stored` (the entries
    /// it was given are kept in `appended`).
    fn logged_reads(
        citizen: Citizen,
        stored: fn() -> Result<(), RepoError>,
    ) -> (CitizenService, Arc<std::sync::Mutex<Vec<consular_domain::AccessEntry>>>) {
        let appended = Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut log = consular_ports::MockAccessLogRepository::new();
        let kept = appended.clone();
        log.expect_append().returning(move |entries| {
            stored()?;
            kept.lock().unwrap().extend_from_slice(entries);
            Ok(())
        });
        let timing = crate::access_log::RecorderTiming {
            max_lag: std::time::Duration::from_millis(100),
            retry: std::time::Duration::from_millis(10),
            ..crate::access_log::RecorderTiming::default()
        };
        let ports = CitizenPorts {
            access: AccessRecorder::with_timing(Arc::new(log), timing),
            ..service(citizens_with(citizen)).ports
        };
        (CitizenService::new(ports), appended)
    }

    #[tokio::test]
    async fn a_profile_read_by_staff_is_logged_and_the_citizens_own_is_not() {
        let mission = MissionId::new();
        let citizen = stored(mission);
        let (service, appended) = logged_reads(citizen.clone(), || Ok(()));
        let staff = principal(PrincipalKind::Staff, uuid::Uuid::now_v7(), "staff", Some(mission));
        service.get(&staff, citizen.id).await.unwrap();
        let me = principal(PrincipalKind::Citizen, citizen.id.as_uuid(), "citizen", Some(mission));
        service.get(&me, citizen.id).await.unwrap();
        service.ports.access.flushed().await.unwrap();
        let logged: Vec<_> =
            appended.lock().unwrap().iter().map(|e| (e.actor, e.what, e.citizen_id, e.object_id)).collect();
        assert_eq!(logged, [(staff.subject, AccessedData::Profile, citizen.id, citizen.id.as_uuid())]);

        // A log that cannot be written: the reads go on for up to `max_lag`, then staff's
        // fail (nothing is answered long unlogged); the citizen's own, never logged, do not.
        let (failing, _) = logged_reads(citizen.clone(), || Err(RepoError::Unavailable("down".into())));
        failing.get(&staff, citizen.id).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
        let refused = failing.get(&staff, citizen.id).await;
        assert!(matches!(refused, Err(ServiceError::Unavailable(_))), "{refused:?}");
        failing.get(&me, citizen.id).await.unwrap();
    }

    fn citizens_with(citizen: Citizen) -> MockCitizenRepository {
        let mut repo = MockCitizenRepository::new();
        repo.expect_get().returning(move |id| Ok((id == citizen.id).then(|| citizen.clone())));
        repo
    }

    #[tokio::test]
    async fn registration_can_issue_the_citizens_client_in_the_same_write() {
        let mission = MissionId::new();
        let mut repo = MockCitizenRepository::new();
        repo.expect_insert()
            .withf(|citizen, client, meta| {
                client.as_ref().is_some_and(|c| {
                    c.subject.id.as_uuid() == citizen.id.as_uuid()
                        && c.scopes == ScopeSet::only(Scope::Citizen)
                        && c.mission == Some(citizen.mission_id)
                }) && meta.audit.len() == 2
            })
            .times(1)
            .returning(|_, _, _| Ok(()));
        let written =
            service(repo).register(&admin(Some(mission)), alice(mission), true, None).await.unwrap();
        let issued = written.value.client.unwrap();
        assert!(issued.secret.is_some(), "the caller sees the secret once");
        assert_eq!(issued.client.subject.id.as_uuid(), written.value.value.id.as_uuid());
    }

    #[tokio::test]
    async fn admins_of_another_mission_cannot_register_and_duplicates_conflict() {
        let mission = MissionId::new();
        let result = service(MockCitizenRepository::new())
            .register(&admin(Some(MissionId::new())), alice(mission), false, None)
            .await;
        assert!(matches!(result, Err(ServiceError::Forbidden(_))));
        let mut repo = MockCitizenRepository::new();
        repo.expect_insert()
            .returning(|_, _, _| Err(RepoError::Duplicate { constraint: "citizens_passport".into() }));
        let duplicate = service(repo).register(&admin(None), alice(mission), false, None).await;
        assert!(matches!(duplicate, Err(ServiceError::Conflict { code: "passport_already_registered", .. })));
    }

    #[tokio::test]
    async fn visibility_follows_self_mission_staff_and_admins() {
        let mission = MissionId::new();
        let citizen = stored(mission);
        let id = citizen.id;
        let svc = service(citizens_with(citizen));
        let me = principal(PrincipalKind::Citizen, id.as_uuid(), "citizen", Some(mission));
        let other_citizen = principal(PrincipalKind::Citizen, uuid::Uuid::now_v7(), "citizen", Some(mission));
        let staff_here = principal(PrincipalKind::Staff, uuid::Uuid::now_v7(), "staff", Some(mission));
        let staff_elsewhere =
            principal(PrincipalKind::Staff, uuid::Uuid::now_v7(), "staff", Some(MissionId::new()));
        assert!(svc.get(&me, id).await.is_ok());
        assert!(svc.get(&staff_here, id).await.is_ok());
        assert!(svc.get(&admin(None), id).await.is_ok());
        assert!(svc.get(&admin(Some(mission)), id).await.is_ok());
        for outsider in [other_citizen, staff_elsewhere, admin(Some(MissionId::new()))] {
            assert!(matches!(svc.get(&outsider, id).await, Err(ServiceError::NotFound)));
        }
    }

    #[tokio::test]
    async fn a_citizen_changes_only_contact_fields_and_staff_nothing() {
        let mission = MissionId::new();
        let citizen = stored(mission);
        let id = citizen.id;
        let mut repo = citizens_with(citizen);
        repo.expect_update()
            .withf(|c, _, meta| c.email == "new@example.org" && meta.audit[0].changed_fields == ["email"])
            .times(1)
            .returning(|_, _, _| Ok(()));
        let svc = service(repo);
        let me = principal(PrincipalKind::Citizen, id.as_uuid(), "citizen", Some(mission));
        let contact = CitizenChanges { email: Some("new@example.org".into()), ..Default::default() };
        assert!(svc.update(&me, id, contact, None).await.is_ok());
        let identity = CitizenChanges { family_name: Some("Dupont".into()), ..Default::default() };
        let refused = svc.update(&me, id, identity.clone(), None).await;
        assert!(matches!(refused, Err(ServiceError::Validation(e)) if e.0[0].pointer == "/family_name"));
        let staff = principal(PrincipalKind::Staff, uuid::Uuid::now_v7(), "staff", Some(mission));
        assert!(matches!(
            svc.update(&staff, id, identity, None).await,
            Err(ServiceError::InsufficientScope { .. })
        ));
    }

    #[tokio::test]
    async fn a_mission_admin_lists_only_their_mission() {
        let own = MissionId::new();
        let mut repo = MockCitizenRepository::new();
        repo.expect_list()
            .withf(move |filter, _, _| filter.mission_id == Some(own))
            .times(1)
            .returning(|_, _, _| Ok(Page { items: vec![], next_after: None }));
        let svc = service(repo);
        svc.list(&admin(Some(own)), CitizenFilter::default(), PageRequest::default()).await.unwrap();
        let elsewhere = CitizenFilter { mission_id: Some(MissionId::new()), ..Default::default() };
        assert!(
            svc.list(&admin(Some(own)), elsewhere, PageRequest::default()).await.unwrap().items.is_empty()
        );
        let staff = principal(PrincipalKind::Staff, uuid::Uuid::now_v7(), "staff", Some(own));
        assert!(matches!(
            svc.list(&staff, CitizenFilter::default(), PageRequest::default()).await,
            Err(ServiceError::InsufficientScope { .. })
        ));
    }
}
