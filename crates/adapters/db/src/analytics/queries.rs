//! The queries of the analytics views and of the stage-spell projection. A view is read
//! in one snapshot (`read_tx!`) by the backend's [`AnalyticsReads`] and added up by the
//! folds (see `analytics/mod.rs`); the projection is written in the transaction of the
//! history it comes from (`requests`, `demo`).

use super::{Conn, requests};
use crate::analytics::{
    AnalyticsReads, Folds, Grouping, RequestFold, SPELL_DAYS, SeatFold, SpellChange, SpellDayKey,
    SpellDayRow, SpellItems, SpellRow, StageFold, Window, analytics_rollups, request_stage_spells,
    stage_spell_days,
};
use crate::failure::Failure;
use crate::shared::sql_types::{DbDate, DbUuid};
use consular_domain::analytics::StageSpell;
use consular_domain::{RequestId, ServiceRequest, ServiceType, StaffMember};
use consular_ports::{AnalyticsQuery, Clock, MissionScope, OverviewFigures, ServiceFigures, StaffGroups};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use std::sync::Arc;
use time::OffsetDateTime;

pub(crate) async fn overview(
    conn: &mut Conn,
    helper: Option<&mut Conn>,
    query: &AnalyticsQuery,
    clock: &Arc<dyn Clock>,
) -> Result<OverviewFigures, Failure> {
    read_tx!(conn, async |conn: &mut Conn| -> Result<OverviewFigures, Failure> {
        let generated_at = snapshot_instant(conn, clock).await?;
        let window = Window::of(query, generated_at)?;
        let mut folds = Folds {
            requests: RequestFold::new(&window, Grouping::Overview),
            stages: None,
            seats: Some(SeatFold::new(&window)),
        };
        conn.read(helper, &window, &mut folds).await?;
        let Folds { requests, seats, .. } = folds;
        // The overview's fold always has its one group.
        let requests = requests.finish().pop().unwrap_or_default();
        let appointments = seats.map(SeatFold::finish).unwrap_or_default();
        Ok(OverviewFigures { generated_at, requests, appointments })
    })
    .await
}

pub(crate) async fn services(
    conn: &mut Conn,
    helper: Option<&mut Conn>,
    query: &AnalyticsQuery,
    clock: &Arc<dyn Clock>,
) -> Result<ServiceFigures, Failure> {
    read_tx!(conn, async |conn: &mut Conn| -> Result<ServiceFigures, Failure> {
        let generated_at = snapshot_instant(conn, clock).await?;
        let window = Window::of(query, generated_at)?;
        let mut folds = Folds {
            requests: RequestFold::new(&window, Grouping::ServiceType),
            stages: Some(StageFold::new(&window)),
            seats: None,
        };
        conn.read(helper, &window, &mut folds).await?;
        let Folds { requests, stages, .. } = folds;
        Ok(ServiceFigures {
            generated_at,
            requests: requests.finish(),
            stages: stages.map(StageFold::finish).unwrap_or_default(),
        })
    })
    .await
}

pub(crate) async fn staff(
    conn: &mut Conn,
    helper: Option<&mut Conn>,
    query: &AnalyticsQuery,
    clock: &Arc<dyn Clock>,
) -> Result<StaffGroups, Failure> {
    read_tx!(conn, async |conn: &mut Conn| -> Result<StaffGroups, Failure> {
        let generated_at = snapshot_instant(conn, clock).await?;
        let window = Window::of(query, generated_at)?;
        let mut folds =
            Folds { requests: RequestFold::new(&window, Grouping::Staff), stages: None, seats: None };
        conn.read(helper, &window, &mut folds).await?;
        Ok(StaffGroups { generated_at, groups: folds.requests.finish() })
    })
    .await
}

/// Opens the view's snapshot, inside its read transaction, and then reads the instant of
/// its figures marked "now" (`generated_at`) from `clock` (docs/analytics.md "How the
/// figures are computed"). The snapshot starts with the transaction's first statement that
/// reads a table: on PostgreSQL a REPEATABLE READ transaction takes it at its first
/// statement, and SQLite a deferred transaction's at its first read (it keeps that read
/// mark until the end). So this statement reads a table, and the clock is read once it has
/// answered: every write the snapshot holds committed before it started, and was stamped
/// (by the same clock, before its commit) before `generated_at`.
async fn snapshot_instant(conn: &mut Conn, clock: &Arc<dyn Clock>) -> Result<OffsetDateTime, Failure> {
    analytics_rollups::table.count().get_result::<i64>(conn).await?;
    Ok(clock.now())
}

/// The catalog, by code (the catalog area's query).
pub(crate) async fn service_types(conn: &mut Conn) -> Result<Vec<ServiceType>, Failure> {
    super::catalog::all(conn).await
}

/// The staff of the missions in scope, by id (the staff area's query).
pub(crate) async fn staff_members(
    conn: &mut Conn,
    missions: MissionScope,
) -> Result<Vec<StaffMember>, Failure> {
    super::staff::all(conn, missions.mission()).await
}

// ------------------------------------------------------------------ the spell projection

/// Stores `rows` and appends them to the rollup by day, inside the caller's transaction:
/// a write adds a spell or two, one statement each (as `write_meta::store`).
pub(crate) async fn insert_spells(conn: &mut Conn, rows: &[SpellRow]) -> Result<(), Failure> {
    for row in rows {
        diesel::insert_into(request_stage_spells::table).values(row).execute(&mut *conn).await?;
    }
    append_spell_days(conn, rows).await
}

/// After a history entry that may end a spell was appended to `request`'s history, inside
/// that write's transaction: reads the history back (with the new entry) and the stored
/// spells, and stores what changed (`SpellChange`): usually the one or two spells the
/// entry ended.
pub(crate) async fn record_spells(conn: &mut Conn, request: &ServiceRequest) -> Result<(), Failure> {
    let history = requests::history(conn, request.id).await?;
    let of_request = request_stage_spells::request_id.eq(DbUuid(request.id.0));
    let stored: Vec<SpellRow> = request_stage_spells::table
        .filter(of_request)
        .order(request_stage_spells::ordinal.asc())
        .select(SpellRow::as_select())
        .load(conn)
        .await?;
    match SpellChange::of(request, &history, &stored)? {
        SpellChange::Append(rows) => insert_spells(conn, &rows).await,
        SpellChange::Replace(rows) => {
            diesel::delete(request_stage_spells::table.filter(of_request)).execute(&mut *conn).await?;
            remove_spell_days(conn, &stored).await?;
            insert_spells(conn, &rows).await
        }
    }
}

// ------------------------------------------------------------------ the rollup by day

/// Appends `spells` to their rows of `stage_spell_days` (inside the transaction that
/// stores them in `request_stage_spells`): one upsert per row, in key order; the upsert
/// locks the row and appends to what it holds then, so concurrent appends never lose one.
async fn append_spell_days(conn: &mut Conn, spells: &[SpellRow]) -> Result<(), Failure> {
    use diesel::upsert::excluded;
    use stage_spell_days::dsl;
    for ((day, service_type, stage), items) in SpellItems::by_day(spells) {
        diesel::insert_into(dsl::stage_spell_days)
            .values((
                dsl::day.eq(DbDate(day)),
                dsl::service_type_id.eq(DbUuid(service_type)),
                dsl::stage.eq(stage),
                dsl::spells.eq(items.join(",")),
            ))
            .on_conflict((dsl::day, dsl::service_type_id, dsl::stage))
            .do_update()
            .set(dsl::spells.eq(dsl::spells.concat(",").concat(excluded(dsl::spells))))
            .execute(conn)
            .await?;
    }
    Ok(())
}

/// Removes `spells` (one item each) from their rows of `stage_spell_days`, in key order:
/// each row is locked first (an update that changes nothing), then read and written back,
/// so that no append is lost in between.
async fn remove_spell_days(conn: &mut Conn, spells: &[SpellRow]) -> Result<(), Failure> {
    use stage_spell_days::dsl;
    for ((day, service_type, stage), items) in SpellItems::by_day(spells) {
        let row = dsl::stage_spell_days.find((DbDate(day), DbUuid(service_type), stage));
        diesel::update(row).set(dsl::spells.eq(dsl::spells)).execute(conn).await?;
        let Some(stored) = row.select(dsl::spells).first::<String>(conn).await.optional()? else {
            continue;
        };
        let kept = SpellItems::without(&stored, &items);
        if kept.is_empty() {
            diesel::delete(row).execute(conn).await?;
        } else {
            diesel::update(row).set(dsl::spells.eq(kept)).execute(conn).await?;
        }
    }
    Ok(())
}

/// Marks `stage_spell_days` out of date, inside a write transaction that stores spells
/// without it (the demo data set's batches).
pub(crate) async fn mark_spell_days_dirty(conn: &mut Conn) -> Result<(), Failure> {
    diesel::update(analytics_rollups::table.find(SPELL_DAYS))
        .set(analytics_rollups::dirty.eq(true))
        .execute(conn)
        .await?;
    Ok(())
}

/// Rebuilds `stage_spell_days` from `request_stage_spells` with the migration's statement
/// and marks it up to date, in one transaction that concurrent appends wait for.
pub(crate) async fn rebuild_spell_days(conn: &mut Conn) -> Result<u64, Failure> {
    write_tx!(conn, async |conn: &mut Conn| -> Result<u64, Failure> {
        conn.lock_spell_days().await?;
        diesel::delete(stage_spell_days::table).execute(conn).await?;
        let rows = diesel::sql_query(<Conn as AnalyticsReads>::rebuild_spell_days()?).execute(conn).await?;
        diesel::update(analytics_rollups::table.find(SPELL_DAYS))
            .set(analytics_rollups::dirty.eq(false))
            .execute(conn)
            .await?;
        Ok(u64::try_from(rows).unwrap_or_default())
    })
    .await
}

/// Whether `stage_spell_days` is up to date (not marked dirty), in the caller's snapshot.
pub(crate) async fn spell_days_current(conn: &mut Conn) -> Result<bool, Failure> {
    let dirty: Option<bool> = analytics_rollups::table
        .find(SPELL_DAYS)
        .select(analytics_rollups::dirty)
        .first(conn)
        .await
        .optional()?;
    Ok(dirty == Some(false))
}

/// The rows of `stage_spell_days` that may hold spells of `window`: the UTC days from its
/// start's to its end's, of its service type if it has one (read when
/// [`spell_days_current`]).
pub(crate) async fn spell_days(conn: &mut Conn, window: &Window) -> Result<Vec<SpellDayRow>, Failure> {
    use stage_spell_days::dsl;
    let utc_day = |instant: OffsetDateTime| DbDate(instant.to_offset(time::UtcOffset::UTC).date());
    let mut query = dsl::stage_spell_days
        .filter(dsl::day.ge(utc_day(window.start)).and(dsl::day.le(utc_day(window.end))))
        .select(SpellDayRow::as_select())
        .into_boxed();
    if let Some(service_type) = window.service_type {
        query = query.filter(dsl::service_type_id.eq(DbUuid(service_type.0)));
    }
    Ok(query.load(conn).await?)
}

/// Every row of `stage_spell_days`, by key: (day, service type, stage, items sorted); for
/// tests, which compare it with a rebuild.
pub(crate) async fn stored_spell_days(conn: &mut Conn) -> Result<Vec<(SpellDayKey, Vec<String>)>, Failure> {
    let rows: Vec<SpellDayRow> = stage_spell_days::table
        .order((stage_spell_days::day, stage_spell_days::service_type_id, stage_spell_days::stage))
        .select(SpellDayRow::as_select())
        .load(conn)
        .await?;
    Ok(rows
        .into_iter()
        .map(|row| {
            let mut items: Vec<String> = row.spells.split(',').map(str::to_owned).collect();
            items.sort();
            ((row.day.0, row.service_type_id.0, row.stage), items)
        })
        .collect())
}

/// Replaces the projection with what the migration's statement computes from the history
/// (the rollup by day is left as it is: [`rebuild_spell_days`] follows it).
pub(crate) async fn recompute_stage_spells(conn: &mut Conn) -> Result<u64, Failure> {
    write_tx!(conn, async |conn: &mut Conn| -> Result<u64, Failure> {
        diesel::delete(request_stage_spells::table).execute(conn).await?;
        let stored =
            diesel::sql_query(<Conn as AnalyticsReads>::backfill_stage_spells()?).execute(conn).await?;
        Ok(u64::try_from(stored).unwrap_or_default())
    })
    .await
}

pub(crate) async fn stored_stage_spells(
    conn: &mut Conn,
) -> Result<Vec<(RequestId, u32, StageSpell)>, Failure> {
    let rows: Vec<SpellRow> = request_stage_spells::table
        .order((request_stage_spells::request_id.asc(), request_stage_spells::ordinal.asc()))
        .select(SpellRow::as_select())
        .load(conn)
        .await?;
    rows.into_iter().map(SpellRow::into_spell).collect()
}
