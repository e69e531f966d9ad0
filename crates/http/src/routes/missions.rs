//! `/api/v1/missions`: embassies and consulates (an extension of the spec; docs/api.md,
//! "Product decisions").

use crate::extract::{ApiJson, ApiQuery, Authenticated, PageParams, idempotency, if_match};
use crate::problem::{ApiError, Problem};
use crate::respond::{self, Resource, list, with_etag};
use crate::state::AppState;
use actix_web::{HttpRequest, HttpResponse, get, patch, post, web};
use consular_domain::{Mission, MissionChanges, MissionId, NewMission};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

/// A mission: an embassy or consulate.
#[derive(Debug, Serialize, ToSchema)]
pub struct MissionBody {
    pub id: Uuid,
    /// Stable public code, e.g. `fr-paris`.
    pub code: String,
    pub name: String,
    /// ISO 3166-1 alpha-2.
    pub country: String,
    pub city: String,
    /// IANA time zone.
    pub timezone: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
}

impl From<Mission> for MissionBody {
    fn from(m: Mission) -> Self {
        MissionBody {
            id: m.id.as_uuid(),
            code: m.code,
            name: m.name,
            country: m.country,
            city: m.city,
            timezone: m.timezone,
            created_at: m.created_at,
            updated_at: m.updated_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MissionList {
    pub items: Vec<MissionBody>,
    /// Pass as `cursor` to get the next page; null on the last page.
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateMission {
    #[schema(example = "fr-paris", max_length = 64, pattern = "^[a-z]{2}(-[a-z0-9]+)+$")]
    pub code: String,
    #[schema(
        example = "Embassy in Paris",
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub name: String,
    #[schema(example = "FR", pattern = "^[A-Z]{2}$")]
    pub country: String,
    #[schema(
        example = "Paris",
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub city: String,
    #[schema(example = "Europe/Paris")]
    pub timezone: String,
}

/// Fields to change; absent fields stay as they are. The code never changes.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateMission {
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub name: Option<String>,
    #[schema(pattern = "^[A-Z]{2}$")]
    pub country: Option<String>,
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub city: Option<String>,
    pub timezone: Option<String>,
}

/// List missions.
///
/// Open to any authenticated caller; oldest first.
#[utoipa::path(
    tag = "missions",
    operation_id = "list_missions",
    params(PageParams),
    security(("bearer" = [])),
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
#[utoipa::path(
    tag = "missions",
    operation_id = "get_mission",
    params(("id" = Uuid, Path, description = "Mission id")),
    security(("bearer" = [])),
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
#[utoipa::path(
    tag = "missions",
    operation_id = "create_mission",
    request_body = CreateMission,
    params(("Idempotency-Key" = Option<String>, Header, description = "Replays the first response for a retried request")),
    security(("bearer" = [])),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 201, description = "Created", body = MissionBody, headers(
            ("Location" = String, description = "The new mission"),
            ("ETag" = String, description = "Its version"))),
        (status = 409, description = "The code is taken, or the Idempotency-Key is in use", body = Problem, content_type = "application/problem+json"),
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
    let input = body.value;
    let new = NewMission {
        code: input.code,
        name: input.name,
        country: input.country,
        city: input.city,
        timezone: input.timezone,
    };
    let created = state.missions.create(&actor, new, key.as_ref()).await?;
    let resource = Resource {
        location: format!("/api/v1/missions/{}", created.value.id),
        version: created.value.version,
    };
    Ok(respond::created(&created, Some(resource), |m| MissionBody::from(m.clone())))
}

/// Update a mission (global admin).
#[utoipa::path(
    tag = "missions",
    operation_id = "update_mission",
    request_body = UpdateMission,
    params(
        ("id" = Uuid, Path, description = "Mission id"),
        ("If-Match" = String, Header, description = "The ETag you read"),
    ),
    security(("bearer" = [])),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 200, description = "Updated", body = MissionBody, headers(("ETag" = String, description = "The new version"))),
        (status = 412, description = "The mission changed since you read it", body = Problem, content_type = "application/problem+json"),
        (status = 428, description = "If-Match is missing", body = Problem, content_type = "application/problem+json"),
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
    let input = body.value;
    let changes = MissionChanges {
        name: input.name,
        country: input.country,
        city: input.city,
        timezone: input.timezone,
    };
    let mission =
        state.missions.update(&actor, MissionId(id.into_inner()), changes, expected.as_deref()).await?;
    let version = mission.version;
    Ok(with_etag(&MissionBody::from(mission), version))
}
