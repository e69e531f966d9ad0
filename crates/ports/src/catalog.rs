//! The service catalog's port.

use crate::{RepoError, WriteMeta};
use async_trait::async_trait;
use consular_domain::{Page, PageRequest, ServiceType, ServiceTypeId};

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
