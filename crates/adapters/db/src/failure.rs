//! What can fail: [`Failure`], what every query function reports (turned into a
//! [`RepoError`] once, in `error.rs`), and [`DbError`], why the pool or the migrations
//! could not be set up.

use consular_ports::RepoError;
use diesel::result::{DatabaseErrorKind, Error as QueryError};

/// Why [`Database::connect`](crate::Database::connect) or
/// [`Database::migrate`](crate::Database::migrate) failed.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("invalid database URL: {0}")]
    InvalidUrl(String),
    #[error("cannot prepare the database: {0}")]
    Setup(String),
    #[error("cannot connect to the database: {0}")]
    Connect(String),
    #[error("database migration failed: {0}")]
    Migration(String),
}

pub(crate) type PoolError = deadpool::managed::PoolError<diesel_async::pooled_connection::PoolError>;

/// What a query function reports; turned into a [`RepoError`] by `error.rs`.
#[derive(Debug)]
pub(crate) enum Failure {
    Query(QueryError),
    Pool(PoolError),
    /// A business outcome decided inside a transaction (`NotFound`, `VersionConflict`):
    /// returning it as an error rolls the transaction back.
    Outcome(RepoError),
    /// A stored value the domain refuses (an unknown status, malformed JSON, ...).
    Corrupt(String),
}

impl From<QueryError> for Failure {
    fn from(error: QueryError) -> Self {
        Failure::Query(error)
    }
}

impl From<PoolError> for Failure {
    fn from(error: PoolError) -> Self {
        Failure::Pool(error)
    }
}

/// Whether `error` says that the server no longer takes writes: 25006
/// `read_only_sql_transaction` ("cannot execute INSERT in a read-only transaction", also
/// "cannot execute … during recovery" on a standby), and what else a server in recovery
/// refuses ("recovery is in progress", "cannot assign TransactionIds during recovery").
/// The primary was demoted or replaced, or turned read-only: every connection to it must
/// be dropped, so that new ones find the primary (docs/operations.md "High availability").
/// A write inside one of our own read-only transactions (`read_tx!`) would give 25006 too:
/// that bug shows in the tests as a 503 instead of a 500.
pub(crate) fn refuses_writes(error: &QueryError) -> bool {
    match error {
        QueryError::DatabaseError(DatabaseErrorKind::ReadOnlyTransaction, _) => true,
        QueryError::DatabaseError(_, info) => {
            let message = info.message();
            message.contains("during recovery") || message.contains("recovery is in progress")
        }
        _ => false,
    }
}
