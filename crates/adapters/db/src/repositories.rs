//! The ports, implemented on [`Database`]: each method runs one function of `src/queries`
//! on whichever database the pool holds.

use crate::database::{Database, Pools};
use crate::error::Failure;
use async_trait::async_trait;
use consular_domain::{
    ApiClient, AuditRecord, Citizen, CitizenId, ClientId, HistoryEntry, Mission, MissionId, Page,
    PageRequest, RequestId, ServiceRequest, ServiceType, ServiceTypeId, StaffId, StaffMember,
};
use consular_ports::{
    AuditFilter, AuditRepository, CitizenFilter, CitizenRepository, ClientFilter, ClientRepository,
    HealthCheck, IdempotencyRecord, IdempotencyRepository, Message, MissionRepository, Note, OutboxEvent,
    QueueGroup, RefreshOutcome, RefreshReplacement, RefreshTokenRecord, RepoError, RequestFilter,
    RequestRepository, Revocation, ServiceTypeFilter, ServiceTypeRepository, SigningKeyRecord,
    SigningKeyRepository, StaffFilter, StaffRepository, TokenRepository, WriteMeta,
};
use time::OffsetDateTime;
use uuid::Uuid;

/// `run!(self, module::function(args…))` checks out a connection and calls
/// `queries::module::function(conn, args…)` compiled for that connection's database.
macro_rules! run {
    ($db:expr, $module:ident :: $function:ident ( $($arg:expr),* $(,)? )) => {{
        let result: Result<_, Failure> = match $db.pools() {
            Pools::Postgres { pool, .. } => {
                async {
                    let mut conn = pool.get().await?;
                    crate::pg::queries::$module::$function(&mut conn, $($arg),*).await
                }
                .await
            }
            Pools::Sqlite { pool, .. } => {
                async {
                    let mut conn = pool.get().await?;
                    crate::sqlite::queries::$module::$function(&mut conn, $($arg),*).await
                }
                .await
            }
        };
        result.map_err(RepoError::from)
    }};
}

#[async_trait]
impl MissionRepository for Database {
    async fn insert(&self, mission: &Mission, meta: &WriteMeta) -> Result<(), RepoError> {
        run!(self, missions::insert(mission, meta))
    }

    async fn update(
        &self,
        mission: &Mission,
        expected_version: i64,
        meta: &WriteMeta,
    ) -> Result<(), RepoError> {
        run!(self, missions::update(mission, expected_version, meta))
    }

    async fn get(&self, id: MissionId) -> Result<Option<Mission>, RepoError> {
        run!(self, missions::get(id))
    }

    async fn list(&self, page: PageRequest) -> Result<Page<Mission>, RepoError> {
        run!(self, missions::list(page))
    }
}

#[async_trait]
impl ClientRepository for Database {
    async fn insert(&self, client: &ApiClient, meta: &WriteMeta) -> Result<(), RepoError> {
        run!(self, clients::insert(client, meta))
    }

    async fn insert_first(&self, client: &ApiClient, meta: &WriteMeta) -> Result<bool, RepoError> {
        run!(self, clients::insert_first(client, meta))
    }

    async fn update(
        &self,
        client: &ApiClient,
        expected_version: i64,
        now: OffsetDateTime,
        meta: &WriteMeta,
    ) -> Result<(), RepoError> {
        run!(self, clients::update(client, expected_version, now, meta))
    }

    async fn get(&self, id: ClientId) -> Result<Option<ApiClient>, RepoError> {
        run!(self, clients::get(id))
    }

    async fn list(&self, filter: ClientFilter, page: PageRequest) -> Result<Page<ApiClient>, RepoError> {
        run!(self, clients::list(filter, page))
    }
}

#[async_trait]
impl IdempotencyRepository for Database {
    async fn find(
        &self,
        owner: ClientId,
        key: &str,
        now: OffsetDateTime,
    ) -> Result<Option<IdempotencyRecord>, RepoError> {
        run!(self, idempotency::find(owner, key, now))
    }
}

#[async_trait]
impl TokenRepository for Database {
    async fn insert_refresh(&self, record: &RefreshTokenRecord) -> Result<(), RepoError> {
        run!(self, tokens::insert_refresh(record))
    }

    async fn rotate_refresh(
        &self,
        client_id: ClientId,
        hash: &[u8],
        replacement: &RefreshReplacement,
        now: OffsetDateTime,
    ) -> Result<RefreshOutcome, RepoError> {
        run!(self, tokens::rotate_refresh(client_id, hash, replacement, now))
    }

    async fn revoke_refresh(
        &self,
        client_id: ClientId,
        hash: &[u8],
        now: OffsetDateTime,
    ) -> Result<bool, RepoError> {
        run!(self, tokens::revoke_refresh(client_id, hash, now))
    }

    async fn insert_revocation(&self, revocation: &Revocation) -> Result<(), RepoError> {
        let row = crate::rows::RevocationRow::from(revocation);
        run!(self, tokens::record_revocation(&row))
    }

    async fn revocations_since(&self, since: OffsetDateTime) -> Result<Vec<Revocation>, RepoError> {
        run!(self, tokens::revocations_since(since))
    }

    async fn active_revocations(&self, now: OffsetDateTime) -> Result<Vec<Revocation>, RepoError> {
        run!(self, tokens::active_revocations(now))
    }

    async fn is_revoked(&self, jti: Uuid, client_id: ClientId) -> Result<bool, RepoError> {
        run!(self, tokens::is_revoked(jti, client_id))
    }

    async fn purge_expired(&self, now: OffsetDateTime) -> Result<u64, RepoError> {
        run!(self, tokens::purge_expired(now))
    }
}

#[async_trait]
impl SigningKeyRepository for Database {
    async fn all(&self) -> Result<Vec<SigningKeyRecord>, RepoError> {
        run!(self, signing_keys::all())
    }

    async fn insert_first(&self, key: &SigningKeyRecord) -> Result<bool, RepoError> {
        run!(self, signing_keys::insert_first(key))
    }
}

#[async_trait]
impl ServiceTypeRepository for Database {
    async fn insert(&self, service_type: &ServiceType, meta: &WriteMeta) -> Result<(), RepoError> {
        run!(self, service_types::insert(service_type, meta))
    }

    async fn update(
        &self,
        service_type: &ServiceType,
        expected_version: i64,
        meta: &WriteMeta,
    ) -> Result<(), RepoError> {
        run!(self, service_types::update(service_type, expected_version, meta))
    }

    async fn get(&self, id: ServiceTypeId) -> Result<Option<ServiceType>, RepoError> {
        run!(self, service_types::get(id))
    }

    async fn get_many(&self, ids: &[ServiceTypeId]) -> Result<Vec<ServiceType>, RepoError> {
        run!(self, service_types::get_many(ids))
    }

    async fn list(
        &self,
        filter: ServiceTypeFilter,
        page: PageRequest,
    ) -> Result<Page<ServiceType>, RepoError> {
        run!(self, service_types::list(filter, page))
    }
}

#[async_trait]
impl CitizenRepository for Database {
    async fn insert(
        &self,
        citizen: &Citizen,
        client: Option<ApiClient>,
        meta: &WriteMeta,
    ) -> Result<(), RepoError> {
        run!(self, citizens::insert(citizen, client.as_ref(), meta))
    }

    async fn update(
        &self,
        citizen: &Citizen,
        expected_version: i64,
        meta: &WriteMeta,
    ) -> Result<(), RepoError> {
        run!(self, citizens::update(citizen, expected_version, meta))
    }

    async fn get(&self, id: CitizenId) -> Result<Option<Citizen>, RepoError> {
        run!(self, citizens::get(id))
    }

    async fn list(&self, filter: CitizenFilter, page: PageRequest) -> Result<Page<Citizen>, RepoError> {
        run!(self, citizens::list(filter, page))
    }
}

#[async_trait]
impl StaffRepository for Database {
    async fn insert(
        &self,
        member: &StaffMember,
        client: Option<ApiClient>,
        meta: &WriteMeta,
    ) -> Result<(), RepoError> {
        run!(self, staff::insert(member, client.as_ref(), meta))
    }

    async fn update(
        &self,
        member: &StaffMember,
        expected_version: i64,
        meta: &WriteMeta,
    ) -> Result<(), RepoError> {
        run!(self, staff::update(member, expected_version, meta))
    }

    async fn get(&self, id: StaffId) -> Result<Option<StaffMember>, RepoError> {
        run!(self, staff::get(id))
    }

    async fn list(&self, filter: StaffFilter, page: PageRequest) -> Result<Page<StaffMember>, RepoError> {
        run!(self, staff::list(filter, page))
    }
}

#[async_trait]
impl AuditRepository for Database {
    async fn list(&self, filter: AuditFilter, page: PageRequest) -> Result<Page<AuditRecord>, RepoError> {
        run!(self, audit::list(filter, page))
    }
}

#[async_trait]
impl RequestRepository for Database {
    async fn least_loaded_staff(
        &self,
        mission: MissionId,
        service_type: ServiceTypeId,
    ) -> Result<Option<StaffId>, RepoError> {
        run!(self, requests::least_loaded_staff(mission, service_type))
    }

    async fn insert(
        &self,
        request: &ServiceRequest,
        first: &HistoryEntry,
        meta: &WriteMeta,
    ) -> Result<(), RepoError> {
        run!(self, requests::insert(request, first, meta))
    }

    async fn update(
        &self,
        request: &ServiceRequest,
        expected_version: i64,
        entry: Option<HistoryEntry>,
        meta: &WriteMeta,
    ) -> Result<(), RepoError> {
        run!(self, requests::update(request, expected_version, entry.as_ref(), meta))
    }

    async fn get(&self, id: RequestId) -> Result<Option<ServiceRequest>, RepoError> {
        run!(self, requests::get(id))
    }

    async fn history(&self, id: RequestId) -> Result<Vec<HistoryEntry>, RepoError> {
        run!(self, requests::history(id))
    }

    async fn list(
        &self,
        filter: RequestFilter,
        page: PageRequest,
    ) -> Result<Page<ServiceRequest>, RepoError> {
        run!(self, requests::list(filter, page))
    }

    async fn queue(&self, staff: StaffId, now: OffsetDateTime) -> Result<Vec<QueueGroup>, RepoError> {
        run!(self, requests::queue(staff, now))
    }

    async fn add_note(&self, note: &Note, meta: &WriteMeta) -> Result<(), RepoError> {
        run!(self, requests::add_note(note, meta))
    }

    async fn notes(&self, request: RequestId, page: PageRequest) -> Result<Page<Note>, RepoError> {
        run!(self, requests::notes(request, page))
    }

    async fn add_message(&self, message: &Message, meta: &WriteMeta) -> Result<(), RepoError> {
        run!(self, requests::add_message(message, meta))
    }

    async fn messages(&self, request: RequestId, page: PageRequest) -> Result<Page<Message>, RepoError> {
        run!(self, requests::messages(request, page))
    }
}

#[async_trait]
impl HealthCheck for Database {
    fn name(&self) -> &'static str {
        "database"
    }

    async fn check(&self) -> Result<(), String> {
        run!(self, health::ping()).map_err(|e| e.to_string())
    }
}

impl Database {
    /// The audit entries about one resource, oldest first.
    pub async fn audit_trail(
        &self,
        resource_type: &str,
        resource_id: Uuid,
    ) -> Result<Vec<AuditRecord>, RepoError> {
        run!(self, audit::trail(resource_type, resource_id))
    }

    /// The number of rows in `table` (one of the schema's tables); for tests.
    #[doc(hidden)]
    pub async fn count_rows(&self, table: &str) -> Result<i64, RepoError> {
        run!(self, health::count_rows(table))
    }

    /// Up to `limit` events of the transactional outbox, delivered or not, oldest first
    /// (id ascending), after the event `after`; for tests and the notification worker.
    #[doc(hidden)]
    pub async fn outbox_events(
        &self,
        after: Option<Uuid>,
        limit: i64,
    ) -> Result<Vec<OutboxEvent>, RepoError> {
        run!(self, outbox::list(after, limit))
    }

    /// The query plan of [`RequestRepository::list`] for `filter` and `page`, one line per
    /// row; for tests. PostgreSQL: `EXPLAIN` with sequential scans and sorts disabled
    /// (`SET LOCAL enable_seqscan = off`, `enable_sort = off`), so a `Seq Scan` in the plan
    /// means that no index can serve the query and a `Sort` that no index yields its order,
    /// whatever the table's statistics. SQLite: the `detail` column of `EXPLAIN QUERY PLAN`.
    #[doc(hidden)]
    pub async fn explain_request_list(
        &self,
        filter: RequestFilter,
        page: PageRequest,
    ) -> Result<Vec<String>, RepoError> {
        let result: Result<_, Failure> = match self.pools() {
            Pools::Postgres { pool, .. } => {
                async {
                    let mut conn = pool.get().await?;
                    crate::pg::explain_request_list(&mut conn, &filter, &page).await
                }
                .await
            }
            Pools::Sqlite { pool, .. } => {
                async {
                    let mut conn = pool.get().await?;
                    crate::sqlite::explain_request_list(&mut conn, &filter, &page).await
                }
                .await
            }
        };
        result.map_err(RepoError::from)
    }
}
