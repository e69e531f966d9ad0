//! Notifications: everyone reads and marks only their own inbox (the notifications whose
//! recipient is their principal id, as the kind and in the mission their token acts as)
//! and sets only their own email preferences; another principal's notification is 404.
//! Who works on a request (its mission's staff and admins) sees how the emails about it
//! were delivered (docs/notifications.md).

use super::common::{Access, Owned, not_acting, visible};
use crate::notification::{Notification, Recipient};
use crate::{Binding, Principal, PrincipalId};

/// The inbox the caller reads and marks: their own, with any token.
pub fn inbox(actor: &Principal) -> Recipient {
    Recipient { id: actor.subject.id, kind: actor.subject.kind, mission: actor.mission }
}

/// Reading or marking `notification`: only its recipient, as the kind and in the mission
/// it was made for.
pub fn read(actor: &Principal, notification: &Notification) -> Access {
    visible(inbox(actor) == notification.recipient())
}

/// The email preferences the caller reads and sets: their principal id's, unless the
/// citizen or staff row of that id (`person`) is of another kind or mission than the
/// token (a client bound to someone else's id must not silence their emails).
pub fn preferences(actor: &Principal, person: Option<Binding>) -> Access<PrincipalId> {
    not_acting(actor)?;
    visible(person.is_none_or(|p| p == actor.binding()))?;
    Ok(actor.subject.id)
}

/// Seeing the notifications and email delivery of `request`: those who work on it.
pub fn deliveries(actor: &Principal, request: &Owned) -> Access {
    super::requests::work_on(actor, request)
}

#[cfg(test)]
mod tests {
    use super::super::table::{HERE, MEMBER, OBJECT, OWNER, check, show};
    use super::*;
    use crate::PrincipalKind;

    fn notification(recipient: uuid::Uuid, kind: PrincipalKind) -> Notification {
        let epoch = time::OffsetDateTime::UNIX_EPOCH;
        Notification {
            mission_id: Some(HERE),
            ..crate::fixtures::notification(PrincipalId(recipient), kind, epoch)
        }
    }

    #[test]
    fn only_the_recipient_reads_and_staff_of_the_mission_see_deliveries() {
        use PrincipalKind::{Citizen, Staff};
        let (owners, members) = (notification(OWNER, Citizen), notification(MEMBER, Staff));
        let (nf, scope) = ("404", "403 scope");
        // The id's row: the owner is a citizen HERE, the member staff HERE; anyone else's
        // id names no row. The same id through a token of another mission (or kind: a
        // client an attacker bound to it) reads nothing and sets nothing.
        let row = |actor: &Principal| match actor.subject.id.0 {
            id if id == OWNER => Some(Binding::new(Citizen, Some(HERE))),
            id if id == MEMBER => Some(Binding::new(Staff, Some(HERE))),
            _ => None,
        };
        check(
            ["inbox is own", "citizen's", "member's", "preferences", "deliveries"],
            &[
                ("owner", ["true", "ok", nf, "own", scope]),
                ("owner elsewhere", ["true", nf, nf, nf, scope]),
                ("member", ["true", nf, "ok", "own", "ok"]),
                ("member elsewhere", ["true", nf, nf, nf, nf]),
                ("staff here", ["true", nf, nf, "own", "ok"]),
                ("staff elsewhere", ["true", nf, nf, "own", nf]),
                ("admin here", ["true", nf, nf, "own", "ok"]),
                ("admin elsewhere", ["true", nf, nf, "own", nf]),
                ("global admin", ["true", nf, nf, "own", "ok"]),
                ("citizen here", ["true", nf, nf, "own", scope]),
                // Acting for OWNER: still the representative's own inbox (the
                // dependant's notifications are copied there); preferences are their own
                // business, not set on someone's behalf.
                ("representative", ["true", nf, nf, "403 forbidden", scope]),
            ],
            |actor| {
                let own = inbox(actor);
                [
                    (own.id == actor.subject.id
                        && own.kind == actor.subject.kind
                        && own.mission == actor.mission)
                        .to_string(),
                    show(read(actor, &owners)),
                    show(read(actor, &members)),
                    match preferences(actor, row(actor)) {
                        Ok(id) if id == actor.subject.id => "own".to_owned(),
                        other => show(other),
                    },
                    show(deliveries(actor, &OBJECT)),
                ]
            },
        );
        // The recipient's kind is part of the inbox too.
        let citizen_as_staff = Principal {
            subject: crate::Subject { kind: Staff, id: PrincipalId(OWNER) },
            ..super::super::table::caller("owner")
        };
        assert_eq!(read(&citizen_as_staff, &owners), Err(super::super::Denied::NotFound));
        assert_eq!(
            preferences(&citizen_as_staff, Some(Binding::new(Citizen, Some(HERE)))),
            Err(super::super::Denied::NotFound)
        );
    }
}
