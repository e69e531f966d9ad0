//! `/api/v1/citizens`: citizen profiles and their registration with a mission (spec 4.2).
//! The bodies are in `crate::wire::citizens`.

use crate::extract::{
    ApiJson, ApiQuery, Authenticated, idempotency, if_match, page_request, query_country, query_text,
};
use crate::problem::ApiError;
use crate::respond::{self, Resource, list, with_etag};
use crate::state::AppState;
use crate::wire::IfMatchMissing;
use crate::wire::citizens::{
    CitizenBody, CitizenList, CitizenListParams, PassportTaken, ProfileChanged, RegisterCitizen,
    RegisterConflict, UpdateCitizen,
};
use actix_web::{HttpRequest, HttpResponse, get, patch, post, web};
use consular_domain::{CitizenId, MissionId};
use consular_ports::CitizenFilter;
use utoipa_actix_web::service_config::ServiceConfig;
use uuid::Uuid;

/// Registers this area's operations, in the order actix tries them (`super::register`).
pub fn register(cfg: &mut ServiceConfig) {
    cfg.service(list_citizens).service(register_citizen).service(get_citizen).service(update_citizen);
}

/// List registered citizens (admin; a mission admin sees their mission only).
///
/// Oldest first; filters `mission_id`, `registration_status`, `nationality`, `q` (part
/// of the given name, family name or email) and `registered_from`/`registered_to`. A
/// mission admin asking for another mission gets an empty list; staff and citizen
/// tokens are 403.
#[utoipa::path(
    tag = "citizens",
    operation_id = "list_citizens",
    params(CitizenListParams),
    security(("oauth2" = ["admin"])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses((status = 200, description = "A page of citizens", body = CitizenList,
        headers(("Link" = String, description = "The next page, when there is one"))))
)]
#[get("/api/v1/citizens")]
pub async fn list_citizens(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    ApiQuery(params): ApiQuery<CitizenListParams>,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(params.limit, params.cursor.as_deref())?;
    let filter = CitizenFilter {
        mission_id: params.mission_id.map(MissionId),
        registration_status: params.registration_status.map(Into::into),
        nationality: query_country("nationality", params.nationality)?,
        q: query_text("q", params.q, 1, 100)?,
        registered_from: params.registered_from,
        registered_to: params.registered_to,
    };
    let page = state.citizens.list(&actor, filter, page).await?;
    Ok(list(&req, page, |c| CitizenBody::new(&c, None)))
}

/// Get a citizen's profile with registration details (the citizen, staff of their
/// mission, admins).
///
/// Anyone else, another mission's staff and admins included, gets 404, as for an id
/// that does not exist. The `ETag` is the `If-Match` an update sends.
#[utoipa::path(
    tag = "citizens",
    operation_id = "get_citizen",
    params(("id" = Uuid, Path, description = "Citizen id")),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses((status = 200, description = "The citizen", body = CitizenBody,
        headers(("ETag" = String, description = "Send as If-Match to update"))))
)]
#[get("/api/v1/citizens/{id}")]
pub async fn get_citizen(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let citizen = state.citizens.get(&actor, CitizenId(id.into_inner())).await?;
    Ok(with_etag(&CitizenBody::new(&citizen, None), citizen.version))
}

/// Register a citizen (admin of the mission).
///
/// With `issue_client`, the citizen's API client is created in the same transaction and
/// its credentials are returned once, under `client`.
#[utoipa::path(
    tag = "citizens",
    operation_id = "register_citizen",
    request_body = RegisterCitizen,
    params(("Idempotency-Key" = Option<String>, Header, description = "Replays the first response (without a client secret)")),
    security(("oauth2" = ["admin"])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 201, description = "Registered", body = CitizenBody, headers(
            ("Location" = String, description = "The new citizen"),
            ("ETag" = String, description = "Its version"))),
        RegisterConflict,
    )
)]
#[post("/api/v1/citizens")]
pub async fn register_citizen(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    body: ApiJson<RegisterCitizen>,
) -> Result<HttpResponse, ApiError> {
    let key = idempotency(&req, &body.raw)?;
    let issue_client = body.value.issue_client;
    let written = state.citizens.register(&actor, body.value.into(), issue_client, key.as_ref()).await?;
    let citizen = &written.value.value;
    let resource =
        Resource { location: format!("/api/v1/citizens/{}", citizen.id), version: citizen.version };
    Ok(respond::created(&written, Some(resource), |r| CitizenBody::new(&r.value, r.client.as_ref())))
}

/// Update a citizen's profile.
///
/// A citizen may change only their contact fields; any other field from a citizen is
/// 422. Admins of the mission may change everything.
#[utoipa::path(
    tag = "citizens",
    operation_id = "update_citizen",
    request_body = UpdateCitizen,
    params(
        ("id" = Uuid, Path, description = "Citizen id"),
        ("If-Match" = String, Header, description = "The ETag you read"),
    ),
    security(("oauth2" = ["admin"]), ("oauth2" = ["citizen"])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 200, description = "Updated", body = CitizenBody, headers(("ETag" = String, description = "The new version"))),
        PassportTaken,
        ProfileChanged,
        IfMatchMissing,
    )
)]
#[patch("/api/v1/citizens/{id}")]
pub async fn update_citizen(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
    body: ApiJson<UpdateCitizen>,
) -> Result<HttpResponse, ApiError> {
    let expected = if_match(req.headers())?;
    let citizen = state
        .citizens
        .update(&actor, CitizenId(id.into_inner()), body.value.into(), expected.as_deref())
        .await?;
    Ok(with_etag(&CitizenBody::new(&citizen, None), citizen.version))
}
