//! The callers the policy tables name, and the short form their cells are written in:
//! `ok` (or what the caller is allowed as), `404`, `403 forbidden`, `403 scope`.
//!
//! Every object of a table belongs to the mission `HERE`; its citizen owner is `OWNER`
//! and its staff member `MEMBER`.

use super::{Access, Denied, Owned};
use crate::representation::{Mandate, ServiceScope};
use crate::{
    CitizenId, ClientId, MissionId, Principal, PrincipalId, PrincipalKind, ScopeSet, ServiceTypeId, Subject,
};
use std::fmt::Debug;
use uuid::Uuid;

pub const HERE: MissionId = MissionId(Uuid::from_u128(0x4e4e));
pub const OTHER: MissionId = MissionId(Uuid::from_u128(0x07e4));
pub const OWNER: Uuid = Uuid::from_u128(0x0c17);
pub const MEMBER: Uuid = Uuid::from_u128(0x05aff);
/// The service the tables' requests, appointments and attached documents are of.
pub const SERVICE: ServiceTypeId = ServiceTypeId(Uuid::from_u128(0x5e7));
/// Another service, which the out-of-scope representative's mandate covers.
pub const ELSEWHERE: ServiceTypeId = ServiceTypeId(Uuid::from_u128(0xe15e));

/// OWNER's object of SERVICE in HERE: a request, an appointment, a document attached to
/// a request.
pub const OBJECT: Owned = Owned { citizen: CitizenId(OWNER), mission: HERE, service: Some(SERVICE) };
/// OWNER's object of no service: a document attached to no request.
pub const LOOSE: Owned = Owned { service: None, ..OBJECT };

/// A citizen's token of `mission` acting for `dependant` under `services`.
fn representative(dependant: Uuid, mission: MissionId, services: ServiceScope) -> Principal {
    let mut actor = who(PrincipalKind::Citizen, Uuid::now_v7(), "citizen", Some(mission));
    actor.acting_for =
        Some(Mandate { dependant: CitizenId(dependant), mission, services, representations: Vec::new() });
    actor
}

fn who(kind: PrincipalKind, id: Uuid, scopes: &str, mission: Option<MissionId>) -> Principal {
    Principal {
        subject: Subject { kind, id: PrincipalId(id) },
        client_id: ClientId::new(),
        mission,
        scopes: ScopeSet::parse(scopes).unwrap(),
        address: None,
        acting_for: None,
    }
}

/// The caller a table row names.
pub fn caller(label: &str) -> Principal {
    use PrincipalKind::*;
    let anyone = Uuid::now_v7();
    match label {
        "global admin" => who(Admin, anyone, "admin", None),
        "global admin+staff" => who(Admin, anyone, "admin staff", None),
        "admin here" => who(Admin, anyone, "admin", Some(HERE)),
        "admin+staff here" => who(Admin, anyone, "admin staff", Some(HERE)),
        "admin elsewhere" => who(Admin, anyone, "admin", Some(OTHER)),
        "staff here" => who(Staff, anyone, "staff", Some(HERE)),
        "staff elsewhere" => who(Staff, anyone, "staff", Some(OTHER)),
        // The staff member the object is (or belongs to), and the same id through a
        // client of another mission.
        "member" => who(Staff, MEMBER, "staff", Some(HERE)),
        "member elsewhere" => who(Staff, MEMBER, "staff", Some(OTHER)),
        // The citizen the object is (or belongs to), and the same id elsewhere.
        "owner" => who(Citizen, OWNER, "citizen", Some(HERE)),
        "owner elsewhere" => who(Citizen, OWNER, "citizen", Some(OTHER)),
        "citizen here" => who(Citizen, anyone, "citizen", Some(HERE)),
        "citizen elsewhere" => who(Citizen, anyone, "citizen", Some(OTHER)),
        // Someone acting for OWNER (`On-Behalf-Of`, a representation in force): in every
        // service, in SERVICE, in another service only; someone acting for another
        // citizen; and OWNER's id named through a client of another mission.
        "representative" => representative(OWNER, HERE, ServiceScope::All),
        "representative in scope" => representative(OWNER, HERE, ServiceScope::Only(vec![SERVICE])),
        "representative out of scope" => representative(OWNER, HERE, ServiceScope::Only(vec![ELSEWHERE])),
        "representative of another" => representative(anyone, HERE, ServiceScope::All),
        "representative elsewhere" => representative(OWNER, OTHER, ServiceScope::All),
        other => panic!("no caller `{other}` in the tables"),
    }
}

/// A decision in the short form of the tables; allowed values print as their `Debug`,
/// with the table's missions and owner by name.
pub fn show<T: Debug>(access: Access<T>) -> String {
    match access {
        Ok(value) => {
            let shown = format!("{value:?}");
            if shown == "()" { "ok".to_owned() } else { name_ids(&shown) }
        }
        Err(Denied::NotFound) => "404".to_owned(),
        Err(Denied::Forbidden(_)) => "403 forbidden".to_owned(),
        Err(Denied::InsufficientScope(_)) => "403 scope".to_owned(),
    }
}

/// `show` for a decision that cannot be refused.
pub fn show_value<T: Debug>(value: T) -> String {
    show::<T>(Ok(value))
}

fn name_ids(shown: &str) -> String {
    [
        (HERE.0, "HERE"),
        (OTHER.0, "OTHER"),
        (OWNER, "OWNER"),
        (MEMBER, "MEMBER"),
        (SERVICE.0, "SERVICE"),
        (ELSEWHERE.0, "ELSEWHERE"),
    ]
    .into_iter()
    .fold(shown.to_owned(), |text, (id, name)| text.replace(&id.to_string(), name))
    .replace("MissionId(", "(")
    .replace("CitizenId(", "(")
    .replace("ServiceTypeId(", "(")
}

/// Checks every row: `decide` answers each column for the row's caller.
pub fn check<const N: usize>(
    columns: [&str; N],
    rows: &[(&str, [&str; N])],
    decide: impl Fn(&Principal) -> [String; N],
) {
    for (label, expected) in rows {
        let actual = decide(&caller(label));
        for (column, (want, got)) in columns.iter().zip(expected.iter().zip(actual.iter())) {
            assert_eq!(got, want, "{label} / {column}");
        }
    }
}
