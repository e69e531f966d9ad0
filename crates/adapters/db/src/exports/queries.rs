//! The queries of exports: the insert guarded by the one-running index, the build lease
//! (claim, renew, settle; each one guarded statement) and the expiry sweep's.

use super::{Conn, write_meta};
use crate::exports::{ExportOutcome, ExportRow, exports};
use crate::failure::Failure;
use crate::shared::sql_types::{DbTime, DbUuid};
use consular_domain::{CitizenId, Export, ExportId, ExportState};
use consular_ports::WriteMeta;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use std::collections::HashSet;
use time::OffsetDateTime;

/// How many keys one `known_archive_keys` statement binds: well under SQLite's limit on
/// bound parameters.
const KEYS_PER_STATEMENT: usize = 500;

const PENDING: &str = "pending";
const RUNNING: &str = "running";
const READY: &str = "ready";

/// The export, in one transaction with `meta`; a second running export of the citizen
/// fails on `exports_one_running`.
pub(crate) async fn insert(conn: &mut Conn, export: &Export, meta: &WriteMeta) -> Result<(), Failure> {
    let row = ExportRow::try_from(export)?;
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        write_meta::store(conn, meta).await?;
        diesel::insert_into(exports::table).values(&row).execute(conn).await?;
        Ok(())
    })
    .await
}

pub(crate) async fn get(conn: &mut Conn, id: ExportId) -> Result<Option<Export>, Failure> {
    let row: Option<ExportRow> =
        exports::table.find(DbUuid(id.0)).select(ExportRow::as_select()).first(conn).await.optional()?;
    row.map(Export::try_from).transpose()
}

/// Served by `exports_one_running` (at most one row).
pub(crate) async fn running_for(conn: &mut Conn, citizen: CitizenId) -> Result<Option<Export>, Failure> {
    let row: Option<ExportRow> = exports::table
        .filter(exports::citizen_id.eq(DbUuid(citizen.0)))
        .filter(exports::state.eq_any([PENDING, RUNNING]))
        .select(ExportRow::as_select())
        .first(conn)
        .await
        .optional()?;
    row.map(Export::try_from).transpose()
}

/// The oldest claimable export (pending, or running with its lease expired at `now`),
/// then one guarded update that takes it only if it is still claimable: on PostgreSQL a
/// concurrent claim of the same row waits for the first one's commit, then finds the
/// row leased and updates nothing; on SQLite `BEGIN IMMEDIATE` serialises claims.
pub(crate) async fn claim(
    conn: &mut Conn,
    node: &str,
    now: OffsetDateTime,
    lease_until: OffsetDateTime,
) -> Result<Option<Export>, Failure> {
    let node = node.to_owned();
    write_tx!(conn, async |conn: &mut Conn| -> Result<Option<Export>, Failure> {
        let claimable = exports::state
            .eq(PENDING)
            .or(exports::state.eq(RUNNING).and(exports::locked_until.le(DbTime(now))));
        let candidate: Option<DbUuid> = exports::table
            .filter(claimable)
            .order(exports::id.asc())
            .select(exports::id)
            .first(conn)
            .await
            .optional()?;
        let Some(id) = candidate else { return Ok(None) };
        let taken = diesel::update(exports::table.find(id).filter(claimable))
            .set((
                exports::state.eq(RUNNING),
                exports::started_at.eq(Some(DbTime(now))),
                exports::claimed_by.eq(Some(node.clone())),
                exports::locked_until.eq(Some(DbTime(lease_until))),
            ))
            .execute(conn)
            .await?;
        if taken == 0 {
            return Ok(None);
        }
        let row: ExportRow = exports::table.find(id).select(ExportRow::as_select()).first(conn).await?;
        Ok(Some(Export::try_from(row)?))
    })
    .await
}

/// One guarded statement: the lease moves only if `node` still holds it.
pub(crate) async fn renew(
    conn: &mut Conn,
    id: ExportId,
    node: &str,
    now: OffsetDateTime,
    lease_until: OffsetDateTime,
) -> Result<bool, Failure> {
    let updated = diesel::update(
        exports::table
            .find(DbUuid(id.0))
            .filter(exports::state.eq(RUNNING))
            .filter(exports::claimed_by.eq(node))
            .filter(exports::locked_until.gt(DbTime(now))),
    )
    .set(exports::locked_until.eq(Some(DbTime(lease_until))))
    .execute(conn)
    .await?;
    Ok(updated == 1)
}

/// One guarded statement: the outcome is stored only if `node` still holds the export
/// (running, leased to it), and the lease is released.
pub(crate) async fn settle(conn: &mut Conn, export: &Export, node: &str) -> Result<bool, Failure> {
    let outcome = ExportOutcome::try_from(export)?;
    let updated = diesel::update(
        exports::table
            .find(DbUuid(export.id.0))
            .filter(exports::state.eq(RUNNING))
            .filter(exports::claimed_by.eq(node)),
    )
    .set((&outcome, exports::locked_until.eq(None::<DbTime>)))
    .execute(conn)
    .await?;
    Ok(updated == 1)
}

/// Ready exports whose time is up, oldest first.
pub(crate) async fn due_to_expire(
    conn: &mut Conn,
    now: OffsetDateTime,
    limit: u32,
) -> Result<Vec<Export>, Failure> {
    let rows: Vec<ExportRow> = exports::table
        .filter(exports::state.eq(READY))
        .filter(exports::expires_at.le(DbTime(now)))
        .order(exports::id.asc())
        .limit(i64::from(limit))
        .select(ExportRow::as_select())
        .load(conn)
        .await?;
    rows.into_iter().map(Export::try_from).collect()
}

/// One guarded statement: only a still-ready export expires.
pub(crate) async fn expire(conn: &mut Conn, export: &Export) -> Result<bool, Failure> {
    let outcome = ExportOutcome::try_from(export)?;
    debug_assert_eq!(export.state, ExportState::Expired);
    let updated = diesel::update(exports::table.find(DbUuid(export.id.0)).filter(exports::state.eq(READY)))
        .set(&outcome)
        .execute(conn)
        .await?;
    Ok(updated == 1)
}

pub(crate) async fn known_archive_keys(conn: &mut Conn, keys: &[String]) -> Result<Vec<String>, Failure> {
    let mut known: HashSet<String> = HashSet::new();
    for batch in keys.chunks(KEYS_PER_STATEMENT) {
        let found: Vec<Option<String>> = exports::table
            .filter(exports::blob_key.eq_any(batch))
            .select(exports::blob_key)
            .load(conn)
            .await?;
        known.extend(found.into_iter().flatten());
    }
    Ok(keys.iter().filter(|k| known.contains(*k)).cloned().collect())
}
