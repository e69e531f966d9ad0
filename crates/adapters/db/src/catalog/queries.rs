//! The queries of the service catalog.

use super::{Conn, write_meta};
use crate::catalog::{ServiceTypeRow, service_types};
use crate::failure::Failure;
use crate::shared::sql_types::DbUuid;
use crate::shared::update_versioned;
use consular_domain::{Page, PageRequest, ServiceType, ServiceTypeId};
use consular_ports::{ServiceTypeFilter, WriteMeta};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

pub(crate) async fn insert(
    conn: &mut Conn,
    service_type: &ServiceType,
    meta: &WriteMeta,
) -> Result<(), Failure> {
    let row = ServiceTypeRow::try_from(service_type)?;
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        write_meta::store(conn, meta).await?;
        diesel::insert_into(service_types::table).values(&row).execute(conn).await?;
        Ok(())
    })
    .await
}

pub(crate) async fn update(
    conn: &mut Conn,
    service_type: &ServiceType,
    expected_version: i64,
    meta: &WriteMeta,
) -> Result<(), Failure> {
    let row = ServiceTypeRow::try_from(service_type)?;
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        write_meta::store(conn, meta).await?;
        update_versioned!(conn, service_types, &row, expected_version).await
    })
    .await
}

pub(crate) async fn get(conn: &mut Conn, id: ServiceTypeId) -> Result<Option<ServiceType>, Failure> {
    let row: Option<ServiceTypeRow> = service_types::table
        .find(DbUuid(id.0))
        .select(ServiceTypeRow::as_select())
        .first(conn)
        .await
        .optional()?;
    row.map(ServiceType::try_from).transpose()
}

/// In id order; ids that are not stored are left out.
pub(crate) async fn get_many(conn: &mut Conn, ids: &[ServiceTypeId]) -> Result<Vec<ServiceType>, Failure> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<DbUuid> = ids.iter().map(|id| DbUuid(id.0)).collect();
    let rows: Vec<ServiceTypeRow> = service_types::table
        .filter(service_types::id.eq_any(ids))
        .order(service_types::id.asc())
        .select(ServiceTypeRow::as_select())
        .load(conn)
        .await?;
    rows.into_iter().map(ServiceType::try_from).collect()
}

/// The whole catalog, inactive types too, by code (the analytics views list every type).
pub(crate) async fn all(conn: &mut Conn) -> Result<Vec<ServiceType>, Failure> {
    let rows: Vec<ServiceTypeRow> = service_types::table
        .order(service_types::code.asc())
        .select(ServiceTypeRow::as_select())
        .load(conn)
        .await?;
    rows.into_iter().map(ServiceType::try_from).collect()
}

pub(crate) async fn list(
    conn: &mut Conn,
    filter: ServiceTypeFilter,
    page: PageRequest,
) -> Result<Page<ServiceType>, Failure> {
    let mut query = service_types::table
        .select(ServiceTypeRow::as_select())
        .order(service_types::id.asc())
        .limit(page.fetch_limit())
        .into_boxed();
    if let Some(active) = filter.active {
        query = query.filter(service_types::active.eq(active));
    }
    if let Some(after) = page.after {
        query = query.filter(service_types::id.gt(DbUuid(after)));
    }
    let rows: Vec<ServiceTypeRow> = query.load(conn).await?;
    let types = rows.into_iter().map(ServiceType::try_from).collect::<Result<Vec<_>, _>>()?;
    Ok(Page::from_rows(types, &page, |t| t.id.0))
}
