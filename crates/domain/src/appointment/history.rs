//! What happened to an appointment, one entry per stored change (its version): booked,
//! moved, cancelled (by the citizen, staff or the mission), attended, missed. The linked
//! request's timeline shows them (docs/appointments.md "History").

use super::model::{Appointment, AppointmentStatus, CancelledBy};
use crate::text_enum::text_enum;
use crate::{AppointmentId, CitizenId, RequestId, SlotId, Subject, Trace};
use time::OffsetDateTime;

text_enum!(
    /// The kind of a change; the names are those of the outbox events
    /// (`appointment.<name>`).
    AppointmentChange ("appointment change") {
        Booked = "booked",
        Rescheduled = "rescheduled",
        Cancelled = "cancelled",
        CancelledByMission = "cancelled_by_mission",
        Attended = "attended",
        NoShow = "no_show",
    }
);

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
    /// Whom the actor acted for (docs/representation.md "Traceability").
    pub on_behalf_of: Option<CitizenId>,
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
        actor: impl Into<Trace>,
    ) -> Result<Self, ChangeMismatch> {
        let actor = actor.into();
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
            actor: actor.actor,
            on_behalf_of: actor.on_behalf_of,
            at: appointment.updated_at,
            slot_id: appointment.slot_id,
            starts_at: appointment.starts_at,
            ends_at: appointment.ends_at,
        })
    }
}
