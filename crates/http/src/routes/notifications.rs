//! `/api/v1/notifications`: the caller's own in-app notifications (spec 4.10), marking
//! them read, email preferences (an extension), and what staff see of the notifications
//! and emails about a request (an extension; docs/notifications.md). The bodies are in
//! `crate::wire::notifications`.

use crate::extract::{ApiJson, ApiQuery, Authenticated, page_request};
use crate::problem::ApiError;
use crate::respond::list_with;
use crate::state::AppState;
use crate::wire::notifications::{
    MarkedRead, NotificationBody, NotificationList, NotificationListParams, NotificationPreferences,
    RequestNotification, RequestNotificationList, UnreadCount,
};
use actix_web::{HttpRequest, HttpResponse, get, patch, post, put, web};
use consular_domain::{NotificationId, RequestId};
use utoipa_actix_web::service_config::ServiceConfig;
use uuid::Uuid;

/// Registers this area's operations, in the order actix tries them (`super::register`).
pub fn register(cfg: &mut ServiceConfig) {
    cfg.service(list_notifications)
        .service(mark_notification_read)
        .service(mark_all_notifications_read)
        .service(get_notification_preferences)
        .service(update_notification_preferences)
        .service(list_request_notifications);
}

/// List your notifications.
///
/// The caller's own, newest first, with `unread_count` over all of them.
#[utoipa::path(
    tag = "notifications",
    operation_id = "list_notifications",
    params(NotificationListParams),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses((status = 200, description = "A page of notifications", body = NotificationList,
        headers(("Link" = String, description = "The next page, when there is one"))))
)]
#[get("/api/v1/notifications")]
pub async fn list_notifications(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    ApiQuery(params): ApiQuery<NotificationListParams>,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(params.limit, params.cursor.as_deref())?;
    let inbox = state.notifications.inbox(&actor, params.unread.unwrap_or(false), page).await?;
    Ok(list_with(&req, inbox.page, NotificationBody::from, UnreadCount { unread_count: inbox.unread_count }))
}

/// Mark a notification as read.
///
/// Idempotent: marking it again keeps the first `read_at`. Another principal's
/// notification is 404.
#[utoipa::path(
    tag = "notifications",
    operation_id = "mark_notification_read",
    params(("id" = Uuid, Path, description = "Notification id")),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses((status = 200, description = "The notification, read", body = NotificationBody))
)]
#[patch("/api/v1/notifications/{id}/read")]
pub async fn mark_notification_read(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let notification = state.notifications.mark_read(&actor, NotificationId(id.into_inner())).await?;
    Ok(HttpResponse::Ok().json(NotificationBody::from(notification)))
}

/// Mark all your notifications as read (an extension).
///
/// Every unread notification of the caller; `marked` says how many there were. Calling
/// it again marks only those that arrived since.
#[utoipa::path(
    tag = "notifications",
    operation_id = "mark_all_notifications_read",
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses((status = 200, description = "How many were unread", body = MarkedRead))
)]
#[post("/api/v1/notifications/read-all")]
pub async fn mark_all_notifications_read(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
) -> Result<HttpResponse, ApiError> {
    let marked = state.notifications.mark_all_read(&actor).await?;
    Ok(HttpResponse::Ok().json(MarkedRead { marked }))
}

/// Your notification preferences (an extension).
///
/// Whether the caller gets emails, per category (`requests`, `messages`, `documents`,
/// `appointments`, `assignments`); every category is on until turned off. In-app
/// notifications are always on.
#[utoipa::path(
    tag = "notifications",
    operation_id = "get_notification_preferences",
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses((status = 200, description = "Email on or off per category", body = NotificationPreferences))
)]
#[get("/api/v1/notifications/preferences")]
pub async fn get_notification_preferences(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
) -> Result<HttpResponse, ApiError> {
    let preferences = state.notifications.preferences(&actor).await?;
    Ok(HttpResponse::Ok().json(NotificationPreferences::from(preferences)))
}

/// Replace your notification preferences (an extension).
///
/// Every category is given; in-app notifications are always on.
#[utoipa::path(
    tag = "notifications",
    operation_id = "update_notification_preferences",
    request_body = NotificationPreferences,
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses((status = 200, description = "The preferences as stored", body = NotificationPreferences))
)]
#[put("/api/v1/notifications/preferences")]
pub async fn update_notification_preferences(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    body: ApiJson<NotificationPreferences>,
) -> Result<HttpResponse, ApiError> {
    let preferences = state.notifications.set_preferences(&actor, body.value.into()).await?;
    Ok(HttpResponse::Ok().json(NotificationPreferences::from(preferences)))
}

/// The notifications about a request and how their emails fared (staff and admins of
/// its mission; an extension).
///
/// Newest first: each notification with its recipient and its email's delivery
/// (`status`, `attempts`, `last_error`, `next_attempt_at`, `delivered_at`), never the
/// email's text. A citizen token is 403; another mission's request is 404.
#[utoipa::path(
    tag = "notifications",
    operation_id = "list_request_notifications",
    params(("id" = Uuid, Path, description = "Request id")),
    security(("oauth2" = ["admin"]), ("oauth2" = ["staff"])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses((status = 200, description = "Newest first", body = RequestNotificationList))
)]
#[get("/api/v1/requests/{id}/notifications")]
pub async fn list_request_notifications(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let deliveries = state.notifications.request_deliveries(&actor, RequestId(id.into_inner())).await?;
    let items = deliveries.into_iter().map(RequestNotification::from).collect();
    Ok(HttpResponse::Ok().json(RequestNotificationList { items }))
}
