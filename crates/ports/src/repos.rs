use crate::{IdempotencyRecord, RepoError, WriteMeta};
use async_trait::async_trait;
use consular_domain::{ApiClient, ClientId, Mission, MissionId, Page, PageRequest};
use time::OffsetDateTime;

/// Missions. Every write stores its [`WriteMeta`] in the same transaction; a failed write
/// stores nothing.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait MissionRepository: Send + Sync {
    /// Inserts a new mission. A code already taken is `Duplicate { constraint: "missions_code" }`.
    async fn insert(&self, mission: &Mission, meta: &WriteMeta) -> Result<(), RepoError>;
    /// Replaces the stored mission if its version is still `expected_version`
    /// (`VersionConflict` otherwise, `NotFound` if it is gone).
    async fn update(
        &self,
        mission: &Mission,
        expected_version: i64,
        meta: &WriteMeta,
    ) -> Result<(), RepoError>;
    async fn get(&self, id: MissionId) -> Result<Option<Mission>, RepoError>;
    /// Missions in id order (oldest first), after `page.after`.
    async fn list(&self, page: PageRequest) -> Result<Page<Mission>, RepoError>;
}

/// Which clients a listing may show.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientFilter {
    /// Only clients bound to this mission (a mission admin's view).
    pub mission: Option<MissionId>,
}

/// API clients and their secrets (as hashes).
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait ClientRepository: Send + Sync {
    async fn insert(&self, client: &ApiClient, meta: &WriteMeta) -> Result<(), RepoError>;
    /// Inserts `client` only if no client exists yet and no earlier bootstrap happened;
    /// `Ok(false)` when another node or an earlier start got there first.
    async fn insert_first(&self, client: &ApiClient, meta: &WriteMeta) -> Result<bool, RepoError>;
    /// Replaces the stored client if its version is still `expected_version`.
    /// When the new status is disabled, the same transaction also revokes every
    /// refresh token of the client and records a client revocation effective at `now`.
    async fn update(
        &self,
        client: &ApiClient,
        expected_version: i64,
        now: OffsetDateTime,
        meta: &WriteMeta,
    ) -> Result<(), RepoError>;
    async fn get(&self, id: ClientId) -> Result<Option<ApiClient>, RepoError>;
    /// Clients in id order (oldest first), after `page.after`.
    async fn list(&self, filter: ClientFilter, page: PageRequest) -> Result<Page<ApiClient>, RepoError>;
}

/// Stored responses of requests that carried an `Idempotency-Key`. They are written by
/// the repositories above, inside the transaction of the change ([`WriteMeta`]).
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait IdempotencyRepository: Send + Sync {
    /// The unexpired record for `key` sent by `owner`, if any.
    async fn find(
        &self,
        owner: ClientId,
        key: &str,
        now: OffsetDateTime,
    ) -> Result<Option<IdempotencyRecord>, RepoError>;
}
