//! `/api/v1/requests`: service requests, their workflow, internal notes and messages
//! (spec 4.3 and 4.9), and `/api/v1/staff/{id}/queue` (4.6). The bodies are in
//! `crate::wire::requests`.

use crate::extract::{
    ApiJson, ApiQuery, Authenticated, PageParams, idempotency, if_match, optional_if_match, page_request,
};
use crate::problem::ApiError;
use crate::respond::{self, Resource, list, with_etag};
use crate::state::AppState;
use crate::wire::requests::{
    CancelConflict, CancelRequest, ChangeStatus, NewPost, PostBody, PostList, QueueBody, RequestBody,
    RequestChanged, RequestDetailsBody, RequestList, RequestListParams, SubmitConflict, SubmitRequest,
    TransitionConflict,
};
use crate::wire::{IdempotencyKeyInUse, IfMatchMissing};
use actix_web::{HttpRequest, HttpResponse, get, patch, post, web};
use consular_application::ServiceError;
use consular_application::requests::StatusChange;
use consular_domain::{RequestId, StaffId};
use utoipa_actix_web::service_config::ServiceConfig;
use uuid::Uuid;

/// Registers this area's operations, in the order actix tries them (`super::register`).
pub fn register(cfg: &mut ServiceConfig) {
    cfg.service(list_requests)
        .service(submit_request)
        .service(get_request)
        .service(change_request_status)
        .service(cancel_request)
        .service(add_request_note)
        .service(list_request_notes)
        .service(list_request_messages)
        .service(post_request_message)
        .service(get_staff_queue);
}

/// List service requests, newest first.
///
/// A citizen sees their own requests; staff and mission admins their mission's.
#[utoipa::path(
    tag = "requests",
    operation_id = "list_requests",
    params(RequestListParams),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Beta"))),
    responses((status = 200, description = "A page of requests", body = RequestList,
        headers(("Link" = String, description = "The next page, when there is one"))))
)]
#[get("/api/v1/requests")]
pub async fn list_requests(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    ApiQuery(params): ApiQuery<RequestListParams>,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(params.limit, params.cursor.as_deref())?;
    let page = state.requests.list(&actor, params.into(), page).await?;
    Ok(list(&req, page, RequestBody::from))
}

/// Submit a service request.
///
/// A citizen submits for themself; staff and admins of the mission for one of its
/// citizens. The service type must be active.
#[utoipa::path(
    tag = "requests",
    operation_id = "submit_request",
    request_body = SubmitRequest,
    params(("Idempotency-Key" = Option<String>, Header, description = "Replays the first response for a retried request")),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 201, description = "Submitted", body = RequestBody, headers(
            ("Location" = String, description = "The new request"),
            ("ETag" = String, description = "Its version"))),
        SubmitConflict,
    )
)]
#[post("/api/v1/requests")]
pub async fn submit_request(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    body: ApiJson<SubmitRequest>,
) -> Result<HttpResponse, ApiError> {
    let key = idempotency(&req, &body.raw)?;
    let written = state.requests.submit(&actor, body.value.into(), key.as_ref()).await?;
    let request = &written.value.request;
    let resource =
        Resource { location: format!("/api/v1/requests/{}", request.id), version: request.version };
    Ok(respond::created(&written, Some(resource), |v| RequestBody::from(v)))
}

/// Get a request with its stage history and timeline.
///
/// Staff and admins also see internal notes in the timeline; citizens never do.
#[utoipa::path(
    tag = "requests",
    operation_id = "get_request",
    params(("id" = Uuid, Path, description = "Request id")),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Beta"))),
    responses((status = 200, description = "The request", body = RequestDetailsBody,
        headers(("ETag" = String, description = "Send as If-Match to change its status"))))
)]
#[get("/api/v1/requests/{id}")]
pub async fn get_request(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let details = state.requests.get(&actor, RequestId(id.into_inner())).await?;
    let version = details.request.version;
    Ok(with_etag(&RequestDetailsBody::from(details), version))
}

/// Update the request status or move it to the next stage (staff/admin).
///
/// An illegal transition is 409 and lists the allowed ones in `allowed_actions`.
#[utoipa::path(
    tag = "requests",
    operation_id = "change_request_status",
    request_body = ChangeStatus,
    params(
        ("id" = Uuid, Path, description = "Request id"),
        ("If-Match" = String, Header, description = "The ETag you read"),
    ),
    security(("oauth2" = ["admin"]), ("oauth2" = ["staff"])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 200, description = "Changed", body = RequestBody, headers(("ETag" = String, description = "The new version"))),
        TransitionConflict,
        RequestChanged,
        IfMatchMissing,
    )
)]
#[patch("/api/v1/requests/{id}/status")]
pub async fn change_request_status(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
    body: ApiJson<ChangeStatus>,
) -> Result<HttpResponse, ApiError> {
    let expected = if_match(req.headers())?;
    let change = StatusChange::try_from(body.value).map_err(ServiceError::from)?;
    let changed =
        state.requests.change(&actor, RequestId(id.into_inner()), change, expected.as_deref()).await?;
    Ok(with_etag(&RequestBody::from(&changed), changed.request.version))
}

/// Cancel a request (an extension of the spec).
///
/// The citizen who owns it may cancel before a decision; staff and admins until it is
/// final. `If-Match` is optional here.
#[utoipa::path(
    tag = "requests",
    operation_id = "cancel_request",
    request_body = CancelRequest,
    params(
        ("id" = Uuid, Path, description = "Request id"),
        ("If-Match" = Option<String>, Header, description = "The ETag you read, to cancel only that version"),
    ),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 200, description = "Cancelled", body = RequestBody, headers(("ETag" = String, description = "The new version"))),
        CancelConflict,
        RequestChanged,
    )
)]
#[post("/api/v1/requests/{id}/cancel")]
pub async fn cancel_request(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
    body: ApiJson<CancelRequest>,
) -> Result<HttpResponse, ApiError> {
    let expected = optional_if_match(req.headers())?;
    let cancelled = state
        .requests
        .cancel(&actor, RequestId(id.into_inner()), body.value.reason, expected.as_deref())
        .await?;
    Ok(with_etag(&RequestBody::from(&cancelled), cancelled.request.version))
}

/// Add an internal note (staff/admin). Notes are never shown to citizens.
///
/// Staff and admins of the request's mission; 1 to 4000 characters. A citizen token is
/// 403; another mission's request is 404. `Idempotency-Key` replays the first response.
#[utoipa::path(
    tag = "requests",
    operation_id = "add_request_note",
    request_body = NewPost,
    params(
        ("id" = Uuid, Path, description = "Request id"),
        ("Idempotency-Key" = Option<String>, Header, description = "Replays the first response for a retried request"),
    ),
    security(("oauth2" = ["admin"]), ("oauth2" = ["staff"])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 201, description = "Added", body = PostBody),
        IdempotencyKeyInUse,
    )
)]
#[post("/api/v1/requests/{id}/notes")]
pub async fn add_request_note(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
    body: ApiJson<NewPost>,
) -> Result<HttpResponse, ApiError> {
    let key = idempotency(&req, &body.raw)?;
    let written =
        state.requests.add_note(&actor, RequestId(id.into_inner()), body.value.body, key.as_ref()).await?;
    Ok(respond::created(&written, None, |p| PostBody::from(p)))
}

/// List internal notes (staff/admin; an extension of the spec).
///
/// Staff and admins of the request's mission, oldest first. A citizen token is 403;
/// another mission's request is 404.
#[utoipa::path(
    tag = "requests",
    operation_id = "list_request_notes",
    params(("id" = Uuid, Path, description = "Request id"), PageParams),
    security(("oauth2" = ["admin"]), ("oauth2" = ["staff"])),
    extensions(("x-maturity" = json!("Beta"))),
    responses((status = 200, description = "Notes, oldest first", body = PostList,
        headers(("Link" = String, description = "The next page, when there is one"))))
)]
#[get("/api/v1/requests/{id}/notes")]
pub async fn list_request_notes(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
    ApiQuery(page): ApiQuery<PageParams>,
) -> Result<HttpResponse, ApiError> {
    let notes = state.requests.notes(&actor, RequestId(id.into_inner()), page.to_request()?).await?;
    Ok(list(&req, notes, |n| PostBody::from(&n)))
}

/// List messages on the request thread (the citizen who owns it, staff and admins).
///
/// Oldest first. Anyone else (another citizen, another mission's staff and admins) gets
/// 404 for the request. Internal notes are never part of the thread.
#[utoipa::path(
    tag = "messages",
    operation_id = "list_request_messages",
    params(("id" = Uuid, Path, description = "Request id"), PageParams),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses((status = 200, description = "Messages, oldest first", body = PostList,
        headers(("Link" = String, description = "The next page, when there is one"))))
)]
#[get("/api/v1/requests/{id}/messages")]
pub async fn list_request_messages(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
    ApiQuery(page): ApiQuery<PageParams>,
) -> Result<HttpResponse, ApiError> {
    let messages = state.requests.messages(&actor, RequestId(id.into_inner()), page.to_request()?).await?;
    Ok(list(&req, messages, |m| PostBody::from(&m)))
}

/// Send a message on the request thread.
///
/// The citizen who owns the request, and staff and admins of its mission; anyone else
/// gets 404. 1 to 4000 characters. A message from staff notifies the citizen; one from
/// the citizen notifies the request's assignee. `Idempotency-Key` replays the first
/// response.
#[utoipa::path(
    tag = "messages",
    operation_id = "post_request_message",
    request_body = NewPost,
    params(
        ("id" = Uuid, Path, description = "Request id"),
        ("Idempotency-Key" = Option<String>, Header, description = "Replays the first response for a retried request"),
    ),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 201, description = "Sent", body = PostBody),
        IdempotencyKeyInUse,
    )
)]
#[post("/api/v1/requests/{id}/messages")]
pub async fn post_request_message(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
    body: ApiJson<NewPost>,
) -> Result<HttpResponse, ApiError> {
    let key = idempotency(&req, &body.raw)?;
    let written = state
        .requests
        .post_message(&actor, RequestId(id.into_inner()), body.value.body, key.as_ref())
        .await?;
    Ok(respond::created(&written, None, |p| PostBody::from(p)))
}

/// Get a staff member's queue: open requests assigned to them, by service type (the
/// member themself, or an admin of their mission).
///
/// Per service type: how many open requests, the oldest submission and how many are
/// overdue, and the `total`. A citizen token is 403; colleagues and other missions get
/// 404.
#[utoipa::path(
    tag = "staff",
    operation_id = "get_staff_queue",
    params(("id" = Uuid, Path, description = "Staff member id")),
    security(("oauth2" = ["admin"]), ("oauth2" = ["staff"])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses((status = 200, description = "The queue", body = QueueBody))
)]
#[get("/api/v1/staff/{id}/queue")]
pub async fn get_staff_queue(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let queue = state.requests.queue(&actor, StaffId(id.into_inner())).await?;
    Ok(HttpResponse::Ok().json(QueueBody::from(&queue)))
}
