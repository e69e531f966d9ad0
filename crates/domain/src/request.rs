//! Service requests: a consular case from submission to completion, and the state
//! machine that governs it (docs/requests.md "Status machine" and "Submission").
//!
//! ```text
//! submitted → in_review ⇄ action_required
//! in_review → approved | rejected
//! approved  → completed
//! any non-final → cancelled (the citizen only before a decision; staff any time)
//! ```
//! Stages advance one at a time, only within `in_review` and `approved`.

mod reason;
mod status;

pub use reason::{MAX_TEXT, Reason};
pub use status::RequestStatus;

use crate::{
    Citizen, CitizenId, MissionId, ServiceType, ServiceTypeId, StaffId, Stage, Subject, Trace,
    ValidationErrors, rules,
};
use std::borrow::Cow;
use std::fmt;
use time::{Duration, OffsetDateTime};
use validator::{Validate, ValidationError};

/// Checks the body of an internal note or a message: not blank, at most `MAX_TEXT`
/// characters, no control character but tab and line breaks.
pub fn validate_post_body(body: &str) -> Result<(), ValidationErrors> {
    rules::at_field("body", rules::filled(body).and_then(|()| rules::text::<MAX_TEXT>(body)))
}

/// Who asks for a change: the citizen who owns the request, or the mission's staff
/// (admins act as staff here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Citizen,
    Staff,
}

/// A change asked of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Move to another status.
    To(RequestStatus),
    /// Move to the next stage of the workflow.
    AdvanceStage,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::To(status) => write!(f, "{status}"),
            Action::AdvanceStage => f.write_str("advance_stage"),
        }
    }
}

/// Whether `role` may move a request from `from` to `to` (stages aside).
pub fn may_move(role: Role, from: RequestStatus, to: RequestStatus) -> bool {
    use RequestStatus::*;
    match (role, from, to) {
        (Role::Citizen, from, Cancelled) => from.is_undecided(),
        (Role::Staff, from, Cancelled) => !from.is_final(),
        (Role::Staff, Submitted, InReview)
        | (Role::Staff, InReview, ActionRequired)
        | (Role::Staff, ActionRequired, InReview)
        | (Role::Staff, InReview, Approved)
        | (Role::Staff, InReview, Rejected)
        | (Role::Staff, Approved, Completed) => true,
        _ => false,
    }
}

/// Why a change was refused: the actions that are allowed instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", describe(*.from, *.action))]
pub struct IllegalTransition {
    pub from: RequestStatus,
    pub action: Action,
    pub allowed: Vec<Action>,
}

fn describe(from: RequestStatus, action: Action) -> String {
    match action {
        Action::To(to) => format!("a {from} request cannot become {to}"),
        Action::AdvanceStage => {
            format!("the stage of a {from} request cannot advance (or it is at its last stage)")
        }
    }
}

/// A change staff ask of a request: a new status (with its reason) or a stage advance,
/// and/or a reassignment (`Some(None)` unassigns).
#[derive(Debug, Clone, PartialEq, Eq, Validate)]
#[validate(schema(function = "asks_for_something"))]
pub struct RequestChange {
    pub action: Option<Action>,
    pub reason: Option<Reason>,
    pub assignee: Option<Option<StaffId>>,
}

impl RequestChange {
    /// Parses a change as asked: a status change requires a reason, a stage advance or a
    /// reassignment may carry one.
    pub fn parse(
        action: Option<Action>,
        reason: Option<String>,
        assignee: Option<Option<StaffId>>,
    ) -> Result<Self, ValidationErrors> {
        let reason = match action {
            Some(Action::To(_)) => Some(Reason::required(reason)?),
            _ => Reason::optional(reason)?,
        };
        Ok(RequestChange { action, reason, assignee })
    }

    /// Cancelling, with or without a reason.
    pub fn cancellation(reason: Option<Reason>) -> Self {
        RequestChange { action: Some(Action::To(RequestStatus::Cancelled)), reason, assignee: None }
    }

    /// A change must ask for something.
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        rules::flatten(Validate::validate(self))
    }
}

fn asks_for_something(change: &RequestChange) -> Result<(), ValidationError> {
    if change.action.is_none() && change.assignee.is_none() {
        Err(ValidationError::new("empty")
            .with_message(Cow::Borrowed("send a status, advance_stage or an assignee")))
    } else {
        Ok(())
    }
}

/// What a change did, for its audit entry and events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    /// The history entry of a status change or stage advance.
    pub entry: Option<HistoryEntry>,
    /// The assignee before a reassignment, when the assignee changed.
    pub previous_assignee: Option<Option<StaffId>>,
    /// The events it raises: its status change or stage advance, then its reassignment.
    pub events: Vec<crate::DomainEvent>,
}

impl Changed {
    pub fn is_empty(&self) -> bool {
        self.entry.is_none() && self.previous_assignee.is_none()
    }
}

/// One entry of a request's stage history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryEntry {
    pub at: OffsetDateTime,
    /// `None` for changes made by the system.
    pub actor: Option<Subject>,
    pub from_status: Option<RequestStatus>,
    pub to_status: RequestStatus,
    pub from_stage: Option<usize>,
    pub to_stage: usize,
    pub reason: Option<String>,
    /// Whom the actor acted for (docs/representation.md "Traceability").
    pub on_behalf_of: Option<CitizenId>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ServiceRequest {
    pub id: crate::RequestId,
    pub mission_id: MissionId,
    pub citizen_id: CitizenId,
    pub service_type_id: ServiceTypeId,
    pub status: RequestStatus,
    /// The service type's stages as they were at submission.
    pub stages: Vec<Stage>,
    /// Index into `stages`.
    pub current_stage: usize,
    pub assignee_id: Option<StaffId>,
    pub submitted_at: OffsetDateTime,
    pub sla_due_at: OffsetDateTime,
    pub closed_at: Option<OffsetDateTime>,
    pub version: i64,
    pub updated_at: OffsetDateTime,
}

/// What a submission asks for: the references the use case looks up, and what the
/// submitter states about the request (docs/requests.md "Submission").
#[derive(Debug, Clone, PartialEq, Eq, Validate)]
pub struct NewRequest {
    /// Required from staff and admins; a citizen submits for themself.
    pub citizen_id: Option<CitizenId>,
    pub service_type_id: ServiceTypeId,
}

impl NewRequest {
    /// A submission of `service_type` with nothing else stated: the citizen is the
    /// caller, every optional field absent. Other fields are set on top of it
    /// (`NewRequest { citizen_id, ..NewRequest::for_service(id) }`), so that a new one
    /// is written here only.
    pub fn for_service(service_type_id: ServiceTypeId) -> NewRequest {
        NewRequest { citizen_id: None, service_type_id }
    }

    /// Every failing field at once, as JSON pointers (the field rules are attributes).
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        rules::flatten(Validate::validate(self))
    }
}

impl ServiceRequest {
    /// The actions `role` may take now.
    pub fn allowed_actions(&self, role: Role) -> Vec<Action> {
        let mut allowed: Vec<Action> = RequestStatus::ALL
            .into_iter()
            .filter(|to| may_move(role, self.status, *to))
            .map(Action::To)
            .collect();
        if role == Role::Staff
            && self.status.allows_stage_advance()
            && self.current_stage + 1 < self.stages.len()
        {
            allowed.push(Action::AdvanceStage);
        }
        allowed
    }

    /// A new request of `citizen` for `service_type`, as `actor` submits it at `now`:
    /// `submitted` at the first stage of a snapshot of the type's stages, due `sla_days`
    /// later, at version 1; with the first entry of its history and its events
    /// (`request.submitted`, then `request.assigned` when it has an assignee). `input`'s
    /// references name `citizen` and `service_type` (the caller looked them up); what
    /// else the submitter states is taken from it here, the one place that builds a
    /// request.
    pub fn submit(
        input: &NewRequest,
        citizen: &Citizen,
        service_type: &ServiceType,
        assignee: Option<StaffId>,
        actor: impl Into<Trace>,
        now: OffsetDateTime,
    ) -> (ServiceRequest, HistoryEntry, Vec<crate::DomainEvent>) {
        let actor = actor.into();
        // Every field named, so that a new one of `NewRequest` fails to compile here
        // until it is carried into the request; the references were resolved by the
        // caller into `citizen` and `service_type`.
        let NewRequest { citizen_id: _, service_type_id: _ } = input;
        let request = ServiceRequest {
            id: crate::RequestId::new(),
            mission_id: citizen.mission_id,
            citizen_id: citizen.id,
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
            actor: Some(actor.actor),
            from_status: None,
            to_status: RequestStatus::Submitted,
            from_stage: None,
            to_stage: 0,
            reason: None,
            on_behalf_of: actor.on_behalf_of,
        };
        let mut events = vec![crate::DomainEvent::RequestSubmitted {
            request_id: request.id,
            citizen_id: request.citizen_id,
            service_type_id: request.service_type_id,
            mission_id: request.mission_id,
        }];
        events.extend(assignee.map(|_| request.assigned(None)));
        (request, first, events)
    }

    /// Applies `action` by `role` as a change of its own (the version moves), returning
    /// the history entry it makes; refuses an illegal one and names the allowed actions.
    /// The reason is recorded as given: what a caller sends goes through `RequestChange`
    /// (and `Reason`) first, as the use cases do with `change`. `actor` acted for
    /// themself: a principal's change goes through `change`, which records whom it acted
    /// for.
    pub fn apply(
        &mut self,
        role: Role,
        action: Action,
        actor: Option<Subject>,
        reason: Option<String>,
        now: OffsetDateTime,
    ) -> Result<HistoryEntry, IllegalTransition> {
        self.apply_traced(role, action, actor.map(Trace::from), reason, now)
    }

    fn apply_traced(
        &mut self,
        role: Role,
        action: Action,
        actor: Option<Trace>,
        reason: Option<String>,
        now: OffsetDateTime,
    ) -> Result<HistoryEntry, IllegalTransition> {
        let allowed = self.allowed_actions(role);
        if !allowed.contains(&action) {
            return Err(IllegalTransition { from: self.status, action, allowed });
        }
        let (from_status, from_stage) = (self.status, self.current_stage);
        match action {
            Action::To(status) => {
                self.status = status;
                if status.is_final() {
                    self.closed_at = Some(now);
                }
            }
            Action::AdvanceStage => self.current_stage += 1,
        }
        self.touch(now);
        Ok(HistoryEntry {
            at: now,
            actor: actor.map(|a| a.actor),
            from_status: Some(from_status),
            to_status: self.status,
            from_stage: Some(from_stage),
            to_stage: self.current_stage,
            reason,
            on_behalf_of: actor.and_then(|a| a.on_behalf_of),
        })
    }

    /// Assigns the request to `assignee` (`None`: nobody) as a change of its own; its
    /// `request.assigned` event when the assignee changed, `None` (and no new version)
    /// otherwise.
    pub fn reassign(&mut self, assignee: Option<StaffId>, now: OffsetDateTime) -> Option<crate::DomainEvent> {
        let previous = self.swap_assignee(assignee)?;
        self.touch(now);
        Some(self.assigned(previous))
    }

    /// Applies a whole change by `role`: the action first (an illegal one changes
    /// nothing), then the reassignment; one new version if anything changed.
    pub fn change(
        &mut self,
        role: Role,
        change: RequestChange,
        actor: Option<Trace>,
        now: OffsetDateTime,
    ) -> Result<Changed, IllegalTransition> {
        let (from, from_stage) = (self.status, self.current_stage);
        let entry = match change.action {
            Some(action) => {
                Some(self.apply_traced(role, action, actor, change.reason.map(String::from), now)?)
            }
            None => None,
        };
        let previous_assignee = change.assignee.and_then(|assignee| self.swap_assignee(assignee));
        // The action, if any, made the new version already.
        if entry.is_none() && previous_assignee.is_some() {
            self.touch(now);
        }
        let mut events = Vec::new();
        if let (Some(action), Some(entry)) = (change.action, &entry) {
            events.push(match action {
                Action::To(to) => crate::DomainEvent::RequestStatusChanged {
                    request_id: self.id,
                    from,
                    to,
                    reason: entry.reason.clone(),
                },
                Action::AdvanceStage => crate::DomainEvent::RequestStageAdvanced {
                    request_id: self.id,
                    from_stage,
                    to_stage: self.current_stage,
                    stage: self.stages.get(self.current_stage).map(|s| s.name.clone()),
                },
            });
        }
        events.extend(previous_assignee.map(|previous| self.assigned(previous)));
        Ok(Changed { entry, previous_assignee, events })
    }

    /// The event of a change of assignee from `previous` to the current one.
    fn assigned(&self, previous: Option<StaffId>) -> crate::DomainEvent {
        crate::DomainEvent::RequestAssigned {
            request_id: self.id,
            assignee_id: self.assignee_id,
            previous_assignee_id: previous,
        }
    }

    /// The previous assignee if `assignee` is a different one.
    fn swap_assignee(&mut self, assignee: Option<StaffId>) -> Option<Option<StaffId>> {
        (assignee != self.assignee_id).then(|| std::mem::replace(&mut self.assignee_id, assignee))
    }

    /// Every change makes a new version.
    fn touch(&mut self, now: OffsetDateTime) {
        self.version += 1;
        self.updated_at = now;
    }

    /// Open and past its SLA.
    pub fn is_overdue(&self, now: OffsetDateTime) -> bool {
        self.status.is_open() && self.sla_due_at < now
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use RequestStatus::*;

    fn request(status: RequestStatus, current_stage: usize) -> ServiceRequest {
        let stages = ["Check", "Interview", "Printing"]
            .into_iter()
            .map(|n| Stage { name: n.into(), description: String::new() })
            .collect();
        let epoch = OffsetDateTime::UNIX_EPOCH;
        let service_type = ServiceType { stages, ..crate::fixtures::service_type(epoch) };
        ServiceRequest {
            status,
            current_stage,
            sla_due_at: epoch,
            ..crate::fixtures::service_request(MissionId::new(), CitizenId::new(), &service_type, epoch)
        }
    }

    /// Every (status, action) pair for staff, with the expected outcome.
    #[test]
    fn staff_transition_table() {
        let legal: &[(RequestStatus, RequestStatus)] = &[
            (Submitted, InReview),
            (Submitted, Cancelled),
            (InReview, ActionRequired),
            (InReview, Approved),
            (InReview, Rejected),
            (InReview, Cancelled),
            (ActionRequired, InReview),
            (ActionRequired, Cancelled),
            (Approved, Completed),
            (Approved, Cancelled),
        ];
        for from in RequestStatus::ALL {
            for to in RequestStatus::ALL {
                let mut r = request(from, 0);
                let result = r.apply(Role::Staff, Action::To(to), None, None, OffsetDateTime::UNIX_EPOCH);
                let expected = legal.contains(&(from, to));
                assert_eq!(result.is_ok(), expected, "staff {from} -> {to}");
                if let Err(e) = result {
                    assert_eq!(e.allowed, request(from, 0).allowed_actions(Role::Staff));
                    assert_eq!(r.status, from, "a refused change changes nothing");
                }
            }
            let mut r = request(from, 0);
            let advanced = r.apply(Role::Staff, Action::AdvanceStage, None, None, OffsetDateTime::UNIX_EPOCH);
            assert_eq!(advanced.is_ok(), matches!(from, InReview | Approved), "staff advance in {from}");
        }
    }

    /// Every (status, action) pair for the citizen: only cancelling before a decision.
    #[test]
    fn citizen_transition_table() {
        for from in RequestStatus::ALL {
            for to in RequestStatus::ALL {
                let mut r = request(from, 0);
                let ok =
                    r.apply(Role::Citizen, Action::To(to), None, None, OffsetDateTime::UNIX_EPOCH).is_ok();
                let expected = to == Cancelled && matches!(from, Submitted | InReview | ActionRequired);
                assert_eq!(ok, expected, "citizen {from} -> {to}");
            }
            let mut r = request(from, 0);
            assert!(
                r.apply(Role::Citizen, Action::AdvanceStage, None, None, OffsetDateTime::UNIX_EPOCH).is_err()
            );
        }
    }

    #[test]
    fn stages_advance_one_at_a_time_and_stop_at_the_last() {
        let mut r = request(InReview, 0);
        let entry = r
            .apply(
                Role::Staff,
                Action::AdvanceStage,
                None,
                Some("documents ok".into()),
                OffsetDateTime::UNIX_EPOCH,
            )
            .unwrap();
        assert_eq!((entry.from_stage, entry.to_stage), (Some(0), 1));
        assert_eq!(entry.to_status, InReview);
        r.apply(Role::Staff, Action::AdvanceStage, None, None, OffsetDateTime::UNIX_EPOCH).unwrap();
        let refused =
            r.apply(Role::Staff, Action::AdvanceStage, None, None, OffsetDateTime::UNIX_EPOCH).unwrap_err();
        assert!(!refused.allowed.contains(&Action::AdvanceStage));
        assert_eq!(r.current_stage, 2);
        assert_eq!(r.version, 3);
    }

    #[test]
    fn final_statuses_close_the_request() {
        let mut r = request(Approved, 2);
        r.apply(Role::Staff, Action::To(Completed), None, None, OffsetDateTime::UNIX_EPOCH).unwrap();
        assert!(r.closed_at.is_some());
        assert!(r.allowed_actions(Role::Staff).is_empty());
        assert!(!r.is_overdue(OffsetDateTime::now_utc()));
        assert!(request(Submitted, 0).is_overdue(OffsetDateTime::now_utc()));
    }

    #[test]
    fn a_status_change_needs_a_reason_and_every_reason_has_a_limit() {
        let pointers = |result: Result<RequestChange, ValidationErrors>| -> Vec<(String, String)> {
            result.unwrap_err().0.into_iter().map(|e| (e.pointer, e.code)).collect()
        };
        let to_review = Some(Action::To(InReview));
        let required = vec![("/reason".to_owned(), "required".to_owned())];
        assert_eq!(pointers(RequestChange::parse(to_review, None, None)), required);
        assert_eq!(pointers(RequestChange::parse(to_review, Some(" \n ".into()), None)), required);
        let long = "r".repeat(MAX_TEXT + 1);
        let too_long = vec![("/reason".to_owned(), "too_long".to_owned())];
        assert_eq!(pointers(RequestChange::parse(to_review, Some(long.clone()), None)), too_long);
        assert_eq!(
            pointers(RequestChange::parse(Some(Action::AdvanceStage), Some(long.clone()), None)),
            too_long
        );
        assert!(Reason::optional(Some(long)).is_err());
        assert!(RequestChange::parse(to_review, Some("é".repeat(MAX_TEXT)), None).is_ok());
        assert!(RequestChange::parse(Some(Action::AdvanceStage), None, None).is_ok());
        assert!(Reason::optional(Some(" ".into())).is_ok(), "an optional reason may be blank");
        let empty = RequestChange::parse(None, Some("why".into()), None).unwrap();
        assert_eq!(empty.validate().unwrap_err().0[0].pointer, "/");
        assert!(validate_post_body(" ").is_err() && validate_post_body(&"x".repeat(MAX_TEXT + 1)).is_err());
        assert!(validate_post_body("hello").is_ok());
    }

    #[test]
    fn multi_line_texts_keep_tabs_and_line_breaks_and_refuse_other_controls() {
        let code = |result: Result<(), ValidationErrors>| result.unwrap_err().0[0].code.clone();
        assert!(validate_post_body("line one\r\n\tline two\n").is_ok());
        for bad in ["a\u{0}b", "bell\u{7}", "del\u{7f}", "c1\u{85}", "esc\u{1b}[31m"] {
            assert_eq!(code(validate_post_body(bad)), "control_character", "{bad:?}");
            let reason = Reason::optional(Some(bad.to_owned())).map(|_| ());
            assert_eq!(reason.unwrap_err().0[0].pointer, "/reason", "{bad:?}");
            assert!(Reason::required(Some(bad.to_owned())).is_err(), "{bad:?}");
        }
        assert!(Reason::required(Some("first\nsecond\tthird".to_owned())).is_ok());
    }

    #[test]
    fn a_change_makes_one_version_and_a_refused_one_none() {
        let staff = Some(StaffId::new());
        let mut r = request(Submitted, 0);
        let change =
            RequestChange::parse(Some(Action::To(InReview)), Some("ok".into()), Some(staff)).unwrap();
        let changed = r.change(Role::Staff, change, None, OffsetDateTime::UNIX_EPOCH).unwrap();
        assert_eq!(changed.previous_assignee, Some(None));
        assert_eq!(changed.entry.and_then(|e| e.reason).as_deref(), Some("ok"));
        assert_eq!((r.status, r.assignee_id, r.version), (InReview, staff, 2));
        let same = RequestChange { action: None, reason: None, assignee: Some(staff) };
        assert!(r.change(Role::Staff, same, None, OffsetDateTime::UNIX_EPOCH).unwrap().is_empty());
        assert_eq!(r.version, 2, "reassigning to the same member changes nothing");
        let reassigned = r.reassign(None, OffsetDateTime::UNIX_EPOCH);
        assert_eq!(
            reassigned,
            Some(crate::DomainEvent::RequestAssigned {
                request_id: r.id,
                assignee_id: None,
                previous_assignee_id: staff
            })
        );
        assert_eq!(r.version, 3);
        let illegal =
            RequestChange { action: Some(Action::To(Completed)), reason: None, assignee: Some(staff) };
        assert!(r.change(Role::Staff, illegal, None, OffsetDateTime::UNIX_EPOCH).is_err());
        assert_eq!(
            (r.status, r.assignee_id, r.version),
            (InReview, None, 3),
            "a refused change changes nothing"
        );
    }

    /// A representative's submission and change record the dependant beside the
    /// representative (docs/representation.md "Traceability"); `apply`, the system's and
    /// fixtures' way, acted for itself.
    #[test]
    fn entries_of_an_acting_principal_record_whom_it_acted_for() {
        let citizen = crate::citizen::tests::alice(MissionId::new())
            .into_citizen(CitizenId::new(), OffsetDateTime::UNIX_EPOCH);
        let service_type = crate::catalog::tests::renewal()
            .into_service_type(ServiceTypeId::new(), OffsetDateTime::UNIX_EPOCH);
        let parent = crate::fixtures::acting_for(citizen.mission_id, citizen.id);
        let now = OffsetDateTime::UNIX_EPOCH;
        let input = NewRequest::for_service(service_type.id);
        let (mut r, first, _) = ServiceRequest::submit(&input, &citizen, &service_type, None, &parent, now);
        assert_eq!((first.actor, first.on_behalf_of), (Some(parent.subject), Some(citizen.id)));

        let cancel = RequestChange { action: Some(Action::To(Cancelled)), reason: None, assignee: None };
        let changed = r.change(Role::Citizen, cancel, Some(Trace::from(&parent)), now).unwrap();
        let entry = changed.entry.unwrap();
        assert_eq!((entry.actor, entry.on_behalf_of), (Some(parent.subject), Some(citizen.id)));

        let (mut own, first, _) =
            ServiceRequest::submit(&input, &citizen, &service_type, None, parent.subject, now);
        assert_eq!(first.on_behalf_of, None);
        let entry = own.apply(Role::Citizen, Action::To(Cancelled), Some(parent.subject), None, now).unwrap();
        assert_eq!(entry.on_behalf_of, None);
    }

    #[test]
    fn a_submission_sets_every_field_and_its_first_history_entry() {
        let citizen = crate::citizen::tests::alice(MissionId::new())
            .into_citizen(CitizenId::new(), OffsetDateTime::UNIX_EPOCH);
        let service_type = crate::catalog::tests::renewal()
            .into_service_type(ServiceTypeId::new(), OffsetDateTime::UNIX_EPOCH);
        let actor = Subject { kind: crate::PrincipalKind::Citizen, id: citizen.id.as_uuid().into() };
        let now = OffsetDateTime::UNIX_EPOCH + Duration::hours(5);
        let staff = Some(StaffId::new());
        let (r, first, _) = ServiceRequest::submit(
            &NewRequest::for_service(service_type.id),
            &citizen,
            &service_type,
            staff,
            actor,
            now,
        );
        assert_eq!(
            (r.mission_id, r.citizen_id, r.service_type_id),
            (citizen.mission_id, citizen.id, service_type.id)
        );
        assert_eq!((r.status, r.current_stage, r.assignee_id, r.version), (Submitted, 0, staff, 1));
        assert_eq!(r.stages, service_type.stages);
        assert_eq!((r.submitted_at, r.updated_at, r.closed_at), (now, now, None));
        assert_eq!(r.sla_due_at - now, Duration::days(i64::from(service_type.sla_days)));
        assert!(!r.is_overdue(now) && r.is_overdue(r.sla_due_at + Duration::SECOND));
        let expected = HistoryEntry {
            at: now,
            actor: Some(actor),
            from_status: None,
            to_status: Submitted,
            from_stage: None,
            to_stage: 0,
            reason: None,
            on_behalf_of: None,
        };
        assert_eq!(first, expected);
    }
}
