//! Exports of a citizen's data (docs/data-protection.md "Export"): the citizen exports
//! their own; admins of the citizen's mission (and global admins) export for them. Staff
//! do not: staff of the mission get 403 (scope), as when they change a profile; whoever
//! may not see the citizen gets 404.

use super::common::{ADMIN, Access, Denied, is_self, is_staff_of, own_citizen, require_admin_of, visible};
use crate::{CitizenId, MissionId, Principal, PrincipalKind};

/// The citizen behind `/citizens/me/...`: the caller themself, with the citizen scope.
pub fn own(actor: &Principal) -> Access<(CitizenId, MissionId)> {
    own_citizen(actor)
}

/// Starting an export of citizen `id` of `mission`, or reading one of theirs.
pub fn export(actor: &Principal, id: CitizenId, mission: MissionId) -> Access {
    if is_self(actor, PrincipalKind::Citizen, id.as_uuid(), mission) {
        return Ok(());
    }
    visible(is_staff_of(actor, mission) || actor.administers(mission))?;
    if actor.has_any(ADMIN) {
        require_admin_of(actor, mission, "only the citizen and admins of the mission export a citizen's data")
    } else {
        Err(Denied::InsufficientScope(ADMIN))
    }
}

#[cfg(test)]
mod tests {
    use super::super::table::{HERE, OWNER, check, show};
    use super::*;

    #[test]
    fn who_exports_a_citizens_data() {
        let owner = CitizenId(OWNER);
        let (nf, scope) = ("404", "403 scope");
        check(
            ["export OWNER", "me"],
            &[
                ("global admin", ["ok", scope]),
                ("global admin+staff", ["ok", scope]),
                ("admin here", ["ok", scope]),
                ("admin+staff here", ["ok", scope]),
                ("admin elsewhere", [nf, scope]),
                ("staff here", [scope, scope]),
                ("staff elsewhere", [nf, scope]),
                ("member", [scope, scope]),
                ("owner", ["ok", "((OWNER), (HERE))"]),
                ("owner elsewhere", [nf, "((OWNER), (OTHER))"]),
                ("citizen here", [nf, "ok-other"]),
                ("citizen elsewhere", [nf, "ok-other"]),
                // Data rights are the citizen's own: not exercised on their behalf.
                ("representative", [nf, "403 forbidden"]),
            ],
            |actor| {
                let me = match own(actor) {
                    Ok((id, _)) if id.as_uuid() != OWNER => "ok-other".to_owned(),
                    other => show(other),
                };
                [show(export(actor, owner, HERE)), me]
            },
        );
    }
}
