//! The wire of exports (docs/data-protection.md "Export"): an export's state and, once
//! ready, its download URL; the parameters of the archive's signed URL; the problems
//! these operations document.

use crate::wire::common::{ActorBody, problem_response, wire_enum};
use consular_application::exports::ExportView;
use consular_domain::ExportState;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

wire_enum!(ExportStateName mirrors ExportState { Pending, Running, Ready, Failed, Expired });

/// An export of a citizen's data: one zip archive, built in the background.
#[derive(Debug, Serialize, ToSchema)]
pub struct ExportBody {
    pub id: Uuid,
    pub citizen_id: Uuid,
    pub mission_id: Uuid,
    /// The citizen, or the admin who asked for it.
    pub requested_by: ActorBody,
    /// `pending` and `running` until the archive is built; `ready` while it may be
    /// downloaded; `expired` once its time is up; `failed` if it could not be built.
    pub state: ExportStateName,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub finished_at: Option<OffsetDateTime>,
    /// Until when the archive may be downloaded (`ready`).
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub expires_at: Option<OffsetDateTime>,
    /// The archive's size (`ready`).
    pub size_bytes: Option<u64>,
    /// Why it failed (`failed`).
    pub failure: Option<String>,
    /// The archive (`ready`): the store's presigned URL (S3) or this service's own signed
    /// URL, working until `download_url_expires_at`; read the export again for a new one.
    pub download_url: Option<String>,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub download_url_expires_at: Option<OffsetDateTime>,
}

impl From<ExportView> for ExportBody {
    fn from(view: ExportView) -> Self {
        let e = view.export;
        let (download_url, download_url_expires_at) = match view.download {
            Some((url, at)) => (Some(url), Some(at)),
            None => (None, None),
        };
        ExportBody {
            id: e.id.as_uuid(),
            citizen_id: e.citizen_id.as_uuid(),
            mission_id: e.mission_id.as_uuid(),
            requested_by: e.requested_by.into(),
            state: view.state.into(),
            created_at: e.created_at,
            finished_at: e.finished_at,
            expires_at: e.expires_at,
            size_bytes: e.size_bytes,
            failure: e.failure,
            download_url,
            download_url_expires_at,
        }
    }
}

/// The zip archive.
// Only documented: the handler streams the bytes from storage.
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary)]
#[allow(dead_code)]
pub struct ArchiveBytes(Vec<u8>);

/// The parameters of an archive's signed URL, as issued.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ArchiveParams {
    /// Unix time after which the URL is refused.
    pub expires: i64,
    pub signature: String,
}

problem_response! {
    /// 409 of starting an export.
    ExportRunning = 409, "The citizen already has a pending or running export (`export_running`; `existing_export_id` names it)";
    /// 403 of a signed archive download.
    BadArchiveUrl = 403, "The URL's signature is wrong or it has expired (`invalid_download_url`)";
    /// 404 of a signed archive download.
    ArchiveGone = 404, "The archive has expired";
}
