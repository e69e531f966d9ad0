//! `/api/v1/citizens/me/access-log` and `/api/v1/citizens/{id}/access-log`: who read a
//! citizen's personal data (docs/data-protection.md "Access log"). The bodies are in
//! `crate::wire::access_log`. No operation changes or removes an entry.

use crate::extract::{ApiQuery, Authenticated, page_request};
use crate::problem::ApiError;
use crate::respond::list;
use crate::state::AppState;
use crate::wire::access_log::{AccessEntryBody, AccessEntryList, AccessLogParams};
use actix_web::{HttpRequest, HttpResponse, get, web};
use consular_application::access_log::Whose;
use consular_domain::CitizenId;
use utoipa_actix_web::service_config::ServiceConfig;
use uuid::Uuid;

/// Registers this area's operations, in the order actix tries them (`super::register`):
/// `me` before `{id}`, which would not take it (not a UUID) but is tried second all the same.
pub fn register(cfg: &mut ServiceConfig) {
    cfg.service(list_my_access_log).service(list_citizen_access_log);
}

/// List who read your personal data, newest first (citizen).
///
/// One entry per read by someone other than you: your profile, each of your requests'
/// details, a download URL of your documents, an appointment, the notifications about a
/// request, and your profile on a page of the citizens list. Each entry names the reader
/// (kind and id), their mission (none for a global admin), the role they acted in, their
/// API client, what was read and when. Your own reads and the system's (notification
/// delivery, sweeps) are not entries. Entries are never changed or removed. Tokens other
/// than a citizen's are 403 `insufficient_scope`.
#[utoipa::path(
    tag = "citizens",
    operation_id = "list_my_access_log",
    params(AccessLogParams),
    security(("oauth2" = ["citizen"])),
    extensions(("x-maturity" = json!("Beta"))),
    responses((status = 200, description = "A page of the access log", body = AccessEntryList,
        headers(("Link" = String, description = "The next page, when there is one"))))
)]
#[get("/api/v1/citizens/me/access-log")]
pub async fn list_my_access_log(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    ApiQuery(params): ApiQuery<AccessLogParams>,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(params.limit, params.cursor.as_deref())?;
    let page = state.access_log.list(&actor, Whose::Me, page).await?;
    Ok(list(&req, page, AccessEntryBody::from))
}

/// List who read a citizen's personal data, newest first (admins of the citizen's
/// mission, global admins).
///
/// The entries of `list_my_access_log`, for citizen `id`. Staff of the mission are 403
/// `insufficient_scope`; a citizen of another mission (or another citizen) is 404.
#[utoipa::path(
    tag = "citizens",
    operation_id = "list_citizen_access_log",
    params(("id" = Uuid, Path, description = "Citizen id"), AccessLogParams),
    security(("oauth2" = ["admin"]), ("oauth2" = ["citizen"])),
    extensions(("x-maturity" = json!("Beta"))),
    responses((status = 200, description = "A page of the access log", body = AccessEntryList,
        headers(("Link" = String, description = "The next page, when there is one"))))
)]
#[get("/api/v1/citizens/{id}/access-log")]
pub async fn list_citizen_access_log(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
    ApiQuery(params): ApiQuery<AccessLogParams>,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(params.limit, params.cursor.as_deref())?;
    let page = state.access_log.list(&actor, Whose::Citizen(CitizenId(id.into_inner())), page).await?;
    Ok(list(&req, page, AccessEntryBody::from))
}
