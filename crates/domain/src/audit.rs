//! The audit trail: who changed what, when, through which client.

use crate::text_enum::text_enum;
use crate::{AuditEventId, ClientId, Principal, Subject};
use std::net::IpAddr;
use time::OffsetDateTime;
use uuid::Uuid;

text_enum!(
    /// What an audit entry records (`AuditRecord::action`).
    AuditAction ("audit action") {
        Created = "created",
        Updated = "updated",
        Disabled = "disabled",
        SecretRotated = "secret_rotated",
        /// A status field changed (activation, registration status, ...).
        StatusChanged = "status_changed",
        /// Service assignments of a staff member changed.
        Reassigned = "reassigned",
        /// A resource became a tombstone (a document).
        Deleted = "deleted",
        /// A download URL of a document was handed out (nothing changed).
        DownloadUrlIssued = "download_url_issued",
        /// A citizen was erased, or a request deleted when its retention ran out
        /// (docs/data-protection.md "Retention and erasure"); the entry names no value.
        Erased = "erased",
        /// A representation was ended (docs/representation.md); it is kept.
        Ended = "ended",
    }
);

/// One audit entry, written in the same transaction as the change it describes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRecord {
    pub id: AuditEventId,
    pub at: OffsetDateTime,
    /// `None` when the system itself acted (first-start bootstrap, CLI).
    pub actor: Option<Subject>,
    pub client_id: Option<ClientId>,
    /// The address the change was requested from (the principal's), `None` for the
    /// system and the command line, and for entries written before it was recorded.
    pub client_address: Option<IpAddr>,
    pub action: String,
    pub resource_type: String,
    pub resource_id: Uuid,
    pub changed_fields: Vec<String>,
}

impl AuditRecord {
    pub fn new(
        actor: Option<&Principal>,
        at: OffsetDateTime,
        action: AuditAction,
        resource_type: &str,
        resource_id: Uuid,
        changed_fields: Vec<String>,
    ) -> Self {
        AuditRecord {
            id: AuditEventId::new(),
            at,
            actor: actor.map(|p| p.subject),
            client_id: actor.map(|p| p.client_id),
            client_address: actor.and_then(|p| p.address),
            action: action.as_str().to_owned(),
            resource_type: resource_type.to_owned(),
            resource_id,
            changed_fields,
        }
    }
}
