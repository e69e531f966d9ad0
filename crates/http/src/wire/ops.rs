//! The wire of the operations endpoints: the health report, and the shape of the OpenAPI
//! document as the document itself declares it.

use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;

#[derive(Debug, Serialize, ToSchema)]
pub struct HealthBody {
    pub status: HealthStatus,
    /// For readiness: each dependency and how it answered.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub checks: BTreeMap<String, CheckStatus>,
}

/// The process's answer: `ok` (liveness), `ready` or `unavailable` (readiness).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum HealthStatus {
    Ok,
    Ready,
    Unavailable,
}

/// How one dependency answered a readiness check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Ok,
    Unavailable,
}

/// An OpenAPI 3.1 document (https://spec.openapis.org/oas/v3.1.0): the members every
/// document has; the others are the OpenAPI specification's.
// Only documented, never built: `GET /api/v1/openapi.json` serves `ApiSpec::json`.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct OpenApiDocument {
    /// The version of the OpenAPI specification the document follows.
    #[schema(example = "3.1.0", pattern = r"^3\.1\.[0-9]+$")]
    openapi: String,
    info: OpenApiInfo,
    /// The operations, by path template.
    #[schema(value_type = Object)]
    paths: (),
}

/// The document's title and the version of the API (not of the OpenAPI specification).
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct OpenApiInfo {
    title: String,
    version: String,
}
