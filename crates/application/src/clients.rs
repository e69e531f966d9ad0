//! API clients: created, listed, read, disabled and given new secrets by admins (and by
//! the operator through the CLI). A mission admin manages only the clients of their
//! mission; a client of another mission is "not found".

use crate::adapters::Adapters;
use crate::auth::secrets;
use crate::error::{OrNotFound, ServiceError};
use crate::idempotency::{self, Created, IdempotencyRequest};
use consular_domain::policy::clients as policy;
use consular_domain::{
    ApiClient, AuditAction, AuditRecord, Binding, CitizenId, ClientId, NewClient, Page, PageRequest,
    Principal, PrincipalId, PrincipalKind, Scope, StaffId, Subject,
};
use consular_ports::{
    CitizenRepository, ClientFilter, ClientRepository, Clock, IdempotencyRepository, MissionRepository,
    StaffRepository, WriteMeta,
};
use std::sync::Arc;

pub const RESOURCE: &str = "api_client";

/// How many of the clients already bound to a named principal id are compared with a new
/// one: enough to see every client a principal has in practice, and any disagreement.
const BOUND_CLIENTS_LOOKED_AT: u16 = consular_domain::page::MAX_LIMIT;

/// Who acts on clients: an authenticated admin, or the operator at the command line.
pub use policy::Actor;

/// Who the citizen or staff row of `id` says it is (kind and mission), if it has one: what
/// a client's principal and the caller's own email preferences are checked against.
pub(crate) async fn person_binding(
    citizens: &dyn CitizenRepository,
    staff: &dyn StaffRepository,
    id: PrincipalId,
) -> Result<Option<Binding>, ServiceError> {
    let id = id.as_uuid();
    if let Some(citizen) = citizens.get(CitizenId(id)).await? {
        return Ok(Some(Binding::new(PrincipalKind::Citizen, Some(citizen.mission_id))));
    }
    Ok(staff
        .get(StaffId(id))
        .await?
        .map(|member| Binding::new(PrincipalKind::Staff, Some(member.mission_id))))
}

/// A new active client for `subject`, with a fresh secret. Used for every client
/// creation: by admins, by the operator, and with a citizen or staff registration.
pub(crate) fn issue(
    name: String,
    scopes: consular_domain::ScopeSet,
    subject: Subject,
    mission: Option<consular_domain::MissionId>,
    now: time::OffsetDateTime,
) -> Result<ClientWithSecret, ServiceError> {
    let secret = secrets::generate().map_err(ServiceError::Internal)?;
    let client = ApiClient::issue(name, scopes, subject, mission, secrets::hash(&secret), now);
    Ok(ClientWithSecret { client, secret })
}

/// The audit entry of a client's creation.
pub(crate) fn creation_audit(actor: Option<&Principal>, client: &ApiClient) -> AuditRecord {
    AuditRecord::new(
        actor,
        client.created_at,
        AuditAction::Created,
        RESOURCE,
        client.id.as_uuid(),
        ["name", "scopes", "mission_id", "principal_id", "secret"].map(str::to_owned).to_vec(),
    )
}

/// A client with its secret, as shown once at creation or rotation.
#[derive(Debug, Clone)]
pub struct ClientWithSecret {
    pub client: ApiClient,
    pub secret: String,
}

/// A client as its creation answers it: with its secret in the answer to the creating
/// request; without it in a replay. The secret is never serialized, so the snapshot an
/// idempotency record keeps (and a replay built from it) cannot hold it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IssuedClient {
    pub client: ApiClient,
    #[serde(skip)]
    pub secret: Option<String>,
}

impl From<ClientWithSecret> for IssuedClient {
    fn from(created: ClientWithSecret) -> Self {
        IssuedClient { client: created.client, secret: Some(created.secret) }
    }
}

/// A registered citizen or staff member and, when one was asked for, the API client
/// issued with the registration in the same transaction.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WithClient<T> {
    pub value: T,
    pub client: Option<IssuedClient>,
}

/// The ports the client use cases need.
#[derive(Clone)]
pub struct ClientPorts {
    pub clients: Arc<dyn ClientRepository>,
    pub missions: Arc<dyn MissionRepository>,
    /// The citizen and staff rows a client's principal is checked against.
    pub citizens: Arc<dyn CitizenRepository>,
    pub staff: Arc<dyn StaffRepository>,
    pub idempotency: Arc<dyn IdempotencyRepository>,
    pub clock: Arc<dyn Clock>,
}

impl<D> From<&Adapters<D>> for ClientPorts
where
    D: ClientRepository
        + MissionRepository
        + CitizenRepository
        + StaffRepository
        + IdempotencyRepository
        + 'static,
{
    fn from(adapters: &Adapters<D>) -> Self {
        let db = &adapters.database;
        ClientPorts {
            clients: db.clone(),
            missions: db.clone(),
            citizens: db.clone(),
            staff: db.clone(),
            idempotency: db.clone(),
            clock: adapters.clock.clone(),
        }
    }
}

#[derive(Clone)]
pub struct ClientService {
    ports: ClientPorts,
    revocations: Option<Arc<crate::auth::RevocationCache>>,
}

impl ClientService {
    pub fn new(ports: ClientPorts) -> Self {
        ClientService { ports, revocations: None }
    }

    /// Tells this node's revocation view at once when a client is disabled (other nodes
    /// learn it from the database within a second).
    pub fn with_revocations(mut self, revocations: Arc<crate::auth::RevocationCache>) -> Self {
        self.revocations = Some(revocations);
        self
    }

    async fn build(&self, actor: Actor<'_>, input: NewClient) -> Result<ClientWithSecret, ServiceError> {
        let kind = input.validate()?;
        policy::create(actor, input.mission)?;
        if let Some(mission) = input.mission
            && self.ports.missions.get(mission).await?.is_none()
        {
            return Err(ServiceError::unknown("/mission_id", "no such mission"));
        }
        self.validate_principal(kind, &input).await?;
        issue(
            input.name,
            input.scopes,
            Subject { kind, id: input.principal.unwrap_or_default() },
            input.mission,
            self.ports.clock.now(),
        )
    }

    /// A client acts for an existing principal of the kind its scopes name, in its
    /// mission (`NewClient::check_principal`): a client must never act as someone of
    /// another mission, or as someone of another kind.
    async fn validate_principal(&self, kind: PrincipalKind, input: &NewClient) -> Result<(), ServiceError> {
        let Some(principal) = input.principal else { return Ok(()) };
        let person = person_binding(&*self.ports.citizens, &*self.ports.staff, principal).await?;
        let bound = if person.is_some() {
            Vec::new()
        } else {
            let filter = ClientFilter { principal: Some(principal), ..ClientFilter::default() };
            let page = PageRequest { limit: BOUND_CLIENTS_LOOKED_AT, after: None };
            let clients = self.ports.clients.list(filter, page).await?.items;
            clients.iter().map(|c| Binding::new(c.subject.kind, c.mission)).collect()
        };
        Ok(input.check_principal(kind, person, &bound)?)
    }

    fn audit(actor: Actor<'_>, client: &ApiClient, action: AuditAction, fields: &[&str]) -> AuditRecord {
        AuditRecord::new(
            actor.principal(),
            client.updated_at,
            action,
            RESOURCE,
            client.id.as_uuid(),
            fields.iter().map(|f| (*f).to_owned()).collect(),
        )
    }

    /// What a creation by the operator writes besides the client: its audit entry.
    fn operator_created(created: &ClientWithSecret) -> WriteMeta {
        WriteMeta {
            audit: vec![creation_audit(None, &created.client)],
            events: Vec::new(),
            idempotency: None,
        }
    }

    /// Creates a client for an admin. Its secret is in the answer, never in the stored
    /// idempotent outcome (see [`IssuedClient`]), so it is never stored in clear.
    pub async fn create(
        &self,
        actor: &Principal,
        input: NewClient,
        idempotency_key: Option<&IdempotencyRequest>,
    ) -> Result<Created<IssuedClient>, ServiceError> {
        let actor_ref = Actor::Principal(actor);
        policy::manage(actor_ref)?;
        let now = self.ports.clock.now();
        if let Some(replayed) =
            idempotency::replay(&*self.ports.idempotency, actor, idempotency_key, now).await?
        {
            return Ok(replayed);
        }
        let created = self.build(actor_ref, input).await?;
        let issued = IssuedClient::from(created);
        let meta = WriteMeta {
            events: Vec::new(),
            audit: vec![creation_audit(Some(actor), &issued.client)],
            idempotency: idempotency::record(
                actor,
                idempotency_key,
                issued.client.id.as_uuid(),
                &issued,
                now,
            )?,
        };
        self.ports.clients.insert(&issued.client, &meta).await?;
        Ok(Created::fresh(issued))
    }

    /// Creates a client for the operator (CLI).
    pub async fn create_by_operator(&self, input: NewClient) -> Result<ClientWithSecret, ServiceError> {
        let created = self.build(Actor::Operator, input).await?;
        self.ports.clients.insert(&created.client, &Self::operator_created(&created)).await?;
        Ok(created)
    }

    /// On the first start on an empty database: one global admin client, created once
    /// even when several nodes start together. `None` when clients already exist.
    pub async fn bootstrap_admin(&self) -> Result<Option<ClientWithSecret>, ServiceError> {
        let input = NewClient {
            name: "first global admin".into(),
            scopes: consular_domain::ScopeSet::only(Scope::Admin),
            mission: None,
            principal: None,
        };
        let created = self.build(Actor::Operator, input).await?;
        Ok(self
            .ports
            .clients
            .insert_first(&created.client, &Self::operator_created(&created))
            .await?
            .then_some(created))
    }

    pub async fn list(&self, actor: Actor<'_>, page: PageRequest) -> Result<Page<ApiClient>, ServiceError> {
        let filter = ClientFilter { mission: policy::list(actor)?, ..ClientFilter::default() };
        Ok(self.ports.clients.list(filter, page).await?)
    }

    pub async fn get(&self, actor: Actor<'_>, id: ClientId) -> Result<ApiClient, ServiceError> {
        policy::manage(actor)?;
        let client = self.ports.clients.get(id).await.or_not_found()?;
        policy::read(actor, client.mission)?;
        Ok(client)
    }

    /// Disables a client: its tokens stop working on every node within a second and it
    /// can get no new ones. Disabling a disabled client changes nothing.
    pub async fn disable(&self, actor: Actor<'_>, id: ClientId) -> Result<ApiClient, ServiceError> {
        let mut client = self.get(actor, id).await?;
        let expected = client.version;
        let now = self.ports.clock.now();
        if !client.disable(now) {
            return Ok(client);
        }
        let meta = WriteMeta {
            events: Vec::new(),
            audit: vec![Self::audit(actor, &client, AuditAction::Disabled, &["status"])],
            idempotency: None,
        };
        self.ports.clients.update(&client, expected, now, &meta).await?;
        if let Some(revocations) = &self.revocations {
            revocations.record(&consular_ports::Revocation {
                id: uuid::Uuid::now_v7(),
                kind: consular_ports::RevocationKind::Client { client_id: client.id },
                created_at: now,
            });
        }
        Ok(client)
    }

    /// Replaces the secret of an active client; the old secret stops working at once.
    /// Tokens already issued stay valid until they expire or are revoked.
    pub async fn rotate_secret(
        &self,
        actor: &Principal,
        id: ClientId,
    ) -> Result<ClientWithSecret, ServiceError> {
        let actor_ref = Actor::Principal(actor);
        let mut client = self.get(actor_ref, id).await?;
        let expected = client.version;
        let now = self.ports.clock.now();
        let secret = secrets::generate().map_err(ServiceError::Internal)?;
        client
            .rotate_secret(secrets::hash(&secret), now)
            .map_err(|disabled| ServiceError::conflict("client_disabled", disabled.to_string()))?;
        let meta = WriteMeta {
            events: Vec::new(),
            audit: vec![Self::audit(actor_ref, &client, AuditAction::SecretRotated, &["secret"])],
            idempotency: None,
        };
        self.ports.clients.update(&client, expected, now, &meta).await?;
        Ok(ClientWithSecret { client, secret })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use consular_domain::{MissionId, PrincipalId, PrincipalKind, ScopeSet};
    use consular_ports::{
        MockCitizenRepository, MockClientRepository, MockIdempotencyRepository, MockMissionRepository,
        MockStaffRepository, SystemClock,
    };
    use time::OffsetDateTime;

    fn admin(mission: Option<MissionId>) -> Principal {
        Principal {
            subject: Subject { kind: PrincipalKind::Admin, id: PrincipalId::new() },
            client_id: ClientId::new(),
            mission,
            scopes: ScopeSet::only(Scope::Admin),
            address: None,
            acting_for: None,
        }
    }

    fn missions_with(id: MissionId) -> MockMissionRepository {
        let mut missions = MockMissionRepository::new();
        missions.expect_get().returning(move |m| Ok((m == id).then(|| crate::fixtures::mission(id))));
        missions
    }

    fn service(clients: MockClientRepository, missions: MockMissionRepository) -> ClientService {
        ClientService::new(ClientPorts {
            clients: Arc::new(clients),
            missions: Arc::new(missions),
            citizens: Arc::new(consular_ports::MockCitizenRepository::new()),
            staff: Arc::new(consular_ports::MockStaffRepository::new()),
            idempotency: Arc::new(MockIdempotencyRepository::new()),
            clock: Arc::new(SystemClock),
        })
    }

    fn staff_client(mission: MissionId) -> NewClient {
        NewClient {
            name: "desk".into(),
            scopes: ScopeSet::only(Scope::Staff),
            mission: Some(mission),
            principal: None,
        }
    }

    #[tokio::test]
    async fn the_secret_is_returned_once_and_never_stored() {
        let mission = MissionId::new();
        let mut clients = MockClientRepository::new();
        clients.expect_insert().times(1).returning(|_, _| Ok(()));
        let written = service(clients, missions_with(mission))
            .create(&admin(None), staff_client(mission), None)
            .await
            .unwrap();
        assert!(written.value.secret.is_some_and(|s| !s.is_empty()));
        assert!(!written.replayed);
    }

    #[tokio::test]
    async fn the_idempotent_replay_omits_the_secret() {
        let mission = MissionId::new();
        let mut clients = MockClientRepository::new();
        clients
            .expect_insert()
            .withf(|c, meta| {
                let outcome = &meta.idempotency.as_ref().unwrap().outcome;
                let snapshot = outcome.snapshot.to_string();
                outcome.resource_id == c.id.as_uuid()
                    && !snapshot.contains("secret")
                    && !c.secret_hash.is_empty()
            })
            .times(1)
            .returning(|_, _| Ok(()));
        let mut idem = MockIdempotencyRepository::new();
        idem.expect_find().returning(|_, _, _| Ok(None));
        let svc = ClientService::new(ClientPorts {
            clients: Arc::new(clients),
            missions: Arc::new(missions_with(mission)),
            citizens: Arc::new(consular_ports::MockCitizenRepository::new()),
            staff: Arc::new(consular_ports::MockStaffRepository::new()),
            idempotency: Arc::new(idem),
            clock: Arc::new(SystemClock),
        });
        let key = IdempotencyRequest { key: "k".into(), fingerprint: "f".into() };
        let created = svc.create(&admin(None), staff_client(mission), Some(&key)).await.unwrap();
        let secret = created.value.secret.clone().unwrap();
        let snapshot = serde_json::to_value(&created.value).unwrap();
        assert!(!snapshot.to_string().contains(&secret));
        let replayed: IssuedClient = serde_json::from_value(snapshot).unwrap();
        assert_eq!(replayed.secret, None);
        assert_eq!(replayed.client.id, created.value.client.id);
    }

    #[tokio::test]
    async fn a_mission_admin_cannot_create_clients_elsewhere_or_global_admins() {
        let own = MissionId::new();
        let other = MissionId::new();
        let svc = service(MockClientRepository::new(), missions_with(other));
        let elsewhere = svc.create(&admin(Some(own)), staff_client(other), None).await;
        assert!(matches!(elsewhere, Err(ServiceError::Forbidden(_))));
        let global = NewClient {
            name: "root".into(),
            scopes: ScopeSet::only(Scope::Admin),
            mission: None,
            principal: None,
        };
        let result = svc.create(&admin(Some(own)), global, None).await;
        assert!(matches!(result, Err(ServiceError::Forbidden(_))));
    }

    #[tokio::test]
    async fn an_unknown_mission_is_a_validation_error() {
        let svc = service(MockClientRepository::new(), missions_with(MissionId::new()));
        let result = svc.create(&admin(None), staff_client(MissionId::new()), None).await;
        assert!(matches!(result, Err(ServiceError::Validation(e)) if e.0[0].pointer == "/mission_id"));
    }

    #[tokio::test]
    async fn another_missions_client_is_not_found_for_a_mission_admin() {
        let subject = Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() };
        let (scopes, mission) = (ScopeSet::only(Scope::Staff), Some(MissionId::new()));
        let foreign =
            ApiClient::issue("x".into(), scopes, subject, mission, vec![0; 32], OffsetDateTime::UNIX_EPOCH);
        let id = foreign.id;
        let mut clients = MockClientRepository::new();
        clients.expect_get().returning(move |_| Ok(Some(foreign.clone())));
        clients.expect_update().never();
        let svc = service(clients, MockMissionRepository::new());
        let mission_admin = admin(Some(MissionId::new()));
        assert!(matches!(svc.get(Actor::Principal(&mission_admin), id).await, Err(ServiceError::NotFound)));
        assert!(matches!(
            svc.disable(Actor::Principal(&mission_admin), id).await,
            Err(ServiceError::NotFound)
        ));
        assert!(svc.get(Actor::Principal(&admin(None)), id).await.is_ok());
    }

    /// Issue 23: an admin of one mission bound clients of any scope to a citizen (or staff
    /// member) of another mission, whose inbox their tokens then read.
    #[tokio::test]
    async fn a_client_is_bound_only_to_a_principal_of_its_kind_and_mission() {
        let (here, elsewhere) = (MissionId::new(), MissionId::new());
        let citizen = crate::fixtures::alice(here).into_citizen(CitizenId::new(), OffsetDateTime::UNIX_EPOCH);
        let citizen_id = citizen.id;
        let mut citizens = MockCitizenRepository::new();
        citizens.expect_get().returning(move |id| Ok((id == citizen_id).then(|| citizen.clone())));
        let mut staff = MockStaffRepository::new();
        staff.expect_get().returning(|_| Ok(None));
        let mut clients = MockClientRepository::new();
        clients.expect_list().returning(|_, _| Ok(Page { items: Vec::new(), next_after: None }));
        clients.expect_insert().times(1).returning(|_, _| Ok(()));
        let mut missions = MockMissionRepository::new();
        missions.expect_get().returning(|id| Ok(Some(crate::fixtures::mission(id))));
        let svc = ClientService::new(ClientPorts {
            clients: Arc::new(clients),
            missions: Arc::new(missions),
            citizens: Arc::new(citizens),
            staff: Arc::new(staff),
            idempotency: Arc::new(MockIdempotencyRepository::new()),
            clock: Arc::new(SystemClock),
        });
        let bound_to = |scopes: &str, mission: MissionId, principal: PrincipalId| NewClient {
            name: "bound".into(),
            scopes: ScopeSet::parse(scopes).unwrap(),
            mission: Some(mission),
            principal: Some(principal),
        };
        let the_citizen = PrincipalId(citizen_id.as_uuid());
        let attacker = admin(Some(elsewhere));
        for scopes in ["admin", "staff", "citizen", "admin staff"] {
            let result = svc.create(&attacker, bound_to(scopes, elsewhere, the_citizen), None).await;
            assert!(
                matches!(&result, Err(ServiceError::Validation(e)) if e.0[0].pointer == "/principal_id"
                    && e.0[0].code == "unknown"),
                "{scopes}: {result:?}"
            );
        }
        let own_admin = admin(Some(here));
        for scopes in ["admin", "staff"] {
            let result = svc.create(&own_admin, bound_to(scopes, here, the_citizen), None).await;
            assert!(
                matches!(&result, Err(ServiceError::Validation(e)) if e.0[0].code == "kind_mismatch"),
                "{scopes}: {result:?}"
            );
        }
        let unknown = svc.create(&own_admin, bound_to("citizen", here, PrincipalId::new()), None).await;
        assert!(matches!(&unknown, Err(ServiceError::Validation(e)) if e.0[0].code == "unknown"));
        // The citizen's own mission binds a citizen client to them (the one insert).
        let created = svc.create(&own_admin, bound_to("citizen", here, the_citizen), None).await.unwrap();
        assert_eq!(created.value.client.subject.id, the_citizen);
    }

    #[tokio::test]
    async fn citizens_and_staff_cannot_manage_clients() {
        let svc = service(MockClientRepository::new(), MockMissionRepository::new());
        let mut staff = admin(Some(MissionId::new()));
        staff.scopes = ScopeSet::only(Scope::Staff);
        let result = svc.list(Actor::Principal(&staff), PageRequest::default()).await;
        assert!(matches!(result, Err(ServiceError::InsufficientScope { .. })));
    }
}
