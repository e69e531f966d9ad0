//! Submitting a request (docs/requests.md "Submission").

use super::service::{RESOURCE, RequestService, RequestView};
use crate::ServiceError;
use crate::idempotency::{self, Created, IdempotencyRequest};
use consular_domain::policy::Owned;
use consular_domain::policy::citizens::citizen_of;
use consular_domain::policy::requests as policy;
use consular_domain::{AuditAction, AuditRecord, NewRequest, Principal, RegistrationStatus, ServiceRequest};
use consular_ports::{OutboxEvent, WriteMeta};

impl RequestService {
    /// Submits a request: a citizen for themself, staff or admins of the mission for one
    /// of its citizens. The type must be active; the request starts `submitted` at the
    /// first stage with a snapshot of the type's stages, its SLA deadline, and the
    /// least-loaded active staff member of the mission assigned to that type (if any).
    /// The view is the request as submitted, a replay's too (the answer a retry repeats).
    pub async fn submit(
        &self,
        actor: &Principal,
        input: NewRequest,
        idempotency_key: Option<&IdempotencyRequest>,
    ) -> Result<Created<RequestView>, ServiceError> {
        let now = self.ports.clock.now();
        let citizen_id = citizen_of(actor, input.citizen_id)?;
        policy::submit(actor)?;
        if let Some(replayed) =
            idempotency::replay(&*self.ports.idempotency, actor, idempotency_key, now).await?
        {
            return Ok(replayed.map(RequestView::as_submitted));
        }
        input.validate()?;
        // A citizen the caller may not submit for is unknown to them, like one that does
        // not exist: a field error, not a 404 of the request's own path.
        let citizen = match self.ports.citizens.get(citizen_id).await? {
            Some(c)
                if policy::submit_for(actor, &Owned::new_for(&c, Some(input.service_type_id))).is_ok() =>
            {
                c
            }
            _ => return Err(ServiceError::unknown("/citizen_id", "no such citizen in your mission")),
        };
        self.refuse_minor_alone(actor, now).await?;
        // An erased citizen is deregistered too (docs/data-protection.md "Retention and erasure").
        if matches!(
            citizen.registration_status,
            RegistrationStatus::Deregistered | RegistrationStatus::Erased
        ) {
            return Err(ServiceError::conflict(
                "citizen_deregistered",
                "the citizen is deregistered from the mission",
            ));
        }
        let service_type = self
            .ports
            .service_types
            .get(input.service_type_id)
            .await?
            .ok_or_else(|| ServiceError::unknown("/service_type_id", "no such service type"))?;
        if !service_type.active {
            return Err(ServiceError::conflict("service_inactive", "the service type takes no new requests"));
        }
        let assignee = self.ports.requests.least_loaded_staff(citizen.mission_id, service_type.id).await?;
        let (request, first, events) =
            ServiceRequest::submit(&input, &citizen, &service_type, assignee, actor, now);
        let meta = WriteMeta {
            audit: vec![AuditRecord::new(
                Some(actor),
                now,
                AuditAction::Created,
                RESOURCE,
                request.id.as_uuid(),
                vec!["service_type_id".into(), "citizen_id".into(), "assignee_id".into()],
            )],
            events: events.iter().map(|e| OutboxEvent::new(e, now)).collect::<Result<_, _>>()?,
            idempotency: idempotency::record(actor, idempotency_key, request.id.as_uuid(), &request, now)?,
        };
        self.ports.requests.insert(&request, &first, &meta).await?;
        Ok(Created::fresh(RequestView::as_submitted(request)))
    }
}
