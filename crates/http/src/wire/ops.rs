//! The wire of the operations endpoints: the health report.

use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::ToSchema;

#[derive(Debug, Serialize, ToSchema)]
pub struct HealthBody {
    /// `ok`, `ready` or `unavailable`.
    pub status: String,
    /// For readiness: each dependency and `ok` or `unavailable`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub checks: BTreeMap<String, String>,
}
