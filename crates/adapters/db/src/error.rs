//! Every database error becomes a [`RepoError`] here, once. A unique violation is
//! named by the constraint (PostgreSQL reports it; on SQLite it is found by its columns
//! among the constraints the areas declare, `crate::schema::UNIQUE_CONSTRAINTS`), so that
//! both databases give callers the same name.

use crate::failure::{Failure, PoolError, refuses_writes};
use consular_ports::RepoError;
use diesel::result::{DatabaseErrorInformation, DatabaseErrorKind, Error as QueryError};

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
        ref error if refuses_writes(error) => RepoError::Unavailable(format!(
            "the database server does not take writes (a standby, or a primary turned \
             read-only): {error}"
        )),
        QueryError::DatabaseError(_, info) if is_transient(info.message()) => {
            RepoError::Unavailable(info.message().to_owned())
        }
        // A write of an erased citizen's data, refused by the triggers of migration 000025.
        QueryError::DatabaseError(_, info) if info.message().starts_with(crate::erasure::CITIZEN_ERASED) => {
            RepoError::NotFound
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

const IDEMPOTENCY_KEY: &str = crate::idempotency::KEY_CONSTRAINT;

fn unique_violation(info: &dyn DatabaseErrorInformation) -> RepoError {
    let constraint = match info.constraint_name() {
        Some(name) => name.to_owned(),
        None => {
            let columns = info.message().strip_prefix("UNIQUE constraint failed: ").unwrap_or(info.message());
            crate::schema::UNIQUE_CONSTRAINTS
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

    #[test]
    fn a_server_that_no_longer_takes_writes_is_unavailable() {
        let refused = [
            (DatabaseErrorKind::ReadOnlyTransaction, "cannot execute INSERT in a read-only transaction"),
            (DatabaseErrorKind::ReadOnlyTransaction, "cannot execute LOCK TABLE during recovery"),
            (DatabaseErrorKind::Unknown, "cannot assign TransactionIds during recovery"),
            (DatabaseErrorKind::Unknown, "recovery is in progress"),
        ];
        for (kind, message) in refused {
            let error = QueryError::DatabaseError(kind, Box::new(message.to_owned()));
            assert!(refuses_writes(&error), "{message}");
            match from_query_error(error) {
                RepoError::Unavailable(text) => {
                    assert!(text.contains("does not take writes") && text.contains(message), "{text}");
                }
                other => panic!("{message}: {other:?}"),
            }
        }
        // Other failures do not drop the pool's connections.
        for message in ["canceling statement due to statement timeout", "deadlock detected"] {
            let error = QueryError::DatabaseError(DatabaseErrorKind::Unknown, Box::new(message.to_owned()));
            assert!(!refuses_writes(&error), "{message}");
        }
        assert!(!refuses_writes(&QueryError::NotFound));
    }
}
