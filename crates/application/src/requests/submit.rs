//! Submitting a request (docs/requests.md "Submission").

use super::{RESOURCE, RequestService, event};
use crate::ServiceError;
use crate::idempotency::{self, Created, IdempotencyRequest};
use consular_domain::notification::EventKind;
use consular_domain::policy::requests as policy;
use consular_domain::{
    AuditAction, AuditRecord, CitizenId, Principal, PrincipalKind, RegistrationStatus, ServiceRequest,
    ValidationErrors,
};
use consular_ports::WriteMeta;
use serde_json::json;

use super::NewRequest;

/// The citizen a submission (or an upload) is for: a citizen acts for themself (naming
/// themself or nobody), staff and admins name the citizen.
pub(crate) fn citizen_of(actor: &Principal, asked: Option<CitizenId>) -> Result<CitizenId, ValidationErrors> {
    match (actor.subject.kind, asked) {
        (PrincipalKind::Citizen, None) => Ok(CitizenId(actor.subject.id.as_uuid())),
        (PrincipalKind::Citizen, Some(id)) if id.as_uuid() == actor.subject.id.as_uuid() => Ok(id),
        (PrincipalKind::Citizen, Some(_)) => {
            Err(ValidationErrors::single("citizen_id", "not_yourself", "a citizen acts for themself only"))
        }
        (_, None) => {
            Err(ValidationErrors::single("citizen_id", "required", "staff and admins name the citizen"))
        }
        (_, Some(id)) => Ok(id),
    }
}

impl RequestService {
    /// Submits a request: a citizen for themself, staff or admins of the mission for one
    /// of its citizens. The type must be active; the request starts `submitted` at the
    /// first stage with a snapshot of the type's stages, its SLA deadline, and the
    /// least-loaded active staff member of the mission assigned to that type (if any).
    pub async fn submit(
        &self,
        actor: &Principal,
        input: NewRequest,
        idempotency_key: Option<&IdempotencyRequest>,
    ) -> Result<Created<ServiceRequest>, ServiceError> {
        let now = self.ports.clock.now();
        let citizen_id = citizen_of(actor, input.citizen_id)?;
        policy::submit(actor)?;
        if let Some(replayed) =
            idempotency::replay(&*self.ports.idempotency, actor, idempotency_key, now).await?
        {
            return Ok(replayed);
        }
        // A citizen the caller may not submit for is unknown to them, like one that does
        // not exist: a field error, not a 404 of the request's own path.
        let citizen = match self.ports.citizens.get(citizen_id).await? {
            Some(c) if policy::submit_for(actor, c.id, c.mission_id).is_ok() => c,
            _ => {
                return Err(ValidationErrors::single(
                    "citizen_id",
                    "unknown",
                    "no such citizen in your mission",
                )
                .into());
            }
        };
        if citizen.registration_status == RegistrationStatus::Deregistered {
            return Err(ServiceError::conflict(
                "citizen_deregistered",
                "the citizen is deregistered from the mission",
            ));
        }
        let service_type = self.ports.service_types.get(input.service_type_id).await?.ok_or_else(|| {
            ServiceError::from(ValidationErrors::single("service_type_id", "unknown", "no such service type"))
        })?;
        if !service_type.active {
            return Err(ServiceError::conflict("service_inactive", "the service type takes no new requests"));
        }
        let assignee = self.ports.requests.least_loaded_staff(citizen.mission_id, service_type.id).await?;
        let (request, first) = ServiceRequest::submit(&citizen, &service_type, assignee, actor.subject, now);
        let mut events = vec![event(
            EventKind::RequestSubmitted,
            &request,
            json!({ "citizen_id": request.citizen_id, "service_type_id": service_type.id, "mission_id": request.mission_id }),
            now,
        )];
        if let Some(staff) = assignee {
            events.push(event(
                EventKind::RequestAssigned,
                &request,
                json!({ "assignee_id": staff, "previous_assignee_id": null }),
                now,
            ));
        }
        let meta = WriteMeta {
            audit: vec![AuditRecord::new(
                Some(actor),
                now,
                AuditAction::Created,
                RESOURCE,
                request.id.as_uuid(),
                vec!["service_type_id".into(), "citizen_id".into(), "assignee_id".into()],
            )],
            events,
            idempotency: idempotency::record(actor, idempotency_key, request.id.as_uuid(), &request, now)?,
        };
        self.ports.requests.insert(&request, &first, &meta).await?;
        Ok(Created::fresh(request))
    }
}
