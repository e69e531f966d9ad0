//! Notifications: everyone reads and marks only their own inbox (the notifications whose
//! recipient is their principal id) and sets only their own email preferences; another
//! principal's notification is 404. Who works on a request (its mission's staff and
//! admins) sees how the emails about it were delivered (docs/notifications.md).

use super::{Access, visible};
use crate::{CitizenId, MissionId, Principal, PrincipalId};

/// The inbox (and the preferences) the caller reads and changes: their own, with any
/// token.
pub fn inbox(actor: &Principal) -> PrincipalId {
    actor.subject.id
}

/// Reading or marking the notification for `recipient`: only that recipient.
pub fn read(actor: &Principal, recipient: PrincipalId) -> Access {
    visible(actor.subject.id == recipient)
}

/// Seeing the notifications and email delivery of the request of citizen `owner` in
/// `mission`: those who work on it.
pub fn deliveries(actor: &Principal, owner: CitizenId, mission: MissionId) -> Access {
    super::requests::work_on(actor, owner, mission)
}

#[cfg(test)]
mod tests {
    use super::super::table::{HERE, MEMBER, OWNER, check, show, show_value};
    use super::*;

    #[test]
    fn only_the_recipient_reads_and_staff_of_the_mission_see_deliveries() {
        let (owner, member) = (PrincipalId(OWNER), PrincipalId(MEMBER));
        let (nf, scope) = ("404", "403 scope");
        check(
            ["inbox is own", "citizen's", "member's", "deliveries"],
            &[
                ("owner", ["true", "ok", nf, scope]),
                ("member", ["true", nf, "ok", "ok"]),
                ("staff here", ["true", nf, nf, "ok"]),
                ("staff elsewhere", ["true", nf, nf, nf]),
                ("admin here", ["true", nf, nf, "ok"]),
                ("admin elsewhere", ["true", nf, nf, nf]),
                ("global admin", ["true", nf, nf, "ok"]),
                ("citizen here", ["true", nf, nf, scope]),
            ],
            |actor| {
                [
                    show_value(inbox(actor) == actor.subject.id),
                    show(read(actor, owner)),
                    show(read(actor, member)),
                    show(deliveries(actor, CitizenId(OWNER), HERE)),
                ]
            },
        );
    }
}
