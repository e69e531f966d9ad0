//! The audit log, read by global admins.

use crate::ServiceError;
use consular_domain::policy::audit as policy;
use consular_domain::{AuditRecord, Page, PageRequest, Principal};
use consular_ports::{AuditFilter, AuditRepository};
use std::sync::Arc;

#[derive(Clone)]
pub struct AuditService {
    audit: Arc<dyn AuditRepository>,
}

impl AuditService {
    pub fn new(audit: Arc<dyn AuditRepository>) -> Self {
        AuditService { audit }
    }

    /// Newest first. The log spans every mission, so only global admins read it.
    pub async fn list(
        &self,
        actor: &Principal,
        filter: AuditFilter,
        page: PageRequest,
    ) -> Result<Page<AuditRecord>, ServiceError> {
        policy::read(actor)?;
        Ok(self.audit.list(filter, page).await?)
    }
}
