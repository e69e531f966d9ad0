//! Staff members: created by admins of their mission (optionally with an API client in
//! the same call), read by themselves and admins, assigned to service types by admins.

use crate::adapters::Adapters;
use crate::clients::{self, IssuedClient, WithClient};
use crate::error::{OrNotFound, ServiceError};
use crate::idempotency::{self, Created, IdempotencyRequest};
use consular_domain::policy::Listing;
use consular_domain::policy::staff as policy;
use consular_domain::{
    Assignments, AuditAction, AuditRecord, NewStaffMember, Page, PageRequest, Principal, PrincipalKind,
    Scope, ScopeSet, ServiceTypeId, StaffId, StaffMember, Subject, ValidationErrors,
};
use consular_ports::{
    Clock, IdempotencyRepository, MissionRepository, ServiceTypeRepository, StaffFilter, StaffRepository,
    WriteMeta,
};
use std::sync::Arc;

pub const RESOURCE: &str = "staff_member";

/// The ports the staff use cases need.
#[derive(Clone)]
pub struct StaffPorts {
    pub staff: Arc<dyn StaffRepository>,
    pub service_types: Arc<dyn ServiceTypeRepository>,
    pub missions: Arc<dyn MissionRepository>,
    pub idempotency: Arc<dyn IdempotencyRepository>,
    pub clock: Arc<dyn Clock>,
}

impl<D> From<&Adapters<D>> for StaffPorts
where
    D: StaffRepository + ServiceTypeRepository + MissionRepository + IdempotencyRepository + 'static,
{
    fn from(adapters: &Adapters<D>) -> Self {
        let db = &adapters.database;
        StaffPorts {
            staff: db.clone(),
            service_types: db.clone(),
            missions: db.clone(),
            idempotency: db.clone(),
            clock: adapters.clock.clone(),
        }
    }
}

#[derive(Clone)]
pub struct StaffService {
    ports: StaffPorts,
}

impl StaffService {
    pub fn new(ports: StaffPorts) -> Self {
        StaffService { ports }
    }

    /// Every id must name an active service type; the failing ones are listed.
    async fn validate_service_types(&self, field: &str, ids: &[ServiceTypeId]) -> Result<(), ServiceError> {
        let mut errors = ValidationErrors::new();
        self.collect_service_type_errors(field, ids, &mut errors).await?;
        Ok(errors.into_result()?)
    }

    async fn collect_service_type_errors(
        &self,
        field: &str,
        ids: &[ServiceTypeId],
        errors: &mut ValidationErrors,
    ) -> Result<(), ServiceError> {
        if ids.is_empty() {
            return Ok(());
        }
        let found = self.ports.service_types.get_many(ids).await?;
        for (index, id) in ids.iter().enumerate() {
            match found.iter().find(|s| s.id == *id) {
                None => errors.unknown(&format!("/{field}/{index}"), "no such service type"),
                Some(service) if !service.active => {
                    errors.add(&format!("/{field}/{index}"), "inactive", "the service type is inactive")
                }
                Some(_) => {}
            }
        }
        errors.0.sort_by(|a, b| a.pointer.cmp(&b.pointer));
        Ok(())
    }

    pub async fn create(
        &self,
        actor: &Principal,
        input: NewStaffMember,
        issue_client: bool,
        idempotency_key: Option<&IdempotencyRequest>,
    ) -> Result<Created<WithClient<StaffMember>>, ServiceError> {
        policy::create(actor, input.mission_id)?;
        let now = self.ports.clock.now();
        if let Some(replayed) =
            idempotency::replay(&*self.ports.idempotency, actor, idempotency_key, now).await?
        {
            return Ok(replayed);
        }
        let mut errors = ValidationErrors::new();
        errors.extend(input.validate());
        if self.ports.missions.get(input.mission_id).await?.is_none() {
            errors.unknown("/mission_id", "no such mission");
        }
        self.collect_service_type_errors("service_type_ids", &input.service_type_ids, &mut errors).await?;
        errors.into_result()?;
        let member = input.into_staff_member(StaffId::new(), now);
        let issued = if issue_client {
            let subject = Subject { kind: PrincipalKind::Staff, id: member.id.as_uuid().into() };
            Some(clients::issue(
                member.name.clone(),
                ScopeSet::only(Scope::Staff),
                subject,
                Some(member.mission_id),
                now,
            )?)
        } else {
            None
        };
        let fields = ["name", "email", "job_title", "mission_id", "service_type_ids"];
        let mut audit = vec![AuditRecord::new(
            Some(actor),
            now,
            AuditAction::Created,
            RESOURCE,
            member.id.as_uuid(),
            fields.map(str::to_owned).to_vec(),
        )];
        audit.extend(issued.as_ref().map(|c| clients::creation_audit(Some(actor), &c.client)));
        let registered = WithClient { value: member, client: issued.map(IssuedClient::from) };
        let meta = WriteMeta {
            events: Vec::new(),
            audit,
            idempotency: idempotency::record(
                actor,
                idempotency_key,
                registered.value.id.as_uuid(),
                &registered,
                now,
            )?,
        };
        let client = registered.client.as_ref().map(|c| c.client.clone());
        self.ports.staff.insert(&registered.value, client, &meta).await?;
        Ok(Created::fresh(registered))
    }

    /// Admins only; a mission admin sees only their mission's staff.
    pub async fn list(
        &self,
        actor: &Principal,
        mut filter: StaffFilter,
        page: PageRequest,
    ) -> Result<Page<StaffMember>, ServiceError> {
        match policy::list(actor, filter.mission_id)? {
            Listing::Within(mission) => filter.mission_id = mission,
            Listing::Empty => return Ok(Page::empty()),
        }
        Ok(self.ports.staff.list(filter, page).await?)
    }

    pub async fn get(&self, actor: &Principal, id: StaffId) -> Result<StaffMember, ServiceError> {
        let member = self.ports.staff.get(id).await.or_not_found()?;
        policy::read(actor, member.id, member.mission_id)?;
        Ok(member)
    }

    /// Replaces the member's service assignments if the member is still at one of
    /// `expected_versions`. Unknown or inactive service types are 422.
    pub async fn assign(
        &self,
        actor: &Principal,
        id: StaffId,
        assignments: Assignments,
        expected_versions: Option<&[i64]>,
    ) -> Result<StaffMember, ServiceError> {
        policy::manage(actor)?;
        let mut member = self.ports.staff.get(id).await.or_not_found()?;
        policy::assign(actor, member.id, member.mission_id)?;
        assignments.validate()?;
        self.validate_service_types("service_type_ids", &assignments.service_type_ids).await?;
        let stored_version = member.version;
        crate::concurrency::require_version(expected_versions, stored_version)?;
        let now = self.ports.clock.now();
        if !member.assign(assignments, now) {
            return Ok(member);
        }
        let meta = WriteMeta {
            events: Vec::new(),
            audit: vec![AuditRecord::new(
                Some(actor),
                now,
                AuditAction::Reassigned,
                RESOURCE,
                id.as_uuid(),
                vec!["service_type_ids".into()],
            )],
            idempotency: None,
        };
        self.ports.staff.update(&member, stored_version, &meta).await?;
        Ok(member)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{any_mission, principal, service_type};
    use consular_domain::{MissionId, ServiceType};
    use consular_ports::{
        MockIdempotencyRepository, MockServiceTypeRepository, MockStaffRepository, SystemClock,
    };
    use time::OffsetDateTime;

    fn member(mission: MissionId) -> StaffMember {
        consular_domain::fixtures::staff_member(mission, OffsetDateTime::UNIX_EPOCH)
    }

    fn service(staff: MockStaffRepository, types: Vec<ServiceType>) -> StaffService {
        let mut service_types = MockServiceTypeRepository::new();
        service_types
            .expect_get_many()
            .returning(move |ids| Ok(types.iter().filter(|t| ids.contains(&t.id)).cloned().collect()));
        let missions = any_mission();
        StaffService::new(StaffPorts {
            staff: Arc::new(staff),
            service_types: Arc::new(service_types),
            missions: Arc::new(missions),
            idempotency: Arc::new(MockIdempotencyRepository::new()),
            clock: Arc::new(SystemClock),
        })
    }

    #[tokio::test]
    async fn unknown_and_inactive_service_types_are_each_reported() {
        let mission = MissionId::new();
        let stored = member(mission);
        let id = stored.id;
        let active = service_type(true);
        let inactive = service_type(false);
        let mut staff = MockStaffRepository::new();
        staff.expect_get().returning(move |_| Ok(Some(stored.clone())));
        staff.expect_update().never();
        let svc = service(staff, vec![active.clone(), inactive.clone()]);
        let admin = principal(PrincipalKind::Admin, uuid::Uuid::now_v7(), "admin", Some(mission));
        let assignments =
            Assignments { service_type_ids: vec![active.id, inactive.id, ServiceTypeId::new()] };
        let result = svc.assign(&admin, id, assignments, Some(&[1])).await;
        let Err(ServiceError::Validation(errors)) = result else { panic!("{result:?}") };
        let pointers: Vec<&str> = errors.0.iter().map(|e| e.pointer.as_str()).collect();
        assert_eq!(pointers, ["/service_type_ids/1", "/service_type_ids/2"]);
    }

    #[tokio::test]
    async fn a_member_sees_themself_and_admins_of_other_missions_see_nothing() {
        let mission = MissionId::new();
        let stored = member(mission);
        let id = stored.id;
        let mut staff = MockStaffRepository::new();
        staff.expect_get().returning(move |_| Ok(Some(stored.clone())));
        let svc = service(staff, vec![]);
        let me = principal(PrincipalKind::Staff, id.as_uuid(), "staff", Some(mission));
        let colleague = principal(PrincipalKind::Staff, uuid::Uuid::now_v7(), "staff", Some(mission));
        let other_admin =
            principal(PrincipalKind::Admin, uuid::Uuid::now_v7(), "admin", Some(MissionId::new()));
        assert!(svc.get(&me, id).await.is_ok());
        assert!(matches!(svc.get(&colleague, id).await, Err(ServiceError::NotFound)));
        assert!(matches!(svc.get(&other_admin, id).await, Err(ServiceError::NotFound)));
        let result = svc.assign(&other_admin, id, Assignments { service_type_ids: vec![] }, None).await;
        assert!(matches!(result, Err(ServiceError::NotFound)));
    }

    #[tokio::test]
    async fn creating_a_member_with_a_client_writes_both_together() {
        let mission = MissionId::new();
        let active = service_type(true);
        let type_id = active.id;
        let mut staff = MockStaffRepository::new();
        staff
            .expect_insert()
            .withf(move |m, client, meta| {
                m.service_type_ids == [type_id]
                    && client.as_ref().is_some_and(|c| {
                        c.subject.id.as_uuid() == m.id.as_uuid() && c.scopes == ScopeSet::only(Scope::Staff)
                    })
                    && meta.audit.len() == 2
            })
            .times(1)
            .returning(|_, _, _| Ok(()));
        let svc = service(staff, vec![active]);
        let admin = principal(PrincipalKind::Admin, uuid::Uuid::now_v7(), "admin", None);
        let input = NewStaffMember {
            service_type_ids: vec![type_id],
            ..consular_domain::fixtures::new_staff_member(mission)
        };
        let created = svc.create(&admin, input, true, None).await.unwrap();
        assert_eq!(created.value.value.name, "Bob Lee");
        assert!(created.value.client.and_then(|c| c.secret).is_some());
    }
}
