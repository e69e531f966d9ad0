//! Service requests: a consular case from submission to completion, and the state
//! machine that governs it (DESIGN.md "Domain").
//!
//! ```text
//! submitted → in_review ⇄ action_required
//! in_review → approved | rejected
//! approved  → completed
//! any non-final → cancelled (the citizen only before a decision; staff any time)
//! ```
//! Stages advance one at a time, only within `in_review` and `approved`.

use crate::{CitizenId, MissionId, ServiceTypeId, StaffId, Stage, Subject};
use std::fmt;
use std::str::FromStr;
use time::OffsetDateTime;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestStatus {
    Submitted,
    InReview,
    ActionRequired,
    Approved,
    Rejected,
    Completed,
    Cancelled,
}

impl RequestStatus {
    pub const ALL: [RequestStatus; 7] = [
        RequestStatus::Submitted,
        RequestStatus::InReview,
        RequestStatus::ActionRequired,
        RequestStatus::Approved,
        RequestStatus::Rejected,
        RequestStatus::Completed,
        RequestStatus::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RequestStatus::Submitted => "submitted",
            RequestStatus::InReview => "in_review",
            RequestStatus::ActionRequired => "action_required",
            RequestStatus::Approved => "approved",
            RequestStatus::Rejected => "rejected",
            RequestStatus::Completed => "completed",
            RequestStatus::Cancelled => "cancelled",
        }
    }

    /// `completed`, `rejected` and `cancelled` end a request.
    pub fn is_final(self) -> bool {
        matches!(self, RequestStatus::Completed | RequestStatus::Rejected | RequestStatus::Cancelled)
    }

    /// Open requests count towards a staff member's load and queue.
    pub fn is_open(self) -> bool {
        !self.is_final()
    }

    /// Before a decision (approval or rejection) has been made.
    pub fn is_undecided(self) -> bool {
        matches!(self, RequestStatus::Submitted | RequestStatus::InReview | RequestStatus::ActionRequired)
    }

    /// Stages advance only while the request is being worked on.
    pub fn allows_stage_advance(self) -> bool {
        matches!(self, RequestStatus::InReview | RequestStatus::Approved)
    }
}

impl fmt::Display for RequestStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RequestStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|v| v.as_str() == s).ok_or_else(|| format!("unknown request status `{s}`"))
    }
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
}

#[derive(Debug, Clone, PartialEq, Eq)]
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

    /// Applies `action` by `role`, appending the history entry it makes; refuses an
    /// illegal one and names the allowed actions.
    pub fn apply(
        &mut self,
        role: Role,
        action: Action,
        actor: Option<Subject>,
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
        self.version += 1;
        self.updated_at = now;
        Ok(HistoryEntry {
            at: now,
            actor,
            from_status: Some(from_status),
            to_status: self.status,
            from_stage: Some(from_stage),
            to_stage: self.current_stage,
            reason,
        })
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
        ServiceRequest {
            id: crate::RequestId::new(),
            mission_id: MissionId::new(),
            citizen_id: CitizenId::new(),
            service_type_id: ServiceTypeId::new(),
            status,
            stages: ["Check", "Interview", "Printing"]
                .into_iter()
                .map(|n| Stage { name: n.into(), description: String::new() })
                .collect(),
            current_stage,
            assignee_id: None,
            submitted_at: OffsetDateTime::UNIX_EPOCH,
            sla_due_at: OffsetDateTime::UNIX_EPOCH,
            closed_at: None,
            version: 1,
            updated_at: OffsetDateTime::UNIX_EPOCH,
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
}
