//! Who may act on what: the checks every use case shares. Objects the caller may not
//! see are reported as `NotFound` by the use cases, never as "forbidden".

use crate::ServiceError;
use consular_domain::{MissionId, Principal, PrincipalKind, Scope};
use uuid::Uuid;

pub use crate::error::require_scope;

/// Global configuration (missions, the catalog, the audit log) belongs to global admins.
pub fn require_global_admin(actor: &Principal, what: &'static str) -> Result<(), ServiceError> {
    require_scope(actor, &[Scope::Admin])?;
    if actor.is_global_admin() { Ok(()) } else { Err(ServiceError::Forbidden(what)) }
}

/// An admin of `mission` (or a global admin) may manage what belongs to it.
pub fn require_admin_of(
    actor: &Principal,
    mission: MissionId,
    what: &'static str,
) -> Result<(), ServiceError> {
    require_scope(actor, &[Scope::Admin])?;
    if actor.administers(mission) { Ok(()) } else { Err(ServiceError::Forbidden(what)) }
}

/// Whether the caller is the principal `id` of `kind` in `mission`, acting with that
/// kind's scope. The mission is part of the identity: a client minted elsewhere for the
/// same principal id does not reach this mission's objects.
pub fn is_self(actor: &Principal, kind: PrincipalKind, id: Uuid, mission: MissionId) -> bool {
    let scope = match kind {
        PrincipalKind::Admin => Scope::Admin,
        PrincipalKind::Staff => Scope::Staff,
        PrincipalKind::Citizen => Scope::Citizen,
    };
    actor.subject.kind == kind
        && actor.subject.id.as_uuid() == id
        && actor.mission == Some(mission)
        && actor.scopes.contains(scope)
}

/// Staff of `mission` acting with the staff scope.
pub fn is_staff_of(actor: &Principal, mission: MissionId) -> bool {
    actor.scopes.contains(Scope::Staff) && actor.mission == Some(mission)
}

/// A mission-bound caller asked to list another mission's objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OtherMission;

/// The mission a list is restricted to: a mission-bound caller sees only their own
/// mission, whatever they asked for; `OtherMission` when they asked for another mission,
/// whose list is then empty rather than a leak.
pub fn restrict_to_own_mission(
    actor: &Principal,
    asked: Option<MissionId>,
) -> Result<Option<MissionId>, OtherMission> {
    match (actor.mission, asked) {
        (None, asked) => Ok(asked),
        (Some(own), None) => Ok(Some(own)),
        (Some(own), Some(asked)) if own == asked => Ok(Some(own)),
        (Some(_), Some(_)) => Err(OtherMission),
    }
}
