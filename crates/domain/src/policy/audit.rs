//! The audit log spans every mission: global admins read it, nobody else (docs/api.md,
//! decision 18).

use super::common::{Access, require_global_admin};
use crate::Principal;

/// Reading the audit log.
pub fn read(actor: &Principal) -> Access {
    require_global_admin(actor, "only a global admin reads the audit log")
}

#[cfg(test)]
mod tests {
    use super::super::table::{check, show};
    use super::*;

    #[test]
    fn only_global_admins_read_the_audit_log() {
        check(
            ["read"],
            &[
                ("global admin", ["ok"]),
                ("global admin+staff", ["ok"]),
                ("admin here", ["403 forbidden"]),
                ("admin+staff here", ["403 forbidden"]),
                ("staff here", ["403 scope"]),
                ("citizen here", ["403 scope"]),
            ],
            |actor| [show(read(actor))],
        );
    }
}
