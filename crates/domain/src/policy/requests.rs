//! Service requests: a citizen submits, lists, reads, messages and cancels (before a
//! decision) their own requests; staff and admins of the mission submit for its
//! citizens, and read, change, note and message all of its requests; global admins all.
//! Another principal's request is 404 and absent from lists; internal notes and status
//! changes need a staff or admin token (docs/requests.md, docs/api.md "Who sees what").
//! A representative acting for a citizen (`On-Behalf-Of`) is that citizen for the
//! requests of the services their mandate covers, and for nothing else
//! (docs/representation.md "Acting").

use super::common::{
    Access, Listing, Owned, STAFF_OR_ADMIN, acts_as_owner, require_scope, restrict_to_own_mission, visible,
    works_for,
};
use crate::representation::ServiceScope;
use crate::{CitizenId, MissionId, Principal, PrincipalKind, Role, Scope, ServiceTypeId, StaffId};

/// Which requests a list may show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestReach {
    /// Those of this citizen (the caller themself, or the dependant a representative acts
    /// for) in this mission (their token's): the mission is part of the identity, so a
    /// client of another mission bearing the same id lists nothing of theirs. With
    /// services: only those of these service types (a representative's mandate).
    Citizen(CitizenId, MissionId, Option<Vec<ServiceTypeId>>),
    /// Those of this mission; `None`: every mission.
    Mission(Option<MissionId>),
}

/// Submitting at all: any of the three scopes.
pub fn submit(actor: &Principal) -> Access {
    require_scope(actor, &[Scope::Citizen, Scope::Staff, Scope::Admin])
}

/// Submitting `request` (whose citizen, mission and service): a citizen for themself
/// (or, acting, for their dependant within the mandate), staff and admins for the
/// citizens of their mission. A refusal is an unknown citizen.
pub fn submit_for(actor: &Principal, request: &Owned) -> Access {
    read(actor, request)
}

/// Listing requests, given the mission and citizen the caller filters on.
pub fn list(
    actor: &Principal,
    asked_mission: Option<MissionId>,
    asked_citizen: Option<CitizenId>,
) -> Listing<RequestReach> {
    if actor.subject.kind == PrincipalKind::Citizen || !actor.has_any(STAFF_OR_ADMIN) {
        let Some(mission) = actor.mission else { return Listing::Empty };
        let (own, services) = match &actor.acting_for {
            None => (CitizenId(actor.subject.id.as_uuid()), None),
            Some(mandate) if mandate.mission == mission => match &mandate.services {
                ServiceScope::All => (mandate.dependant, None),
                ServiceScope::Only(services) => (mandate.dependant, Some(services.clone())),
            },
            Some(_) => return Listing::Empty,
        };
        if actor.subject.kind != PrincipalKind::Citizen
            || asked_citizen.is_some_and(|c| c != own)
            || asked_mission.is_some_and(|m| m != mission)
        {
            return Listing::Empty;
        }
        return Listing::Within(RequestReach::Citizen(own, mission, services));
    }
    match restrict_to_own_mission(actor, asked_mission) {
        Listing::Within(mission) => Listing::Within(RequestReach::Mission(mission)),
        Listing::Empty => Listing::Empty,
    }
}

/// Reading `request`, its messages, and posting on its thread.
pub fn read(actor: &Principal, request: &Owned) -> Access {
    visible(acts_as_owner(actor, request) || works_for(actor, request.mission))
}

/// Working on requests at all (status changes, notes, queues): a staff or admin token,
/// checked before the request is looked up.
pub fn work(actor: &Principal) -> Access {
    require_scope(actor, STAFF_OR_ADMIN)
}

/// Working on the request: changing its status, stage or assignee, and writing or
/// reading its internal notes (which also appear in the timeline only then).
pub fn work_on(actor: &Principal, request: &Owned) -> Access {
    work(actor)?;
    read(actor, request)?;
    visible(works_for(actor, request.mission))
}

/// Cancelling the request: the role the workflow judges the cancellation by.
pub fn cancel(actor: &Principal, request: &Owned) -> Access<Role> {
    read(actor, request)?;
    Ok(if works_for(actor, request.mission) { Role::Staff } else { Role::Citizen })
}

/// Reading the queue of staff member `member` of `mission`: the member themself or an
/// admin of the mission.
pub fn queue(actor: &Principal, member: StaffId, mission: MissionId) -> Access {
    work(actor)?;
    super::staff::read(actor, member, mission)
}

#[cfg(test)]
mod tests {
    use super::super::table::{HERE, MEMBER, OBJECT, OTHER, OWNER, check, show, show_value};
    use super::*;

    #[test]
    fn who_submits_reads_works_on_and_cancels_requests() {
        let (nf, scope) = ("404", "403 scope");
        check(
            ["submit", "submit for", "read/message", "work", "work on/notes", "cancel as"],
            &[
                ("global admin", ["ok", "ok", "ok", "ok", "ok", "Staff"]),
                ("global admin+staff", ["ok", "ok", "ok", "ok", "ok", "Staff"]),
                ("admin here", ["ok", "ok", "ok", "ok", "ok", "Staff"]),
                ("admin+staff here", ["ok", "ok", "ok", "ok", "ok", "Staff"]),
                ("admin elsewhere", ["ok", nf, nf, "ok", nf, nf]),
                ("staff here", ["ok", "ok", "ok", "ok", "ok", "Staff"]),
                ("staff elsewhere", ["ok", nf, nf, "ok", nf, nf]),
                ("owner", ["ok", "ok", "ok", scope, scope, "Citizen"]),
                ("owner elsewhere", ["ok", nf, nf, scope, scope, nf]),
                ("citizen here", ["ok", nf, nf, scope, scope, nf]),
                // Acting for OWNER, the request is theirs within the mandate's services.
                ("representative", ["ok", "ok", "ok", scope, scope, "Citizen"]),
                ("representative in scope", ["ok", "ok", "ok", scope, scope, "Citizen"]),
                ("representative out of scope", ["ok", nf, nf, scope, scope, nf]),
                ("representative of another", ["ok", nf, nf, scope, scope, nf]),
                ("representative elsewhere", ["ok", nf, nf, scope, scope, nf]),
            ],
            |actor| {
                [
                    show(submit(actor)),
                    show(submit_for(actor, &OBJECT)),
                    show(read(actor, &OBJECT)),
                    show(work(actor)),
                    show(work_on(actor, &OBJECT)),
                    show(cancel(actor, &OBJECT)),
                ]
            },
        );
    }

    #[test]
    fn who_lists_which_requests_and_reads_which_queue() {
        let (owner, member) = (CitizenId(OWNER), StaffId(MEMBER));
        let own = "Within(Citizen((OWNER), (HERE), None))";
        let here = "Within(Mission(Some((HERE))))";
        let (nf, scope) = ("404", "403 scope");
        check(
            ["list", "list HERE", "list OTHER", "list OWNER's", "queue of MEMBER"],
            &[
                (
                    "global admin",
                    [
                        "Within(Mission(None))",
                        here,
                        "Within(Mission(Some((OTHER))))",
                        "Within(Mission(None))",
                        "ok",
                    ],
                ),
                ("admin here", [here, here, "Empty", here, "ok"]),
                ("admin+staff here", [here, here, "Empty", here, "ok"]),
                (
                    "admin elsewhere",
                    [
                        "Within(Mission(Some((OTHER))))",
                        "Empty",
                        "Within(Mission(Some((OTHER))))",
                        "Within(Mission(Some((OTHER))))",
                        nf,
                    ],
                ),
                ("staff here", [here, here, "Empty", here, nf]),
                ("member", [here, here, "Empty", here, "ok"]),
                (
                    "member elsewhere",
                    [
                        "Within(Mission(Some((OTHER))))",
                        "Empty",
                        "Within(Mission(Some((OTHER))))",
                        "Within(Mission(Some((OTHER))))",
                        nf,
                    ],
                ),
                ("owner", [own, own, "Empty", own, scope]),
                // The owner's id through a client of another mission: that mission only.
                (
                    "owner elsewhere",
                    [
                        "Within(Citizen((OWNER), (OTHER), None))",
                        "Empty",
                        "Within(Citizen((OWNER), (OTHER), None))",
                        "Within(Citizen((OWNER), (OTHER), None))",
                        scope,
                    ],
                ),
                (
                    "citizen here",
                    [
                        "Within(Citizen((SELF), (HERE), None))",
                        "Within(Citizen((SELF), (HERE), None))",
                        "Empty",
                        "Empty",
                        scope,
                    ],
                ),
                // Acting for OWNER: OWNER's requests in the mandate's services, never
                // the representative's own nor another mission's.
                ("representative", [own, own, "Empty", own, scope]),
                (
                    "representative in scope",
                    [
                        "Within(Citizen((OWNER), (HERE), Some([(SERVICE)])))",
                        "Within(Citizen((OWNER), (HERE), Some([(SERVICE)])))",
                        "Empty",
                        "Within(Citizen((OWNER), (HERE), Some([(SERVICE)])))",
                        scope,
                    ],
                ),
                (
                    "representative elsewhere",
                    [
                        "Within(Citizen((OWNER), (OTHER), None))",
                        "Empty",
                        "Within(Citizen((OWNER), (OTHER), None))",
                        "Within(Citizen((OWNER), (OTHER), None))",
                        scope,
                    ],
                ),
            ],
            |actor| {
                let anonymise = |shown: String| match actor.subject.id.as_uuid() {
                    id if id != OWNER => shown.replace(&id.to_string(), "SELF"),
                    _ => shown,
                };
                [
                    anonymise(show_value(list(actor, None, None))),
                    anonymise(show_value(list(actor, Some(HERE), None))),
                    anonymise(show_value(list(actor, Some(OTHER), None))),
                    anonymise(show_value(list(actor, None, Some(owner)))),
                    show(queue(actor, member, HERE)),
                ]
            },
        );
    }
}
