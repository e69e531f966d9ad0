//! Service requests: a citizen submits, lists, reads, messages and cancels (before a
//! decision) their own requests; staff and admins of the mission submit for its
//! citizens, and read, change, note and message all of its requests; global admins all.
//! Another principal's request is 404 and absent from lists; internal notes and status
//! changes need a staff or admin token (docs/requests.md, docs/api.md "Who sees what").

use super::citizens;
use super::common::{
    Access, Listing, STAFF_OR_ADMIN, is_self, require_scope, restrict_to_own_mission, visible, works_for,
};
use crate::{CitizenId, MissionId, Principal, PrincipalKind, Role, Scope, StaffId};

/// Which requests a list may show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestReach {
    /// Those of this citizen (the caller themself) in this mission (their token's): the
    /// mission is part of the identity, so a client of another mission bearing the same
    /// id lists nothing of theirs.
    Citizen(CitizenId, MissionId),
    /// Those of this mission; `None`: every mission.
    Mission(Option<MissionId>),
}

/// Submitting at all: any of the three scopes.
pub fn submit(actor: &Principal) -> Access {
    require_scope(actor, &[Scope::Citizen, Scope::Staff, Scope::Admin])
}

/// Submitting for citizen `citizen` of `mission`: a citizen for themself, staff and
/// admins for the citizens of their mission. A refusal is an unknown citizen.
pub fn submit_for(actor: &Principal, citizen: CitizenId, mission: MissionId) -> Access {
    citizens::read(actor, citizen, mission)?;
    visible(actor.subject.kind == PrincipalKind::Citizen || works_for(actor, mission))
}

/// Listing requests, given the mission and citizen the caller filters on.
pub fn list(
    actor: &Principal,
    asked_mission: Option<MissionId>,
    asked_citizen: Option<CitizenId>,
) -> Listing<RequestReach> {
    if actor.subject.kind == PrincipalKind::Citizen || !actor.has_any(STAFF_OR_ADMIN) {
        let own = CitizenId(actor.subject.id.as_uuid());
        let Some(mission) = actor.mission else { return Listing::Empty };
        if actor.subject.kind != PrincipalKind::Citizen
            || asked_citizen.is_some_and(|c| c != own)
            || asked_mission.is_some_and(|m| m != mission)
        {
            return Listing::Empty;
        }
        return Listing::Within(RequestReach::Citizen(own, mission));
    }
    match restrict_to_own_mission(actor, asked_mission) {
        Listing::Within(mission) => Listing::Within(RequestReach::Mission(mission)),
        Listing::Empty => Listing::Empty,
    }
}

/// Reading the request of citizen `owner` in `mission`, its messages, and posting on its
/// thread.
pub fn read(actor: &Principal, owner: CitizenId, mission: MissionId) -> Access {
    visible(is_self(actor, PrincipalKind::Citizen, owner.as_uuid(), mission) || works_for(actor, mission))
}

/// Working on requests at all (status changes, notes, queues): a staff or admin token,
/// checked before the request is looked up.
pub fn work(actor: &Principal) -> Access {
    require_scope(actor, STAFF_OR_ADMIN)
}

/// Working on the request: changing its status, stage or assignee, and writing or
/// reading its internal notes (which also appear in the timeline only then).
pub fn work_on(actor: &Principal, owner: CitizenId, mission: MissionId) -> Access {
    work(actor)?;
    read(actor, owner, mission)?;
    visible(works_for(actor, mission))
}

/// Cancelling the request: the role the workflow judges the cancellation by.
pub fn cancel(actor: &Principal, owner: CitizenId, mission: MissionId) -> Access<Role> {
    read(actor, owner, mission)?;
    Ok(if works_for(actor, mission) { Role::Staff } else { Role::Citizen })
}

/// Reading the queue of staff member `member` of `mission`: the member themself or an
/// admin of the mission.
pub fn queue(actor: &Principal, member: StaffId, mission: MissionId) -> Access {
    work(actor)?;
    super::staff::read(actor, member, mission)
}

#[cfg(test)]
mod tests {
    use super::super::table::{HERE, MEMBER, OTHER, OWNER, check, show, show_value};
    use super::*;

    #[test]
    fn who_submits_reads_works_on_and_cancels_requests() {
        let owner = CitizenId(OWNER);
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
            ],
            |actor| {
                [
                    show(submit(actor)),
                    show(submit_for(actor, owner, HERE)),
                    show(read(actor, owner, HERE)),
                    show(work(actor)),
                    show(work_on(actor, owner, HERE)),
                    show(cancel(actor, owner, HERE)),
                ]
            },
        );
    }

    #[test]
    fn who_lists_which_requests_and_reads_which_queue() {
        let (owner, member) = (CitizenId(OWNER), StaffId(MEMBER));
        let own = "Within(Citizen((OWNER), (HERE)))";
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
                        "Within(Citizen((OWNER), (OTHER)))",
                        "Empty",
                        "Within(Citizen((OWNER), (OTHER)))",
                        "Within(Citizen((OWNER), (OTHER)))",
                        scope,
                    ],
                ),
                (
                    "citizen here",
                    [
                        "Within(Citizen((SELF), (HERE)))",
                        "Within(Citizen((SELF), (HERE)))",
                        "Empty",
                        "Empty",
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
