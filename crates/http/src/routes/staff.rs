//! `/api/v1/staff`: staff members and their service assignments (spec 4.6).

use crate::extract::{ApiJson, ApiQuery, Authenticated, idempotency, if_match, page_request};
use crate::problem::{ApiError, Problem};
use crate::respond::{self, Resource, list, with_etag};
use crate::state::AppState;
use crate::wire::IssuedClientBody;
use actix_web::{HttpRequest, HttpResponse, get, patch, post, web};
use consular_application::clients::IssuedClient;
use consular_domain::{Assignments, MissionId, NewStaffMember, ServiceTypeId, StaffId, StaffMember};
use consular_ports::StaffFilter;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// A staff member with their service assignments.
#[derive(Debug, Serialize, ToSchema)]
pub struct StaffBody {
    pub id: Uuid,
    pub mission_id: Uuid,
    pub name: String,
    pub email: String,
    pub job_title: String,
    pub active: bool,
    /// The service types whose requests this member handles.
    pub service_type_ids: Vec<Uuid>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub updated_at: OffsetDateTime,
    /// Only in the creation response, when `issue_client` was set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<IssuedClientBody>,
}

impl StaffBody {
    fn new(m: &StaffMember, issued: Option<&IssuedClient>) -> Self {
        StaffBody {
            id: m.id.as_uuid(),
            mission_id: m.mission_id.as_uuid(),
            name: m.name.clone(),
            email: m.email.clone(),
            job_title: m.job_title.clone(),
            active: m.active,
            service_type_ids: m.service_type_ids.iter().map(|s| s.as_uuid()).collect(),
            created_at: m.created_at,
            updated_at: m.updated_at,
            client: issued.map(IssuedClientBody::from),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct StaffList {
    pub items: Vec<StaffBody>,
    pub next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateStaff {
    pub mission_id: Uuid,
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub name: String,
    #[schema(format = Email, max_length = 254)]
    pub email: String,
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub job_title: String,
    /// Active service types of the catalog.
    #[serde(default)]
    #[schema(max_items = 100)]
    pub service_type_ids: Vec<Uuid>,
    /// Also create the member's API client (scope `staff`) and return its credentials once.
    #[serde(default)]
    pub issue_client: bool,
}

/// The complete new list of assignments.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateAssignments {
    #[schema(max_items = 100)]
    pub service_type_ids: Vec<Uuid>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct StaffListParams {
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page.
    #[param(min_length = 22, max_length = 22, pattern = "^[A-Za-z0-9_-]{22}$")]
    pub cursor: Option<String>,
    pub mission_id: Option<Uuid>,
    /// Members assigned to this service type.
    pub service_type_id: Option<Uuid>,
    pub active: Option<bool>,
}

/// List staff members (admin; a mission admin sees their mission only).
#[utoipa::path(
    tag = "staff",
    operation_id = "list_staff",
    params(StaffListParams),
    security(("bearer" = [])),
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
    let filter = StaffFilter {
        mission_id: params.mission_id.map(MissionId),
        service_type_id: params.service_type_id.map(ServiceTypeId),
        active: params.active,
    };
    let page = state.staff.list(&actor, filter, page).await?;
    Ok(list(&req, page, |m| StaffBody::new(&m, None)))
}

/// Get a staff profile and its service assignments (the member themself, admins).
#[utoipa::path(
    tag = "staff",
    operation_id = "get_staff",
    params(("id" = Uuid, Path, description = "Staff member id")),
    security(("bearer" = [])),
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
#[utoipa::path(
    tag = "staff",
    operation_id = "create_staff",
    request_body = CreateStaff,
    params(("Idempotency-Key" = Option<String>, Header, description = "Replays the first response (without a client secret)")),
    security(("bearer" = [])),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 201, description = "Created", body = StaffBody, headers(
            ("Location" = String, description = "The new staff member"),
            ("ETag" = String, description = "Its version"))),
        (status = 409, description = "The Idempotency-Key is in use", body = Problem, content_type = "application/problem+json"),
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
    let input = body.value;
    let issue_client = input.issue_client;
    let new = NewStaffMember {
        mission_id: MissionId(input.mission_id),
        name: input.name,
        email: input.email,
        job_title: input.job_title,
        service_type_ids: input.service_type_ids.into_iter().map(ServiceTypeId).collect(),
    };
    let written = state.staff.create(&actor, new, issue_client, key.as_ref()).await?;
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
    security(("bearer" = [])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 200, description = "Updated", body = StaffBody, headers(("ETag" = String, description = "The new version"))),
        (status = 412, description = "The member changed since you read it", body = Problem, content_type = "application/problem+json"),
        (status = 428, description = "If-Match is missing", body = Problem, content_type = "application/problem+json"),
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
    let assignments = Assignments {
        service_type_ids: body.value.service_type_ids.into_iter().map(ServiceTypeId).collect(),
    };
    let member =
        state.staff.assign(&actor, StaffId(id.into_inner()), assignments, expected.as_deref()).await?;
    Ok(with_etag(&StaffBody::new(&member, None), member.version))
}
