//! Citizens: read by themselves, the staff of their mission and its admins; registered
//! and changed by admins of the mission; changed by the citizen themself for their
//! contact details only; listed by admins (docs/api.md "Who sees what", decisions 21
//! and 23).

use super::common::{
    ADMIN, Access, Listing, is_self, is_staff_of, represents, require_admin_of, require_scope,
    restrict_to_own_mission, visible,
};
use crate::{CitizenId, MissionId, Principal, PrincipalKind, ValidationErrors};

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

/// Reading citizen `id` of `mission`: themself, their representatives acting for them
/// (whatever the mandate's services: acting needs the name), the mission's staff and
/// admins.
pub fn read(actor: &Principal, id: CitizenId, mission: MissionId) -> Access {
    visible(
        is_self(actor, PrincipalKind::Citizen, id.as_uuid(), mission)
            || represents(actor, id, mission)
            || is_staff_of(actor, mission)
            || actor.administers(mission),
    )
}

/// Registering a citizen in `mission`.
pub fn register(actor: &Principal, mission: MissionId) -> Access {
    require_admin_of(actor, mission, "an admin registers citizens of their own mission only")
}

/// Changing citizen `id` of `mission`: whoever may not see them gets 404, like a read. A
/// representative does not change the dependant's profile (the mission's admins do).
pub fn change(actor: &Principal, id: CitizenId, mission: MissionId) -> Access<Editor> {
    read(actor, id, mission)?;
    if is_self(actor, PrincipalKind::Citizen, id.as_uuid(), mission) {
        return Ok(Editor::Themself);
    }
    require_admin_of(actor, mission, "only the citizen and admins of the mission change a profile")?;
    Ok(Editor::Admin)
}

/// Acting as the citizen themself (submitting, uploading, booking, messaging, cancelling,
/// deleting): not for a minor, who acts through a parent or guardian
/// (docs/representation.md "Minors"); reading is not acting. `minor`: whether the caller's
/// own citizen is a minor today in their mission's time zone. Staff, admins and a
/// representative acting for someone are not judged by it.
pub fn act_alone(actor: &Principal, minor: bool) -> Access {
    if minor && actor.acting_for.is_none() && actor.subject.kind == PrincipalKind::Citizen {
        Err(super::Denied::Forbidden("a minor acts through a parent or guardian"))
    } else {
        Ok(())
    }
}

/// The citizen a submission, an upload or a booking is for: a citizen acts for themself
/// (naming themself or nobody), or for the dependant named in `On-Behalf-Of` (naming
/// them or nobody); staff and admins name the citizen. Whether the caller may
/// act for the citizen named is the area's own rule (`requests::submit_for`, ...); this
/// only decides who is named, so a refusal is a field error of `citizen_id`, not a denial.
pub fn citizen_of(actor: &Principal, asked: Option<CitizenId>) -> Result<CitizenId, ValidationErrors> {
    let own = match &actor.acting_for {
        Some(mandate) => mandate.dependant,
        None => CitizenId(actor.subject.id.as_uuid()),
    };
    match (actor.subject.kind, asked) {
        (PrincipalKind::Citizen, None) => Ok(own),
        (PrincipalKind::Citizen, Some(id)) if id == own => Ok(id),
        (PrincipalKind::Citizen, Some(_)) => {
            Err(ValidationErrors::single("/citizen_id", "not_yourself", "a citizen acts for themself only"))
        }
        (_, None) => {
            Err(ValidationErrors::single("/citizen_id", "required", "staff and admins name the citizen"))
        }
        (_, Some(id)) => Ok(id),
    }
}

#[cfg(test)]
mod tests {
    use super::super::table::{HERE, OTHER, OWNER, check, show, show_value};
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
                // Acting for OWNER reads their profile in any services, changes nothing.
                ("representative", ["ok", scope, scope, scope, scope, scope]),
                ("representative out of scope", ["ok", scope, scope, scope, scope, scope]),
                ("representative of another", [nf, nf, scope, scope, scope, scope]),
                ("representative elsewhere", [nf, nf, scope, scope, scope, scope]),
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

    #[test]
    fn a_minor_reads_but_acts_only_through_a_representative() {
        let forbidden = "403 forbidden";
        check(
            ["adult acts", "minor acts"],
            &[
                ("owner", ["ok", forbidden]),
                ("citizen here", ["ok", forbidden]),
                // A representative acting for a minor is who acts for them; staff and
                // admins act for minors as for anyone.
                ("representative", ["ok", "ok"]),
                ("staff here", ["ok", "ok"]),
                ("admin here", ["ok", "ok"]),
                ("global admin", ["ok", "ok"]),
            ],
            |actor| [show(act_alone(actor, false)), show(act_alone(actor, true))],
        );
    }

    #[test]
    fn whom_a_caller_acts_for() {
        let another = CitizenId(uuid::Uuid::from_u128(0xa707));
        let (yourself, required) = ("422 /citizen_id not_yourself", "422 /citizen_id required");
        check(
            ["naming nobody", "naming OWNER", "naming another"],
            &[
                ("global admin", [required, "(OWNER)", "(ANOTHER)"]),
                ("admin here", [required, "(OWNER)", "(ANOTHER)"]),
                ("admin elsewhere", [required, "(OWNER)", "(ANOTHER)"]),
                ("staff here", [required, "(OWNER)", "(ANOTHER)"]),
                ("staff elsewhere", [required, "(OWNER)", "(ANOTHER)"]),
                ("member", [required, "(OWNER)", "(ANOTHER)"]),
                ("owner", ["(OWNER)", "(OWNER)", yourself]),
                // Who may act for the citizen in which mission is the areas' rule.
                ("owner elsewhere", ["(OWNER)", "(OWNER)", yourself]),
                ("citizen here", ["(SELF)", yourself, yourself]),
                // Acting: the dependant, never the representative themself.
                ("representative", ["(OWNER)", "(OWNER)", yourself]),
            ],
            |actor| {
                let shown = |named: Result<CitizenId, ValidationErrors>| match named {
                    Ok(id) => show_value(id)
                        .replace(&actor.subject.id.as_uuid().to_string(), "SELF")
                        .replace(&another.as_uuid().to_string(), "ANOTHER"),
                    Err(errors) => {
                        let failures: Vec<String> =
                            errors.0.iter().map(|e| format!("422 {} {}", e.pointer, e.code)).collect();
                        failures.join(", ")
                    }
                };
                [
                    shown(citizen_of(actor, None)),
                    shown(citizen_of(actor, Some(CitizenId(OWNER)))),
                    shown(citizen_of(actor, Some(another))),
                ]
            },
        );
    }
}
