//! Retention and erasure (docs/data-protection.md "Retention and erasure"): the
//! [`ErasureRepository`] over the tables of the other areas that hold a citizen's data.
//! The area owns no table; migration 000025 gives it `citizens.erased_at`, the triggers
//! that refuse writes of an erased citizen's data, and `service_types.retention_days`.

use crate::shared::repository;
use consular_domain::erasure::RetainedRequest;
use consular_domain::{CitizenId, RequestId, ServiceTypeId};
use consular_ports::{Erased, Erasure, ErasureRepository, WriteMeta};
use diesel::QueryResult;
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sqlite::Sqlite;
use time::OffsetDateTime;

/// The text the triggers of migration 000025 start their error with; `crate::error`
/// maps it to `RepoError::NotFound` (the citizen's data is gone, for writes too).
pub(crate) const CITIZEN_ERASED: &str = "citizen_erased";

/// What an erased citizen's API clients are renamed.
pub(crate) const ERASED_CLIENT_NAME: &str = "erased";

/// What a scrubbed tombstone's file name becomes.
pub(crate) const ERASED_FILE_NAME: &str = "erased";

/// What a scrubbed tombstone's digest becomes (the column must hold 64 hex digits).
pub(crate) const ERASED_SHA256: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// What the databases do after an erasure's commit. SQLite (WAL mode) keeps the pages an
/// erasure rewrote, with the values it erased, in the `-wal` file and the main file until
/// a checkpoint: a full checkpoint that truncates the WAL writes them over at once
/// (`secure_delete`, `crate::database`, zeroes what the erasure freed). PostgreSQL keeps
/// dead rows until vacuum, which no logical dump (`pg_dump`) reads.
pub(crate) trait ErasureDialect {
    const AFTER_COMMIT: Option<&'static str>;
}

impl ErasureDialect for Pg {
    const AFTER_COMMIT: Option<&'static str> = None;
}

impl ErasureDialect for Sqlite {
    const AFTER_COMMIT: Option<&'static str> = Some("PRAGMA wal_checkpoint(TRUNCATE);");
}

/// `<query> FOR UPDATE` on PostgreSQL; on SQLite, whose `BEGIN IMMEDIATE` runs one writer
/// at a time, the query as it is. `query` must be a whole `SELECT` of one table. An
/// erasure locks the requests and outbox events it deletes this way before it reads what
/// refers to them: an insert referring to one (a message, a notification the worker is
/// writing) takes a key-share lock, which `FOR UPDATE` waits for and blocks (the
/// `FOR NO KEY UPDATE` of `appointments::Locked` lets it through), so no new reference
/// appears between the read and the deletion.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ForUpdate<Q>(pub Q);

impl<Q: QueryId> QueryId for ForUpdate<Q> {
    type QueryId = ForUpdate<Q::QueryId>;
    const HAS_STATIC_QUERY_ID: bool = Q::HAS_STATIC_QUERY_ID;
}

impl<Q: Query> Query for ForUpdate<Q> {
    type SqlType = Q::SqlType;
}

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for ForUpdate<Q> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.0.walk_ast(out.reborrow())?;
        out.push_sql(" FOR UPDATE");
        Ok(())
    }
}

impl<Q: QueryFragment<Sqlite>> QueryFragment<Sqlite> for ForUpdate<Q> {
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        self.0.walk_ast(out)
    }
}

repository! {
    impl ErasureRepository for Database => erasure {
        fn requests_of(citizen: CitizenId) -> Vec<RetainedRequest>;
        fn erase(erasure: &Erasure, meta: &WriteMeta) -> Erased;
        fn expired_requests(service_type: ServiceTypeId, ended_before: OffsetDateTime, limit: i64) -> Vec<RequestId>;
        fn delete_requests(requests: &[RequestId], at: OffsetDateTime, meta: &WriteMeta) -> Erased;
    }
}
