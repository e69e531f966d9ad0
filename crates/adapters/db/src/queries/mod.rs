//! Every query of the adapter, written once. These files are compiled twice, as
//! `crate::pg::queries` and `crate::sqlite::queries`, with `Conn` the connection type of
//! each database, so each query is type-checked for both. Write operations run in
//! `write_tx!` and store their `WriteMeta` in the same transaction; reads that take more
//! than one statement run in `read_tx!`, so they see one snapshot.

/// Optimistic update: replaces the row of `$table` (a `crate::schema` module in scope)
/// whose id is `$row.id` with `$row` if its `version` is still `$expected`. Evaluates to
/// a future of `Result<(), Failure>`: `NotFound` when the row is gone, `VersionConflict`
/// when its version moved on. Run it inside the write's transaction, from a module of
/// `queries` (it needs `diesel::prelude::*` and `RunQueryDsl` in scope).
macro_rules! update_versioned {
    ($conn:expr, $table:ident, $row:expr, $expected:expr) => {
        async {
            let row = $row;
            let updated = diesel::update($table::table.find(row.id).filter($table::version.eq($expected)))
                .set(row)
                .execute(&mut *$conn)
                .await?;
            if updated > 0 {
                return Ok(());
            }
            let exists = diesel::select(diesel::dsl::exists($table::table.find(row.id).select($table::id)))
                .get_result::<bool>(&mut *$conn)
                .await?;
            Err::<(), crate::error::Failure>(super::not_updated(exists))
        }
    };
}

pub(crate) mod audit;
pub(crate) mod citizens;
pub(crate) mod clients;
pub(crate) mod health;
pub(crate) mod idempotency;
pub(crate) mod markers;
pub(crate) mod missions;
pub(crate) mod outbox;
pub(crate) mod requests;
pub(crate) mod service_types;
pub(crate) mod signing_keys;
pub(crate) mod staff;
pub(crate) mod tokens;
pub(crate) mod write_meta;

use super::Conn;
use crate::error::Failure;
use consular_ports::RepoError;

/// An optimistic update changed no row: the row is gone, or its version moved on.
fn not_updated(still_exists: bool) -> Failure {
    Failure::Outcome(if still_exists { RepoError::VersionConflict } else { RepoError::NotFound })
}
