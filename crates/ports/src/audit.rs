//! The audit log's port.

use crate::{Consistency, RepoError};
use async_trait::async_trait;
use consular_domain::{AuditRecord, Page, PageRequest};
use uuid::Uuid;

/// Which audit entries a listing shows; every filter present must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditFilter {
    pub resource_type: Option<String>,
    pub resource_id: Option<Uuid>,
    /// The principal (subject id) who acted.
    pub actor_id: Option<Uuid>,
}

/// The audit log (written through [`WriteMeta`](crate::WriteMeta) by every other repository).
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait AuditRepository: Send + Sync {
    /// Entries newest first (id descending), before `page.after`. Tolerant: a read
    /// replica may serve it ([`Consistency`]).
    async fn list(
        &self,
        filter: AuditFilter,
        page: PageRequest,
        consistency: Consistency,
    ) -> Result<Page<AuditRecord>, RepoError>;
    /// Records entries about something that changed nothing stored (a download URL
    /// issued), in one transaction: all of them or none.
    async fn append(&self, records: &[AuditRecord]) -> Result<(), RepoError>;
}
