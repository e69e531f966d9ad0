//! Representations (docs/representation.md): staff of the dependant's mission, its admins
//! and global admins create and end them, after checking the evidence; a citizen's token
//! never does (403 scope: nobody makes themself anyone's representative), and another
//! mission's staff and admins get 404. The dependant reads their own; the representative
//! reads the ones they hold through `/citizens/me/dependants` ([`own`] and the holder's
//! mission), not through the dependant's routes.

use super::common::{Access, STAFF_OR_ADMIN, is_self, own_citizen, require_scope, visible, works_for};
use crate::{CitizenId, MissionId, Principal, PrincipalKind};

/// The citizen behind `/citizens/me/...`: the caller themself with the citizen scope,
/// and the mission their token is bound to.
pub fn own(actor: &Principal) -> Access<(CitizenId, MissionId)> {
    own_citizen(actor)
}

/// Creating or ending a representation of a dependant of `mission`.
pub fn manage(actor: &Principal, mission: MissionId) -> Access {
    require_scope(actor, STAFF_OR_ADMIN)?;
    visible(works_for(actor, mission))
}

/// Reading the representations of `dependant`, a citizen of `mission`.
pub fn read(actor: &Principal, dependant: CitizenId, mission: MissionId) -> Access {
    visible(is_self(actor, PrincipalKind::Citizen, dependant.as_uuid(), mission) || works_for(actor, mission))
}

#[cfg(test)]
mod tests {
    use super::super::table::{HERE, OWNER, check, show};
    use super::*;

    #[test]
    fn the_missions_staff_and_admins_manage_and_the_dependant_reads() {
        let dependant = CitizenId(OWNER);
        let (nf, scope) = ("404", "403 scope");
        check(
            ["manage", "read"],
            &[
                ("global admin", ["ok", "ok"]),
                ("global admin+staff", ["ok", "ok"]),
                ("admin here", ["ok", "ok"]),
                ("admin+staff here", ["ok", "ok"]),
                ("admin elsewhere", [nf, nf]),
                ("staff here", ["ok", "ok"]),
                ("member", ["ok", "ok"]),
                ("staff elsewhere", [nf, nf]),
                ("member elsewhere", [nf, nf]),
                ("owner", [scope, "ok"]),
                ("owner elsewhere", [scope, nf]),
                ("citizen here", [scope, nf]),
                ("citizen elsewhere", [scope, nf]),
                // Acting for the dependant shows nothing of their other representatives.
                ("representative", [scope, nf]),
            ],
            |actor| [show(manage(actor, HERE)), show(read(actor, dependant, HERE))],
        );
    }

    #[test]
    fn me_is_a_citizen_tokens_own_citizen_in_its_mission() {
        let scope = "403 scope";
        check(
            ["me"],
            &[
                ("global admin", [scope]),
                ("admin here", [scope]),
                ("staff here", [scope]),
                ("member", [scope]),
                ("owner", ["((OWNER), (HERE))"]),
                ("owner elsewhere", ["((OWNER), (OTHER))"]),
                ("representative", ["403 forbidden"]),
            ],
            |actor| [show(own(actor))],
        );
    }
}
