//! The wire of `DELETE /api/v1/citizens/{id}` (docs/data-protection.md "Retention and
//! erasure"): the erasure's report.

use crate::wire::common::RequestStatusName;
use consular_application::erasure::ErasureReport;
use consular_domain::erasure::{Hold, KeptRequest};
use serde::Serialize;
use time::OffsetDateTime;
use utoipa::ToSchema;
use uuid::Uuid;

/// What an erasure did: the citizen is erased (personal fields blanked, status
/// `erased`); every request listed here is kept, with the date it may go.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErasureReportBody {
    pub citizen_id: Uuid,
    /// When the citizen was erased (the first erasure; erasing again answers the same).
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub erased_at: OffsetDateTime,
    /// The requests a retention period still holds, oldest first.
    pub kept_requests: Vec<KeptRequestBody>,
}

/// A request kept by its retention period.
#[derive(Debug, Serialize, ToSchema)]
pub struct KeptRequestBody {
    pub request_id: Uuid,
    pub service_type_id: Uuid,
    pub status: RequestStatusName,
    /// `open`: the request has not ended; it is kept until it ends and its type's
    /// retention period after that has run out. `retention`: it ended and is kept until
    /// `kept_until`.
    #[schema(example = "retention")]
    pub reason: KeptReason,
    /// When the request ended (`null` while open).
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub ended_at: Option<OffsetDateTime>,
    /// The retention period of its service type.
    pub retention_days: i32,
    /// The date from which the daily sweep (or another erasure) deletes it; `null` while
    /// open.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub kept_until: Option<OffsetDateTime>,
}

/// Why a request is kept.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeptReason {
    Open,
    Retention,
}

impl From<&ErasureReport> for ErasureReportBody {
    fn from(report: &ErasureReport) -> Self {
        ErasureReportBody {
            citizen_id: report.citizen_id.as_uuid(),
            erased_at: report.erased_at,
            kept_requests: report.kept.iter().map(KeptRequestBody::from).collect(),
        }
    }
}

impl From<&KeptRequest> for KeptRequestBody {
    fn from(kept: &KeptRequest) -> Self {
        let (reason, kept_until) = match kept.hold {
            Hold::Open => (KeptReason::Open, None),
            Hold::Retained { until } => (KeptReason::Retention, Some(until)),
        };
        KeptRequestBody {
            request_id: kept.request.request_id.as_uuid(),
            service_type_id: kept.request.service_type_id.as_uuid(),
            status: kept.request.status.into(),
            reason,
            ended_at: kept.request.closed_at,
            retention_days: kept.request.retention_days,
            kept_until,
        }
    }
}
