//! What happened to an appointment, one entry per stored change (its version): booked,
//! moved, cancelled (by the citizen, staff or the mission), attended, missed. The linked
//! request's timeline shows them (docs/appointments.md "History").

use super::{Appointment, AppointmentStatus, CancelledBy, parse_name};
use crate::{AppointmentId, RequestId, SlotId, Subject};
use std::fmt;
use std::str::FromStr;
use time::OffsetDateTime;

/// The kind of a change; the names are those of the outbox events (`appointment.<name>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AppointmentChange {
    Booked,
    Rescheduled,
    Cancelled,
    CancelledByMission,
    Attended,
    NoShow,
}

impl AppointmentChange {
    pub const ALL: [AppointmentChange; 6] = [
        Self::Booked,
        Self::Rescheduled,
        Self::Cancelled,
        Self::CancelledByMission,
        Self::Attended,
        Self::NoShow,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Booked => "booked",
            Self::Rescheduled => "rescheduled",
            Self::Cancelled => "cancelled",
            Self::CancelledByMission => "cancelled_by_mission",
            Self::Attended => "attended",
            Self::NoShow => "no_show",
        }
    }
}

impl fmt::Display for AppointmentChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for AppointmentChange {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_name(&Self::ALL, Self::as_str, s, "appointment change")
    }
}

/// One stored change of an appointment: the appointment as it was left by it (version,
/// slot, times), who made it and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppointmentEntry {
    pub appointment_id: AppointmentId,
    /// The appointment's version after the change: one entry per version.
    pub version: i64,
    pub request_id: Option<RequestId>,
    pub change: AppointmentChange,
    pub actor: Subject,
    pub at: OffsetDateTime,
    pub slot_id: SlotId,
    pub starts_at: OffsetDateTime,
    pub ends_at: OffsetDateTime,
}

/// An entry that does not describe the appointment it is built from.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a {status} appointment (cancelled by {cancelled_by:?}) was not `{change}`")]
pub struct ChangeMismatch {
    pub status: AppointmentStatus,
    pub cancelled_by: Option<CancelledBy>,
    pub change: AppointmentChange,
}

impl AppointmentEntry {
    /// The entry of the change that just left `appointment` as it is, made by `actor`;
    /// refused when the appointment's state does not match the change.
    pub fn of(
        appointment: &Appointment,
        change: AppointmentChange,
        actor: Subject,
    ) -> Result<Self, ChangeMismatch> {
        use AppointmentChange as C;
        let matches = match change {
            C::Booked => appointment.status == AppointmentStatus::Booked && appointment.version == 1,
            C::Rescheduled => appointment.status == AppointmentStatus::Booked && appointment.version > 1,
            C::Cancelled => {
                matches!(appointment.cancelled_by, Some(CancelledBy::Citizen | CancelledBy::Staff))
            }
            C::CancelledByMission => appointment.cancelled_by == Some(CancelledBy::Mission),
            C::Attended => appointment.status == AppointmentStatus::Attended,
            C::NoShow => appointment.status == AppointmentStatus::NoShow,
        };
        if !matches {
            return Err(ChangeMismatch {
                status: appointment.status,
                cancelled_by: appointment.cancelled_by,
                change,
            });
        }
        Ok(AppointmentEntry {
            appointment_id: appointment.id,
            version: appointment.version,
            request_id: appointment.request_id,
            change,
            actor,
            at: appointment.updated_at,
            slot_id: appointment.slot_id,
            starts_at: appointment.starts_at,
            ends_at: appointment.ends_at,
        })
    }
}
