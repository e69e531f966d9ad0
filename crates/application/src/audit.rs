//! The audit log, read by global admins.

use crate::ServiceError;
use crate::adapters::Adapters;
use crate::reads::own_writes;
use consular_domain::policy::audit as policy;
use consular_domain::{AuditRecord, Page, PageRequest, Principal};
use consular_ports::{AuditFilter, AuditRepository};
use std::sync::Arc;

/// The ports the audit use case needs.
#[derive(Clone)]
pub struct AuditPorts {
    pub audit: Arc<dyn AuditRepository>,
}

impl<D: AuditRepository + 'static> From<&Adapters<D>> for AuditPorts {
    fn from(adapters: &Adapters<D>) -> Self {
        AuditPorts { audit: adapters.database.clone() }
    }
}

#[derive(Clone)]
pub struct AuditService {
    ports: AuditPorts,
}

impl AuditService {
    pub fn new(ports: AuditPorts) -> Self {
        AuditService { ports }
    }

    /// Newest first. The log spans every mission, so only global admins read it.
    pub async fn list(
        &self,
        actor: &Principal,
        filter: AuditFilter,
        page: PageRequest,
    ) -> Result<Page<AuditRecord>, ServiceError> {
        policy::read(actor)?;
        Ok(self.ports.audit.list(filter, page, own_writes(actor)).await?)
    }
}
