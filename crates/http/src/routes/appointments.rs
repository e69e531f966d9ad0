//! `/api/v1/appointments`: availability slots in the mission's local time, booking,
//! rescheduling, cancelling, the lists, attendance and calendar files (spec 4.5;
//! docs/appointments.md, docs/api.md "Appointments").

use crate::extract::{
    ApiJson, ApiQuery, Authenticated, idempotency, if_match, optional_if_match, page_request,
};
use crate::problem::{ApiError, Problem};
use crate::respond::{self, Resource, list, with_etag};
use crate::state::AppState;
use crate::wire::{local_times, wire_enum};
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, delete, get, patch, post, web};
use consular_application::appointments::{AppointmentListFilter, AppointmentView, Attendance, NewBooking};
use consular_domain::{
    AppointmentId, AppointmentStatus, CitizenId, MissionId, RequestId, ServiceTypeId, SlotId,
};
use serde::{Deserialize, Serialize};
use time::{Date, OffsetDateTime};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

wire_enum!(AppointmentStatusName mirrors AppointmentStatus { Booked, Attended, NoShow, Cancelled });

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
    /// `citizen`, `staff` or `mission` when cancelled.
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

fn resource(view: &AppointmentView) -> Resource {
    Resource {
        location: format!("/api/v1/appointments/{}", view.appointment.id),
        version: view.appointment.version,
    }
}

/// Book a seat in a slot for a service.
#[utoipa::path(
    tag = "appointments",
    operation_id = "book_appointment",
    request_body = BookAppointment,
    params(("Idempotency-Key" = Option<String>, Header, description = "Replays the first response for a retried request")),
    security(("bearer" = [])),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 201, description = "Booked", body = AppointmentBody, headers(
            ("Location" = String, description = "The new appointment"),
            ("ETag" = String, description = "Its version"))),
        (status = 409, description = "`slot_full`, `slot_closed`, `booking_closed` (the cut-off), `already_booked` (the citizen has an active booking for this request or, without a request, in this slot for this service type; `existing_appointment_id` names it), `booking_limit_reached` (a citizen booking themself holds `max_active_bookings_per_citizen` upcoming bookings), or the Idempotency-Key is in use",
            body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/api/v1/appointments")]
pub async fn book_appointment(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    body: ApiJson<BookAppointment>,
) -> Result<HttpResponse, ApiError> {
    let key = idempotency(&req, &body.raw)?;
    let b = body.value;
    let booking = NewBooking {
        slot_id: SlotId(b.slot_id),
        service_type_id: ServiceTypeId(b.service_type_id),
        citizen_id: b.citizen_id.map(CitizenId),
        request_id: b.request_id.map(RequestId),
    };
    let written = state.appointments.book(&actor, booking, key.as_ref()).await?;
    let resource = resource(&written.value);
    Ok(respond::created(&written, Some(resource), |v| AppointmentBody::from(v)))
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

/// One VEVENT with a stable UID, UTC times, the service as summary and the mission as
/// location (docs/appointments.md "Calendar files").
fn calendar(view: &AppointmentView) -> String {
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

/// Get an appointment (an extension): JSON, or with `Accept: text/calendar` an RFC 5545
/// calendar file with one event.
#[utoipa::path(
    tag = "appointments",
    operation_id = "get_appointment",
    params(("id" = Uuid, Path, description = "Appointment id")),
    security(("bearer" = [])),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 200, description = "The appointment (JSON), or its calendar file (`text/calendar`)",
            content((AppointmentBody = "application/json"), (String = "text/calendar")),
            headers(("ETag" = String, description = "Its version"))),
    )
)]
#[get("/api/v1/appointments/{id}")]
pub async fn get_appointment(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let view = state.appointments.get(&actor, AppointmentId(id.into_inner())).await?;
    if respond::accepts(req.headers(), "text/calendar") {
        return Ok(HttpResponse::Ok()
            .insert_header((header::CONTENT_TYPE, "text/calendar; charset=utf-8"))
            .insert_header((
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"appointment-{}.ics\"", view.appointment.id),
            ))
            .body(calendar(&view)));
    }
    Ok(with_etag(&AppointmentBody::from(&view), view.appointment.version))
}

/// Moving a booking to another slot.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RescheduleAppointment {
    pub slot_id: Uuid,
}

/// Reschedule an appointment to another slot of the mission, atomically.
#[utoipa::path(
    tag = "appointments",
    operation_id = "reschedule_appointment",
    request_body = RescheduleAppointment,
    params(
        ("id" = Uuid, Path, description = "Appointment id"),
        ("If-Match" = String, Header, description = "The ETag you read"),
    ),
    security(("bearer" = [])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 200, description = "Moved", body = AppointmentBody, headers(("ETag" = String, description = "The new version"))),
        (status = 409, description = "The new slot cannot take it (`slot_full`, `slot_closed`, `booking_closed`, or `already_booked`: a booking without a request moved into a slot where the citizen has one for the service type, `existing_appointment_id` naming it), the citizen is inside the cancellation cut-off (`cancellation_closed`), or the appointment is no longer booked (`illegal_transition`)",
            body = Problem, content_type = "application/problem+json"),
        (status = 412, description = "The appointment changed since you read it", body = Problem, content_type = "application/problem+json"),
        (status = 428, description = "If-Match is missing", body = Problem, content_type = "application/problem+json"),
    )
)]
#[patch("/api/v1/appointments/{id}")]
pub async fn reschedule_appointment(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
    body: ApiJson<RescheduleAppointment>,
) -> Result<HttpResponse, ApiError> {
    let expected = if_match(req.headers())?;
    let view = state
        .appointments
        .reschedule(&actor, AppointmentId(id.into_inner()), SlotId(body.value.slot_id), expected.as_deref())
        .await?;
    Ok(with_etag(&AppointmentBody::from(&view), view.appointment.version))
}

/// Cancel an appointment and free its seat. `If-Match` is optional.
#[utoipa::path(
    tag = "appointments",
    operation_id = "cancel_appointment",
    params(
        ("id" = Uuid, Path, description = "Appointment id"),
        ("If-Match" = Option<String>, Header, description = "The ETag you read, to cancel only that version"),
    ),
    security(("bearer" = [])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 204, description = "Cancelled"),
        (status = 409, description = "A citizen inside the cancellation cut-off (`cancellation_closed`, naming it), or no longer booked (`illegal_transition`)",
            body = Problem, content_type = "application/problem+json"),
        (status = 412, description = "The appointment changed since you read it", body = Problem, content_type = "application/problem+json"),
    )
)]
#[delete("/api/v1/appointments/{id}")]
pub async fn cancel_appointment(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let expected = optional_if_match(req.headers())?;
    state.appointments.cancel(&actor, AppointmentId(id.into_inner()), expected.as_deref()).await?;
    Ok(HttpResponse::NoContent().finish())
}

#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AttendanceName {
    Attended,
    NoShow,
}

/// Staff's record of an appointment.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordAttendance {
    pub status: AttendanceName,
}

/// Record attendance (an extension; staff and admins of the mission), from the start on.
#[utoipa::path(
    tag = "appointments",
    operation_id = "record_attendance",
    request_body = RecordAttendance,
    params(
        ("id" = Uuid, Path, description = "Appointment id"),
        ("If-Match" = Option<String>, Header, description = "The ETag you read"),
    ),
    security(("bearer" = [])),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 200, description = "Recorded", body = AppointmentBody, headers(("ETag" = String, description = "The new version"))),
        (status = 409, description = "Before the start time (`not_started`), or no longer booked (`illegal_transition`)",
            body = Problem, content_type = "application/problem+json"),
        (status = 412, description = "The appointment changed since you read it", body = Problem, content_type = "application/problem+json"),
    )
)]
#[post("/api/v1/appointments/{id}/attendance")]
pub async fn record_attendance(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
    body: ApiJson<RecordAttendance>,
) -> Result<HttpResponse, ApiError> {
    let expected = optional_if_match(req.headers())?;
    let attendance = match body.value.status {
        AttendanceName::Attended => Attendance::Attended,
        AttendanceName::NoShow => Attendance::NoShow,
    };
    let view = state
        .appointments
        .record_attendance(&actor, AppointmentId(id.into_inner()), attendance, expected.as_deref())
        .await?;
    Ok(with_etag(&AppointmentBody::from(&view), view.appointment.version))
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
    #[serde(default, with = "crate::wire::iso_date::option")]
    #[param(value_type = Option<String>, format = Date)]
    pub date: Option<Date>,
    /// The mission (global admins; others are bound to theirs).
    pub mission_id: Option<Uuid>,
    pub slot_id: Option<Uuid>,
    pub citizen_id: Option<Uuid>,
    /// One or more statuses, comma separated.
    #[serde(default, deserialize_with = "crate::extract::comma_separated")]
    #[param(value_type = Option<Vec<AppointmentStatusName>>, style = Form, explode = false, inline)]
    pub status: Option<Vec<AppointmentStatusName>>,
}

/// List appointments in start order (an extension).
///
/// A citizen sees their own; staff and admins their mission's (`date` gives a day's list).
#[utoipa::path(
    tag = "appointments",
    operation_id = "list_appointments",
    params(AppointmentListParams),
    security(("bearer" = [])),
    extensions(("x-maturity" = json!("Beta"))),
    responses((status = 200, description = "A page of appointments", body = AppointmentList,
        headers(("Link" = String, description = "The next page, when there is one"))))
)]
#[get("/api/v1/appointments")]
pub async fn list_appointments(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    ApiQuery(params): ApiQuery<AppointmentListParams>,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(params.limit, params.cursor.as_deref())?;
    let filter = AppointmentListFilter {
        mission_id: params.mission_id.map(MissionId),
        citizen_id: params.citizen_id.map(CitizenId),
        slot_id: params.slot_id.map(SlotId),
        statuses: params.status.unwrap_or_default().into_iter().map(Into::into).collect(),
        date: params.date,
    };
    let found = state.appointments.list(&actor, filter, page).await?;
    Ok(list(&req, found, |v| AppointmentBody::from(&v)))
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
