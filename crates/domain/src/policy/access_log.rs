//! The access log of a citizen (docs/data-protection.md "Access log"): read by the citizen
//! themself, by admins of their mission and by global admins. Staff of the mission see the
//! citizen but not who else read them (403); whoever may not see the citizen gets 404.

use super::common::{Access, Denied, is_self, not_acting, require_admin_of, visible, works_for};
use crate::{CitizenId, MissionId, Principal, PrincipalKind, Scope};

const CITIZEN: &[Scope] = &[Scope::Citizen];

/// The citizen a citizen's token names as "me": its subject, when it is a citizen acting
/// with the citizen scope (whether that citizen is in the token's mission is `read`'s).
pub fn own(actor: &Principal) -> Access<CitizenId> {
    not_acting(actor)?;
    if actor.subject.kind == PrincipalKind::Citizen && actor.scopes.contains(Scope::Citizen) {
        Ok(CitizenId(actor.subject.id.as_uuid()))
    } else {
        Err(Denied::InsufficientScope(CITIZEN))
    }
}

/// Reading the access log of citizen `id` of `mission`.
pub fn read(actor: &Principal, id: CitizenId, mission: MissionId) -> Access {
    let own = is_self(actor, PrincipalKind::Citizen, id.as_uuid(), mission);
    visible(own || works_for(actor, mission))?;
    if own {
        return Ok(());
    }
    require_admin_of(actor, mission, "only the citizen and admins of the mission read the access log")
}

#[cfg(test)]
mod tests {
    use super::super::table::{HERE, OWNER, check, show};
    use super::*;

    #[test]
    fn the_citizen_and_the_missions_admins_read_the_access_log() {
        let owner = CitizenId(OWNER);
        check(
            ["read"],
            &[
                ("global admin", ["ok"]),
                ("global admin+staff", ["ok"]),
                ("admin here", ["ok"]),
                ("admin+staff here", ["ok"]),
                ("admin elsewhere", ["404"]),
                ("staff here", ["403 scope"]),
                ("member", ["403 scope"]),
                ("staff elsewhere", ["404"]),
                ("member elsewhere", ["404"]),
                ("owner", ["ok"]),
                ("owner elsewhere", ["404"]),
                ("citizen here", ["404"]),
                ("citizen elsewhere", ["404"]),
                // Acting for OWNER reads nothing of their access log.
                ("representative", ["404"]),
            ],
            |actor| [show(read(actor, owner, HERE))],
        );
    }

    #[test]
    fn me_is_a_citizen_tokens_own_citizen() {
        let scope = "403 scope";
        check(
            ["me"],
            &[
                ("global admin", [scope]),
                ("admin here", [scope]),
                ("staff here", [scope]),
                ("member", [scope]),
                ("owner", ["(OWNER)"]),
                ("owner elsewhere", ["(OWNER)"]),
                ("representative", ["403 forbidden"]),
            ],
            |actor| [show(own(actor))],
        );
    }
}
