//! Exports of a citizen's data: the `exports` table, its row and [`ExportRepository`]
//! (docs/data-protection.md "Export"). The archives are in the blob store; the lease
//! columns (`claimed_by`, `locked_until`) are this adapter's, never the domain's.

use crate::failure::Failure;
use crate::shared::columns::{corrupt, subject_from_db};
use crate::shared::repository;
use crate::shared::sql_types::{DbTime, DbUuid};
use consular_domain::{CitizenId, Export, ExportId};
use consular_ports::{ExportRepository, ONE_RUNNING_EXPORT, WriteMeta};
use diesel::prelude::*;
use time::OffsetDateTime;

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableTimestamp, PortableUuid};

    exports (id) {
        id -> PortableUuid,
        citizen_id -> PortableUuid,
        mission_id -> PortableUuid,
        requested_by_kind -> Text,
        requested_by_id -> PortableUuid,
        state -> Text,
        created_at -> PortableTimestamp,
        started_at -> Nullable<PortableTimestamp>,
        finished_at -> Nullable<PortableTimestamp>,
        expires_at -> Nullable<PortableTimestamp>,
        blob_key -> Nullable<Text>,
        size_bytes -> Nullable<BigInt>,
        failure -> Nullable<Text>,
        claimed_by -> Nullable<Text>,
        locked_until -> Nullable<PortableTimestamp>,
    }
}

/// The unique constraints of `exports` (see `crate::error`). The one-running index is a
/// partial index on a column, which SQLite reports by that column.
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] =
    &[("exports_pkey", "exports.id"), (ONE_RUNNING_EXPORT, "exports.citizen_id")];

repository! {
    impl ExportRepository for Database => exports {
        fn insert(export: &Export, meta: &WriteMeta);
        fn get(id: ExportId) -> Option<Export>;
        fn running_for(citizen: CitizenId) -> Option<Export>;
        fn claim(node: &str, now: OffsetDateTime, lease_until: OffsetDateTime) -> Option<Export>;
        fn renew(id: ExportId, node: &str, now: OffsetDateTime, lease_until: OffsetDateTime) -> bool;
        fn settle(export: &Export, node: &str) -> bool;
        fn due_to_expire(now: OffsetDateTime, limit: u32) -> Vec<Export>;
        fn expire(export: &Export) -> bool;
        fn known_archive_keys(keys: &[String]) -> Vec<String>;
    }
}

#[derive(Debug, Clone, Queryable, Selectable, Insertable)]
#[diesel(table_name = exports)]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct ExportRow {
    pub id: DbUuid,
    pub citizen_id: DbUuid,
    pub mission_id: DbUuid,
    pub requested_by_kind: String,
    pub requested_by_id: DbUuid,
    pub state: String,
    pub created_at: DbTime,
    pub started_at: Option<DbTime>,
    pub finished_at: Option<DbTime>,
    pub expires_at: Option<DbTime>,
    pub blob_key: Option<String>,
    pub size_bytes: Option<i64>,
    pub failure: Option<String>,
    pub claimed_by: Option<String>,
    pub locked_until: Option<DbTime>,
}

/// What a state change writes: the domain's fields, never the lease (the queries set it).
#[derive(Debug, Clone, AsChangeset)]
#[diesel(table_name = exports)]
#[diesel(treat_none_as_null = true)]
pub(crate) struct ExportOutcome {
    pub state: String,
    pub started_at: Option<DbTime>,
    pub finished_at: Option<DbTime>,
    pub expires_at: Option<DbTime>,
    pub blob_key: Option<String>,
    pub size_bytes: Option<i64>,
    pub failure: Option<String>,
}

fn size_to_db(size: Option<u64>) -> Result<Option<i64>, Failure> {
    size.map(|s| i64::try_from(s).map_err(|e| corrupt("export size", e))).transpose()
}

impl TryFrom<&Export> for ExportRow {
    type Error = Failure;
    fn try_from(e: &Export) -> Result<Self, Failure> {
        Ok(ExportRow {
            id: DbUuid(e.id.0),
            citizen_id: DbUuid(e.citizen_id.0),
            mission_id: DbUuid(e.mission_id.0),
            requested_by_kind: e.requested_by.kind.as_str().to_owned(),
            requested_by_id: DbUuid(e.requested_by.id.0),
            state: e.state.as_str().to_owned(),
            created_at: DbTime(e.created_at),
            started_at: e.started_at.map(DbTime),
            finished_at: e.finished_at.map(DbTime),
            expires_at: e.expires_at.map(DbTime),
            blob_key: e.blob_key.clone(),
            size_bytes: size_to_db(e.size_bytes)?,
            failure: e.failure.clone(),
            claimed_by: None,
            locked_until: None,
        })
    }
}

impl TryFrom<&Export> for ExportOutcome {
    type Error = Failure;
    fn try_from(e: &Export) -> Result<Self, Failure> {
        Ok(ExportOutcome {
            state: e.state.as_str().to_owned(),
            started_at: e.started_at.map(DbTime),
            finished_at: e.finished_at.map(DbTime),
            expires_at: e.expires_at.map(DbTime),
            blob_key: e.blob_key.clone(),
            size_bytes: size_to_db(e.size_bytes)?,
            failure: e.failure.clone(),
        })
    }
}

impl TryFrom<ExportRow> for Export {
    type Error = Failure;
    fn try_from(row: ExportRow) -> Result<Self, Failure> {
        Ok(Export {
            id: row.id.0.into(),
            citizen_id: row.citizen_id.0.into(),
            mission_id: row.mission_id.0.into(),
            requested_by: subject_from_db(
                "exports.requested_by_kind",
                &row.requested_by_kind,
                row.requested_by_id,
            )?,
            state: row.state.parse().map_err(|e| corrupt("exports.state", e))?,
            created_at: row.created_at.0,
            started_at: row.started_at.map(|t| t.0),
            finished_at: row.finished_at.map(|t| t.0),
            expires_at: row.expires_at.map(|t| t.0),
            blob_key: row.blob_key,
            size_bytes: row
                .size_bytes
                .map(|s| u64::try_from(s).map_err(|e| corrupt("exports.size_bytes", e)))
                .transpose()?,
            failure: row.failure,
        })
    }
}
