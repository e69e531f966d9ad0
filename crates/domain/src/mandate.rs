//! What a principal acting for someone carries (`Principal::acting_for`): whom it acts
//! for and in which services (docs/representation.md "Acting"). A leaf of the domain, so
//! that `principal.rs` and `representation.rs` (which builds a mandate from the
//! representations in force: `Mandate::of`) both use it without using each other.

use crate::{CitizenId, MissionId, RepresentationId, ServiceTypeId};

/// Which services a representative acts in.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ServiceScope {
    /// Every service type, and what belongs to no service (documents not attached to a
    /// request).
    All,
    /// These service types only (1 to `representation::MAX_SERVICE_TYPES`, no repeats, sorted).
    Only(Vec<ServiceTypeId>),
}

impl ServiceScope {
    /// Whether the scope covers service type `service`; `None` (a document attached to
    /// no request) is covered by `All` only.
    pub fn covers(&self, service: Option<ServiceTypeId>) -> bool {
        match (self, service) {
            (ServiceScope::All, _) => true,
            (ServiceScope::Only(services), Some(service)) => services.contains(&service),
            (ServiceScope::Only(_), None) => false,
        }
    }
}

/// What an acting principal carries (`Principal::acting_for`): whom it acts for and in
/// which services, resolved at the moment of each call from the representations in force
/// between the two (docs/representation.md "Acting"). Several in force (a parent who is
/// also a guardian in some services) give the union of their services.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mandate {
    pub dependant: CitizenId,
    pub mission: MissionId,
    pub services: ServiceScope,
    /// The representations it rests on, oldest first.
    pub representations: Vec<RepresentationId>,
}
