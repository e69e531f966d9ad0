//! Staff members: a member reads their own profile; admins of the mission read, create
//! and assign its members and list them; colleagues and citizens see no profile
//! (docs/api.md "Who sees what", decisions 24 and 25).

use super::common::{
    ADMIN, Access, Listing, is_self, require_admin_of, require_scope, restrict_to_own_mission, visible,
};
use crate::{MissionId, Principal, PrincipalKind, StaffId};

const MANAGE: &str = "an admin manages the staff of their own mission only";

/// Managing staff at all (listing, creating, assigning): the `admin` scope, checked
/// before the member is looked up.
pub fn manage(actor: &Principal) -> Access {
    require_scope(actor, ADMIN)
}

/// Listing staff: admins only, restricted to the mission the list may show.
pub fn list(actor: &Principal, asked: Option<MissionId>) -> Access<Listing<Option<MissionId>>> {
    manage(actor)?;
    Ok(restrict_to_own_mission(actor, asked))
}

/// Reading member `id` of `mission`.
pub fn read(actor: &Principal, id: StaffId, mission: MissionId) -> Access {
    visible(is_self(actor, PrincipalKind::Staff, id.as_uuid(), mission) || actor.administers(mission))
}

/// Creating a member of `mission`.
pub fn create(actor: &Principal, mission: MissionId) -> Access {
    require_admin_of(actor, mission, MANAGE)
}

/// Replacing the service assignments of member `id` of `mission`: members cannot change
/// their own.
pub fn assign(actor: &Principal, id: StaffId, mission: MissionId) -> Access {
    manage(actor)?;
    read(actor, id, mission)?;
    require_admin_of(actor, mission, MANAGE)
}

#[cfg(test)]
mod tests {
    use super::super::table::{HERE, MEMBER, OTHER, check, show};
    use super::*;

    #[test]
    fn who_reads_creates_assigns_and_lists_staff() {
        let member = StaffId(MEMBER);
        let (nf, scope, fb) = ("404", "403 scope", "403 forbidden");
        let (here, there) = ("Within(Some((HERE)))", "Within(Some((OTHER)))");
        check(
            ["manage", "read", "create here", "assign", "list", "list HERE", "list OTHER"],
            &[
                ("global admin", ["ok", "ok", "ok", "ok", "Within(None)", here, there]),
                ("global admin+staff", ["ok", "ok", "ok", "ok", "Within(None)", here, there]),
                ("admin here", ["ok", "ok", "ok", "ok", here, here, "Empty"]),
                ("admin+staff here", ["ok", "ok", "ok", "ok", here, here, "Empty"]),
                ("admin elsewhere", ["ok", nf, fb, nf, there, "Empty", there]),
                ("member", [scope, "ok", scope, scope, scope, scope, scope]),
                ("member elsewhere", [scope, nf, scope, scope, scope, scope, scope]),
                ("staff here", [scope, nf, scope, scope, scope, scope, scope]),
                ("owner", [scope, nf, scope, scope, scope, scope, scope]),
            ],
            |actor| {
                [
                    show(manage(actor)),
                    show(read(actor, member, HERE)),
                    show(create(actor, HERE)),
                    show(assign(actor, member, HERE)),
                    show(list(actor, None)),
                    show(list(actor, Some(HERE))),
                    show(list(actor, Some(OTHER))),
                ]
            },
        );
    }
}
