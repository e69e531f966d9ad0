//! The service catalog: read by every caller, changed by global admins (the catalog is
//! shared by all missions). Inactive types are shown only to admins who ask for them.

use crate::adapters::Adapters;
use crate::error::{OrNotFound, ServiceError};
use crate::idempotency::{self, Created, IdempotencyRequest};
use consular_domain::policy::{Listing, catalog as policy};
use consular_domain::{
    AuditAction, AuditRecord, NewServiceType, Page, PageRequest, Principal, ServiceType, ServiceTypeChanges,
    ServiceTypeId,
};
use consular_ports::{
    Clock, IdempotencyRepository, RepoError, ServiceTypeFilter, ServiceTypeRepository, WriteMeta,
};
use std::sync::Arc;

pub const RESOURCE: &str = "service_type";

/// The ports the catalog use cases need.
#[derive(Clone)]
pub struct CatalogPorts {
    pub service_types: Arc<dyn ServiceTypeRepository>,
    pub idempotency: Arc<dyn IdempotencyRepository>,
    pub clock: Arc<dyn Clock>,
}

impl<D: ServiceTypeRepository + IdempotencyRepository + 'static> From<&Adapters<D>> for CatalogPorts {
    fn from(adapters: &Adapters<D>) -> Self {
        let db = &adapters.database;
        CatalogPorts { service_types: db.clone(), idempotency: db.clone(), clock: adapters.clock.clone() }
    }
}

#[derive(Clone)]
pub struct CatalogService {
    ports: CatalogPorts,
}

impl CatalogService {
    pub fn new(ports: CatalogPorts) -> Self {
        CatalogService { ports }
    }

    /// Active types by default; `active = Some(false)` lists the inactive ones, for admins
    /// only (anyone else gets an empty page).
    pub async fn list(
        &self,
        actor: &Principal,
        active: Option<bool>,
        page: PageRequest,
    ) -> Result<Page<ServiceType>, ServiceError> {
        let wanted = active.unwrap_or(true);
        if policy::list(actor, wanted) == Listing::Empty {
            return Ok(Page::empty());
        }
        Ok(self.ports.service_types.list(ServiceTypeFilter { active: Some(wanted) }, page).await?)
    }

    /// An active type, or any type for an admin.
    pub async fn get(&self, actor: &Principal, id: ServiceTypeId) -> Result<ServiceType, ServiceError> {
        let service = self.ports.service_types.get(id).await.or_not_found()?;
        policy::read(actor, service.active)?;
        Ok(service)
    }

    pub async fn create(
        &self,
        actor: &Principal,
        input: NewServiceType,
        idempotency_key: Option<&IdempotencyRequest>,
    ) -> Result<Created<ServiceType>, ServiceError> {
        policy::manage(actor)?;
        let now = self.ports.clock.now();
        if let Some(replayed) =
            idempotency::replay(&*self.ports.idempotency, actor, idempotency_key, now).await?
        {
            return Ok(replayed);
        }
        input.validate()?;
        let service = input.into_service_type(ServiceTypeId::new(), now);
        let fields = [
            "code",
            "name",
            "description",
            "fee",
            "sla_days",
            "retention_days",
            "required_documents",
            "stages",
            "active",
        ];
        let meta = WriteMeta {
            events: Vec::new(),
            audit: vec![AuditRecord::new(
                Some(actor),
                now,
                AuditAction::Created,
                RESOURCE,
                service.id.as_uuid(),
                fields.map(str::to_owned).to_vec(),
            )],
            idempotency: idempotency::record(actor, idempotency_key, service.id.as_uuid(), &service, now)?,
        };
        self.ports.service_types.insert(&service, &meta).await.map_err(|e| match e {
            RepoError::Duplicate { .. } => ServiceError::conflict(
                "service_code_taken",
                format!("service code `{}` is taken", service.code),
            ),
            other => other.into(),
        })?;
        Ok(Created::fresh(service))
    }

    /// Changes a type if it is still at one of `expected_versions`. Requests already
    /// submitted keep the stages they were submitted under.
    pub async fn update(
        &self,
        actor: &Principal,
        id: ServiceTypeId,
        changes: ServiceTypeChanges,
        expected_versions: Option<&[i64]>,
    ) -> Result<ServiceType, ServiceError> {
        policy::manage(actor)?;
        changes.validate()?;
        let mut service = self.ports.service_types.get(id).await.or_not_found()?;
        let stored_version = service.version;
        crate::concurrency::require_version(expected_versions, stored_version)?;
        let now = self.ports.clock.now();
        let changed = service.apply(changes, now);
        if changed.is_empty() {
            return Ok(service);
        }
        let action = if changed == ["active"] { AuditAction::StatusChanged } else { AuditAction::Updated };
        let meta = WriteMeta {
            events: Vec::new(),
            audit: vec![AuditRecord::new(Some(actor), now, action, RESOURCE, id.as_uuid(), changed)],
            idempotency: None,
        };
        self.ports.service_types.update(&service, stored_version, &meta).await?;
        Ok(service)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::admin_with as principal;
    use consular_domain::{MissionId, Money, Stage};
    use consular_ports::{MockIdempotencyRepository, MockServiceTypeRepository, SystemClock};

    fn renewal() -> NewServiceType {
        NewServiceType {
            code: "passport_renewal".into(),
            name: "Passport renewal".into(),
            fee: Money { amount_minor: 8600, currency: "EUR".into() },
            sla_days: 21,
            required_documents: vec!["passport_photo".into()],
            stages: vec![Stage { name: "Check".into(), description: String::new() }],
            ..consular_domain::fixtures::new_service_type()
        }
    }

    fn service(repo: MockServiceTypeRepository) -> CatalogService {
        CatalogService::new(CatalogPorts {
            service_types: Arc::new(repo),
            idempotency: Arc::new(MockIdempotencyRepository::new()),
            clock: Arc::new(SystemClock),
        })
    }

    #[tokio::test]
    async fn only_global_admins_change_the_catalog() {
        for (scopes, mission) in [("admin", Some(MissionId::new())), ("staff", None), ("citizen", None)] {
            let result = service(MockServiceTypeRepository::new())
                .create(&principal(scopes, mission), renewal(), None)
                .await;
            assert!(
                matches!(result, Err(ServiceError::Forbidden(_) | ServiceError::InsufficientScope { .. })),
                "{scopes}"
            );
        }
        let mut repo = MockServiceTypeRepository::new();
        repo.expect_insert().times(1).returning(|_, _| Ok(()));
        assert!(service(repo).create(&principal("admin", None), renewal(), None).await.is_ok());
    }

    #[tokio::test]
    async fn inactive_types_are_listed_only_for_admins_who_ask() {
        let mut repo = MockServiceTypeRepository::new();
        repo.expect_list()
            .withf(|filter, _| filter.active == Some(false))
            .times(1)
            .returning(|_, _| Ok(Page { items: vec![], next_after: None }));
        repo.expect_list()
            .withf(|filter, _| filter.active == Some(true))
            .times(1)
            .returning(|_, _| Ok(Page { items: vec![], next_after: None }));
        let svc = service(repo);
        svc.list(&principal("admin", None), Some(false), PageRequest::default()).await.unwrap();
        svc.list(&principal("citizen", None), None, PageRequest::default()).await.unwrap();
        let hidden = svc.list(&principal("staff", None), Some(false), PageRequest::default()).await.unwrap();
        assert!(hidden.items.is_empty());
    }

    #[tokio::test]
    async fn an_inactive_type_is_not_found_for_non_admins() {
        let mut stored = renewal().into_service_type(ServiceTypeId::new(), time::OffsetDateTime::UNIX_EPOCH);
        stored.active = false;
        let id = stored.id;
        let mut repo = MockServiceTypeRepository::new();
        repo.expect_get().returning(move |_| Ok(Some(stored.clone())));
        let svc = service(repo);
        assert!(matches!(svc.get(&principal("citizen", None), id).await, Err(ServiceError::NotFound)));
        assert!(svc.get(&principal("admin", None), id).await.is_ok());
    }

    #[tokio::test]
    async fn toggling_active_is_audited_as_a_status_change() {
        let stored = renewal().into_service_type(ServiceTypeId::new(), time::OffsetDateTime::UNIX_EPOCH);
        let id = stored.id;
        let mut repo = MockServiceTypeRepository::new();
        repo.expect_get().returning(move |_| Ok(Some(stored.clone())));
        repo.expect_update()
            .withf(|s, expected, meta| {
                !s.active && *expected == 1 && meta.audit[0].action == "status_changed"
            })
            .times(1)
            .returning(|_, _, _| Ok(()));
        let changes = ServiceTypeChanges { active: Some(false), ..Default::default() };
        let updated = service(repo).update(&principal("admin", None), id, changes, Some(&[1])).await.unwrap();
        assert_eq!(updated.version, 2);
    }
}
