//! The service catalog is shared by all missions: every bearer reads the active types,
//! admins (mission admins included) also the inactive ones, and only global admins
//! change it (docs/api.md, decisions 18 and 19).

use super::common::{Access, Listing, require_global_admin, visible};
use crate::Principal;

/// Listing the types whose `active` flag is `active`: inactive ones are listed to admins
/// only; anyone else gets an empty list, not an error.
pub fn list(actor: &Principal, active: bool) -> Listing<()> {
    if active || actor.is_admin() { Listing::Within(()) } else { Listing::Empty }
}

/// Reading one type: an inactive type is hidden from everyone but admins.
pub fn read(actor: &Principal, service_active: bool) -> Access {
    visible(service_active || actor.is_admin())
}

/// Creating and changing service types.
pub fn manage(actor: &Principal) -> Access {
    require_global_admin(actor, "only a global admin manages the service catalog")
}

#[cfg(test)]
mod tests {
    use super::super::table::{check, show, show_value};
    use super::*;

    #[test]
    fn who_reads_and_manages_the_catalog() {
        check(
            ["list active", "list inactive", "read active", "read inactive", "manage"],
            &[
                ("global admin", ["Within(())", "Within(())", "ok", "ok", "ok"]),
                ("global admin+staff", ["Within(())", "Within(())", "ok", "ok", "ok"]),
                ("admin here", ["Within(())", "Within(())", "ok", "ok", "403 forbidden"]),
                ("admin+staff here", ["Within(())", "Within(())", "ok", "ok", "403 forbidden"]),
                ("staff here", ["Within(())", "Empty", "ok", "404", "403 scope"]),
                ("citizen here", ["Within(())", "Empty", "ok", "404", "403 scope"]),
            ],
            |actor| {
                [
                    show_value(list(actor, true)),
                    show_value(list(actor, false)),
                    show(read(actor, true)),
                    show(read(actor, false)),
                    show(manage(actor)),
                ]
            },
        );
    }
}
