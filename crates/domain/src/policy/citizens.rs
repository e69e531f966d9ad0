//! Citizens: read by themselves, the staff of their mission and its admins; registered
//! and changed by admins of the mission; changed by the citizen themself for their
//! contact details only; listed by admins (docs/api.md "Who sees what", decisions 21
//! and 23).

use super::{
    ADMIN, Access, Listing, is_self, is_staff_of, require_admin_of, require_scope, restrict_to_own_mission,
    visible,
};
use crate::{CitizenId, MissionId, Principal, PrincipalKind};

/// Who changes a profile, which decides the fields they may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Editor {
    /// The citizen: contact fields only.
    Themself,
    /// An admin of the citizen's mission: every field.
    Admin,
}

/// Listing citizens: admins only, restricted to the mission the list may show.
pub fn list(actor: &Principal, asked: Option<MissionId>) -> Access<Listing<Option<MissionId>>> {
    require_scope(actor, ADMIN)?;
    Ok(restrict_to_own_mission(actor, asked))
}

/// Reading citizen `id` of `mission`.
pub fn read(actor: &Principal, id: CitizenId, mission: MissionId) -> Access {
    visible(
        is_self(actor, PrincipalKind::Citizen, id.as_uuid(), mission)
            || is_staff_of(actor, mission)
            || actor.administers(mission),
    )
}

/// Registering a citizen in `mission`.
pub fn register(actor: &Principal, mission: MissionId) -> Access {
    require_admin_of(actor, mission, "an admin registers citizens of their own mission only")
}

/// Changing citizen `id` of `mission`: whoever may not see them gets 404, like a read.
pub fn change(actor: &Principal, id: CitizenId, mission: MissionId) -> Access<Editor> {
    read(actor, id, mission)?;
    if is_self(actor, PrincipalKind::Citizen, id.as_uuid(), mission) {
        return Ok(Editor::Themself);
    }
    require_admin_of(actor, mission, "only the citizen and admins of the mission change a profile")?;
    Ok(Editor::Admin)
}

#[cfg(test)]
mod tests {
    use super::super::table::{HERE, OTHER, OWNER, check, show};
    use super::*;

    #[test]
    fn who_reads_registers_changes_and_lists_citizens() {
        let owner = CitizenId(OWNER);
        let (nf, scope, fb) = ("404", "403 scope", "403 forbidden");
        let (here, there) = ("Within(Some((HERE)))", "Within(Some((OTHER)))");
        check(
            ["read", "change", "register here", "list", "list HERE", "list OTHER"],
            &[
                ("global admin", ["ok", "Admin", "ok", "Within(None)", here, there]),
                ("global admin+staff", ["ok", "Admin", "ok", "Within(None)", here, there]),
                ("admin here", ["ok", "Admin", "ok", here, here, "Empty"]),
                ("admin+staff here", ["ok", "Admin", "ok", here, here, "Empty"]),
                ("admin elsewhere", [nf, nf, fb, there, "Empty", there]),
                ("staff here", ["ok", scope, scope, scope, scope, scope]),
                ("staff elsewhere", [nf, nf, scope, scope, scope, scope]),
                ("owner", ["ok", "Themself", scope, scope, scope, scope]),
                ("owner elsewhere", [nf, nf, scope, scope, scope, scope]),
                ("citizen here", [nf, nf, scope, scope, scope, scope]),
            ],
            |actor| {
                [
                    show(read(actor, owner, HERE)),
                    show(change(actor, owner, HERE)),
                    show(register(actor, HERE)),
                    show(list(actor, None)),
                    show(list(actor, Some(HERE))),
                    show(list(actor, Some(OTHER))),
                ]
            },
        );
    }
}
