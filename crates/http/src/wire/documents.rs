//! The wire of `/api/v1/documents`: a document's metadata and download URL, the upload
//! form (as documented; the handler reads it as a stream), the decision, the parameters
//! of the signed URL and of the list, and the problems these operations document.

use crate::wire::common::{ActorBody, problem_response, wire_enum};
use consular_application::documents::{Decision, DocumentDownload};
use consular_domain::{Document, DocumentStatus, ScanStatus, ValidationErrors};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

wire_enum!(DocumentStatusName mirrors DocumentStatus { Uploaded, Verified, Rejected, Deleted });
wire_enum!(ScanStatusName mirrors ScanStatus { Clean, NotConfigured });

/// A document's metadata (never its bytes).
#[derive(Debug, Serialize, ToSchema)]
pub struct DocumentBody {
    pub id: Uuid,
    pub mission_id: Uuid,
    pub citizen_id: Uuid,
    pub request_id: Option<Uuid>,
    /// A document kind of the catalog.
    pub kind: String,
    pub status: DocumentStatusName,
    /// The last path segment of the name it was uploaded under (metadata only).
    pub file_name: String,
    /// Detected from the bytes.
    pub media_type: String,
    pub size_bytes: u64,
    /// Lower-case hex SHA-256 of the bytes.
    pub sha256: String,
    pub scan: ScanStatusName,
    pub rejection_reason: Option<String>,
    pub uploaded_by: ActorBody,
    /// Whom the uploader acted for (`On-Behalf-Of`: the owner, `citizen_id`); absent
    /// when they uploaded for themself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_behalf_of: Option<Uuid>,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub uploaded_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub decided_at: Option<OffsetDateTime>,
    pub version: i64,
}

impl From<&Document> for DocumentBody {
    fn from(d: &Document) -> Self {
        DocumentBody {
            id: d.id.as_uuid(),
            mission_id: d.mission_id.as_uuid(),
            citizen_id: d.citizen_id.as_uuid(),
            request_id: d.request_id.map(|r| r.as_uuid()),
            kind: d.kind.clone(),
            status: d.status.into(),
            file_name: d.file_name.clone(),
            media_type: d.media_type.clone(),
            size_bytes: d.size_bytes,
            sha256: d.sha256.clone(),
            scan: d.scan.into(),
            rejection_reason: d.rejection_reason.as_ref().map(|r| r.as_str().to_owned()),
            uploaded_by: d.uploaded_by.into(),
            on_behalf_of: d.on_behalf_of.map(|c| c.as_uuid()),
            uploaded_at: d.created_at,
            decided_at: d.decided_at,
            version: d.version,
        }
    }
}

/// A document with a URL that fetches its bytes until it expires.
#[derive(Debug, Serialize, ToSchema)]
pub struct DocumentDownloadBody {
    #[serde(flatten)]
    pub document: DocumentBody,
    /// The store's presigned URL (S3), or this service's own signed URL.
    pub download_url: String,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub download_url_expires_at: OffsetDateTime,
}

impl From<DocumentDownload> for DocumentDownloadBody {
    fn from(download: DocumentDownload) -> Self {
        DocumentDownloadBody {
            document: DocumentBody::from(&download.document),
            download_url: download.url,
            download_url_expires_at: download.expires_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DocumentList {
    pub items: Vec<DocumentBody>,
    pub next_cursor: Option<String>,
}

/// The upload form. Its parts in any order, each once; no other part.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // documents the multipart body; the handler reads the parts as a stream
pub struct UploadDocumentForm {
    /// A document kind of the catalog (one the request's service type requires when
    /// `request_id` is given).
    #[schema(min_length = 1, max_length = 64, pattern = "^[a-z][a-z0-9_]*$")]
    kind: String,
    /// A request of the citizen to attach the document to.
    request_id: Option<Uuid>,
    /// Staff and admins: the citizen (required); citizens: omitted or their own id.
    citizen_id: Option<Uuid>,
    /// The file (PDF, JPEG or PNG by default); its name is kept as metadata only.
    #[schema(value_type = String, format = Binary)]
    file: Vec<u8>,
}

/// The document's bytes (or the range asked for), in its stored media type.
// Only documented: the handler streams the bytes from storage.
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary)]
#[allow(dead_code)]
pub struct DocumentBytes(Vec<u8>);

/// Staff's decision.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyDocument {
    pub status: DecisionName,
    /// Required with `rejected`: what the citizen must fix.
    #[schema(min_length = 1, max_length = 4000)]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DecisionName {
    Verified,
    Rejected,
}

/// Only a rejection has a reason; that it needs one is the core's rule.
impl TryFrom<VerifyDocument> for Decision {
    type Error = ValidationErrors;

    fn try_from(body: VerifyDocument) -> Result<Self, ValidationErrors> {
        match (body.status, body.reason) {
            (DecisionName::Verified, None) => Ok(Decision::Verify),
            (DecisionName::Verified, Some(_)) => {
                Err(ValidationErrors::single("/reason", "not_allowed", "only a rejection has a reason"))
            }
            (DecisionName::Rejected, reason) => Ok(Decision::Reject { reason }),
        }
    }
}

/// The parameters of a signed download URL, as issued.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ContentParams {
    /// The document version the URL was issued for.
    pub version: i64,
    /// Unix time after which the URL is refused.
    pub expires: i64,
    pub signature: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DocumentListParams {
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page.
    #[param(min_length = 22, max_length = 22, pattern = "^[A-Za-z0-9_-]{22}$")]
    pub cursor: Option<String>,
    pub citizen_id: Option<Uuid>,
    pub request_id: Option<Uuid>,
    #[param(min_length = 1, max_length = 64)]
    pub kind: Option<String>,
    /// One or more statuses, repeated (`status=uploaded&status=rejected`) or comma
    /// separated (`status=uploaded,rejected`; both may be mixed).
    #[serde(default, deserialize_with = "crate::wire::common::comma_separated")]
    #[param(value_type = Option<Vec<DocumentStatusName>>, style = Form, explode, inline)]
    pub status: Option<Vec<DocumentStatusName>>,
}

problem_response! {
    /// 409 of an upload.
    AlreadyPresent = 409, "A document of this kind is already uploaded or verified for this citizen and request (`document_already_present`; `existing_document_id` names it), also when it was uploaded at the same time as this one, or the Idempotency-Key is in use";
    /// 413 of an upload.
    FileTooLarge = 413, "The file exceeds the upload limit";
    /// 415 of an upload.
    FileNotAccepted = 415, "Not multipart/form-data, or the file's bytes are not an accepted type or disagree with its declared type or name";
    /// 422 of an upload.
    UploadInvalid = 422, "A field is invalid, the file is empty (`empty_file`) or the malware scanner refused it (`malware_detected`)";
    /// 503 of an upload.
    ScannerOrStorageUnavailable = 503, "The malware scanner or the storage is unavailable; retry later",
        headers (("Retry-After" = String, description = "Seconds to wait"));
    /// 403 of a signed download.
    BadDownloadUrl = 403, "The URL's signature is wrong or it has expired";
    /// 404 of a signed download.
    DownloadGone = 404, "The document was deleted or changed since the URL was issued";
    /// 416 of a signed download.
    RangeNotSatisfiable = 416, "The range is outside the file",
        headers (("Content-Range" = String, description = "`bytes */size`"));
    /// 409 of a deletion.
    NotDeletable = 409, "Not deletable by you now; `allowed_actions` lists what is";
    /// 409 of a decision.
    NotAwaitingReview = 409, "The document is not awaiting review; `allowed_actions` lists what is possible";
    /// 412 of the changes of a document.
    DocumentChanged = 412, "The document changed since you read it";
}
