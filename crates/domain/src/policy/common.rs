//! What the areas' policies share: the policy's answer (`Access`, `Denied`, `Listing`)
//! and the checks every area builds on (scopes, admins, the caller themself, staff of a
//! mission). `policy/mod.rs` re-exports the answer; the areas use the checks from here.

use crate::{
    Appointment, Citizen, CitizenId, MissionId, Principal, PrincipalKind, Scope, ServiceRequest,
    ServiceTypeId,
};
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

/// A citizen's object as the policies judge it: whose it is, in which mission, and the
/// service it belongs to (`None`: none, a document attached to no request). The service
/// matters to a representative only, whose mandate may cover some services.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owned {
    pub citizen: CitizenId,
    pub mission: MissionId,
    pub service: Option<ServiceTypeId>,
}

impl Owned {
    /// What is being made for `citizen` (a submission, an upload, a booking) in `service`.
    pub fn new_for(citizen: &Citizen, service: Option<ServiceTypeId>) -> Self {
        Owned { citizen: citizen.id, mission: citizen.mission_id, service }
    }
}

impl From<&ServiceRequest> for Owned {
    fn from(r: &ServiceRequest) -> Self {
        Owned { citizen: r.citizen_id, mission: r.mission_id, service: Some(r.service_type_id) }
    }
}

impl From<&Appointment> for Owned {
    fn from(a: &Appointment) -> Self {
        Owned { citizen: a.citizen_id, mission: a.mission_id, service: Some(a.service_type_id) }
    }
}

/// Whether the caller is the principal `id` of `kind` in `mission`, acting with that
/// kind's scope. The mission is part of the identity: a client minted elsewhere for the
/// same principal id does not reach this mission's objects. A call acting for someone
/// else (`On-Behalf-Of`) is nobody's self: what a representative may reach is
/// [`acts_as_owner`]'s and [`represents`]'s to say.
pub(super) fn is_self(actor: &Principal, kind: PrincipalKind, id: Uuid, mission: MissionId) -> bool {
    if actor.acting_for.is_some() {
        return false;
    }
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

/// Whether the call acts for citizen `citizen` of `mission` (a citizen's token of that
/// mission naming them in `On-Behalf-Of`, with a representation in force), in whatever
/// services.
pub(super) fn represents(actor: &Principal, citizen: CitizenId, mission: MissionId) -> bool {
    actor.acting_for.as_ref().is_some_and(|mandate| {
        mandate.dependant == citizen
            && mandate.mission == mission
            && actor.mission == Some(mission)
            && actor.subject.kind == PrincipalKind::Citizen
            && actor.scopes.contains(Scope::Citizen)
    })
}

/// Whether the caller acts as the citizen who owns `object`: the citizen themself, or a
/// representative acting for them under a mandate covering the object's service.
pub(super) fn acts_as_owner(actor: &Principal, object: &Owned) -> bool {
    match &actor.acting_for {
        None => is_self(actor, PrincipalKind::Citizen, object.citizen.as_uuid(), object.mission),
        Some(mandate) => {
            represents(actor, object.citizen, object.mission) && mandate.services.covers(object.service)
        }
    }
}

/// What is a citizen's own alone (their data rights, their representations, their email
/// preferences) is not done on someone else's behalf (docs/representation.md "Acting").
pub(super) fn not_acting(actor: &Principal) -> Access {
    match actor.acting_for {
        None => Ok(()),
        Some(_) => Err(Denied::Forbidden("this is not done on behalf of someone else")),
    }
}

/// The citizen behind `/citizens/me/...`: the caller themself, with the citizen scope,
/// and the mission their token is bound to; never on someone else's behalf.
pub(super) fn own_citizen(actor: &Principal) -> Access<(CitizenId, MissionId)> {
    not_acting(actor)?;
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
