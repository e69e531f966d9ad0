//! Documents: a citizen uploads, lists, reads (with a download URL) and deletes (while
//! not verified) their own documents; staff and admins of the mission upload for its
//! citizens, and list, read, delete, verify and reject all of its documents; global
//! admins all. Another principal's document is 404 and absent from lists; verifying
//! needs a staff or admin token (docs/documents.md "Who may do what").
//!
//! Documents are seen by exactly those who see the citizen's requests, so the reach of a
//! listing and the read rule are those of `policy::requests`. A document's service is its
//! request's; a document attached to no request is of no service, which only a mandate
//! over every service covers.

use super::common::{Access, Listing, Owned, works_for};
use super::requests::{self, RequestReach};
use crate::{CitizenId, MissionId, Principal, Role};

/// Uploading at all: any of the three scopes.
pub fn upload(actor: &Principal) -> Access {
    requests::submit(actor)
}

/// Uploading `document` (whose citizen, mission and service): a citizen for themself,
/// staff and admins for the citizens of their mission. A refusal is an unknown citizen.
pub fn upload_for(actor: &Principal, document: &Owned) -> Access {
    requests::submit_for(actor, document)
}

/// Listing documents, given the mission and citizen the caller filters on: a citizen
/// their own, staff and admins their mission's, global admins any.
pub fn list(
    actor: &Principal,
    asked_mission: Option<MissionId>,
    asked_citizen: Option<CitizenId>,
) -> Listing<RequestReach> {
    requests::list(actor, asked_mission, asked_citizen)
}

/// Reading `document`, and being given its download URL; also listing the documents of
/// a request (who reads the request reads its documents).
pub fn read(actor: &Principal, document: &Owned) -> Access {
    requests::read(actor, document)
}

/// Deleting the document: the role the state machine judges the deletion by (the owner
/// only while it is not verified; staff and admins always).
pub fn delete(actor: &Principal, document: &Owned) -> Access<Role> {
    read(actor, document)?;
    Ok(if works_for(actor, document.mission) { Role::Staff } else { Role::Citizen })
}

/// Verifying or rejecting at all: a staff or admin token, checked before the document is
/// looked up.
pub fn review(actor: &Principal) -> Access {
    requests::work(actor)
}

/// Verifying or rejecting `document`: staff and admins of the mission.
pub fn review_of(actor: &Principal, document: &Owned) -> Access {
    requests::work_on(actor, document)
}

#[cfg(test)]
mod tests {
    use super::super::table::{HERE, LOOSE, OBJECT, OTHER, OWNER, caller, check, show};
    use super::*;

    #[test]
    fn who_uploads_reads_deletes_and_reviews_documents() {
        let (nf, scope) = ("404", "403 scope");
        check(
            ["upload", "upload for", "read/download", "delete as", "review", "review this", "of no request"],
            &[
                ("global admin", ["ok", "ok", "ok", "Staff", "ok", "ok", "ok"]),
                ("global admin+staff", ["ok", "ok", "ok", "Staff", "ok", "ok", "ok"]),
                ("admin here", ["ok", "ok", "ok", "Staff", "ok", "ok", "ok"]),
                ("admin+staff here", ["ok", "ok", "ok", "Staff", "ok", "ok", "ok"]),
                ("admin elsewhere", ["ok", nf, nf, nf, "ok", nf, nf]),
                ("staff here", ["ok", "ok", "ok", "Staff", "ok", "ok", "ok"]),
                ("staff elsewhere", ["ok", nf, nf, nf, "ok", nf, nf]),
                ("member", ["ok", "ok", "ok", "Staff", "ok", "ok", "ok"]),
                ("owner", ["ok", "ok", "ok", "Citizen", scope, scope, "ok"]),
                ("owner elsewhere", ["ok", nf, nf, nf, scope, scope, nf]),
                ("citizen here", ["ok", nf, nf, nf, scope, scope, nf]),
                ("citizen elsewhere", ["ok", nf, nf, nf, scope, scope, nf]),
                // Acting for OWNER: within the mandate's services; a document of no
                // request is of no service, covered by a mandate over all of them only.
                ("representative", ["ok", "ok", "ok", "Citizen", scope, scope, "ok"]),
                ("representative in scope", ["ok", "ok", "ok", "Citizen", scope, scope, nf]),
                ("representative out of scope", ["ok", nf, nf, nf, scope, scope, nf]),
                ("representative of another", ["ok", nf, nf, nf, scope, scope, nf]),
                ("representative elsewhere", ["ok", nf, nf, nf, scope, scope, nf]),
            ],
            |actor| {
                [
                    show(upload(actor)),
                    show(upload_for(actor, &OBJECT)),
                    show(read(actor, &OBJECT)),
                    show(delete(actor, &OBJECT)),
                    show(review(actor)),
                    show(review_of(actor, &OBJECT)),
                    show(read(actor, &LOOSE)),
                ]
            },
        );
    }

    /// Lists show documents within exactly the reach of the caller's requests (whose
    /// table, in `policy::requests`, reads as the rule), for every caller and every ask.
    #[test]
    fn documents_are_listed_within_the_reach_of_requests() {
        let owner = Some(CitizenId(OWNER));
        let asks =
            [(None, None), (Some(HERE), None), (Some(OTHER), None), (None, owner), (Some(OTHER), owner)];
        for label in [
            "global admin",
            "admin here",
            "admin elsewhere",
            "staff here",
            "staff elsewhere",
            "member",
            "owner",
            "owner elsewhere",
            "citizen here",
            "representative",
            "representative in scope",
            "representative elsewhere",
        ] {
            let actor = caller(label);
            for (mission, citizen) in asks {
                let expected = requests::list(&actor, mission, citizen);
                assert_eq!(list(&actor, mission, citizen), expected, "{label} / {mission:?} {citizen:?}");
            }
        }
        let own = Listing::Within(RequestReach::Citizen(CitizenId(OWNER), HERE, None));
        assert_eq!(list(&caller("owner"), None, None), own, "a citizen lists their own");
        assert_eq!(list(&caller("owner"), Some(OTHER), None), Listing::Empty, "not in another mission");
        assert_eq!(list(&caller("staff here"), Some(OTHER), None), Listing::Empty);
    }
}
