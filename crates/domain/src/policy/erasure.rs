//! Erasing a citizen (docs/data-protection.md "Retention and erasure"): global admins and
//! the admins of the citizen's mission. Whoever else may not see the citizen gets 404;
//! staff and citizens (the citizen themself included) lack the admin scope.

use super::common::{ADMIN, Access, require_scope, visible};
use crate::{MissionId, Principal};

/// Erasing a citizen of `mission`.
pub fn erase(actor: &Principal, mission: MissionId) -> Access {
    require_scope(actor, ADMIN)?;
    visible(actor.administers(mission))
}

#[cfg(test)]
mod tests {
    use super::super::table::{HERE, check, show};
    use super::*;

    #[test]
    fn who_erases_a_citizen() {
        let (nf, scope) = ("404", "403 scope");
        check(
            ["erase"],
            &[
                ("global admin", ["ok"]),
                ("global admin+staff", ["ok"]),
                ("admin here", ["ok"]),
                ("admin+staff here", ["ok"]),
                ("admin elsewhere", [nf]),
                ("staff here", [scope]),
                ("staff elsewhere", [scope]),
                ("owner", [scope]),
                ("owner elsewhere", [scope]),
                ("citizen here", [scope]),
            ],
            |actor| [show(erase(actor, HERE))],
        );
    }
}
