//! The staff members' port.

use crate::{RepoError, WriteMeta};
use async_trait::async_trait;
use consular_domain::{ApiClient, MissionId, Page, PageRequest, ServiceTypeId, StaffId, StaffMember};

/// Which staff members a listing shows; every filter present must match.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StaffFilter {
    pub mission_id: Option<MissionId>,
    /// Members assigned to this service type.
    pub service_type_id: Option<ServiceTypeId>,
    pub active: Option<bool>,
}

/// Staff members and their service assignments.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait StaffRepository: Send + Sync {
    /// Inserts a member with their assignments, and the API client issued with them if
    /// any, in one transaction.
    async fn insert(
        &self,
        member: &StaffMember,
        client: Option<ApiClient>,
        meta: &WriteMeta,
    ) -> Result<(), RepoError>;
    /// Replaces the stored member (assignments included) if its version is still
    /// `expected_version`.
    async fn update(
        &self,
        member: &StaffMember,
        expected_version: i64,
        meta: &WriteMeta,
    ) -> Result<(), RepoError>;
    async fn get(&self, id: StaffId) -> Result<Option<StaffMember>, RepoError>;
    /// Members in id order (oldest first), after `page.after`.
    async fn list(&self, filter: StaffFilter, page: PageRequest) -> Result<Page<StaffMember>, RepoError>;
}
