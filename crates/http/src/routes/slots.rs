//! `/api/v1/appointments/slots`: a mission's availability, submitted by its admins in
//! the mission's local time (a recurring schedule or explicit slots) and listed as open
//! slots with free seats (spec 4.5; docs/appointments.md "Endpoints and decisions",
//! docs/api.md "Endpoints").
//! The bodies are in `crate::wire::slots`.

use crate::extract::{ApiJson, ApiQuery, Authenticated, page_request};
use crate::problem::ApiError;
use crate::respond::{list, revalidated};
use crate::state::AppState;
use crate::wire::slots::{
    NoSuchMission, SeatsBooked, SlotBody, SlotList, SlotListParams, SlotReportBody, SubmitSlots,
};
use actix_web::{HttpRequest, HttpResponse, get, post, web};
use consular_application::ServiceError;
use consular_application::appointments::SlotSubmission;
use consular_domain::{MissionId, Page, ServiceTypeId};
use utoipa_actix_web::service_config::ServiceConfig;

/// Registers this area's operations, in the order actix tries them (`super::register`).
pub fn register(cfg: &mut ServiceConfig) {
    cfg.service(submit_slots).service(list_slots);
}

/// Create or update a mission's availability (admins of the mission).
///
/// Given in the mission's local time as a recurring `schedule` or explicit `slots`,
/// stored in UTC. Submitting the same content again changes nothing.
#[utoipa::path(
    tag = "appointments",
    operation_id = "submit_slots",
    request_body = SubmitSlots,
    security(("oauth2" = ["admin"])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 200, description = "What the submission created, updated, left unchanged and cancelled", body = SlotReportBody),
        SeatsBooked,
    )
)]
#[post("/api/v1/appointments/slots")]
pub async fn submit_slots(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    body: ApiJson<SubmitSlots>,
) -> Result<HttpResponse, ApiError> {
    let submission = SlotSubmission::try_from(body.value).map_err(ServiceError::from)?;
    let report = state.appointments.submit_slots(&actor, submission).await?;
    Ok(HttpResponse::Ok().json(SlotReportBody::from(report)))
}

/// List the open slots with free seats of a mission for a service type, in start order.
///
/// Any bearer token; a caller bound to a mission reads only that mission's availability
/// (another mission is 404), a global admin any. Future slots that are open, serve the
/// service type, have a free seat and whose booking cut-off has not passed, starting in
/// `[from, to)` (by default now to 366 days on), each with its UTC and local times and
/// its `remaining` seats.
///
/// Poll it with `If-None-Match` set to the `ETag` of the last page: `304` without a body
/// while the page is unchanged. A node answers from a page at most
/// `availability_cache_ms` (1 s by default) old, and at once after a booking,
/// reschedule, cancellation or submission it served itself; `remaining` may lag, and a
/// booking never relies on it (docs/appointments.md "Release morning").
#[utoipa::path(
    tag = "appointments",
    operation_id = "list_slots",
    params(
        SlotListParams,
        ("If-None-Match" = Option<String>, Header, description = "The ETag of the page you hold: 304 while it is unchanged"),
    ),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 200, description = "A page of slots", body = SlotList,
            headers(
                ("Link" = String, description = "The next page, when there is one"),
                ("ETag" = String, description = "A strong tag of the page's content; send it as If-None-Match"),
                ("Cache-Control" = String, description = "`private, no-cache`: the caller's own cache may keep the page but asks again each time; no shared cache stores it"),
                ("Vary" = String, description = "`Authorization`"),
            )),
        (status = 304, description = "The page named by If-None-Match is still the current one; no body",
            headers(
                ("ETag" = String, description = "The same tag"),
                ("Cache-Control" = String, description = "`private, no-cache`"),
                ("Vary" = String, description = "`Authorization`"),
            )),
        NoSuchMission,
    )
)]
#[get("/api/v1/appointments/slots")]
pub async fn list_slots(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    ApiQuery(params): ApiQuery<SlotListParams>,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(params.limit, params.cursor.as_deref())?;
    let available = state
        .appointments
        .availability(
            &actor,
            MissionId(params.mission_id),
            ServiceTypeId(params.service_type_id),
            params.from,
            params.to,
            page,
        )
        .await?;
    Ok(revalidated(&req, &available.fingerprint, || {
        let slots =
            Page { items: available.slots.items.iter().collect(), next_after: available.slots.next_after };
        list(&req, slots, |s| SlotBody::new(s, &available.timezone))
    }))
}
