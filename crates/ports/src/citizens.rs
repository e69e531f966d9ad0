//! The citizens' port.

use crate::{Consistency, RepoError, WriteMeta};
use async_trait::async_trait;
use consular_domain::{ApiClient, Citizen, CitizenId, MissionId, Page, PageRequest, RegistrationStatus};
use time::OffsetDateTime;

/// Which citizens a listing shows; every filter present must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CitizenFilter {
    pub mission_id: Option<MissionId>,
    pub registration_status: Option<RegistrationStatus>,
    pub nationality: Option<String>,
    /// Case-insensitive substring of given name, family name or email.
    pub q: Option<String>,
    /// `registered_at >= registered_from`.
    pub registered_from: Option<OffsetDateTime>,
    /// `registered_at < registered_to`.
    pub registered_to: Option<OffsetDateTime>,
}

/// Citizens and their registration.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait CitizenRepository: Send + Sync {
    /// Inserts a citizen, and the API client issued with it if any, in one transaction. A
    /// passport number already registered in the mission is
    /// `Duplicate { constraint: "citizens_passport" }`.
    async fn insert(
        &self,
        citizen: &Citizen,
        client: Option<ApiClient>,
        meta: &WriteMeta,
    ) -> Result<(), RepoError>;
    /// Replaces the stored citizen if its version is still `expected_version`.
    async fn update(
        &self,
        citizen: &Citizen,
        expected_version: i64,
        meta: &WriteMeta,
    ) -> Result<(), RepoError>;
    async fn get(&self, id: CitizenId) -> Result<Option<Citizen>, RepoError>;
    /// Citizens in id order (oldest first), after `page.after`. Tolerant: a read replica
    /// may serve it ([`Consistency`]).
    async fn list(
        &self,
        filter: CitizenFilter,
        page: PageRequest,
        consistency: Consistency,
    ) -> Result<Page<Citizen>, RepoError>;
}
