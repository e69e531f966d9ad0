//! `/api/v1/services`: the service catalog (spec 4.7). The bodies are in
//! `crate::wire::catalog`.

use crate::extract::{ApiJson, ApiQuery, Authenticated, idempotency, if_match, page_request};
use crate::problem::ApiError;
use crate::respond::{self, Resource, list, with_etag};
use crate::state::AppState;
use crate::wire::catalog::{
    CreateServiceType, ServiceListParams, ServiceTypeBody, ServiceTypeChanged, ServiceTypeList,
    UpdateServiceType,
};
use crate::wire::{CodeTaken, IfMatchMissing};
use actix_web::{HttpRequest, HttpResponse, get, patch, post, web};
use consular_domain::ServiceTypeId;
use utoipa_actix_web::service_config::ServiceConfig;
use uuid::Uuid;

/// Registers this area's operations, in the order actix tries them (`super::register`).
pub fn register(cfg: &mut ServiceConfig) {
    cfg.service(list_services).service(create_service).service(get_service).service(update_service);
}

/// List service types.
///
/// Any bearer token, oldest first. Active types only by default; `active=false` lists
/// the inactive ones instead, to admins only (anyone else gets an empty list).
#[utoipa::path(
    tag = "services",
    operation_id = "list_services",
    params(ServiceListParams),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses((status = 200, description = "A page of service types", body = ServiceTypeList,
        headers(("Link" = String, description = "The next page, when there is one"))))
)]
#[get("/api/v1/services")]
pub async fn list_services(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    ApiQuery(params): ApiQuery<ServiceListParams>,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(params.limit, params.cursor.as_deref())?;
    let page = state.catalog.list(&actor, params.active, page).await?;
    Ok(list(&req, page, |s| ServiceTypeBody::from(&s)))
}

/// Get a service type (an extension of the spec).
///
/// Any bearer token reads an active type; an inactive one is read by admins only (404
/// for anyone else). The `ETag` is the `If-Match` an update sends.
#[utoipa::path(
    tag = "services",
    operation_id = "get_service",
    params(("id" = Uuid, Path, description = "Service type id")),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Beta"))),
    responses((status = 200, description = "The service type", body = ServiceTypeBody,
        headers(("ETag" = String, description = "Send as If-Match to update"))))
)]
#[get("/api/v1/services/{id}")]
pub async fn get_service(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let service = state.catalog.get(&actor, ServiceTypeId(id.into_inner())).await?;
    Ok(with_etag(&ServiceTypeBody::from(&service), service.version))
}

/// Add a service type (global admin).
///
/// `code` (unique, also among inactive types, and never changed), `name`, `fee`,
/// `sla_days` and `stages`, optionally `description`, `required_documents` and
/// `active`; one 422 lists every invalid field. A taken code is 409
/// `service_code_taken`. A mission admin is 403 `forbidden`, staff and citizens 403
/// `insufficient_scope`. `Idempotency-Key` replays the first response.
#[utoipa::path(
    tag = "services",
    operation_id = "create_service",
    request_body = CreateServiceType,
    params(("Idempotency-Key" = Option<String>, Header, description = "Replays the first response for a retried request")),
    security(("oauth2" = ["admin"])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 201, description = "Created", body = ServiceTypeBody, headers(
            ("Location" = String, description = "The new service type"),
            ("ETag" = String, description = "Its version"))),
        CodeTaken,
    )
)]
#[post("/api/v1/services")]
pub async fn create_service(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    body: ApiJson<CreateServiceType>,
) -> Result<HttpResponse, ApiError> {
    let key = idempotency(&req, &body.raw)?;
    let written = state.catalog.create(&actor, body.value.into(), key.as_ref()).await?;
    let service = &written.value;
    let resource =
        Resource { location: format!("/api/v1/services/{}", service.id), version: service.version };
    Ok(respond::created(&written, Some(resource), |s| ServiceTypeBody::from(s)))
}

/// Update a service type or toggle its active status (global admin).
///
/// Requests already submitted keep the stage list they were submitted under.
#[utoipa::path(
    tag = "services",
    operation_id = "update_service",
    request_body = UpdateServiceType,
    params(
        ("id" = Uuid, Path, description = "Service type id"),
        ("If-Match" = String, Header, description = "The ETag you read"),
    ),
    security(("oauth2" = ["admin"])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 200, description = "Updated", body = ServiceTypeBody, headers(("ETag" = String, description = "The new version"))),
        ServiceTypeChanged,
        IfMatchMissing,
    )
)]
#[patch("/api/v1/services/{id}")]
pub async fn update_service(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
    body: ApiJson<UpdateServiceType>,
) -> Result<HttpResponse, ApiError> {
    let expected = if_match(req.headers())?;
    let service = state
        .catalog
        .update(&actor, ServiceTypeId(id.into_inner()), body.value.into(), expected.as_deref())
        .await?;
    Ok(with_etag(&ServiceTypeBody::from(&service), service.version))
}
