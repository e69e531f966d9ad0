//! The workflow: status changes, stage advances, reassignments and cancellation
//! (docs/requests.md "Status machine"). The domain judges and applies every change;
//! this module authorises it, checks the version and writes it with its audit entry
//! and events.

use super::service::{RESOURCE, RequestService, RequestView};
use crate::ServiceError;
use crate::concurrency::{require_version, retry_unconditional};
use consular_domain::document::missing_for_approval;
use consular_domain::policy::Owned;
use consular_domain::policy::requests as policy;
use consular_domain::{
    Action, AuditAction, AuditRecord, Principal, Reason, RequestChange, RequestId, RequestStatus, Role,
    ServiceRequest, StaffId,
};
use consular_ports::{OutboxEvent, WriteMeta};
use time::OffsetDateTime;

/// A change asked through `PATCH /requests/{id}/status`, as sent: the use case parses it
/// into a domain `RequestChange` (the reason rule included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusChange {
    pub action: Option<Action>,
    pub reason: Option<String>,
    /// `Some(None)` unassigns; `Some(Some(id))` reassigns.
    pub assignee: Option<Option<StaffId>>,
}

impl RequestService {
    /// Applies a status change, a stage advance and/or a reassignment (staff and admins
    /// of the mission), if the request is still at one of `expected_versions`. Without a
    /// precondition (`None`: no `If-Match`, or `*`), a change that raced another one is
    /// judged again on the new state rather than refused with 412.
    pub async fn change(
        &self,
        actor: &Principal,
        id: RequestId,
        change: StatusChange,
        expected_versions: Option<&[i64]>,
    ) -> Result<RequestView, ServiceError> {
        let change = RequestChange::parse(change.action, change.reason, change.assignee)?;
        retry_unconditional(expected_versions, || {
            self.change_once(actor, id, change.clone(), expected_versions)
        })
        .await
    }

    async fn change_once(
        &self,
        actor: &Principal,
        id: RequestId,
        change: RequestChange,
        expected_versions: Option<&[i64]>,
    ) -> Result<RequestView, ServiceError> {
        let mut request = self.workable(actor, id).await?;
        change.validate()?;
        if let Some(Some(staff_id)) = change.assignee {
            match self.ports.staff.get(staff_id).await? {
                Some(member) if member.active && member.mission_id == request.mission_id => {}
                _ => {
                    return Err(ServiceError::unknown(
                        "/assignee_id",
                        "no active staff member of the mission",
                    ));
                }
            }
        }
        let stored_version = request.version;
        require_version(expected_versions, stored_version)?;
        let now = self.ports.clock.now();
        self.write(actor, &mut request, Role::Staff, change, now, stored_version).await?;
        Ok(RequestView::at(request, now))
    }

    /// Cancels a request: the citizen who owns it before a decision, staff and admins of
    /// the mission any time before it is final.
    pub async fn cancel(
        &self,
        actor: &Principal,
        id: RequestId,
        reason: Option<String>,
        expected_versions: Option<&[i64]>,
    ) -> Result<RequestView, ServiceError> {
        let reason = Reason::optional(reason)?;
        retry_unconditional(expected_versions, || {
            self.cancel_once(actor, id, reason.clone(), expected_versions)
        })
        .await
    }

    async fn cancel_once(
        &self,
        actor: &Principal,
        id: RequestId,
        reason: Option<Reason>,
        expected_versions: Option<&[i64]>,
    ) -> Result<RequestView, ServiceError> {
        let mut request = self.fetch(id).await?;
        let role = policy::cancel(actor, &Owned::from(&request))?;
        let stored_version = request.version;
        require_version(expected_versions, stored_version)?;
        let now = self.ports.clock.now();
        self.refuse_minor_alone(actor, now).await?;
        self.write(actor, &mut request, role, RequestChange::cancellation(reason), now, stored_version)
            .await?;
        Ok(RequestView::at(request, now))
    }

    /// Applies `change` through the domain and writes it with its audit entry and events;
    /// a change that changes nothing writes nothing.
    async fn write(
        &self,
        actor: &Principal,
        request: &mut ServiceRequest,
        role: Role,
        change: RequestChange,
        now: OffsetDateTime,
        stored_version: i64,
    ) -> Result<(), ServiceError> {
        let before = request.status;
        let action = change.action;
        let changed = request.change(role, change, Some(actor.into()), now).map_err(|e| {
            ServiceError::IllegalTransition {
                detail: e.to_string(),
                allowed: e.allowed.iter().map(ToString::to_string).collect(),
            }
        })?;
        if action == Some(Action::To(RequestStatus::Approved)) && before != RequestStatus::Approved {
            // The approval gate (docs/documents.md), once the state machine allows the
            // change: every required kind has a verified document.
            let checklist = self.checklist(request).await?;
            let missing = missing_for_approval(&checklist);
            if !missing.is_empty() {
                return Err(ServiceError::RequiredDocumentsMissing(missing));
            }
        }
        let mut fields = Vec::new();
        if let (Some(action), Some(_)) = (action, &changed.entry) {
            fields.push(match action {
                Action::To(_) => "status".to_owned(),
                Action::AdvanceStage => "current_stage".to_owned(),
            });
        }
        if changed.previous_assignee.is_some() {
            fields.push("assignee_id".to_owned());
        }
        if fields.is_empty() {
            return Ok(());
        }
        let audit_action =
            if changed.entry.is_some() { AuditAction::StatusChanged } else { AuditAction::Reassigned };
        let meta = WriteMeta {
            audit: vec![AuditRecord::new(
                Some(actor),
                now,
                audit_action,
                RESOURCE,
                request.id.as_uuid(),
                fields,
            )],
            events: changed.events.iter().map(|e| OutboxEvent::new(e, now)).collect::<Result<_, _>>()?,
            idempotency: None,
        };
        self.ports.requests.update(request, stored_version, changed.entry, &meta).await?;
        Ok(())
    }
}
