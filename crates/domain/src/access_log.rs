//! The access log: who read a citizen's personal data, in which role and mission, through
//! which client, what and when (docs/data-protection.md "Access log"). An entry is made
//! for every read by a principal that is not the citizen themself; nothing changes or
//! removes one.

use crate::text_enum::text_enum;
use crate::{AccessEntryId, CitizenId, ClientId, MissionId, Principal, PrincipalKind, Scope, Subject};
use time::OffsetDateTime;
use uuid::Uuid;

text_enum!(
    /// What was read (`AccessEntry::what`); the object id names it.
    AccessedData ("accessed data") {
        /// The citizen's profile (`GET /citizens/{id}`); the object is the citizen.
        Profile = "profile",
        /// A request's details (`GET /requests/{id}`).
        Request = "request",
        /// A document's download URL (`GET /documents/{id}`).
        Document = "document",
        /// An appointment (`GET /appointments/{id}`).
        Appointment = "appointment",
        /// The notifications about a request and their emails
        /// (`GET /requests/{id}/notifications`).
        RequestNotifications = "request_notifications",
        /// The citizen's profile on a page of `GET /citizens`; the object is the citizen.
        CitizenList = "citizen_list",
        /// A ready export's download URL (`GET /citizens/{id}/exports/{export_id}`): the
        /// whole record; the object is the export.
        Export = "export",
    }
);

text_enum!(
    /// The role the reader acted in, from the scopes of their token.
    AccessRole ("access role") {
        Admin = "admin",
        Staff = "staff",
        /// A representative reading a dependant's data, acting for them or listing their
        /// dependants (docs/representation.md); a citizen's reads of their own data are
        /// not logged.
        Citizen = "citizen",
    }
);

impl AccessRole {
    /// The widest role `actor`'s token holds.
    pub fn of(actor: &Principal) -> Self {
        if actor.scopes.contains(Scope::Admin) {
            AccessRole::Admin
        } else if actor.scopes.contains(Scope::Staff) {
            AccessRole::Staff
        } else {
            AccessRole::Citizen
        }
    }
}

/// One read of a citizen's personal data by someone else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessEntry {
    /// Time-ordered (UUIDv7): the log's order and its cursor.
    pub id: AccessEntryId,
    /// Whose data was read.
    pub citizen_id: CitizenId,
    pub at: OffsetDateTime,
    pub actor: Subject,
    /// The reader's mission; `None` for a global admin.
    pub actor_mission: Option<MissionId>,
    pub actor_role: AccessRole,
    /// The API client the reader used.
    pub client_id: ClientId,
    pub what: AccessedData,
    /// The object read: the citizen, request, document or appointment id.
    pub object_id: Uuid,
}

impl AccessEntry {
    /// The entry of `actor` reading `what` (`object`) about `citizen` at `at`, or `None`
    /// when the reader is the citizen themself (their own reads are not logged).
    pub fn of_read(
        actor: &Principal,
        citizen: CitizenId,
        what: AccessedData,
        object: Uuid,
        at: OffsetDateTime,
    ) -> Option<Self> {
        if actor.subject.kind == PrincipalKind::Citizen && actor.subject.id.as_uuid() == citizen.as_uuid() {
            return None;
        }
        Some(AccessEntry {
            id: AccessEntryId::new(),
            citizen_id: citizen,
            at,
            actor: actor.subject,
            actor_mission: actor.mission,
            actor_role: AccessRole::of(actor),
            client_id: actor.client_id,
            what,
            object_id: object,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::table::{HERE, OWNER, caller};

    /// The role and mission an entry records, `None` for no entry.
    type Recorded = Option<(AccessRole, Option<MissionId>)>;

    /// Which callers' reads of OWNER's data make an entry, and with which role and mission.
    #[test]
    fn every_reader_but_the_citizen_themself_makes_an_entry() {
        let at = OffsetDateTime::UNIX_EPOCH;
        let rows: &[(&str, Recorded)] = &[
            ("global admin", Some((AccessRole::Admin, None))),
            ("global admin+staff", Some((AccessRole::Admin, None))),
            ("admin here", Some((AccessRole::Admin, Some(HERE)))),
            ("admin+staff here", Some((AccessRole::Admin, Some(HERE)))),
            ("staff here", Some((AccessRole::Staff, Some(HERE)))),
            ("member", Some((AccessRole::Staff, Some(HERE)))),
            ("citizen here", Some((AccessRole::Citizen, Some(HERE)))),
            // The same citizen id through another mission's client is still the citizen.
            ("owner", None),
            ("owner elsewhere", None),
        ];
        for (label, expected) in rows {
            let actor = caller(label);
            let entry = AccessEntry::of_read(&actor, CitizenId(OWNER), AccessedData::Request, OWNER, at);
            let got = entry.as_ref().map(|e| (e.actor_role, e.actor_mission));
            assert_eq!(got, *expected, "{label}");
            if let Some(entry) = entry {
                assert_eq!(
                    (entry.actor, entry.client_id, entry.citizen_id, entry.what, entry.object_id, entry.at),
                    (actor.subject, actor.client_id, CitizenId(OWNER), AccessedData::Request, OWNER, at),
                    "{label}"
                );
            }
        }
    }

    #[test]
    fn kinds_and_roles_read_back_from_their_text() {
        for what in AccessedData::ALL {
            assert_eq!(what.as_str().parse::<AccessedData>(), Ok(what));
        }
        for role in AccessRole::ALL {
            assert_eq!(role.as_str().parse::<AccessRole>(), Ok(role));
        }
        assert!("changed".parse::<AccessedData>().is_err());
    }
}
