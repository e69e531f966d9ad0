//! `/api/v1/staff`: staff members and their service assignments (spec 4.6). The bodies
//! are in `crate::wire::staff`.

use crate::extract::{ApiJson, ApiQuery, Authenticated, idempotency, if_match, page_request};
use crate::problem::ApiError;
use crate::respond::{self, Resource, list, with_etag};
use crate::state::AppState;
use crate::wire::staff::{
    CreateStaff, MemberChanged, StaffBody, StaffList, StaffListParams, UpdateAssignments,
};
use crate::wire::{IdempotencyKeyInUse, IfMatchMissing};
use actix_web::{HttpRequest, HttpResponse, get, patch, post, web};
use consular_domain::StaffId;
use utoipa_actix_web::service_config::ServiceConfig;
use uuid::Uuid;

/// Registers this area's operations, in the order actix tries them (`super::register`).
pub fn register(cfg: &mut ServiceConfig) {
    cfg.service(list_staff).service(create_staff).service(get_staff).service(update_staff_assignments);
}

/// List staff members (admin; a mission admin sees their mission only).
///
/// Oldest first; filters `mission_id`, `service_type_id` (the members assigned to it)
/// and `active`. A mission admin asking for another mission gets an empty list; staff
/// and citizen tokens are 403.
#[utoipa::path(
    tag = "staff",
    operation_id = "list_staff",
    params(StaffListParams),
    security(("oauth2" = ["admin"])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses((status = 200, description = "A page of staff members", body = StaffList,
        headers(("Link" = String, description = "The next page, when there is one"))))
)]
#[get("/api/v1/staff")]
pub async fn list_staff(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    ApiQuery(params): ApiQuery<StaffListParams>,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(params.limit, params.cursor.as_deref())?;
    let page = state.staff.list(&actor, params.into(), page).await?;
    Ok(list(&req, page, |m| StaffBody::new(&m, None)))
}

/// Get a staff profile and its service assignments (the member themself, admins).
///
/// The member and the admins of their mission (and global admins); colleagues, citizens
/// and other missions get 404. The `ETag` is the `If-Match` an assignment update sends.
#[utoipa::path(
    tag = "staff",
    operation_id = "get_staff",
    params(("id" = Uuid, Path, description = "Staff member id")),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses((status = 200, description = "The staff member", body = StaffBody,
        headers(("ETag" = String, description = "Send as If-Match to update assignments"))))
)]
#[get("/api/v1/staff/{id}")]
pub async fn get_staff(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let member = state.staff.get(&actor, StaffId(id.into_inner())).await?;
    Ok(with_etag(&StaffBody::new(&member, None), member.version))
}

/// Add a staff member (admin of the mission; an extension of the spec).
///
/// `mission_id`, `name`, `email`, `job_title`, optionally `service_type_ids` (each an
/// active service type, else 422 at its index) and `issue_client`: the member's API
/// client (scope `staff`) is then created in the same transaction and its secret
/// returned once, under `client`. An admin of another mission is 403 `forbidden`.
/// `Idempotency-Key` replays the first response, without the secret.
#[utoipa::path(
    tag = "staff",
    operation_id = "create_staff",
    request_body = CreateStaff,
    params(("Idempotency-Key" = Option<String>, Header, description = "Replays the first response (without a client secret)")),
    security(("oauth2" = ["admin"])),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 201, description = "Created", body = StaffBody, headers(
            ("Location" = String, description = "The new staff member"),
            ("ETag" = String, description = "Its version"))),
        IdempotencyKeyInUse,
    )
)]
#[post("/api/v1/staff")]
pub async fn create_staff(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    body: ApiJson<CreateStaff>,
) -> Result<HttpResponse, ApiError> {
    let key = idempotency(&req, &body.raw)?;
    let issue_client = body.value.issue_client;
    let written = state.staff.create(&actor, body.value.into(), issue_client, key.as_ref()).await?;
    let member = &written.value.value;
    let resource = Resource { location: format!("/api/v1/staff/{}", member.id), version: member.version };
    Ok(respond::created(&written, Some(resource), |r| StaffBody::new(&r.value, r.client.as_ref())))
}

/// Update a staff member's service assignments (admin of the mission).
///
/// Replaces the whole list. Unknown or inactive service types are 422.
#[utoipa::path(
    tag = "staff",
    operation_id = "update_staff_assignments",
    request_body = UpdateAssignments,
    params(
        ("id" = Uuid, Path, description = "Staff member id"),
        ("If-Match" = String, Header, description = "The ETag you read"),
    ),
    security(("oauth2" = ["admin"])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 200, description = "Updated", body = StaffBody, headers(("ETag" = String, description = "The new version"))),
        MemberChanged,
        IfMatchMissing,
    )
)]
#[patch("/api/v1/staff/{id}/assignments")]
pub async fn update_staff_assignments(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
    body: ApiJson<UpdateAssignments>,
) -> Result<HttpResponse, ApiError> {
    let expected = if_match(req.headers())?;
    let member =
        state.staff.assign(&actor, StaffId(id.into_inner()), body.value.into(), expected.as_deref()).await?;
    Ok(with_etag(&StaffBody::new(&member, None), member.version))
}
