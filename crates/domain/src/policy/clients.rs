//! API clients are managed by admins and by the operator at the command line. A mission
//! admin manages only the clients of their mission: another mission's client is not
//! found, and creating one elsewhere (or a global admin) is forbidden (docs/api.md,
//! decision 6).

use super::common::{ADMIN, Access, Denied, require_scope, visible};
use crate::{MissionId, Principal};

/// Who acts on clients: an authenticated principal, or the operator at the command line,
/// who holds the database and may do everything.
#[derive(Debug, Clone, Copy)]
pub enum Actor<'a> {
    Principal(&'a Principal),
    Operator,
}

impl<'a> Actor<'a> {
    /// The principal, for the audit entry; `None` for the operator.
    pub fn principal(self) -> Option<&'a Principal> {
        match self {
            Actor::Principal(p) => Some(p),
            Actor::Operator => None,
        }
    }
}

/// Managing clients at all: the `admin` scope.
pub fn manage(actor: Actor<'_>) -> Access {
    actor.principal().map_or(Ok(()), |p| require_scope(p, ADMIN))
}

/// Listing clients: the mission the list is restricted to (`None`: every client).
pub fn list(actor: Actor<'_>) -> Access<Option<MissionId>> {
    manage(actor)?;
    Ok(actor.principal().and_then(|p| p.mission))
}

/// Reading, disabling or rotating a client of `mission` (`None`: a global admin's).
pub fn read(actor: Actor<'_>, mission: Option<MissionId>) -> Access {
    manage(actor)?;
    visible(actor.principal().is_none_or(|p| p.mission.is_none() || p.mission == mission))
}

/// Creating a client of `mission` (`None`: a global admin client).
pub fn create(actor: Actor<'_>, mission: Option<MissionId>) -> Access {
    manage(actor)?;
    match actor.principal() {
        Some(p) if p.mission.is_some() && p.mission != mission => {
            Err(Denied::Forbidden("a mission admin creates clients of their own mission only"))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::table::{HERE, OTHER, check, show};
    use super::*;

    fn decide(actor: Actor<'_>) -> [String; 7] {
        [
            show(list(actor)),
            show(read(actor, Some(HERE))),
            show(read(actor, Some(OTHER))),
            show(read(actor, None)),
            show(create(actor, Some(HERE))),
            show(create(actor, Some(OTHER))),
            show(create(actor, None)),
        ]
    }

    #[test]
    fn who_manages_which_clients() {
        let columns = [
            "list",
            "read here",
            "read elsewhere",
            "read global",
            "create here",
            "create elsewhere",
            "create global",
        ];
        let fb = "403 forbidden";
        check(
            columns,
            &[
                ("global admin", ["None", "ok", "ok", "ok", "ok", "ok", "ok"]),
                ("global admin+staff", ["None", "ok", "ok", "ok", "ok", "ok", "ok"]),
                ("admin here", ["Some((HERE))", "ok", "404", "404", "ok", fb, fb]),
                ("admin+staff here", ["Some((HERE))", "ok", "404", "404", "ok", fb, fb]),
                ("admin elsewhere", ["Some((OTHER))", "404", "ok", "404", fb, "ok", fb]),
                ("staff here", ["403 scope"; 7]),
                ("citizen here", ["403 scope"; 7]),
            ],
            |actor| decide(Actor::Principal(actor)),
        );
        let operator = decide(Actor::Operator);
        assert_eq!(operator, ["None", "ok", "ok", "ok", "ok", "ok", "ok"].map(str::to_owned));
    }
}
