//! Every area's queries (`src/queries.rs`), compiled for PostgreSQL.

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

/// Runs independent reads on one connection and waits for them all, pipelined: each
/// statement is sent without waiting for the answer to the one before (the server still
/// runs them in order, in the caller's transaction). `reads!(conn => a, b, …)`: each
/// expression is a future over `conn`; the result is `Result<(A, B, …), diesel::result::Error>`.
macro_rules! reads {
    ($conn:ident => $($read:expr),+ $(,)?) => {{
        let shared: &Conn = &*$conn;
        tokio::try_join!($(async {
            let mut $conn = shared;
            let $conn = &mut $conn;
            $read.await
        }),+)
    }};
}

/// The writes of a transaction sent together, pipelined: [`Batch::add`] queues a
/// statement, [`Batch::run`] sends every queued one at once and waits for all their
/// answers, one round trip instead of one per statement. PostgreSQL runs them one after
/// the other in the order added: `run` first polls each in that order, which queues it
/// on the connection (diesel-async's statement cache is locked fairly, so one being
/// prepared keeps the later ones behind it; no type lookup can, as every custom type
/// has fixed OIDs: `shared/sql_types.rs`). The first statement that failed, in that
/// order, is the batch's error; PostgreSQL refuses the ones after it (the transaction is
/// aborted), and the caller rolls back. Write a batch only of statements whose answers
/// the later ones do not wait for: a statement whose row count decides what follows
/// ends the batch. SQLite's `Batch` (`sqlite.rs`) runs each statement as it is added.
pub(crate) struct Batch<'a> {
    conn: &'a Conn,
    queued: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = QueryResult<usize>> + Send + 'a>>>,
}

/// The first statement of a [`Batch`] that failed: its place in the batch and its error.
#[derive(Debug)]
pub(crate) struct BatchError {
    pub(crate) index: usize,
    pub(crate) error: diesel::result::Error,
}

impl<'a> Batch<'a> {
    pub(crate) fn new(conn: &'a mut Conn) -> Self {
        Batch { conn: &*conn, queued: Vec::new() }
    }

    /// How many statements the batch holds: the index the next one added will have.
    pub(crate) fn len(&self) -> usize {
        self.queued.len()
    }

    /// Queues `statement`; nothing is sent before [`Batch::run`].
    pub(crate) async fn add<Q>(&mut self, statement: Q)
    where
        Q: diesel_async::methods::ExecuteDsl<&'a Conn> + RunQueryDsl<&'a Conn> + Send,
    {
        let mut conn = self.conn;
        self.queued.push(statement.execute(&mut conn));
    }

    /// Sends the statements and returns the row count of each, in the order added.
    /// `join_all` polls each first in that order and waits for every answer (none is
    /// dropped mid-flight, as `try_join_all` would on the first error to arrive); the
    /// first failure in statement order is the batch's error.
    pub(crate) async fn run(self) -> Result<Vec<usize>, BatchError> {
        futures_util::future::join_all(self.queued)
            .await
            .into_iter()
            .enumerate()
            .map(|(index, answer)| answer.map_err(|error| BatchError { index, error }))
            .collect()
    }
}

// `write_tx!`, `read_tx!` and `reads!` are in textual scope in `queries` (declared below them). The
// same files are compiled a second time in `crate::sqlite`: that is how each query is
// written once and type-checked against both databases.
#[allow(clippy::duplicate_mod)]
#[path = "queries.rs"]
pub(crate) mod queries;

use crate::failure::Failure;
use diesel::QueryResult;
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel_async::RunQueryDsl;

/// `EXPLAIN` of a query: its plan, one text row per line.
struct Explain<Q>(Q);

impl<Q> QueryId for Explain<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q> Query for Explain<Q> {
    type SqlType = diesel::sql_types::Text;
}

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for Explain<Q> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("EXPLAIN ");
        self.0.walk_ast(out.reborrow())
    }
}

/// The plan of `query`, one line per row, with sequential scans and sorts disabled for
/// this transaction only, whatever the table's size and statistics: a `Seq Scan` left in
/// the plan means that no index can serve the query, a `Sort` that no index yields its
/// order.
pub(crate) async fn explain<Q>(conn: &mut Conn, query: Q) -> Result<Vec<String>, Failure>
where
    Q: QueryFragment<Pg> + Send + 'static,
{
    let query = Explain(query);
    conn.build_transaction()
        .read_only()
        .run(async |conn: &mut Conn| -> Result<Vec<String>, Failure> {
            diesel::sql_query("SET LOCAL enable_seqscan = off").execute(conn).await?;
            diesel::sql_query("SET LOCAL enable_sort = off").execute(conn).await?;
            Ok(query.load::<String>(conn).await?)
        })
        .await
}
