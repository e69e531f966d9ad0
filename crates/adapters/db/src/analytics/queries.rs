//! The queries of the analytics views and of the stage-spell projection. A view is read
//! in one snapshot (`read_tx!`) by the backend's [`AnalyticsReads`] and added up by the
//! folds (see `analytics/mod.rs`); the projection is written in the transaction of the
//! history it comes from (`requests`, `demo`).

use super::{Conn, requests};
use crate::analytics::{
    AnalyticsReads, Folds, Grouping, RequestFold, SeatFold, SpellChange, SpellRow, StageFold, Window,
    request_stage_spells,
};
use crate::error::Failure;
use crate::shared::sql_types::DbUuid;
use consular_domain::analytics::StageSpell;
use consular_domain::{RequestId, ServiceRequest, ServiceType, StaffMember};
use consular_ports::{AnalyticsQuery, MissionScope, OverviewFigures, RequestGroup, ServiceFigures};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

pub(crate) async fn overview(
    conn: &mut Conn,
    helper: Option<&mut Conn>,
    query: &AnalyticsQuery,
) -> Result<OverviewFigures, Failure> {
    let window = Window::of(query)?;
    read_tx!(conn, async |conn: &mut Conn| -> Result<OverviewFigures, Failure> {
        let mut folds = Folds {
            requests: RequestFold::new(&window, Grouping::Overview),
            stages: None,
            seats: Some(SeatFold::new(&window)),
        };
        conn.read(helper, &window, &mut folds).await?;
        let Folds { requests, seats, .. } = folds;
        // The overview's fold always has its one group.
        let requests = requests.finish().pop().unwrap_or_default();
        Ok(OverviewFigures { requests, appointments: seats.map(SeatFold::finish).unwrap_or_default() })
    })
    .await
}

pub(crate) async fn services(
    conn: &mut Conn,
    helper: Option<&mut Conn>,
    query: &AnalyticsQuery,
) -> Result<ServiceFigures, Failure> {
    let window = Window::of(query)?;
    read_tx!(conn, async |conn: &mut Conn| -> Result<ServiceFigures, Failure> {
        let mut folds = Folds {
            requests: RequestFold::new(&window, Grouping::ServiceType),
            stages: Some(StageFold::new(&window)),
            seats: None,
        };
        conn.read(helper, &window, &mut folds).await?;
        let Folds { requests, stages, .. } = folds;
        Ok(ServiceFigures {
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
) -> Result<Vec<RequestGroup>, Failure> {
    let window = Window::of(query)?;
    read_tx!(conn, async |conn: &mut Conn| -> Result<Vec<RequestGroup>, Failure> {
        let mut folds =
            Folds { requests: RequestFold::new(&window, Grouping::Staff), stages: None, seats: None };
        conn.read(helper, &window, &mut folds).await?;
        Ok(folds.requests.finish())
    })
    .await
}

/// The catalog, by code (the service types area's query).
pub(crate) async fn service_types(conn: &mut Conn) -> Result<Vec<ServiceType>, Failure> {
    super::service_types::all(conn).await
}

/// The staff of the missions in scope, by id (the staff area's query).
pub(crate) async fn staff_members(
    conn: &mut Conn,
    missions: MissionScope,
) -> Result<Vec<StaffMember>, Failure> {
    super::staff::all(conn, missions.mission()).await
}

// ------------------------------------------------------------------ the spell projection

/// Stores `rows`, inside the caller's transaction: a write adds a spell or two, one
/// statement each (as `write_meta::store`).
pub(crate) async fn insert_spells(conn: &mut Conn, rows: &[SpellRow]) -> Result<(), Failure> {
    for row in rows {
        diesel::insert_into(request_stage_spells::table).values(row).execute(conn).await?;
    }
    Ok(())
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
            diesel::delete(request_stage_spells::table.filter(of_request)).execute(conn).await?;
            insert_spells(conn, &rows).await
        }
    }
}

/// Replaces the projection with what the migration's statement computes from the history.
pub(crate) async fn recompute_stage_spells(conn: &mut Conn) -> Result<u64, Failure> {
    write_tx!(conn, async |conn: &mut Conn| -> Result<u64, Failure> {
        diesel::delete(request_stage_spells::table).execute(conn).await?;
        let stored = diesel::sql_query(<Conn as AnalyticsReads>::BACKFILL_STAGE_SPELLS).execute(conn).await?;
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
