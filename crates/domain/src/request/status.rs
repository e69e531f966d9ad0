//! Where a request stands (docs/requests.md "Status machine"); which status may follow
//! which is the request's state machine, in `request.rs`.

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
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
