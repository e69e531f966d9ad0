//! The queries of staff members and their service assignments.

use super::{Conn, clients, write_meta};
use crate::clients::ClientRow;
use crate::failure::Failure;
use crate::shared::sql_types::DbUuid;
use crate::shared::update_versioned;
use crate::staff::{AssignmentRow, StaffRow, staff_assignments, staff_members};
use consular_domain::{ApiClient, MissionId, Page, PageRequest, ServiceTypeId, StaffId, StaffMember};
use consular_ports::{StaffFilter, WriteMeta};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use std::collections::HashMap;

/// The member, their assignments and, in the same transaction, the client issued to
/// them: if any insert fails, nothing is stored.
pub(crate) async fn insert(
    conn: &mut Conn,
    member: &StaffMember,
    client: Option<ApiClient>,
    meta: &WriteMeta,
) -> Result<(), Failure> {
    let row = StaffRow::from(member);
    let assignments = AssignmentRow::all_of(member);
    let client = client.as_ref().map(ClientRow::from);
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        write_meta::store(conn, meta).await?;
        diesel::insert_into(staff_members::table).values(&row).execute(conn).await?;
        insert_assignments(conn, &assignments).await?;
        if let Some(client) = &client {
            clients::insert_row(conn, client).await?;
        }
        Ok(())
    })
    .await
}

/// Replaces the member row and all their assignment rows.
pub(crate) async fn update(
    conn: &mut Conn,
    member: &StaffMember,
    expected_version: i64,
    meta: &WriteMeta,
) -> Result<(), Failure> {
    let row = StaffRow::from(member);
    let assignments = AssignmentRow::all_of(member);
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        write_meta::store(conn, meta).await?;
        update_versioned!(conn, staff_members, &row, expected_version).await?;
        diesel::delete(staff_assignments::table.filter(staff_assignments::staff_id.eq(row.id)))
            .execute(conn)
            .await?;
        insert_assignments(conn, &assignments).await
    })
    .await
}

/// One statement per row, as in `write_meta::store` (a member has a handful).
async fn insert_assignments(conn: &mut Conn, rows: &[AssignmentRow]) -> Result<(), Failure> {
    for row in rows {
        diesel::insert_into(staff_assignments::table).values(row).execute(conn).await?;
    }
    Ok(())
}

pub(crate) async fn get(conn: &mut Conn, id: StaffId) -> Result<Option<StaffMember>, Failure> {
    read_tx!(conn, async |conn: &mut Conn| -> Result<Option<StaffMember>, Failure> {
        let row: Option<StaffRow> = staff_members::table
            .find(DbUuid(id.0))
            .select(StaffRow::as_select())
            .first(conn)
            .await
            .optional()?;
        let Some(row) = row else { return Ok(None) };
        Ok(with_assignments(conn, vec![row]).await?.pop())
    })
    .await
}

pub(crate) async fn list(
    conn: &mut Conn,
    filter: StaffFilter,
    page: PageRequest,
) -> Result<Page<StaffMember>, Failure> {
    read_tx!(conn, async |conn: &mut Conn| -> Result<Page<StaffMember>, Failure> {
        let mut query = staff_members::table
            .select(StaffRow::as_select())
            .order(staff_members::id.asc())
            .limit(page.fetch_limit())
            .into_boxed();
        if let Some(mission) = filter.mission_id {
            query = query.filter(staff_members::mission_id.eq(DbUuid(mission.0)));
        }
        if let Some(service_type) = filter.service_type_id {
            query = query.filter(diesel::dsl::exists(
                staff_assignments::table
                    .filter(staff_assignments::staff_id.eq(staff_members::id))
                    .filter(staff_assignments::service_type_id.eq(DbUuid(service_type.0)))
                    .select(staff_assignments::staff_id),
            ));
        }
        if let Some(active) = filter.active {
            query = query.filter(staff_members::active.eq(active));
        }
        if let Some(after) = page.after {
            query = query.filter(staff_members::id.gt(DbUuid(after)));
        }
        let rows: Vec<StaffRow> = query.load(conn).await?;
        let members = with_assignments(conn, rows).await?;
        Ok(Page::from_rows(members, &page, |m| m.id.0))
    })
    .await
}

/// Every member of `mission` (of every mission for `None`), inactive ones too, by id, in
/// one snapshot (the analytics staff view lists them).
pub(crate) async fn all(conn: &mut Conn, mission: Option<MissionId>) -> Result<Vec<StaffMember>, Failure> {
    read_tx!(conn, async |conn: &mut Conn| -> Result<Vec<StaffMember>, Failure> {
        let mut query =
            staff_members::table.select(StaffRow::as_select()).order(staff_members::id.asc()).into_boxed();
        if let Some(mission) = mission {
            query = query.filter(staff_members::mission_id.eq(DbUuid(mission.0)));
        }
        let rows: Vec<StaffRow> = query.load(conn).await?;
        with_assignments(conn, rows).await
    })
    .await
}

/// The members of `rows`, in their order, each with their service types.
async fn with_assignments(conn: &mut Conn, rows: Vec<StaffRow>) -> Result<Vec<StaffMember>, Failure> {
    let mut assignments = assignments_of(conn, rows.iter().map(|r| r.id).collect()).await?;
    Ok(rows
        .into_iter()
        .map(|row| {
            let service_type_ids = assignments.remove(&row.id).unwrap_or_default();
            row.into_member(service_type_ids)
        })
        .collect())
}

/// The service types of each of `staff`, in assignment order; members without any are
/// absent from the map.
async fn assignments_of(
    conn: &mut Conn,
    staff: Vec<DbUuid>,
) -> Result<HashMap<DbUuid, Vec<ServiceTypeId>>, Failure> {
    let mut by_member: HashMap<DbUuid, Vec<ServiceTypeId>> = HashMap::new();
    if staff.is_empty() {
        return Ok(by_member);
    }
    let rows: Vec<(DbUuid, DbUuid)> = staff_assignments::table
        .filter(staff_assignments::staff_id.eq_any(staff))
        .order((staff_assignments::staff_id.asc(), staff_assignments::position.asc()))
        .select((staff_assignments::staff_id, staff_assignments::service_type_id))
        .load(conn)
        .await?;
    for (member, service_type) in rows {
        by_member.entry(member).or_default().push(ServiceTypeId(service_type.0));
    }
    Ok(by_member)
}
