//! The wire of `/api/v1/appointments`: an appointment, the bodies that book, move and
//! record one, the list parameters, its calendar file (RFC 5545), and the problems these
//! operations document.

use crate::wire::common::{closed_set, local_times, problem_response, wire_enum};
use consular_application::appointments::{AppointmentListFilter, AppointmentView, Attendance, NewBooking};
use consular_domain::{
    AppointmentStatus, CancelledBy, CitizenId, MissionId, RequestId, ServiceTypeId, SlotId,
};
use serde::{Deserialize, Serialize};
use time::{Date, OffsetDateTime};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

wire_enum!(AppointmentStatusName mirrors AppointmentStatus { Booked, Attended, NoShow, Cancelled });
closed_set!(CancelledByName from CancelledBy, "Who cancelled a booking: the citizen, staff of the mission, or the mission closing or shrinking the slot.");

/// An appointment.
#[derive(Debug, Serialize, ToSchema)]
pub struct AppointmentBody {
    pub id: Uuid,
    pub slot_id: Uuid,
    pub mission_id: Uuid,
    pub citizen_id: Uuid,
    pub service_type_id: Uuid,
    pub request_id: Option<Uuid>,
    pub status: AppointmentStatusName,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub starts_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub ends_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub local_starts_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub local_ends_at: OffsetDateTime,
    pub timezone: String,
    /// Set when cancelled.
    #[schema(value_type = Option<CancelledByName>)]
    pub cancelled_by: Option<String>,
    pub version: i64,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

impl From<&AppointmentView> for AppointmentBody {
    fn from(v: &AppointmentView) -> Self {
        let a = &v.appointment;
        let l = local_times(a.starts_at, a.ends_at, &v.timezone);
        AppointmentBody {
            id: a.id.as_uuid(),
            slot_id: a.slot_id.as_uuid(),
            mission_id: a.mission_id.as_uuid(),
            citizen_id: a.citizen_id.as_uuid(),
            service_type_id: a.service_type_id.as_uuid(),
            request_id: a.request_id.map(|r| r.as_uuid()),
            status: a.status.into(),
            starts_at: a.starts_at,
            ends_at: a.ends_at,
            local_starts_at: l.starts_at,
            local_ends_at: l.ends_at,
            timezone: v.timezone.clone(),
            cancelled_by: a.cancelled_by.map(|c| c.as_str().to_owned()),
            version: a.version,
            created_at: a.created_at,
            updated_at: a.updated_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AppointmentList {
    pub items: Vec<AppointmentBody>,
    pub next_cursor: Option<String>,
}

/// A booking.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BookAppointment {
    pub slot_id: Uuid,
    pub service_type_id: Uuid,
    /// Required for staff and admins; a citizen books for themself.
    pub citizen_id: Option<Uuid>,
    /// A service request of the citizen the appointment is for.
    pub request_id: Option<Uuid>,
}

/// `20260329T070000Z`: RFC 5545 UTC form.
fn ical_utc(at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second()
    )
}

/// The appointment's calendar file (RFC 5545): one VEVENT with a stable UID, UTC times,
/// the service as summary and the mission as location (docs/appointments.md "Calendar
/// files").
pub fn calendar(view: &AppointmentView) -> String {
    use icalendar::{Calendar, Component, Event, EventLike};
    let a = &view.appointment;
    let summary = if view.service_name.is_empty() {
        "Consular appointment".to_owned()
    } else {
        format!("Consular appointment: {}", view.service_name)
    };
    let mut event = Event::new();
    event
        .uid(&format!("{}@consular", a.id))
        .summary(&summary)
        .location(&format!("{}, {}", view.mission_name, view.mission_city))
        .add_property("DTSTAMP", ical_utc(a.updated_at))
        .add_property("DTSTART", ical_utc(a.starts_at))
        .add_property("DTEND", ical_utc(a.ends_at))
        .add_property("SEQUENCE", (a.version - 1).to_string());
    if a.status == AppointmentStatus::Cancelled {
        event.add_property("STATUS", "CANCELLED");
    } else {
        event.add_property("STATUS", "CONFIRMED");
    }
    let mut calendar = Calendar::new();
    calendar.push(event.done());
    calendar.done().to_string()
}

impl From<BookAppointment> for NewBooking {
    fn from(b: BookAppointment) -> Self {
        NewBooking {
            slot_id: SlotId(b.slot_id),
            service_type_id: ServiceTypeId(b.service_type_id),
            citizen_id: b.citizen_id.map(CitizenId),
            request_id: b.request_id.map(RequestId),
        }
    }
}

/// Moving a booking to another slot.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RescheduleAppointment {
    pub slot_id: Uuid,
}

#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttendanceName {
    Attended,
    NoShow,
}

impl From<AttendanceName> for Attendance {
    fn from(name: AttendanceName) -> Self {
        match name {
            AttendanceName::Attended => Attendance::Attended,
            AttendanceName::NoShow => Attendance::NoShow,
        }
    }
}

/// Staff's record of an appointment.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordAttendance {
    pub status: AttendanceName,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AppointmentListParams {
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page.
    #[param(min_length = 43, max_length = 43, pattern = "^[A-Za-z0-9_-]{43}$")]
    pub cursor: Option<String>,
    /// A day of the mission's calendar (`YYYY-MM-DD`, its local time).
    #[serde(default, with = "crate::wire::common::iso_date::option")]
    #[param(value_type = Option<String>, format = Date)]
    pub date: Option<Date>,
    /// The mission (global admins; others are bound to theirs).
    pub mission_id: Option<Uuid>,
    pub slot_id: Option<Uuid>,
    pub citizen_id: Option<Uuid>,
    /// One or more statuses, repeated (`status=booked&status=attended`) or comma
    /// separated (`status=booked,attended`; both may be mixed).
    #[serde(default, deserialize_with = "crate::wire::common::comma_separated")]
    #[param(value_type = Option<Vec<AppointmentStatusName>>, style = Form, explode, inline)]
    pub status: Option<Vec<AppointmentStatusName>>,
}

/// The filter of the list; its page (`limit`, `cursor`) is read apart.
impl From<AppointmentListParams> for AppointmentListFilter {
    fn from(params: AppointmentListParams) -> Self {
        AppointmentListFilter {
            mission_id: params.mission_id.map(MissionId),
            citizen_id: params.citizen_id.map(CitizenId),
            slot_id: params.slot_id.map(SlotId),
            statuses: params.status.unwrap_or_default().into_iter().map(Into::into).collect(),
            date: params.date,
        }
    }
}

problem_response! {
    /// 409 of a booking.
    BookConflict = 409, "`slot_full`, `slot_closed`, `slot_not_released` (before the slot's scheduled release; `release_at` names it), `booking_closed` (the cut-off), `already_booked` (the citizen has an active booking for this request or, without a request, in this slot for this service type; `existing_appointment_id` names it), `booking_limit_reached` (a citizen booking themself holds `max_active_bookings_per_citizen` upcoming bookings), or the Idempotency-Key is in use";
    /// 409 of a reschedule.
    RescheduleConflict = 409, "The new slot cannot take it (`slot_full`, `slot_closed`, `slot_not_released` with `release_at`, `booking_closed`, or `already_booked`: a booking without a request moved into a slot where the citizen has one for the service type, `existing_appointment_id` naming it), the citizen is inside the cancellation cut-off (`cancellation_closed`), or the appointment is no longer booked (`illegal_transition`)";
    /// 409 of a cancellation.
    CancelConflict = 409, "A citizen inside the cancellation cut-off (`cancellation_closed`, naming it), or no longer booked (`illegal_transition`)";
    /// 409 of an attendance record.
    AttendanceConflict = 409, "Before the start time (`not_started`), or no longer booked (`illegal_transition`)";
    /// 412 of the changes of an appointment.
    AppointmentChanged = 412, "The appointment changed since you read it";
    /// 429 of a booking and a reschedule (docs/appointments.md "Attempt caps").
    BookingAttemptsCapped = 429, "Too many booking attempts this minute (`too_many_requests`): a citizen booking or moving their own appointment is capped per citizen (`booking_attempts_per_citizen_per_minute`, default 10), every caller per API client (`booking_attempts_per_client_per_minute`, default 120), counted across nodes; `detail` names the cap, and every attempt counts, refused ones included",
        headers (("Retry-After" = u64, description = "Seconds until the minute's window ends"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_times_are_utc_basic_form() {
        let at = OffsetDateTime::UNIX_EPOCH + time::Duration::days(20_541) + time::Duration::hours(7);
        assert_eq!(ical_utc(at), "20260329T070000Z");
    }
}
