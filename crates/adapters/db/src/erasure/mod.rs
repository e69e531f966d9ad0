//! Retention and erasure (docs/data-protection.md "Retention and erasure"): the
//! [`ErasureRepository`] over the tables of the other areas that hold a citizen's data.
//! The area owns no table; migration 000025 gives it `citizens.erased_at`, the triggers
//! that refuse writes of an erased citizen's data, and `service_types.retention_days`.

use crate::shared::repository;
use consular_domain::erasure::RetainedRequest;
use consular_domain::{CitizenId, RequestId, ServiceTypeId};
use consular_ports::{Erased, Erasure, ErasureRepository, WriteMeta};
use time::OffsetDateTime;

/// The text the triggers of migration 000025 start their error with; `crate::error`
/// maps it to `RepoError::NotFound` (the citizen's data is gone, for writes too).
pub(crate) const CITIZEN_ERASED: &str = "citizen_erased";

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

impl ErasureDialect for diesel::pg::Pg {
    const AFTER_COMMIT: Option<&'static str> = None;
}

impl ErasureDialect for diesel::sqlite::Sqlite {
    const AFTER_COMMIT: Option<&'static str> = Some("PRAGMA wal_checkpoint(TRUNCATE);");
}

repository! {
    impl ErasureRepository for Database => erasure {
        fn requests_of(citizen: CitizenId) -> Vec<RetainedRequest>;
        fn erase(erasure: &Erasure, meta: &WriteMeta) -> Erased;
        fn expired_requests(service_type: ServiceTypeId, ended_before: OffsetDateTime, limit: i64) -> Vec<RequestId>;
        fn delete_requests(requests: &[RequestId], at: OffsetDateTime, meta: &WriteMeta) -> Erased;
    }
}
