//! An appointment as it is stored, and the statuses it goes through; its state machine
//! (`Appointment::book`, `cancel`, ...) is in `appointment/mod.rs`, the slot rules in
//! `slot.rs`, its history in `history.rs`.

use crate::text_enum::text_enum;
use crate::{AppointmentId, CitizenId, MissionId, RequestId, ServiceTypeId, SlotId, Subject};
use time::OffsetDateTime;

text_enum!(
    /// Where an appointment stands (docs/appointments.md "States").
    AppointmentStatus ("appointment status") {
        Booked = "booked",
        Attended = "attended",
        NoShow = "no_show",
        Cancelled = "cancelled",
    }
);

impl AppointmentStatus {
    /// Whether the booking still holds a seat.
    pub fn is_active(self) -> bool {
        self == Self::Booked
    }
}

text_enum!(
    /// Who cancelled a booking: the citizen, staff of the mission, or the mission itself
    /// (closing or shrinking the slot, docs/appointments.md "Changing a slot").
    CancelledBy ("canceller") {
        Citizen = "citizen",
        Staff = "staff",
        Mission = "mission",
    }
);

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Appointment {
    pub id: AppointmentId,
    pub slot_id: SlotId,
    pub mission_id: MissionId,
    pub citizen_id: CitizenId,
    pub service_type_id: ServiceTypeId,
    /// The service request the appointment is for, if any: one active booking per
    /// citizen and request.
    pub request_id: Option<RequestId>,
    /// The slot's times, copied (and moved by a reschedule): day lists and calendars.
    pub starts_at: OffsetDateTime,
    pub ends_at: OffsetDateTime,
    pub status: AppointmentStatus,
    /// The citizen themself, or the staff member or admin who booked for them.
    pub booked_by: Subject,
    pub cancelled_by: Option<CancelledBy>,
    pub cancelled_at: Option<OffsetDateTime>,
    pub version: i64,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}
