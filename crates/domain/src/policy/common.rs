//! What the areas' policies share: the policy's answer (`Access`, `Denied`, `Listing`)
//! and the checks every area builds on (scopes, admins, the caller themself, staff of a
//! mission). `policy/mod.rs` re-exports the answer; the areas use the checks from here.

use crate::{CitizenId, MissionId, Principal, PrincipalKind, Scope};
use uuid::Uuid;

/// Why the policy refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denied {
    /// The caller may not see the object: answered like an id that does not exist.
    NotFound,
    /// The scope is right but the caller's reach is not (a mission admin acting on global
    /// configuration, or on another mission); the sentence says why.
    Forbidden(&'static str),
    /// The token holds none of these scopes.
    InsufficientScope(&'static [Scope]),
}

/// The policy's answer: allowed (with what the caller may do, where that varies), or
/// refused.
pub type Access<T = ()> = Result<T, Denied>;

/// What a list shows the caller: the items within a reach, or nothing. Asking for another
/// mission's list is an empty list, not an error (docs/api.md, decision 23).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing<R> {
    Within(R),
    Empty,
}

pub(super) const ADMIN: &[Scope] = &[Scope::Admin];
pub(super) const CITIZEN: &[Scope] = &[Scope::Citizen];
pub(super) const STAFF_OR_ADMIN: &[Scope] = &[Scope::Staff, Scope::Admin];

/// The principal holds at least one of `scopes`.
pub(super) fn require_scope(actor: &Principal, scopes: &'static [Scope]) -> Access {
    if actor.has_any(scopes) { Ok(()) } else { Err(Denied::InsufficientScope(scopes)) }
}

/// Global configuration (missions, the catalog, the audit log) belongs to global admins.
pub(super) fn require_global_admin(actor: &Principal, why: &'static str) -> Access {
    require_scope(actor, ADMIN)?;
    if actor.is_global_admin() { Ok(()) } else { Err(Denied::Forbidden(why)) }
}

/// An admin of `mission` (or a global admin) manages what belongs to it.
pub(super) fn require_admin_of(actor: &Principal, mission: MissionId, why: &'static str) -> Access {
    require_scope(actor, ADMIN)?;
    if actor.administers(mission) { Ok(()) } else { Err(Denied::Forbidden(why)) }
}

/// Whether the caller is the principal `id` of `kind` in `mission`, acting with that
/// kind's scope. The mission is part of the identity: a client minted elsewhere for the
/// same principal id does not reach this mission's objects.
pub(super) fn is_self(actor: &Principal, kind: PrincipalKind, id: Uuid, mission: MissionId) -> bool {
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

/// The citizen behind `/citizens/me/...`: the caller themself, with the citizen scope,
/// and the mission their token is bound to.
pub(super) fn own_citizen(actor: &Principal) -> Access<(CitizenId, MissionId)> {
    match actor.mission {
        Some(mission)
            if actor.subject.kind == PrincipalKind::Citizen && actor.scopes.contains(Scope::Citizen) =>
        {
            Ok((CitizenId(actor.subject.id.as_uuid()), mission))
        }
        _ => Err(Denied::InsufficientScope(CITIZEN)),
    }
}

/// Staff of `mission` acting with the staff scope.
pub(super) fn is_staff_of(actor: &Principal, mission: MissionId) -> bool {
    actor.scopes.contains(Scope::Staff) && actor.mission == Some(mission)
}

/// Staff of `mission` or an admin of it: those who work on the mission's citizens and
/// requests.
pub(super) fn works_for(actor: &Principal, mission: MissionId) -> bool {
    is_staff_of(actor, mission) || actor.administers(mission)
}

/// `Ok` when the caller may see the object, `NotFound` otherwise.
pub(super) fn visible(sees: bool) -> Access {
    if sees { Ok(()) } else { Err(Denied::NotFound) }
}

/// The mission a list is restricted to: a mission-bound caller sees only their own
/// mission, whatever they asked for (another mission's list is empty rather than a
/// leak); a global caller sees what they asked for (`None`: every mission).
pub(super) fn restrict_to_own_mission(
    actor: &Principal,
    asked: Option<MissionId>,
) -> Listing<Option<MissionId>> {
    match (actor.mission, asked) {
        (None, asked) => Listing::Within(asked),
        (Some(own), None) => Listing::Within(Some(own)),
        (Some(own), Some(asked)) if own == asked => Listing::Within(Some(own)),
        (Some(_), Some(_)) => Listing::Empty,
    }
}
