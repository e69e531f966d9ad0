//! The queries of `src/queries`, compiled for PostgreSQL.

pub(crate) type Conn = diesel_async::AsyncPgConnection;

/// Runs an async closure over the connection in a transaction (READ COMMITTED; the
/// queries take the row locks they need).
macro_rules! write_tx {
    ($conn:expr, $body:expr) => {
        diesel_async::AsyncConnection::transaction($conn, $body)
    };
}

/// Runs an async closure over the connection in a read-only REPEATABLE READ transaction:
/// a read of several statements (a member and their assignments) sees one snapshot.
macro_rules! read_tx {
    ($conn:expr, $body:expr) => {
        ($conn).build_transaction().read_only().repeatable_read().run($body)
    };
}

// `write_tx!` and `read_tx!` are in textual scope in `queries` (declared below them). The
// same files are compiled a second time in `crate::sqlite`: that is how each query is
// written once and type-checked against both databases.
#[allow(clippy::duplicate_mod)]
#[path = "queries/mod.rs"]
pub(crate) mod queries;
