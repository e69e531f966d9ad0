//! The audit trail: who changed what, when, through which client.

use crate::{AuditEventId, ClientId, Principal, Subject};
use std::net::IpAddr;
use time::OffsetDateTime;
use uuid::Uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditAction {
    Created,
    Updated,
    Disabled,
    SecretRotated,
    /// A status field changed (activation, registration status, ...).
    StatusChanged,
    /// Service assignments of a staff member changed.
    Reassigned,
    /// A resource became a tombstone (a document).
    Deleted,
    /// A download URL of a document was handed out (nothing changed).
    DownloadUrlIssued,
}

impl AuditAction {
    pub fn as_str(self) -> &'static str {
        match self {
            AuditAction::Created => "created",
            AuditAction::Updated => "updated",
            AuditAction::Disabled => "disabled",
            AuditAction::SecretRotated => "secret_rotated",
            AuditAction::StatusChanged => "status_changed",
            AuditAction::Reassigned => "reassigned",
            AuditAction::Deleted => "deleted",
            AuditAction::DownloadUrlIssued => "download_url_issued",
        }
    }
}

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
