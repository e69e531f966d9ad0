//! Column shapes that several areas' rows share: unreadable values, JSON documents, the
//! stages of a service, and a principal stored as a kind and an id. Reading a row back can
//! fail when a stored value is one the domain no longer accepts: that is reported as
//! [`Failure::Corrupt`], never hidden.

use crate::failure::Failure;
use crate::shared::sql_types::{DbJson, DbUuid};
use consular_domain::{PrincipalKind, ServiceTypeId, Stage, Subject};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

pub(crate) fn corrupt(what: &str, error: impl std::fmt::Display) -> Failure {
    Failure::Corrupt(format!("{what}: {error}"))
}

// JSON columns hold private `*Doc` mirrors, never a domain type's own serde form: the
// stored shape changes only when the row's module says so.

pub(crate) fn to_json(what: &str, value: &impl Serialize) -> Result<DbJson, Failure> {
    serde_json::to_string(value).map(DbJson).map_err(|e| corrupt(what, e))
}

pub(crate) fn from_json<T: DeserializeOwned>(what: &str, json: DbJson) -> Result<T, Failure> {
    serde_json::from_str(&json.0).map_err(|e| corrupt(what, e))
}

/// One element of `service_types.stages`, copied into `service_requests.stages` when a
/// request is submitted: both columns must keep the same shape.
#[derive(Serialize, Deserialize)]
pub(crate) struct StageDoc {
    name: String,
    description: String,
}

impl From<&Stage> for StageDoc {
    fn from(s: &Stage) -> Self {
        StageDoc { name: s.name.clone(), description: s.description.clone() }
    }
}

impl From<StageDoc> for Stage {
    fn from(doc: StageDoc) -> Self {
        Stage { name: doc.name, description: doc.description }
    }
}

/// Service type ids bound for `service_type_id IN (…)` (`= ANY($1)` on PostgreSQL), as a
/// mandate's services restrict a listing (docs/representation.md "Acting"): an empty list
/// matches no row.
pub(crate) fn service_type_ids(ids: &[ServiceTypeId]) -> Vec<DbUuid> {
    ids.iter().map(|t| DbUuid(t.0)).collect()
}

/// A principal stored as two columns, `<x>_kind` and `<x>_id`.
pub(crate) fn subject_from_db(what: &str, kind: &str, id: DbUuid) -> Result<Subject, Failure> {
    Ok(Subject { kind: kind.parse::<PrincipalKind>().map_err(|e| corrupt(what, e))?, id: id.0.into() })
}

/// An optional actor as its `actor_kind` and `actor_id` columns, both NULL or neither (a
/// CHECK says so).
pub(crate) fn actor_to_db(actor: Option<Subject>) -> (Option<String>, Option<DbUuid>) {
    (actor.map(|s| s.kind.as_str().to_owned()), actor.map(|s| DbUuid(s.id.0)))
}

/// The actor of [`actor_to_db`]'s columns; `what` names the kind column in errors.
pub(crate) fn actor_from_db(
    what: &str,
    kind: Option<String>,
    id: Option<DbUuid>,
) -> Result<Option<Subject>, Failure> {
    match (kind, id) {
        (Some(kind), Some(id)) => subject_from_db(what, &kind, id).map(Some),
        _ => Ok(None),
    }
}
