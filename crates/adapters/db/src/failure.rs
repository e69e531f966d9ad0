//! What can fail: [`Failure`], what every query function reports (turned into a
//! [`RepoError`] once, in `error.rs`), and [`DbError`], why the pool or the migrations
//! could not be set up.

use consular_ports::RepoError;
use diesel::result::Error as QueryError;

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
