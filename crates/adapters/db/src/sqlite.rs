//! The queries of `src/queries`, compiled for SQLite.

pub(crate) type Conn =
    diesel_async::sync_connection_wrapper::SyncConnectionWrapper<diesel::sqlite::SqliteConnection>;

/// Runs an async closure over the connection in a `BEGIN IMMEDIATE` transaction: the write
/// lock is taken up front, so a transaction never fails half-way with SQLITE_BUSY when it
/// upgrades from reading to writing (another process, such as a CLI, may share the file;
/// `busy_timeout` makes it wait instead).
macro_rules! write_tx {
    ($conn:expr, $body:expr) => {
        ($conn).immediate_transaction($body)
    };
}

/// Runs an async closure over the connection in a (deferred) transaction: a read of
/// several statements sees one snapshot, even with another process writing to the file.
macro_rules! read_tx {
    ($conn:expr, $body:expr) => {
        diesel_async::AsyncConnection::transaction($conn, $body)
    };
}

// `write_tx!` and `read_tx!` are in textual scope in `queries` (declared below them). The
// same files are compiled a second time in `crate::pg`.
#[allow(clippy::duplicate_mod)]
#[path = "queries/mod.rs"]
pub(crate) mod queries;
