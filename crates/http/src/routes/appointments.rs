//! `/api/v1/appointments`: availability slots in the mission's local time, booking,
//! rescheduling, cancelling, the lists, attendance and calendar files (spec 4.5;
//! docs/appointments.md "Endpoints and decisions", docs/api.md "Endpoints"). The bodies and the calendar file
//! are in `crate::wire::appointments`.

use crate::extract::{
    ApiJson, ApiQuery, Authenticated, idempotency, if_match, optional_if_match, page_request,
};
use crate::problem::ApiError;
use crate::respond::{self, Resource, list, with_etag};
use crate::state::AppState;
use crate::wire::IfMatchMissing;
use crate::wire::appointments::{
    self, AppointmentBody, AppointmentChanged, AppointmentList, AppointmentListParams, AttendanceConflict,
    BookAppointment, BookConflict, BookingAttemptsCapped, CancelConflict, RecordAttendance,
    RescheduleAppointment, RescheduleConflict,
};
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, delete, get, patch, post, web};
use consular_application::appointments::AppointmentView;
use consular_domain::{AppointmentId, SlotId};
use utoipa_actix_web::service_config::ServiceConfig;
use uuid::Uuid;

/// Registers this area's operations, in the order actix tries them (`super::register`).
pub fn register(cfg: &mut ServiceConfig) {
    cfg.service(list_appointments)
        .service(book_appointment)
        .service(get_appointment)
        .service(reschedule_appointment)
        .service(cancel_appointment)
        .service(record_attendance);
}

fn resource(view: &AppointmentView) -> Resource {
    Resource {
        location: format!("/api/v1/appointments/{}", view.appointment.id),
        version: view.appointment.version,
    }
}

/// Book a seat in a slot for a service.
///
/// A citizen books for themself; staff and admins of the mission for one of its
/// citizens (`citizen_id`), optionally for one of the citizen's requests
/// (`request_id`). The seat is taken atomically: a slot never holds more bookings than
/// its capacity. An unknown slot, citizen or request, a slot of another mission than
/// the citizen's, or a service type the slot does not serve is 422. A full or closed
/// slot, a passed booking cut-off, an active booking the citizen holds already (for the
/// request, or without one in the slot for the service type) and a citizen booking
/// themself at their limit of upcoming bookings are 409. `Idempotency-Key` replays the
/// booking; a refused booking stores nothing.
#[utoipa::path(
    tag = "appointments",
    operation_id = "book_appointment",
    request_body = BookAppointment,
    params(("Idempotency-Key" = Option<String>, Header, description = "Replays the first response for a retried request")),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 201, description = "Booked", body = AppointmentBody, headers(
            ("Location" = String, description = "The new appointment"),
            ("ETag" = String, description = "Its version"))),
        BookConflict,
        BookingAttemptsCapped,
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
    let written = state.appointments.book(&actor, body.value.into(), key.as_ref()).await?;
    let resource = resource(&written.value);
    Ok(respond::created(&written, Some(resource), |v| AppointmentBody::from(v)))
}

/// Get an appointment (an extension): JSON, or with `Accept: text/calendar` an RFC 5545
/// calendar file with one event.
///
/// The citizen it is for and the staff and admins of its mission; anyone else gets 404.
/// The calendar event's UID (`<id>@consular`) stays the same across reschedules, its
/// times are in UTC, and it says `STATUS:CANCELLED` once cancelled. The JSON's `ETag`
/// is the `If-Match` of a change.
#[utoipa::path(
    tag = "appointments",
    operation_id = "get_appointment",
    params(("id" = Uuid, Path, description = "Appointment id")),
    security(("oauth2" = [])),
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
            .body(appointments::calendar(&view)));
    }
    Ok(with_etag(&AppointmentBody::from(&view), view.appointment.version))
}

/// Reschedule an appointment to another slot of the mission, atomically.
///
/// `slot_id` names a slot of the appointment's mission (422 otherwise). The citizen may
/// move it until the current slot's cancellation cut-off; staff and admins of the
/// mission any time. The new slot must take the booking now (open, serving its service
/// type, before its booking cut-off, with a free seat, and, for a booking without a
/// request, holding none of the citizen's for the service type), else 409 and nothing
/// changes. Needs `If-Match`: 428 without it, 412 when the appointment changed.
#[utoipa::path(
    tag = "appointments",
    operation_id = "reschedule_appointment",
    request_body = RescheduleAppointment,
    params(
        ("id" = Uuid, Path, description = "Appointment id"),
        ("If-Match" = String, Header, description = "The ETag you read"),
    ),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 200, description = "Moved", body = AppointmentBody, headers(("ETag" = String, description = "The new version"))),
        RescheduleConflict,
        AppointmentChanged,
        IfMatchMissing,
        BookingAttemptsCapped,
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
///
/// The citizen until the slot's cancellation cut-off (then 409 `cancellation_closed`,
/// naming it); staff and admins of the mission any time. Only a booked appointment is
/// cancelled (409 `illegal_transition` otherwise). With `If-Match`, another version
/// than the current one is 412.
#[utoipa::path(
    tag = "appointments",
    operation_id = "cancel_appointment",
    params(
        ("id" = Uuid, Path, description = "Appointment id"),
        ("If-Match" = Option<String>, Header, description = "The ETag you read, to cancel only that version"),
    ),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 204, description = "Cancelled"),
        CancelConflict,
        AppointmentChanged,
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

/// Record attendance (an extension; staff and admins of the mission), from the start on.
///
/// `attended` or `no_show`, on a booked appointment whose start has come (409
/// `not_started` before); either is final. A citizen token is 403. With `If-Match`,
/// another version than the current one is 412.
#[utoipa::path(
    tag = "appointments",
    operation_id = "record_attendance",
    request_body = RecordAttendance,
    params(
        ("id" = Uuid, Path, description = "Appointment id"),
        ("If-Match" = Option<String>, Header, description = "The ETag you read"),
    ),
    security(("oauth2" = ["admin"]), ("oauth2" = ["staff"])),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 200, description = "Recorded", body = AppointmentBody, headers(("ETag" = String, description = "The new version"))),
        AttendanceConflict,
        AppointmentChanged,
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
    let view = state
        .appointments
        .record_attendance(
            &actor,
            AppointmentId(id.into_inner()),
            body.value.status.into(),
            expected.as_deref(),
        )
        .await?;
    Ok(with_etag(&AppointmentBody::from(&view), view.appointment.version))
}

/// List appointments in start order (an extension).
///
/// A citizen sees their own; staff and admins their mission's (`date` gives a day's list).
#[utoipa::path(
    tag = "appointments",
    operation_id = "list_appointments",
    params(AppointmentListParams),
    security(("oauth2" = [])),
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
    let found = state.appointments.list(&actor, params.into(), page).await?;
    Ok(list(&req, found, |v| AppointmentBody::from(&v)))
}
