//! Missions: any authenticated caller lists and reads them; only global admins create
//! and change them (docs/api.md, decision 1).

use super::common::{Access, require_global_admin};
use crate::Principal;

/// Listing and reading missions: every bearer.
pub fn read(_actor: &Principal) -> Access {
    Ok(())
}

/// Creating and changing a mission.
pub fn manage(actor: &Principal) -> Access {
    require_global_admin(actor, "only a global admin manages missions")
}

#[cfg(test)]
mod tests {
    use super::super::table::{check, show};
    use super::*;

    #[test]
    fn who_reads_and_manages_missions() {
        check(
            ["read", "manage"],
            &[
                ("global admin", ["ok", "ok"]),
                ("global admin+staff", ["ok", "ok"]),
                ("admin here", ["ok", "403 forbidden"]),
                ("admin+staff here", ["ok", "403 forbidden"]),
                ("staff here", ["ok", "403 scope"]),
                ("citizen here", ["ok", "403 scope"]),
            ],
            |actor| [show(read(actor)), show(manage(actor))],
        );
    }
}
