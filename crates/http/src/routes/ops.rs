//! Operations endpoints: liveness, readiness, metrics (on the metrics listener only) and
//! the OpenAPI document. The health report is `crate::wire::ops::HealthBody`.

use crate::problem::{ApiError, DocumentedBody};
use crate::state::AppState;
use crate::wire::ops::{CheckStatus, HealthBody, HealthStatus, OpenApiDocument};
use actix_web::http::header;
use actix_web::{HttpResponse, get, web};
use std::collections::BTreeMap;
use utoipa_actix_web::service_config::ServiceConfig;

/// Registers the documented operations endpoints, in the order actix tries them
/// (`super::register`); `/metrics` is not one ([`crate::metrics_app`] serves it).
pub fn register(cfg: &mut ServiceConfig) {
    cfg.service(live).service(ready).service(openapi);
}

/// Liveness: the process answers.
///
/// No authentication, and no dependency checked: 200 as long as the process serves
/// requests, for an orchestrator's liveness probe.
#[utoipa::path(
    tag = "operations",
    operation_id = "health_live",
    security(),
    extensions(("x-maturity" = json!("Available"))),
    responses((status = 200, description = "Alive", body = HealthBody))
)]
#[get("/health/live")]
pub async fn live() -> HttpResponse {
    HttpResponse::Ok().json(HealthBody { status: HealthStatus::Ok, checks: BTreeMap::new() })
}

/// Readiness: the database and the blob storage answer now.
///
/// No authentication. Each check runs now (the database, the blob storage, and clamd
/// when a scanner is configured): 200 when all pass; otherwise 503 with `Retry-After`
/// and the report naming the check that failed, for a load balancer's or an
/// orchestrator's readiness probe.
#[utoipa::path(
    tag = "operations",
    operation_id = "health_ready",
    security(),
    extensions(("x-maturity" = json!("Available"))),
    responses(
        (status = 200, description = "Ready", body = HealthBody),
        (status = 503, description = "A dependency is down", body = HealthBody,
            headers(("Retry-After" = u64, description = "Seconds to wait"))),
    )
)]
#[get("/health/ready")]
pub async fn ready(state: web::Data<AppState>) -> HttpResponse {
    let (ready, results) = state.health.readiness().await;
    let mut checks = BTreeMap::new();
    for result in results {
        if let Some(error) = &result.error {
            tracing::warn!(check = result.name, error = %error, "readiness check failed");
        }
        checks.insert(
            result.name.to_owned(),
            if result.error.is_none() { CheckStatus::Ok } else { CheckStatus::Unavailable },
        );
    }
    if ready {
        HttpResponse::Ok().json(HealthBody { status: HealthStatus::Ready, checks })
    } else {
        // The report names the dependency that failed, for the probe (not a problem).
        let mut response = HttpResponse::ServiceUnavailable()
            .insert_header((header::RETRY_AFTER, "5"))
            .json(HealthBody { status: HealthStatus::Unavailable, checks });
        response.extensions_mut().insert(DocumentedBody);
        response
    }
}

/// Prometheus metrics, served only on the metrics listener ([`crate::metrics_app`]), so
/// neither the public API nor its OpenAPI document has them (docs/operations.md
/// "Metrics").
#[get("/metrics")]
pub async fn metrics(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    // The notification backlog is read at each scrape, so the gauges are never stale; a
    // database failure leaves the last values (and is what /health/ready reports).
    match state.notifications.backlog().await {
        Ok(backlog) => {
            state.metrics.outbox_pending.set(i64::try_from(backlog.pending_events).unwrap_or(i64::MAX));
            state.metrics.outbox_oldest_age.set(backlog.oldest_pending_age.as_seconds_f64());
            state.metrics.emails_unsent.set(i64::try_from(backlog.unsent_emails).unwrap_or(i64::MAX));
        }
        Err(error) => tracing::warn!(%error, "reading the notification backlog for /metrics failed"),
    }
    let text = state.metrics.encode().map_err(|_| ApiError::internal())?;
    Ok(HttpResponse::Ok().content_type("text/plain; version=0.0.4; charset=utf-8").body(text))
}

/// This OpenAPI 3.1 document.
///
/// No authentication. The same document for every caller: the contract a client is
/// generated from. Its server is the deployment's configured public address, or `/`
/// (relative to where the document was fetched) when none is configured.
#[utoipa::path(
    tag = "operations",
    operation_id = "openapi",
    security(),
    extensions(("x-maturity" = json!("Available"))),
    responses((status = 200, description = "The OpenAPI document", body = OpenApiDocument, content_type = "application/json"))
)]
#[get("/api/v1/openapi.json")]
pub async fn openapi(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok().content_type("application/json").body(state.spec.body())
}
