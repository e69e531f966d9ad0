//! `/api/v1/audit-events`: the audit log (global admins). The bodies are in
//! `crate::wire::audit`.

use crate::extract::{ApiQuery, Authenticated, page_request, query_text};
use crate::problem::ApiError;
use crate::respond::list;
use crate::state::AppState;
use crate::wire::audit::{AuditEventBody, AuditEventList, AuditListParams};
use actix_web::{HttpRequest, HttpResponse, get, web};
use consular_ports::AuditFilter;
use utoipa_actix_web::service_config::ServiceConfig;

/// Registers this area's operations, in the order actix tries them (`super::register`).
pub fn register(cfg: &mut ServiceConfig) {
    cfg.service(list_audit_events);
}

/// List audit events, newest first (global admin).
///
/// Creations, changes, status changes, reassignments, client disabling and secret
/// rotation, document deletions and download URLs handed out, each with the actor,
/// their client, the instant and the names of the fields that changed (never their
/// values). Filters `resource_type`, `resource_id` and `actor_id`. A mission admin is
/// 403 `forbidden`, staff and citizens 403 `insufficient_scope`.
#[utoipa::path(
    tag = "audit",
    operation_id = "list_audit_events",
    params(AuditListParams),
    security(("oauth2" = ["admin"])),
    extensions(("x-maturity" = json!("Beta"))),
    responses((status = 200, description = "A page of audit events", body = AuditEventList,
        headers(("Link" = String, description = "The next page, when there is one"))))
)]
#[get("/api/v1/audit-events")]
pub async fn list_audit_events(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    ApiQuery(params): ApiQuery<AuditListParams>,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(params.limit, params.cursor.as_deref())?;
    let filter = AuditFilter {
        resource_type: query_text("resource_type", params.resource_type, 1, 64)?,
        resource_id: params.resource_id,
        actor_id: params.actor_id,
    };
    let page = state.audit.list(&actor, filter, page).await?;
    Ok(list(&req, page, AuditEventBody::from))
}
