//! The callers the policy tables name, and the short form their cells are written in:
//! `ok` (or what the caller is allowed as), `404`, `403 forbidden`, `403 scope`.
//!
//! Every object of a table belongs to the mission `HERE`; its citizen owner is `OWNER`
//! and its staff member `MEMBER`.

use super::{Access, Denied};
use crate::{ClientId, MissionId, Principal, PrincipalId, PrincipalKind, ScopeSet, Subject};
use std::fmt::Debug;
use uuid::Uuid;

pub const HERE: MissionId = MissionId(Uuid::from_u128(0x4e4e));
pub const OTHER: MissionId = MissionId(Uuid::from_u128(0x07e4));
pub const OWNER: Uuid = Uuid::from_u128(0x0c17);
pub const MEMBER: Uuid = Uuid::from_u128(0x05aff);

fn who(kind: PrincipalKind, id: Uuid, scopes: &str, mission: Option<MissionId>) -> Principal {
    Principal {
        subject: Subject { kind, id: PrincipalId(id) },
        client_id: ClientId::new(),
        mission,
        scopes: ScopeSet::parse(scopes).unwrap(),
        address: None,
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
    [(HERE.0, "HERE"), (OTHER.0, "OTHER"), (OWNER, "OWNER"), (MEMBER, "MEMBER")]
        .into_iter()
        .fold(shown.to_owned(), |text, (id, name)| text.replace(&id.to_string(), name))
        .replace("MissionId(", "(")
        .replace("CitizenId(", "(")
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
