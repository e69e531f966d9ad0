//! The API clients' port.

use crate::{RepoError, WriteMeta};
use async_trait::async_trait;
use consular_domain::{ApiClient, ClientId, MissionId, Page, PageRequest, PrincipalId};
use time::OffsetDateTime;

/// Which clients a listing may show.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientFilter {
    /// Only clients bound to this mission (a mission admin's view).
    pub mission: Option<MissionId>,
    /// Only clients acting for this principal id (who an id already is, when a new
    /// client names it).
    pub principal: Option<PrincipalId>,
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
