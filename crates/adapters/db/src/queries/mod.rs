//! Every query of the adapter, written once. These files are compiled twice, as
//! `crate::pg::queries` and `crate::sqlite::queries`, with `Conn` the connection type of
//! each database, so each query is type-checked for both. Write operations run in
//! `write_tx!` and store their `WriteMeta` in the same transaction.

pub(crate) mod audit;
pub(crate) mod clients;
pub(crate) mod health;
pub(crate) mod idempotency;
pub(crate) mod markers;
pub(crate) mod missions;
pub(crate) mod signing_keys;
pub(crate) mod tokens;
pub(crate) mod write_meta;

use super::Conn;
use crate::error::Failure;
use consular_ports::RepoError;

/// An optimistic update changed no row: the row is gone, or its version moved on.
fn not_updated(still_exists: bool) -> Failure {
    Failure::Outcome(if still_exists { RepoError::VersionConflict } else { RepoError::NotFound })
}
