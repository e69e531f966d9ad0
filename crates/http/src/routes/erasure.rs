//! `DELETE /api/v1/citizens/{id}`: erasing a citizen (docs/data-protection.md "Retention
//! and erasure"). The body is in `crate::wire::erasure`.

use crate::extract::Authenticated;
use crate::problem::ApiError;
use crate::state::AppState;
use crate::wire::erasure::ErasureReportBody;
use actix_web::{HttpResponse, delete, web};
use consular_domain::CitizenId;
use utoipa_actix_web::service_config::ServiceConfig;
use uuid::Uuid;

/// Registers this area's operation (`super::register`).
pub fn register(cfg: &mut ServiceConfig) {
    cfg.service(erase_citizen);
}

/// Erase a citizen (admins of the citizen's mission, global admins).
///
/// Erases what no retention period holds: requests that ended more than their service
/// type's `retention_days` ago (with their history, messages, notes, appointments and
/// notifications), every document not attached to a request that stays (its file is
/// deleted, its row becomes a tombstone), the citizen's notifications and emails, and
/// their personal fields (blanked; status `erased`; the row stays so that ids resolve).
/// Requests still open or inside their retention period are kept and listed with the
/// date they may go. Erasing again answers 200 with the same report (what retention let
/// go since is deleted then). Another mission's admin gets 404; staff and citizens 403.
#[utoipa::path(
    tag = "citizens",
    operation_id = "erase_citizen",
    params(("id" = Uuid, Path, description = "Citizen id")),
    security(("oauth2" = ["admin"])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses((status = 200, description = "Erased: the requests kept and until when", body = ErasureReportBody))
)]
#[delete("/api/v1/citizens/{id}")]
pub async fn erase_citizen(
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let report = state.erasure.erase(&actor, CitizenId(id.into_inner())).await?;
    Ok(HttpResponse::Ok().json(ErasureReportBody::from(&report)))
}
