//! Service requests: submission, the workflow, internal notes, the message thread and
//! staff queues. A citizen sees their own requests; staff and admins those of their
//! mission (global admins all). Internal notes never reach a citizen.

use crate::ServiceError;
use crate::access::{is_self, is_staff_of, require_scope};
use crate::idempotency::{self, IdempotencyRequest, Written};
use consular_domain::{
    Action, AuditAction, AuditRecord, CitizenId, HistoryEntry, MissionId, Page, PageRequest, Principal,
    PrincipalKind, RegistrationStatus, RequestId, RequestStatus, Role, Scope, ServiceRequest, ServiceTypeId,
    StaffId, ValidationErrors,
};
use consular_ports::{
    CitizenRepository, Clock, IdempotencyRepository, Message, Note, OutboxEvent, QueueGroup, RequestFilter,
    RequestRepository, ServiceTypeRepository, StaffRepository, StoredResponse, WriteMeta,
};
use serde_json::json;
use std::sync::Arc;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

pub const RESOURCE: &str = "service_request";
/// The longest note or message body, in characters.
pub const MAX_TEXT: usize = 4000;

/// What a submission asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRequest {
    /// Required from staff and admins; a citizen submits for themself.
    pub citizen_id: Option<CitizenId>,
    pub service_type_id: ServiceTypeId,
}

/// A change asked through `PATCH /requests/{id}/status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusChange {
    pub action: Option<Action>,
    pub reason: Option<String>,
    /// `Some(None)` unassigns; `Some(Some(id))` reassigns.
    pub assignee: Option<Option<StaffId>>,
}

/// One item of a request's timeline, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimelineItem {
    History(HistoryEntry),
    Message(Message),
    /// Only in the timelines staff and admins read.
    Note(Note),
}

impl TimelineItem {
    pub fn at(&self) -> OffsetDateTime {
        match self {
            TimelineItem::History(h) => h.at,
            TimelineItem::Message(m) => m.created_at,
            TimelineItem::Note(n) => n.created_at,
        }
    }
}

/// A request with its stage history and timeline, as the caller may see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestDetails {
    pub request: ServiceRequest,
    pub history: Vec<HistoryEntry>,
    pub timeline: Vec<TimelineItem>,
}

/// A staff member's queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queue {
    pub staff_id: StaffId,
    pub groups: Vec<QueueGroup>,
}

#[derive(Clone)]
pub struct RequestService {
    requests: Arc<dyn RequestRepository>,
    citizens: Arc<dyn CitizenRepository>,
    service_types: Arc<dyn ServiceTypeRepository>,
    staff: Arc<dyn StaffRepository>,
    idempotency: Arc<dyn IdempotencyRepository>,
    clock: Arc<dyn Clock>,
}

/// Whether `actor` is the citizen who owns `request`.
fn is_owner(actor: &Principal, request: &ServiceRequest) -> bool {
    is_self(actor, PrincipalKind::Citizen, request.citizen_id.as_uuid(), request.mission_id)
}

/// Staff of the request's mission, or an admin of it.
fn works_on(actor: &Principal, mission: MissionId) -> bool {
    is_staff_of(actor, mission) || (actor.is_admin() && actor.administers(mission))
}

fn sees(actor: &Principal, request: &ServiceRequest) -> bool {
    is_owner(actor, request) || works_on(actor, request.mission_id)
}

fn event(
    kind: &str,
    request: &ServiceRequest,
    payload: serde_json::Value,
    now: OffsetDateTime,
) -> OutboxEvent {
    OutboxEvent {
        id: Uuid::now_v7(),
        kind: kind.to_owned(),
        aggregate_id: request.id.as_uuid(),
        payload,
        created_at: now,
    }
}

fn check_reason(reason: &str) -> Result<(), ServiceError> {
    if reason.chars().count() > MAX_TEXT {
        return Err(ValidationErrors::single(
            "reason",
            "too_long",
            format!("must be at most {MAX_TEXT} characters"),
        )
        .into());
    }
    Ok(())
}

fn check_text(field: &str, text: &str) -> Result<(), ServiceError> {
    let mut errors = ValidationErrors::new();
    if text.trim().is_empty() {
        errors.add(field, "required", "must not be empty");
    } else if text.chars().count() > MAX_TEXT {
        errors.add(field, "too_long", format!("must be at most {MAX_TEXT} characters"));
    }
    Ok(errors.into_result()?)
}

impl RequestService {
    pub fn new(
        requests: Arc<dyn RequestRepository>,
        citizens: Arc<dyn CitizenRepository>,
        service_types: Arc<dyn ServiceTypeRepository>,
        staff: Arc<dyn StaffRepository>,
        idempotency: Arc<dyn IdempotencyRepository>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        RequestService { requests, citizens, service_types, staff, idempotency, clock }
    }

    /// Submits a request: a citizen for themself, staff or admins of the mission for one
    /// of its citizens. The type must be active; the request starts `submitted` at the
    /// first stage with a snapshot of the type's stages, its SLA deadline, and the
    /// least-loaded active staff member of the mission assigned to that type (if any).
    pub async fn submit(
        &self,
        actor: &Principal,
        input: NewRequest,
        idempotency_key: Option<&IdempotencyRequest>,
        render: impl FnOnce(&ServiceRequest) -> StoredResponse + Send,
    ) -> Result<Written, ServiceError> {
        let now = self.clock.now();
        let citizen_id = match (actor.subject.kind, input.citizen_id) {
            (PrincipalKind::Citizen, None) => CitizenId(actor.subject.id.as_uuid()),
            (PrincipalKind::Citizen, Some(id)) if id.as_uuid() == actor.subject.id.as_uuid() => id,
            (PrincipalKind::Citizen, Some(_)) => {
                return Err(ValidationErrors::single(
                    "citizen_id",
                    "not_yourself",
                    "a citizen submits for themself only",
                )
                .into());
            }
            (_, None) => {
                return Err(ValidationErrors::single(
                    "citizen_id",
                    "required",
                    "staff and admins name the citizen",
                )
                .into());
            }
            (_, Some(id)) => id,
        };
        require_scope(actor, &[Scope::Citizen, Scope::Staff, Scope::Admin])?;
        if let Some(replayed) = idempotency::replay(&*self.idempotency, actor, idempotency_key, now).await? {
            return Ok(replayed);
        }
        let citizen = match self.citizens.get(citizen_id).await? {
            Some(c)
                if crate::citizens::sees(actor, &c)
                    && (actor.subject.kind == PrincipalKind::Citizen || works_on(actor, c.mission_id)) =>
            {
                c
            }
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
        let service_type = self.service_types.get(input.service_type_id).await?.ok_or_else(|| {
            ServiceError::from(ValidationErrors::single("service_type_id", "unknown", "no such service type"))
        })?;
        if !service_type.active {
            return Err(ServiceError::conflict("service_inactive", "the service type takes no new requests"));
        }
        let assignee = self.requests.least_loaded_staff(citizen.mission_id, service_type.id).await?;
        let request = ServiceRequest {
            id: RequestId::new(),
            mission_id: citizen.mission_id,
            citizen_id,
            service_type_id: service_type.id,
            status: RequestStatus::Submitted,
            stages: service_type.stages.clone(),
            current_stage: 0,
            assignee_id: assignee,
            submitted_at: now,
            sla_due_at: now + Duration::days(i64::from(service_type.sla_days)),
            closed_at: None,
            version: 1,
            updated_at: now,
        };
        let first = HistoryEntry {
            at: now,
            actor: Some(actor.subject),
            from_status: None,
            to_status: RequestStatus::Submitted,
            from_stage: None,
            to_stage: 0,
            reason: None,
        };
        let response = render(&request);
        let mut events = vec![event(
            "request.submitted",
            &request,
            json!({ "citizen_id": citizen_id, "service_type_id": service_type.id, "mission_id": request.mission_id }),
            now,
        )];
        if let Some(staff) = assignee {
            events.push(event(
                "request.assigned",
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
            idempotency: idempotency::record(actor, idempotency_key, &response, now),
        };
        self.requests.insert(&request, &first, &meta).await?;
        Ok(Written::fresh(response))
    }

    /// Newest first. A citizen sees their own requests; staff and mission admins their
    /// mission's; global admins all.
    pub async fn list(
        &self,
        actor: &Principal,
        mut filter: RequestFilter,
        page: PageRequest,
    ) -> Result<Page<ServiceRequest>, ServiceError> {
        let empty = Page::empty();
        if actor.subject.kind == PrincipalKind::Citizen || !actor.has_any(&[Scope::Staff, Scope::Admin]) {
            let own = CitizenId(actor.subject.id.as_uuid());
            if actor.subject.kind != PrincipalKind::Citizen || filter.citizen_id.is_some_and(|c| c != own) {
                return Ok(empty);
            }
            filter.citizen_id = Some(own);
        } else if let Some(own) = actor.mission {
            if filter.mission_id.is_some_and(|m| m != own) {
                return Ok(empty);
            }
            filter.mission_id = Some(own);
        }
        if filter.overdue.is_some() {
            filter.overdue_at = Some(self.clock.now());
        }
        Ok(self.requests.list(filter, page).await?)
    }

    async fn visible(&self, actor: &Principal, id: RequestId) -> Result<ServiceRequest, ServiceError> {
        match self.requests.get(id).await? {
            Some(request) if sees(actor, &request) => Ok(request),
            _ => Err(ServiceError::NotFound),
        }
    }

    /// The request with its stage history and a timeline of status and stage changes and
    /// messages; staff and admins also get the internal notes in it.
    pub async fn get(&self, actor: &Principal, id: RequestId) -> Result<RequestDetails, ServiceError> {
        let request = self.visible(actor, id).await?;
        let history = self.requests.history(id).await?;
        let mut timeline: Vec<TimelineItem> = history.iter().cloned().map(TimelineItem::History).collect();
        timeline.extend(
            crate::paging::all_pages(|page| self.requests.messages(id, page))
                .await?
                .into_iter()
                .map(TimelineItem::Message),
        );
        if works_on(actor, request.mission_id) {
            timeline.extend(
                crate::paging::all_pages(|page| self.requests.notes(id, page))
                    .await?
                    .into_iter()
                    .map(TimelineItem::Note),
            );
        }
        timeline.sort_by_key(TimelineItem::at);
        Ok(RequestDetails { request, history, timeline })
    }

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
    ) -> Result<ServiceRequest, ServiceError> {
        crate::error::retry_unconditional(expected_versions, || {
            self.change_once(actor, id, change.clone(), expected_versions)
        })
        .await
    }

    async fn change_once(
        &self,
        actor: &Principal,
        id: RequestId,
        change: StatusChange,
        expected_versions: Option<&[i64]>,
    ) -> Result<ServiceRequest, ServiceError> {
        require_scope(actor, &[Scope::Staff, Scope::Admin])?;
        let mut request = self.visible(actor, id).await?;
        if !works_on(actor, request.mission_id) {
            return Err(ServiceError::NotFound);
        }
        if change.action.is_none() && change.assignee.is_none() {
            return Err(ValidationErrors::single(
                "/",
                "empty",
                "send a status, advance_stage or an assignee",
            )
            .into());
        }
        if let Some(reason) = &change.reason {
            check_reason(reason)?;
        }
        if let Some(Some(staff_id)) = change.assignee {
            match self.staff.get(staff_id).await? {
                Some(member) if member.active && member.mission_id == request.mission_id => {}
                _ => {
                    return Err(ValidationErrors::single(
                        "assignee_id",
                        "unknown",
                        "no active staff member of the mission",
                    )
                    .into());
                }
            }
        }
        let stored_version = request.version;
        crate::error::require_version(expected_versions, stored_version)?;
        let now = self.clock.now();
        self.apply(actor, &mut request, Role::Staff, change, now, stored_version).await?;
        Ok(request)
    }

    /// Cancels a request: the citizen who owns it before a decision, staff and admins of
    /// the mission any time before it is final.
    pub async fn cancel(
        &self,
        actor: &Principal,
        id: RequestId,
        reason: Option<String>,
        expected_versions: Option<&[i64]>,
    ) -> Result<ServiceRequest, ServiceError> {
        if let Some(reason) = &reason {
            check_reason(reason)?;
        }
        crate::error::retry_unconditional(expected_versions, || {
            self.cancel_once(actor, id, reason.clone(), expected_versions)
        })
        .await
    }

    async fn cancel_once(
        &self,
        actor: &Principal,
        id: RequestId,
        reason: Option<String>,
        expected_versions: Option<&[i64]>,
    ) -> Result<ServiceRequest, ServiceError> {
        let mut request = self.visible(actor, id).await?;
        let role = if works_on(actor, request.mission_id) { Role::Staff } else { Role::Citizen };
        let stored_version = request.version;
        crate::error::require_version(expected_versions, stored_version)?;
        let change =
            StatusChange { action: Some(Action::To(RequestStatus::Cancelled)), reason, assignee: None };
        self.apply(actor, &mut request, role, change, self.clock.now(), stored_version).await?;
        Ok(request)
    }

    async fn apply(
        &self,
        actor: &Principal,
        request: &mut ServiceRequest,
        role: Role,
        change: StatusChange,
        now: OffsetDateTime,
        stored_version: i64,
    ) -> Result<(), ServiceError> {
        let mut events = Vec::new();
        let mut fields = Vec::new();
        let mut entry = None;
        if let Some(action) = change.action {
            let before = request.status;
            let applied = request
                .apply(role, action, Some(actor.subject), change.reason.clone(), now)
                .map_err(|e| ServiceError::IllegalTransition {
                    detail: e.to_string(),
                    allowed: e.allowed.iter().map(ToString::to_string).collect(),
                })?;
            match action {
                Action::To(status) => {
                    fields.push("status".to_owned());
                    events.push(event(
                        "request.status_changed",
                        request,
                        json!({ "from": before.as_str(), "to": status.as_str(), "reason": change.reason }),
                        now,
                    ));
                }
                Action::AdvanceStage => {
                    fields.push("current_stage".to_owned());
                    events.push(event(
                        "request.stage_advanced",
                        request,
                        json!({ "from_stage": applied.from_stage, "to_stage": applied.to_stage,
                                "stage": request.stages.get(request.current_stage).map(|s| s.name.clone()) }),
                        now,
                    ));
                }
            }
            entry = Some(applied);
        }
        if let Some(assignee) = change.assignee
            && assignee != request.assignee_id
        {
            let previous = request.assignee_id;
            request.assignee_id = assignee;
            if entry.is_none() {
                request.version += 1;
                request.updated_at = now;
            }
            fields.push("assignee_id".to_owned());
            events.push(event(
                "request.assigned",
                request,
                json!({ "assignee_id": assignee, "previous_assignee_id": previous }),
                now,
            ));
        }
        if fields.is_empty() {
            return Ok(());
        }
        let action = if entry.is_some() { AuditAction::StatusChanged } else { AuditAction::Reassigned };
        let meta = WriteMeta {
            audit: vec![AuditRecord::new(Some(actor), now, action, RESOURCE, request.id.as_uuid(), fields)],
            events,
            idempotency: None,
        };
        self.requests.update(request, stored_version, entry, &meta).await?;
        Ok(())
    }

    /// Adds an internal note (staff and admins of the mission).
    pub async fn add_note(
        &self,
        actor: &Principal,
        id: RequestId,
        body: String,
        idempotency_key: Option<&IdempotencyRequest>,
        render: impl FnOnce(&Note) -> StoredResponse + Send,
    ) -> Result<Written, ServiceError> {
        require_scope(actor, &[Scope::Staff, Scope::Admin])?;
        let request = self.visible(actor, id).await?;
        if !works_on(actor, request.mission_id) {
            return Err(ServiceError::NotFound);
        }
        let now = self.clock.now();
        if let Some(replayed) = idempotency::replay(&*self.idempotency, actor, idempotency_key, now).await? {
            return Ok(replayed);
        }
        check_text("body", &body)?;
        let note = Note { id: Uuid::now_v7(), request_id: id, author: actor.subject, body, created_at: now };
        let response = render(&note);
        let meta = WriteMeta {
            audit: vec![AuditRecord::new(
                Some(actor),
                now,
                AuditAction::Created,
                "request_note",
                note.id,
                vec!["body".into()],
            )],
            events: Vec::new(),
            idempotency: idempotency::record(actor, idempotency_key, &response, now),
        };
        self.requests.add_note(&note, &meta).await?;
        Ok(Written::fresh(response))
    }

    /// The internal notes (staff and admins of the mission), oldest first.
    pub async fn notes(
        &self,
        actor: &Principal,
        id: RequestId,
        page: PageRequest,
    ) -> Result<Page<Note>, ServiceError> {
        require_scope(actor, &[Scope::Staff, Scope::Admin])?;
        let request = self.visible(actor, id).await?;
        if !works_on(actor, request.mission_id) {
            return Err(ServiceError::NotFound);
        }
        Ok(self.requests.notes(id, page).await?)
    }

    /// The message thread (the owner, staff and admins of the mission), oldest first.
    pub async fn messages(
        &self,
        actor: &Principal,
        id: RequestId,
        page: PageRequest,
    ) -> Result<Page<Message>, ServiceError> {
        self.visible(actor, id).await?;
        Ok(self.requests.messages(id, page).await?)
    }

    /// Posts a message on the thread (the owner, staff and admins of the mission).
    pub async fn post_message(
        &self,
        actor: &Principal,
        id: RequestId,
        body: String,
        idempotency_key: Option<&IdempotencyRequest>,
        render: impl FnOnce(&Message) -> StoredResponse + Send,
    ) -> Result<Written, ServiceError> {
        let request = self.visible(actor, id).await?;
        let now = self.clock.now();
        if let Some(replayed) = idempotency::replay(&*self.idempotency, actor, idempotency_key, now).await? {
            return Ok(replayed);
        }
        check_text("body", &body)?;
        let message =
            Message { id: Uuid::now_v7(), request_id: id, author: actor.subject, body, created_at: now };
        let response = render(&message);
        let meta = WriteMeta {
            audit: vec![AuditRecord::new(
                Some(actor),
                now,
                AuditAction::Created,
                "request_message",
                message.id,
                vec!["body".into()],
            )],
            events: vec![event(
                "message.posted",
                &request,
                json!({ "message_id": message.id, "author_kind": actor.subject.kind.as_str(), "citizen_id": request.citizen_id }),
                now,
            )],
            idempotency: idempotency::record(actor, idempotency_key, &response, now),
        };
        self.requests.add_message(&message, &meta).await?;
        Ok(Written::fresh(response))
    }

    /// A staff member's open requests by service type (the member themself, or an admin
    /// of their mission).
    pub async fn queue(&self, actor: &Principal, staff_id: StaffId) -> Result<Queue, ServiceError> {
        require_scope(actor, &[Scope::Staff, Scope::Admin])?;
        let member = match self.staff.get(staff_id).await? {
            Some(m)
                if is_self(actor, PrincipalKind::Staff, staff_id.as_uuid(), m.mission_id)
                    || (actor.is_admin() && actor.administers(m.mission_id)) =>
            {
                m
            }
            _ => return Err(ServiceError::NotFound),
        };
        let groups = self.requests.queue(member.id, self.clock.now()).await?;
        Ok(Queue { staff_id: member.id, groups })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{alice, principal, service_type};
    use consular_domain::{Citizen, NewCitizen, PrincipalId, ServiceType, StaffMember, Subject};
    use consular_ports::{
        MockCitizenRepository, MockIdempotencyRepository, MockRequestRepository, MockServiceTypeRepository,
        MockStaffRepository, SystemClock,
    };

    fn citizen(mission: MissionId) -> Citizen {
        NewCitizen { registration_status: RegistrationStatus::Active, ..alice(mission) }
            .into_citizen(CitizenId::new(), OffsetDateTime::UNIX_EPOCH)
    }

    struct Fixture {
        requests: MockRequestRepository,
        citizens: MockCitizenRepository,
        service_types: MockServiceTypeRepository,
        staff: MockStaffRepository,
    }

    impl Fixture {
        fn new() -> Self {
            Fixture {
                requests: MockRequestRepository::new(),
                citizens: MockCitizenRepository::new(),
                service_types: MockServiceTypeRepository::new(),
                staff: MockStaffRepository::new(),
            }
        }

        fn with_citizen(mut self, c: Citizen) -> Self {
            self.citizens.expect_get().returning(move |id| Ok((id == c.id).then(|| c.clone())));
            self
        }

        fn with_type(mut self, t: ServiceType) -> Self {
            self.service_types.expect_get().returning(move |id| Ok((id == t.id).then(|| t.clone())));
            self
        }

        fn service(self) -> RequestService {
            RequestService::new(
                Arc::new(self.requests),
                Arc::new(self.citizens),
                Arc::new(self.service_types),
                Arc::new(self.staff),
                Arc::new(MockIdempotencyRepository::new()),
                Arc::new(SystemClock),
            )
        }
    }

    fn render(r: &ServiceRequest) -> StoredResponse {
        StoredResponse { status: 201, headers: vec![], body: r.id.to_string() }
    }

    fn stored_request(mission: MissionId, citizen: CitizenId, status: RequestStatus) -> ServiceRequest {
        let t = service_type(true);
        ServiceRequest {
            id: RequestId::new(),
            mission_id: mission,
            citizen_id: citizen,
            service_type_id: t.id,
            status,
            stages: t.stages,
            current_stage: 0,
            assignee_id: None,
            submitted_at: OffsetDateTime::UNIX_EPOCH,
            sla_due_at: OffsetDateTime::UNIX_EPOCH,
            closed_at: None,
            version: 3,
            updated_at: OffsetDateTime::UNIX_EPOCH,
        }
    }

    #[tokio::test]
    async fn a_citizen_submits_for_themself_and_the_least_loaded_member_is_assigned() {
        let mission = MissionId::new();
        let alice = citizen(mission);
        let visa = service_type(true);
        let staff_id = StaffId::new();
        let mut fixture = Fixture::new().with_citizen(alice.clone()).with_type(visa.clone());
        fixture.requests.expect_least_loaded_staff().returning(move |_, _| Ok(Some(staff_id)));
        let (alice_id, visa_stages) = (alice.id, visa.stages.clone());
        fixture
            .requests
            .expect_insert()
            .withf(move |r, first, meta| {
                let kinds: Vec<&str> = meta.events.iter().map(|e| e.kind.as_str()).collect();
                r.citizen_id == alice_id
                    && r.status == RequestStatus::Submitted
                    && r.stages == visa_stages
                    && r.assignee_id == Some(staff_id)
                    && r.sla_due_at - r.submitted_at == Duration::days(10)
                    && first.to_status == RequestStatus::Submitted
                    && kinds == ["request.submitted", "request.assigned"]
            })
            .times(1)
            .returning(|_, _, _| Ok(()));
        let me = principal(PrincipalKind::Citizen, alice.id.as_uuid(), "citizen", Some(mission));
        let input = NewRequest { citizen_id: None, service_type_id: visa.id };
        fixture.service().submit(&me, input, None, render).await.unwrap();
    }

    #[tokio::test]
    async fn an_inactive_type_takes_no_request_and_other_missions_citizens_are_unknown() {
        let mission = MissionId::new();
        let alice = citizen(mission);
        let closed = service_type(false);
        let svc = Fixture::new().with_citizen(alice.clone()).with_type(closed.clone()).service();
        let me = principal(PrincipalKind::Citizen, alice.id.as_uuid(), "citizen", Some(mission));
        let result =
            svc.submit(&me, NewRequest { citizen_id: None, service_type_id: closed.id }, None, render).await;
        assert!(matches!(result, Err(ServiceError::Conflict { code: "service_inactive", .. })));
        let foreign_staff = principal(PrincipalKind::Staff, Uuid::now_v7(), "staff", Some(MissionId::new()));
        let input = NewRequest { citizen_id: Some(alice.id), service_type_id: closed.id };
        let result = svc.submit(&foreign_staff, input, None, render).await;
        assert!(matches!(result, Err(ServiceError::Validation(e)) if e.0[0].pointer == "/citizen_id"));
    }

    #[tokio::test]
    async fn an_illegal_change_names_the_allowed_ones_and_a_stale_etag_is_refused() {
        let mission = MissionId::new();
        let request = stored_request(mission, CitizenId::new(), RequestStatus::Submitted);
        let id = request.id;
        let mut fixture = Fixture::new();
        fixture.requests.expect_get().returning(move |_| Ok(Some(request.clone())));
        fixture.requests.expect_update().never();
        let svc = fixture.service();
        let staff = principal(PrincipalKind::Staff, Uuid::now_v7(), "staff", Some(mission));
        let approve =
            StatusChange { action: Some(Action::To(RequestStatus::Approved)), reason: None, assignee: None };
        let Err(ServiceError::IllegalTransition { allowed, .. }) =
            svc.change(&staff, id, approve.clone(), None).await
        else {
            panic!("expected an illegal transition")
        };
        assert_eq!(allowed, ["in_review", "cancelled"]);
        let review =
            StatusChange { action: Some(Action::To(RequestStatus::InReview)), reason: None, assignee: None };
        assert!(matches!(
            svc.change(&staff, id, review, Some(&[2])).await,
            Err(ServiceError::PreconditionFailed)
        ));
    }

    #[tokio::test]
    async fn a_legal_change_writes_history_and_its_event() {
        let mission = MissionId::new();
        let request = stored_request(mission, CitizenId::new(), RequestStatus::Submitted);
        let id = request.id;
        let mut fixture = Fixture::new();
        fixture.requests.expect_get().returning(move |_| Ok(Some(request.clone())));
        fixture
            .requests
            .expect_update()
            .withf(|r, expected, entry, meta| {
                r.status == RequestStatus::InReview
                    && *expected == 3
                    && entry.as_ref().is_some_and(|e| e.reason.as_deref() == Some("looks complete"))
                    && meta.events.len() == 1
                    && meta.events[0].kind == "request.status_changed"
            })
            .times(1)
            .returning(|_, _, _, _| Ok(()));
        let staff = principal(PrincipalKind::Staff, Uuid::now_v7(), "staff", Some(mission));
        let review = StatusChange {
            action: Some(Action::To(RequestStatus::InReview)),
            reason: Some("looks complete".into()),
            assignee: None,
        };
        let changed = fixture.service().change(&staff, id, review, Some(&[3])).await.unwrap();
        assert_eq!(changed.version, 4);
    }

    #[tokio::test]
    async fn citizens_never_see_notes_and_cannot_change_status() {
        let mission = MissionId::new();
        let alice = citizen(mission);
        let request = stored_request(mission, alice.id, RequestStatus::InReview);
        let id = request.id;
        let mut fixture = Fixture::new();
        fixture.requests.expect_get().returning(move |_| Ok(Some(request.clone())));
        fixture.requests.expect_history().returning(|_| Ok(vec![]));
        fixture.requests.expect_messages().returning(|_, _| Ok(Page { items: vec![], next_after: None }));
        let author = Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() };
        fixture.requests.expect_notes().returning(move |request_id, _| {
            Ok(Page {
                items: vec![Note {
                    id: Uuid::now_v7(),
                    request_id,
                    author,
                    body: "secret".into(),
                    created_at: OffsetDateTime::UNIX_EPOCH,
                }],
                next_after: None,
            })
        });
        let svc = fixture.service();
        let me = principal(PrincipalKind::Citizen, alice.id.as_uuid(), "citizen", Some(mission));
        let mine = svc.get(&me, id).await.unwrap();
        assert!(mine.timeline.iter().all(|item| !matches!(item, TimelineItem::Note(_))));
        let staff = principal(PrincipalKind::Staff, Uuid::now_v7(), "staff", Some(mission));
        let theirs = svc.get(&staff, id).await.unwrap();
        assert!(theirs.timeline.iter().any(|item| matches!(item, TimelineItem::Note(_))));
        assert!(matches!(
            svc.notes(&me, id, PageRequest::default()).await,
            Err(ServiceError::InsufficientScope { .. })
        ));
        let cancel =
            StatusChange { action: Some(Action::To(RequestStatus::Cancelled)), reason: None, assignee: None };
        assert!(matches!(
            svc.change(&me, id, cancel, None).await,
            Err(ServiceError::InsufficientScope { .. })
        ));
        let other = principal(PrincipalKind::Citizen, Uuid::now_v7(), "citizen", Some(mission));
        assert!(matches!(svc.get(&other, id).await, Err(ServiceError::NotFound)));
    }

    #[tokio::test]
    async fn lists_are_scoped_to_the_caller() {
        let mission = MissionId::new();
        let citizen_id = Uuid::now_v7();
        let mut fixture = Fixture::new();
        fixture
            .requests
            .expect_list()
            .withf(move |f, _| f.citizen_id == Some(CitizenId(citizen_id)) && f.mission_id.is_none())
            .times(1)
            .returning(|_, _| Ok(Page { items: vec![], next_after: None }));
        fixture
            .requests
            .expect_list()
            .withf(move |f, _| f.mission_id == Some(mission) && f.overdue_at.is_some())
            .times(1)
            .returning(|_, _| Ok(Page { items: vec![], next_after: None }));
        let svc = fixture.service();
        let me = principal(PrincipalKind::Citizen, citizen_id, "citizen", Some(mission));
        svc.list(&me, RequestFilter::default(), PageRequest::default()).await.unwrap();
        let someone_else = RequestFilter { citizen_id: Some(CitizenId::new()), ..Default::default() };
        assert!(svc.list(&me, someone_else, PageRequest::default()).await.unwrap().items.is_empty());
        let staff = principal(PrincipalKind::Staff, Uuid::now_v7(), "staff", Some(mission));
        let overdue = RequestFilter { overdue: Some(true), ..Default::default() };
        svc.list(&staff, overdue, PageRequest::default()).await.unwrap();
        let elsewhere = RequestFilter { mission_id: Some(MissionId::new()), ..Default::default() };
        assert!(svc.list(&staff, elsewhere, PageRequest::default()).await.unwrap().items.is_empty());
    }

    #[tokio::test]
    async fn a_queue_is_for_the_member_themself_or_an_admin_of_the_mission() {
        let mission = MissionId::new();
        let member = StaffMember {
            id: StaffId::new(),
            mission_id: mission,
            name: "Bob".into(),
            email: "bob@example.org".into(),
            job_title: "Officer".into(),
            active: true,
            service_type_ids: vec![],
            version: 1,
            created_at: OffsetDateTime::UNIX_EPOCH,
            updated_at: OffsetDateTime::UNIX_EPOCH,
        };
        let id = member.id;
        let mut fixture = Fixture::new();
        fixture.staff.expect_get().returning(move |_| Ok(Some(member.clone())));
        fixture.requests.expect_queue().returning(|_, _| Ok(vec![]));
        let svc = fixture.service();
        let me = principal(PrincipalKind::Staff, id.as_uuid(), "staff", Some(mission));
        let colleague = principal(PrincipalKind::Staff, Uuid::now_v7(), "staff", Some(mission));
        let admin = principal(PrincipalKind::Admin, Uuid::now_v7(), "admin", Some(mission));
        assert!(svc.queue(&me, id).await.is_ok());
        assert!(svc.queue(&admin, id).await.is_ok());
        assert!(matches!(svc.queue(&colleague, id).await, Err(ServiceError::NotFound)));
    }
}
