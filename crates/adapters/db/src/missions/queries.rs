//! The queries of missions.

use super::{Conn, write_meta};
use crate::failure::Failure;
use crate::missions::{MissionRow, missions};
use crate::shared::sql_types::DbUuid;
use crate::shared::update_versioned;
use consular_domain::{Mission, MissionId, Page, PageRequest};
use consular_ports::WriteMeta;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

pub(crate) async fn insert(conn: &mut Conn, mission: &Mission, meta: &WriteMeta) -> Result<(), Failure> {
    let row = MissionRow::from(mission);
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        write_meta::store(conn, meta).await?;
        diesel::insert_into(missions::table).values(&row).execute(conn).await?;
        Ok(())
    })
    .await
}

pub(crate) async fn update(
    conn: &mut Conn,
    mission: &Mission,
    expected_version: i64,
    meta: &WriteMeta,
) -> Result<(), Failure> {
    let row = MissionRow::from(mission);
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        write_meta::store(conn, meta).await?;
        update_versioned!(conn, missions, &row, expected_version).await
    })
    .await
}

pub(crate) async fn get(conn: &mut Conn, id: MissionId) -> Result<Option<Mission>, Failure> {
    let row: Option<MissionRow> =
        missions::table.find(DbUuid(id.0)).select(MissionRow::as_select()).first(conn).await.optional()?;
    Ok(row.map(Mission::from))
}

pub(crate) async fn list(conn: &mut Conn, page: PageRequest) -> Result<Page<Mission>, Failure> {
    let mut query = missions::table
        .select(MissionRow::as_select())
        .order(missions::id.asc())
        .limit(page.fetch_limit())
        .into_boxed();
    if let Some(after) = page.after {
        query = query.filter(missions::id.gt(DbUuid(after)));
    }
    let rows: Vec<MissionRow> = query.load(conn).await?;
    Ok(Page::from_rows(rows.into_iter().map(Mission::from).collect(), &page, |m| m.id.0))
}
