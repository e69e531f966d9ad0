//! `/api/v1/analytics`: the overview, services and staff views (spec 4.8), admins only, as
//! JSON or, with `Accept: text/csv`, as CSV with one row per bucket (and a `total` row per
//! entity) holding the same numbers. Every figure is defined in docs/analytics.md. The
//! bodies are in `crate::wire::analytics`, the CSV in `crate::wire::analytics::csv`.

use crate::extract::{ApiQuery, Authenticated};
use crate::problem::ApiError;
use crate::respond;
use crate::state::AppState;
use crate::wire::analytics::{AnalyticsParams, InvalidView, OverviewBody, ServicesBody, StaffViewBody, csv};
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, get, web};
use consular_application::analytics::ViewScope;
use serde::Serialize;
use utoipa_actix_web::service_config::ServiceConfig;

/// Registers this area's operations, in the order actix tries them (`super::register`).
pub fn register(cfg: &mut ServiceConfig) {
    cfg.service(analytics_overview).service(analytics_services).service(analytics_staff);
}

const CSV: &str = "text/csv";

/// The view `name` as JSON (`body`), or as CSV (`csv`) when the client asks for it; only
/// the one asked for is made.
fn respond<B: Serialize>(
    req: &HttpRequest,
    name: &str,
    scope: &ViewScope,
    body: impl FnOnce() -> B,
    csv: impl FnOnce() -> Result<String, ::csv::Error>,
) -> Result<HttpResponse, ApiError> {
    if !respond::accepts(req.headers(), CSV) {
        return Ok(HttpResponse::Ok().insert_header((header::VARY, "Accept")).json(body()));
    }
    let csv = csv().map_err(|e| {
        tracing::error!(error = %e, "the CSV of an analytics view could not be written");
        ApiError::internal()
    })?;
    let file = format!("analytics-{name}-{}-{}.csv", scope.period.from(), scope.period.to());
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/csv; charset=utf-8"))
        .insert_header((header::CONTENT_DISPOSITION, format!("attachment; filename=\"{file}\"")))
        .insert_header((header::VARY, "Accept"))
        .body(csv))
}

/// Service volume, completion rates and SLA metrics.
///
/// Admins only: a mission admin sees their own mission (in its time zone), a global admin
/// every mission together (in UTC) or one with `mission_id`. `from`/`to` are whole local
/// days, both included (default: the last 30 days); the series has one point per
/// `granularity` bucket. `Accept: text/csv` gives the same numbers as CSV, one row per
/// bucket and a `total` row. Definitions: docs/analytics.md.
#[utoipa::path(
    tag = "analytics",
    operation_id = "analytics_overview",
    params(AnalyticsParams),
    security(("oauth2" = ["admin"])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 200, description = "The overview (JSON), or its CSV (`text/csv`)",
            content((OverviewBody = "application/json"), (String = "text/csv"))),
        InvalidView,
    )
)]
#[get("/api/v1/analytics/overview")]
pub async fn analytics_overview(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    ApiQuery(params): ApiQuery<AnalyticsParams>,
) -> Result<HttpResponse, ApiError> {
    let view = state.analytics.overview(&actor, params.into()).await?;
    respond(&req, "overview", &view.scope, || OverviewBody::from(&view), || csv::overview(&view))
}

/// Per-service-type metrics and trends.
///
/// The overview's request figures for each service type (every active one, inactive ones
/// with a figure), and the median time spent in each workflow stage (spells that ended in
/// the bucket): where cases wait. Same scope, parameters and CSV as the overview.
#[utoipa::path(
    tag = "analytics",
    operation_id = "analytics_services",
    params(AnalyticsParams),
    security(("oauth2" = ["admin"])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 200, description = "The services view (JSON), or its CSV (`text/csv`)",
            content((ServicesBody = "application/json"), (String = "text/csv"))),
        InvalidView,
    )
)]
#[get("/api/v1/analytics/services")]
pub async fn analytics_services(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    ApiQuery(params): ApiQuery<AnalyticsParams>,
) -> Result<HttpResponse, ApiError> {
    let view = state.analytics.services(&actor, params.into()).await?;
    respond(&req, "services", &view.scope, || ServicesBody::from(&view), || csv::services(&view))
}

/// Staff workload distribution and performance.
///
/// Per member of the missions in scope (active ones, inactive ones with a figure): open
/// requests assigned now, overdue, share of the mission's open load, requests closed in
/// the range and per bucket, median handling time. Same scope, parameters and CSV as the
/// overview.
#[utoipa::path(
    tag = "analytics",
    operation_id = "analytics_staff",
    params(AnalyticsParams),
    security(("oauth2" = ["admin"])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 200, description = "The staff view (JSON), or its CSV (`text/csv`)",
            content((StaffViewBody = "application/json"), (String = "text/csv"))),
        InvalidView,
    )
)]
#[get("/api/v1/analytics/staff")]
pub async fn analytics_staff(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    ApiQuery(params): ApiQuery<AnalyticsParams>,
) -> Result<HttpResponse, ApiError> {
    let view = state.analytics.staff(&actor, params.into()).await?;
    respond(&req, "staff", &view.scope, || StaffViewBody::from(&view), || csv::staff(&view))
}
