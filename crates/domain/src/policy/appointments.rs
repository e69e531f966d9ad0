//! Appointments: admins of the mission (and global admins) manage its slots; callers
//! bound to a mission read that mission's availability (another mission's is 404), global
//! admins any; a citizen books, reads, lists, reschedules and cancels their own
//! appointments; staff and admins of the mission book for its citizens, read and list all
//! of its appointments (a day's list), reschedule and cancel any, and record attendance.
//! Another principal's appointment is 404 and absent from lists (docs/appointments.md
//! "Who may do what").
//!
//! Appointments are seen by exactly those who see the citizen's requests, so the reach of
//! a listing and the read rule are those of `policy::requests`.

use super::common::{Access, Listing, Owned, require_admin_of, require_scope, visible};
use super::requests::{self, RequestReach};
use crate::{CitizenId, MissionId, Principal, Role, Scope};

/// Creating, changing or closing the slots of `mission`.
pub fn manage_slots(actor: &Principal, mission: MissionId) -> Access {
    require_admin_of(actor, mission, "only admins of the mission manage its slots")
}

/// Reading the availability (open slots with free seats) of `mission`: any of the three
/// scopes, within the caller's own mission unless they are global.
pub fn availability(actor: &Principal, mission: MissionId) -> Access {
    require_scope(actor, &[Scope::Citizen, Scope::Staff, Scope::Admin])?;
    visible(actor.mission.is_none_or(|own| own == mission))
}

/// Booking at all: any of the three scopes.
pub fn book(actor: &Principal) -> Access {
    requests::submit(actor)
}

/// Booking `appointment` (whose citizen, mission and service): a citizen for themself,
/// staff and admins for the citizens of their mission. A refusal is an unknown citizen.
pub fn book_for(actor: &Principal, appointment: &Owned) -> Access {
    requests::submit_for(actor, appointment)
}

/// Listing appointments, given the mission and citizen the caller filters on.
pub fn list(
    actor: &Principal,
    asked_mission: Option<MissionId>,
    asked_citizen: Option<CitizenId>,
) -> Listing<RequestReach> {
    requests::list(actor, asked_mission, asked_citizen)
}

/// Reading `appointment` (and its calendar file).
pub fn read(actor: &Principal, appointment: &Owned) -> Access {
    requests::read(actor, appointment)
}

/// Rescheduling or cancelling the appointment: the role the slot rules judge it by (the
/// citizen within the cancellation cut-off only; staff and admins always).
pub fn change(actor: &Principal, appointment: &Owned) -> Access<Role> {
    requests::cancel(actor, appointment)
}

/// Recording attendance at all: a staff or admin token, checked before the appointment
/// is looked up.
pub fn attend(actor: &Principal) -> Access {
    requests::work(actor)
}

/// Recording attendance of `appointment`: staff and admins of the mission.
pub fn attend_of(actor: &Principal, appointment: &Owned) -> Access {
    requests::work_on(actor, appointment)
}

#[cfg(test)]
mod tests {
    use super::super::table::{HERE, OBJECT, OTHER, OWNER, caller, check, show};
    use super::*;

    #[test]
    fn who_manages_slots_reads_availability_books_changes_and_attends() {
        let (nf, scope, forbidden) = ("404", "403 scope", "403 forbidden");
        check(
            [
                "manage slots",
                "availability",
                "availability OTHER",
                "book",
                "book for",
                "read",
                "change as",
                "attend",
                "attend this",
            ],
            &[
                ("global admin", ["ok", "ok", "ok", "ok", "ok", "ok", "Staff", "ok", "ok"]),
                ("global admin+staff", ["ok", "ok", "ok", "ok", "ok", "ok", "Staff", "ok", "ok"]),
                ("admin here", ["ok", "ok", nf, "ok", "ok", "ok", "Staff", "ok", "ok"]),
                ("admin+staff here", ["ok", "ok", nf, "ok", "ok", "ok", "Staff", "ok", "ok"]),
                ("admin elsewhere", [forbidden, nf, "ok", "ok", nf, nf, nf, "ok", nf]),
                ("staff here", [scope, "ok", nf, "ok", "ok", "ok", "Staff", "ok", "ok"]),
                ("staff elsewhere", [scope, nf, "ok", "ok", nf, nf, nf, "ok", nf]),
                ("member", [scope, "ok", nf, "ok", "ok", "ok", "Staff", "ok", "ok"]),
                ("owner", [scope, "ok", nf, "ok", "ok", "ok", "Citizen", scope, scope]),
                ("owner elsewhere", [scope, nf, "ok", "ok", nf, nf, nf, scope, scope]),
                ("citizen here", [scope, "ok", nf, "ok", nf, nf, nf, scope, scope]),
                ("citizen elsewhere", [scope, nf, "ok", "ok", nf, nf, nf, scope, scope]),
                ("representative", [scope, "ok", nf, "ok", "ok", "ok", "Citizen", scope, scope]),
                ("representative in scope", [scope, "ok", nf, "ok", "ok", "ok", "Citizen", scope, scope]),
                ("representative out of scope", [scope, "ok", nf, "ok", nf, nf, nf, scope, scope]),
                ("representative of another", [scope, "ok", nf, "ok", nf, nf, nf, scope, scope]),
            ],
            |actor| {
                [
                    show(manage_slots(actor, HERE)),
                    show(availability(actor, HERE)),
                    show(availability(actor, OTHER)),
                    show(book(actor)),
                    show(book_for(actor, &OBJECT)),
                    show(read(actor, &OBJECT)),
                    show(change(actor, &OBJECT)),
                    show(attend(actor)),
                    show(attend_of(actor, &OBJECT)),
                ]
            },
        );
    }

    /// Lists show appointments within exactly the reach of the caller's requests.
    #[test]
    fn appointments_are_listed_within_the_reach_of_requests() {
        let owner = Some(CitizenId(OWNER));
        for label in [
            "global admin",
            "admin here",
            "staff here",
            "staff elsewhere",
            "owner",
            "citizen here",
            "representative in scope",
        ] {
            let actor = caller(label);
            for (mission, citizen) in [(None, None), (Some(HERE), None), (Some(OTHER), None), (None, owner)] {
                assert_eq!(
                    list(&actor, mission, citizen),
                    requests::list(&actor, mission, citizen),
                    "{label} / {mission:?} {citizen:?}"
                );
            }
        }
        let day_list = list(&caller("staff here"), Some(HERE), None);
        assert_eq!(
            day_list,
            Listing::Within(RequestReach::Mission(Some(HERE))),
            "staff see the mission's day"
        );
        assert_eq!(list(&caller("staff here"), Some(OTHER), None), Listing::Empty);
    }
}
