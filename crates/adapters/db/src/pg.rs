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
