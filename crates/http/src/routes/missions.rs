//! `/api/v1/missions`: embassies and consulates (an extension of the spec; docs/api.md,
//! "Product decisions"). The bodies are in `crate::wire::missions`.

use crate::extract::{ApiJson, ApiQuery, Authenticated, PageParams, idempotency, if_match};
use crate::problem::ApiError;
use crate::respond::{self, Resource, list, with_etag};
use crate::state::AppState;
use crate::wire::missions::{CreateMission, MissionBody, MissionChanged, MissionList, UpdateMission};
use crate::wire::{CodeTaken, IfMatchMissing};
use actix_web::{HttpRequest, HttpResponse, get, patch, post, web};
use consular_domain::MissionId;
use utoipa_actix_web::service_config::ServiceConfig;
use uuid::Uuid;

/// Registers this area's operations, in the order actix tries them (`super::register`).
pub fn register(cfg: &mut ServiceConfig) {
    cfg.service(list_missions).service(create_mission).service(get_mission).service(update_mission);
}

/// List missions.
///
/// Open to any authenticated caller; oldest first.
#[utoipa::path(
    tag = "missions",
    operation_id = "list_missions",
    params(PageParams),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Beta"))),
    responses((status = 200, description = "A page of missions", body = MissionList,
        headers(("Link" = String, description = "The next page, when there is one"))))
)]
#[get("/api/v1/missions")]
pub async fn list_missions(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    ApiQuery(page): ApiQuery<PageParams>,
) -> Result<HttpResponse, ApiError> {
    let page = state.missions.list(&actor, page.to_request()?).await?;
    Ok(list(&req, page, MissionBody::from))
}

/// Get a mission.
///
/// Any bearer token reads any mission. The `ETag` is the `If-Match` an update sends.
#[utoipa::path(
    tag = "missions",
    operation_id = "get_mission",
    params(("id" = Uuid, Path, description = "Mission id")),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Beta"))),
    responses((status = 200, description = "The mission", body = MissionBody,
        headers(("ETag" = String, description = "Send as If-Match to update"))))
)]
#[get("/api/v1/missions/{id}")]
pub async fn get_mission(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let mission = state.missions.get(&actor, MissionId(id.into_inner())).await?;
    let version = mission.version;
    Ok(with_etag(&MissionBody::from(mission), version))
}

/// Create a mission (global admin).
///
/// `code` (unique, and never changed afterwards), `name`, `country` (ISO 3166-1
/// alpha-2), `city` and `timezone` (an IANA name); one 422 lists every invalid field. A
/// taken code is 409 `mission_code_taken`; a mission admin is 403 `forbidden`.
/// `Idempotency-Key` replays the first response.
#[utoipa::path(
    tag = "missions",
    operation_id = "create_mission",
    request_body = CreateMission,
    params(("Idempotency-Key" = Option<String>, Header, description = "Replays the first response for a retried request")),
    security(("oauth2" = ["admin"])),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 201, description = "Created", body = MissionBody, headers(
            ("Location" = String, description = "The new mission"),
            ("ETag" = String, description = "Its version"))),
        CodeTaken,
    )
)]
#[post("/api/v1/missions")]
pub async fn create_mission(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    body: ApiJson<CreateMission>,
) -> Result<HttpResponse, ApiError> {
    let key = idempotency(&req, &body.raw)?;
    let created = state.missions.create(&actor, body.value.into(), key.as_ref()).await?;
    let resource = Resource {
        location: format!("/api/v1/missions/{}", created.value.id),
        version: created.value.version,
    };
    Ok(respond::created(&created, Some(resource), |m| MissionBody::from(m.clone())))
}

/// Update a mission (global admin).
///
/// Changes the members given of `name`, `country`, `city` and `timezone`; `code` is not
/// a field (422 `unknown_field`). Needs `If-Match`: 428 without it, 412 when the
/// mission changed since it was read. A change that changes nothing answers 200 with
/// the same `ETag`. A mission admin is 403 `forbidden`.
#[utoipa::path(
    tag = "missions",
    operation_id = "update_mission",
    request_body = UpdateMission,
    params(
        ("id" = Uuid, Path, description = "Mission id"),
        ("If-Match" = String, Header, description = "The ETag you read"),
    ),
    security(("oauth2" = ["admin"])),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 200, description = "Updated", body = MissionBody, headers(("ETag" = String, description = "The new version"))),
        MissionChanged,
        IfMatchMissing,
    )
)]
#[patch("/api/v1/missions/{id}")]
pub async fn update_mission(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
    body: ApiJson<UpdateMission>,
) -> Result<HttpResponse, ApiError> {
    let expected = if_match(req.headers())?;
    let mission = state
        .missions
        .update(&actor, MissionId(id.into_inner()), body.value.into(), expected.as_deref())
        .await?;
    let version = mission.version;
    Ok(with_etag(&MissionBody::from(mission), version))
}
