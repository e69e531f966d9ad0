//! Every database error becomes a [`RepoError`] here, once.

use consular_ports::RepoError;
use diesel::result::{DatabaseErrorInformation, DatabaseErrorKind, Error as QueryError};

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

/// What a query function reports; turned into a [`RepoError`] by the `From` impl below.
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

impl From<Failure> for RepoError {
    fn from(failure: Failure) -> Self {
        match failure {
            Failure::Outcome(error) => error,
            Failure::Corrupt(message) => RepoError::Other(format!("unreadable stored value: {message}")),
            Failure::Pool(error) => from_pool_error(error),
            Failure::Query(error) => from_query_error(error),
        }
    }
}

fn from_pool_error(error: PoolError) -> RepoError {
    use deadpool::managed::PoolError as P;
    match error {
        P::Timeout(_) | P::Closed | P::Backend(_) | P::PostCreateHook(_) => {
            RepoError::Unavailable(error.to_string())
        }
        P::NoRuntimeSpecified => RepoError::Other(error.to_string()),
    }
}

fn from_query_error(error: QueryError) -> RepoError {
    match error {
        QueryError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
            unique_violation(info.as_ref())
        }
        QueryError::DatabaseError(
            DatabaseErrorKind::ClosedConnection
            | DatabaseErrorKind::UnableToSendCommand
            | DatabaseErrorKind::SerializationFailure,
            info,
        ) => RepoError::Unavailable(info.message().to_owned()),
        QueryError::DatabaseError(_, info) if is_transient(info.message()) => {
            RepoError::Unavailable(info.message().to_owned())
        }
        // A cancelled transaction left the connection unusable; the pool discards it.
        QueryError::BrokenTransactionManager => RepoError::Unavailable(error.to_string()),
        other => RepoError::Other(other.to_string()),
    }
}

/// Failures that say "not now" rather than "never". The SQLSTATE is not exposed through
/// diesel's error information, so PostgreSQL errors are recognised by their (stable,
/// English, server-side) messages: 57014 statement/lock timeout, 57P01..57P03 shutdown
/// and start-up, 53300 too many connections. SQLite reports SQLITE_BUSY and
/// SQLITE_LOCKED as "database is locked" / "database table is locked".
fn is_transient(message: &str) -> bool {
    const TRANSIENT: &[&str] = &[
        "canceling statement due to",
        "terminating connection",
        "the database system is",
        "too many clients",
        // PostgreSQL chose this transaction as a deadlock victim and rolled it back whole:
        // retrying it is safe (writes lock rows in one order, so this should stay rare).
        "deadlock detected",
        "remaining connection slots",
        "database is locked",
        "database table is locked",
        "database schema is locked",
    ];
    TRANSIENT.iter().any(|pattern| message.contains(pattern))
}

/// The unique constraints of the schema, declared by the area that owns each table: the
/// name PostgreSQL reports (also the business name callers see) and the columns SQLite
/// lists in "UNIQUE constraint failed: ...".
const UNIQUE_CONSTRAINTS: &[&[(&str, &str)]] = &[
    crate::missions::UNIQUE_CONSTRAINTS,
    crate::clients::UNIQUE_CONSTRAINTS,
    crate::markers::UNIQUE_CONSTRAINTS,
    crate::tokens::UNIQUE_CONSTRAINTS,
    crate::idempotency::UNIQUE_CONSTRAINTS,
    crate::audit::UNIQUE_CONSTRAINTS,
    crate::signing_keys::UNIQUE_CONSTRAINTS,
    crate::service_types::UNIQUE_CONSTRAINTS,
    crate::citizens::UNIQUE_CONSTRAINTS,
    crate::staff::UNIQUE_CONSTRAINTS,
    crate::outbox::UNIQUE_CONSTRAINTS,
    crate::requests::UNIQUE_CONSTRAINTS,
    crate::documents::UNIQUE_CONSTRAINTS,
    crate::service_secrets::UNIQUE_CONSTRAINTS,
    crate::appointments::UNIQUE_CONSTRAINTS,
    crate::notifications::UNIQUE_CONSTRAINTS,
    crate::analytics::UNIQUE_CONSTRAINTS,
];

const IDEMPOTENCY_KEY: &str = crate::idempotency::KEY_CONSTRAINT;

fn unique_violation(info: &dyn DatabaseErrorInformation) -> RepoError {
    let constraint = match info.constraint_name() {
        Some(name) => name.to_owned(),
        None => {
            let columns = info.message().strip_prefix("UNIQUE constraint failed: ").unwrap_or(info.message());
            UNIQUE_CONSTRAINTS
                .iter()
                .copied()
                .flatten()
                .find(|(_, sqlite_columns)| *sqlite_columns == columns)
                .map_or_else(|| columns.to_owned(), |(name, _)| (*name).to_owned())
        }
    };
    if constraint == IDEMPOTENCY_KEY {
        RepoError::IdempotencyKeyInUse
    } else {
        RepoError::Duplicate { constraint }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unique(message: &str) -> RepoError {
        from_query_error(QueryError::DatabaseError(
            DatabaseErrorKind::UniqueViolation,
            Box::new(message.to_owned()),
        ))
    }

    #[test]
    fn sqlite_unique_violations_get_the_postgres_constraint_name() {
        assert!(matches!(
            unique("UNIQUE constraint failed: missions.code"),
            RepoError::Duplicate { constraint } if constraint == "missions_code"
        ));
        assert!(matches!(
            unique("UNIQUE constraint failed: idempotency_keys.owner, idempotency_keys.key"),
            RepoError::IdempotencyKeyInUse
        ));
    }

    #[test]
    fn busy_and_timeouts_are_unavailable() {
        for message in ["database is locked", "canceling statement due to statement timeout"] {
            let error = from_query_error(QueryError::DatabaseError(
                DatabaseErrorKind::Unknown,
                Box::new(message.to_owned()),
            ));
            assert!(matches!(error, RepoError::Unavailable(_)), "{message}");
        }
        assert!(matches!(from_query_error(QueryError::NotFound), RepoError::Other(_)));
    }
}
