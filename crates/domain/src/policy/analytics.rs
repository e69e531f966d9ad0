//! Analytics: the three views are for admins only; a mission admin sees their own
//! mission's figures, a global admin every mission together or one of them
//! (docs/analytics.md "Scope"). Asking a mission admin's view of another mission is
//! refused, never silently replaced: a figure labelled with one mission must be that
//! mission's.

use super::common::{ADMIN, Access, Denied, require_scope};
use crate::{MissionId, Principal};

const OWN_MISSION: &str = "a mission admin sees the figures of their own mission only";

/// Whose figures a view counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Every mission, counted together (in UTC).
    AllMissions,
    /// One mission (in its time zone).
    Mission(MissionId),
}

/// Reading any analytics view, `asked` being the `mission_id` the caller named.
pub fn view(actor: &Principal, asked: Option<MissionId>) -> Access<Reach> {
    require_scope(actor, ADMIN)?;
    match (actor.mission, asked) {
        (None, None) => Ok(Reach::AllMissions),
        (None, Some(asked)) => Ok(Reach::Mission(asked)),
        (Some(own), None) => Ok(Reach::Mission(own)),
        (Some(own), Some(asked)) if own == asked => Ok(Reach::Mission(own)),
        (Some(_), Some(_)) => Err(Denied::Forbidden(OWN_MISSION)),
    }
}

#[cfg(test)]
mod tests {
    use super::super::table::{HERE, OTHER, check, show};
    use super::*;

    #[test]
    fn admins_see_their_reach_and_nobody_else_sees_anything() {
        let (scope, fb) = ("403 scope", "403 forbidden");
        let (all, here, there) = ("AllMissions", "Mission((HERE))", "Mission((OTHER))");
        check(
            ["no mission_id", "mission_id HERE", "mission_id OTHER"],
            &[
                ("global admin", [all, here, there]),
                ("global admin+staff", [all, here, there]),
                ("admin here", [here, here, fb]),
                ("admin+staff here", [here, here, fb]),
                ("admin elsewhere", [there, fb, there]),
                ("staff here", [scope, scope, scope]),
                ("member", [scope, scope, scope]),
                ("owner", [scope, scope, scope]),
                ("citizen elsewhere", [scope, scope, scope]),
            ],
            |actor| [show(view(actor, None)), show(view(actor, Some(HERE))), show(view(actor, Some(OTHER)))],
        );
    }
}
