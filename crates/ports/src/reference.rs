use crate::{RepoError, WriteMeta};
use async_trait::async_trait;
use consular_domain::{
    ApiClient, AuditRecord, Citizen, CitizenId, MissionId, Page, PageRequest, RegistrationStatus,
    ServiceType, ServiceTypeId, StaffId, StaffMember,
};
use time::OffsetDateTime;
use uuid::Uuid;

/// Which service types a listing shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServiceTypeFilter {
    /// `Some(true)`: active only; `Some(false)`: inactive only; `None`: all.
    pub active: Option<bool>,
}

/// The service catalog.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait ServiceTypeRepository: Send + Sync {
    /// A code already taken is `Duplicate { constraint: "service_types_code" }`.
    async fn insert(&self, service_type: &ServiceType, meta: &WriteMeta) -> Result<(), RepoError>;
    /// Replaces the stored type if its version is still `expected_version`.
    async fn update(
        &self,
        service_type: &ServiceType,
        expected_version: i64,
        meta: &WriteMeta,
    ) -> Result<(), RepoError>;
    async fn get(&self, id: ServiceTypeId) -> Result<Option<ServiceType>, RepoError>;
    /// The stored types among `ids` (missing ids are simply absent), in any order.
    async fn get_many(&self, ids: &[ServiceTypeId]) -> Result<Vec<ServiceType>, RepoError>;
    /// Types in id order (oldest first), after `page.after`.
    async fn list(
        &self,
        filter: ServiceTypeFilter,
        page: PageRequest,
    ) -> Result<Page<ServiceType>, RepoError>;
}

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
    /// Citizens in id order (oldest first), after `page.after`.
    async fn list(&self, filter: CitizenFilter, page: PageRequest) -> Result<Page<Citizen>, RepoError>;
}

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

/// Which audit entries a listing shows; every filter present must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditFilter {
    pub resource_type: Option<String>,
    pub resource_id: Option<Uuid>,
    /// The principal (subject id) who acted.
    pub actor_id: Option<Uuid>,
}

/// The audit log (written through [`WriteMeta`] by every other repository).
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait AuditRepository: Send + Sync {
    /// Entries newest first (id descending), before `page.after`.
    async fn list(&self, filter: AuditFilter, page: PageRequest) -> Result<Page<AuditRecord>, RepoError>;
}
