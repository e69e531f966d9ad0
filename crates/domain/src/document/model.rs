//! A document as it is stored, and the statuses it goes through; its state machine
//! (`Document::upload`, `verify`, ...) is in `document/mod.rs`, what a request's
//! checklist makes of it in `checklist.rs`.

use crate::text_enum::text_enum;
use crate::{CitizenId, DocumentId, MissionId, Reason, RequestId, Subject};
use time::OffsetDateTime;

text_enum!(
    /// Where a document stands (docs/documents.md "States").
    DocumentStatus ("document status") {
        Uploaded = "uploaded",
        Verified = "verified",
        Rejected = "rejected",
        Deleted = "deleted",
    }
);

text_enum!(
    /// Whether the bytes went through the malware scanner before the document became
    /// visible. An infected file is never stored, so there is no `infected`.
    ScanStatus ("scan status") {
        /// The scanner found nothing.
        Clean = "clean",
        /// No scanner is configured: the upload was accepted unscanned.
        NotConfigured = "not_configured",
    }
);

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Document {
    pub id: DocumentId,
    pub mission_id: MissionId,
    pub citizen_id: CitizenId,
    pub request_id: Option<RequestId>,
    pub kind: String,
    pub status: DocumentStatus,
    /// The last path segment of the name it was uploaded under: shown, never used.
    pub file_name: String,
    pub media_type: String,
    pub size_bytes: u64,
    pub sha256: String,
    /// Where the bytes are (opaque to everything but the blob store).
    pub blob_key: String,
    pub scan: ScanStatus,
    /// Why staff rejected it, for the citizen to read; kept after a deletion.
    #[serde(with = "reason_text")]
    pub rejection_reason: Option<Reason>,
    pub uploaded_by: Subject,
    /// Whom it was uploaded for, when the uploader acted for someone (the owner,
    /// `citizen_id`); docs/representation.md "Traceability".
    #[serde(default)]
    pub on_behalf_of: Option<CitizenId>,
    /// Who verified or rejected it, and when.
    pub decided_by: Option<Subject>,
    pub decided_at: Option<OffsetDateTime>,
    pub deleted_at: Option<OffsetDateTime>,
    /// Who made it a tombstone (`None` on a tombstone written before this was kept).
    #[serde(default)]
    pub deleted_by: Option<Subject>,
    pub version: i64,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

/// `Reason` as its text in serde (idempotent creation snapshots hold documents); a
/// stored reason is read back through `Reason::required`, the rule it was made under.
mod reason_text {
    use crate::Reason;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(reason: &Option<Reason>, serializer: S) -> Result<S::Ok, S::Error> {
        match reason {
            Some(reason) => serializer.serialize_some(reason.as_str()),
            None => serializer.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Reason>, D::Error> {
        Option::<String>::deserialize(deserializer)?
            .map(|text| Reason::required(Some(text)).map_err(serde::de::Error::custom))
            .transpose()
    }
}
