//! Every area's queries (`src/queries.rs`), compiled for SQLite.

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

/// Runs independent reads on one connection, one after the other (`reads!` of `pg.rs`
/// pipelines them; SQLite runs in-process, so there is no round trip to save). The result
/// is `Result<(A, B, …), diesel::result::Error>`.
macro_rules! reads {
    ($conn:ident => $($read:expr),+ $(,)?) => {
        async { Ok::<_, diesel::result::Error>(($($read.await?),+)) }.await
    };
}

/// The writes of a transaction, each run as it is added (`Batch` of `pg.rs` pipelines
/// them; SQLite runs in-process, so there is no round trip to save): after the first
/// that fails, the others are skipped, and [`Batch::run`] returns its error.
pub(crate) struct Batch<'a> {
    conn: &'a mut Conn,
    counts: Vec<usize>,
    failed: Option<BatchError>,
}

/// The first statement of a [`Batch`] that failed: its place in the batch and its error.
#[derive(Debug)]
pub(crate) struct BatchError {
    pub(crate) index: usize,
    pub(crate) error: diesel::result::Error,
}

impl<'a> Batch<'a> {
    pub(crate) fn new(conn: &'a mut Conn) -> Self {
        Batch { conn, counts: Vec::new(), failed: None }
    }

    /// How many statements the batch holds: the index the next one added will have.
    pub(crate) fn len(&self) -> usize {
        self.counts.len() + usize::from(self.failed.is_some())
    }

    /// Runs `statement`, unless one before it failed.
    pub(crate) async fn add<Q>(&mut self, statement: Q)
    where
        Q: diesel_async::methods::ExecuteDsl<Conn> + RunQueryDsl<Conn> + Send,
    {
        if self.failed.is_some() {
            return;
        }
        match statement.execute(&mut *self.conn).await {
            Ok(count) => self.counts.push(count),
            Err(error) => self.failed = Some(BatchError { index: self.counts.len(), error }),
        }
    }

    /// The row count of each statement, in the order added, or the first error.
    pub(crate) async fn run(self) -> Result<Vec<usize>, BatchError> {
        match self.failed {
            Some(failed) => Err(failed),
            None => Ok(self.counts),
        }
    }
}

// `write_tx!`, `read_tx!` and `reads!` are in textual scope in `queries` (declared below them). The
// same files are compiled a second time in `crate::pg`.
#[allow(clippy::duplicate_mod)]
#[path = "queries.rs"]
pub(crate) mod queries;

use crate::failure::Failure;
use diesel::QueryResult;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{Integer, Text};
use diesel::sqlite::Sqlite;
use diesel_async::RunQueryDsl;

/// `EXPLAIN QUERY PLAN` of a query: rows of (id, parent, notused, detail).
struct ExplainQueryPlan<Q>(Q);

impl<Q> QueryId for ExplainQueryPlan<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q> Query for ExplainQueryPlan<Q> {
    type SqlType = (Integer, Integer, Integer, Text);
}

impl<Q: QueryFragment<Sqlite>> QueryFragment<Sqlite> for ExplainQueryPlan<Q> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        out.push_sql("EXPLAIN QUERY PLAN ");
        self.0.walk_ast(out.reborrow())
    }
}

/// The plan of `query`: the `detail` of each step.
pub(crate) async fn explain<Q>(conn: &mut Conn, query: Q) -> Result<Vec<String>, Failure>
where
    Q: QueryFragment<Sqlite> + Send + 'static,
{
    let steps: Vec<(i32, i32, i32, String)> = ExplainQueryPlan(query).load(conn).await?;
    Ok(steps.into_iter().map(|(_, _, _, detail)| detail).collect())
}
