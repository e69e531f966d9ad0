//! The audit trail: who changed what, when, through which client.

use crate::text_enum::text_enum;
use crate::{AuditEventId, CitizenId, ClientId, Principal, Subject};
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
    /// Whom the actor acted for (`On-Behalf-Of`): the dependant's id, `None` when the
    /// actor acted for themself (docs/representation.md "Traceability").
    pub on_behalf_of: Option<CitizenId>,
}

/// Who a trace records: the actor (a representative acting for someone stays the actor)
/// and whom they acted for. Every history, message and document built by a principal is
/// built from the principal (`Trace::from(&principal)`), so that the dependant is never
/// dropped; a bare `Subject` acted for themself (the system's jobs, fixtures).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trace {
    pub actor: Subject,
    pub on_behalf_of: Option<CitizenId>,
}

impl From<&Principal> for Trace {
    fn from(principal: &Principal) -> Self {
        Trace { actor: principal.subject, on_behalf_of: principal.on_behalf_of() }
    }
}

impl From<Subject> for Trace {
    fn from(actor: Subject) -> Self {
        Trace { actor, on_behalf_of: None }
    }
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
            on_behalf_of: actor.and_then(Principal::on_behalf_of),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MissionId, fixtures};

    #[test]
    fn an_entry_records_whom_an_acting_principal_acted_for() {
        let dependant = CitizenId::new();
        let acting = fixtures::acting_for(MissionId::new(), dependant);
        let at = OffsetDateTime::UNIX_EPOCH;
        let record =
            AuditRecord::new(Some(&acting), at, AuditAction::Created, "request", Uuid::nil(), vec![]);
        assert_eq!((record.actor, record.on_behalf_of), (Some(acting.subject), Some(dependant)));

        let own = Principal { acting_for: None, ..acting.clone() };
        let record = AuditRecord::new(Some(&own), at, AuditAction::Created, "request", Uuid::nil(), vec![]);
        assert_eq!((record.actor, record.on_behalf_of), (Some(own.subject), None));
        let system = AuditRecord::new(None, at, AuditAction::Erased, "request", Uuid::nil(), vec![]);
        assert_eq!((system.actor, system.on_behalf_of), (None, None));
    }

    #[test]
    fn a_trace_keeps_the_representative_as_the_actor() {
        let dependant = CitizenId::new();
        let acting = fixtures::acting_for(MissionId::new(), dependant);
        assert_eq!(Trace::from(&acting), Trace { actor: acting.subject, on_behalf_of: Some(dependant) });
        assert_eq!(Trace::from(acting.subject), Trace { actor: acting.subject, on_behalf_of: None });
    }
}
