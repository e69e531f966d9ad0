//! The queries of `src/queries`, compiled for PostgreSQL.

pub(crate) type Conn = diesel_async::AsyncPgConnection;

/// Runs an async closure over the connection in a transaction (READ COMMITTED; the
/// queries take the row locks they need).
macro_rules! write_tx {
    ($conn:expr, $body:expr) => {
        diesel_async::AsyncConnection::transaction($conn, $body)
    };
}

// `write_tx!` is in textual scope in `queries` (declared below it). The same files are
// compiled a second time in `crate::sqlite`: that is how each query is written once and
// type-checked against both databases.
#[allow(clippy::duplicate_mod)]
#[path = "queries/mod.rs"]
pub(crate) mod queries;
