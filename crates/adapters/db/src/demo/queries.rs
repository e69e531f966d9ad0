//! The demo data set's writes: each call one transaction, rows converted by their areas.

use super::{Conn, analytics};
use crate::analytics::SpellRow;
use crate::catalog::ServiceTypeRow;
use crate::citizens::CitizenRow;
use crate::demo::BulkInsert;
use crate::failure::Failure;
use crate::missions::MissionRow;
use crate::requests::{HistoryRow, RequestRow};
use crate::staff::{AssignmentRow, StaffRow};
use consular_domain::{Citizen, Mission, ServiceType, StaffMember};
use consular_ports::SeededRequest;

/// Missions, then service types, then staff members and their assignments.
pub(crate) async fn insert_reference(
    conn: &mut Conn,
    missions: &[Mission],
    service_types: &[ServiceType],
    staff: &[StaffMember],
) -> Result<(), Failure> {
    let missions: Vec<MissionRow> = missions.iter().map(MissionRow::from).collect();
    let service_types =
        service_types.iter().map(ServiceTypeRow::try_from).collect::<Result<Vec<_>, Failure>>()?;
    let members: Vec<StaffRow> = staff.iter().map(StaffRow::from).collect();
    let assignments: Vec<AssignmentRow> = staff.iter().flat_map(AssignmentRow::all_of).collect();
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        conn.insert_missions(&missions).await?;
        conn.insert_service_types(&service_types).await?;
        conn.insert_staff(&members).await?;
        conn.insert_assignments(&assignments).await
    })
    .await
}

pub(crate) async fn insert_citizens(conn: &mut Conn, citizens: &[Citizen]) -> Result<(), Failure> {
    let rows = citizens.iter().map(CitizenRow::try_from).collect::<Result<Vec<_>, Failure>>()?;
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> { conn.insert_citizens(&rows).await })
        .await
}

/// The requests, then every history entry, request by request in history order, then
/// their stage spells (`stage_spells` of each history, as the requests' own writes store
/// them).
pub(crate) async fn insert_requests(conn: &mut Conn, requests: &[SeededRequest]) -> Result<(), Failure> {
    let rows =
        requests.iter().map(|r| RequestRow::try_from(&r.request)).collect::<Result<Vec<_>, Failure>>()?;
    let history = requests
        .iter()
        .flat_map(|r| r.history.iter().map(|entry| HistoryRow::new(r.request.id, entry)))
        .collect::<Result<Vec<_>, Failure>>()?;
    let mut spells = Vec::new();
    for request in requests {
        spells.extend(SpellRow::of_history(&request.request, &request.history)?);
    }
    write_tx!(conn, async |conn: &mut Conn| -> Result<(), Failure> {
        conn.insert_requests(&rows).await?;
        conn.insert_history(&history).await?;
        conn.insert_spells(&spells).await?;
        // Millions of spells over every day of the period: appending each batch to the
        // rollup by day would rewrite each of its rows hundreds of times; it is rebuilt
        // once, by `finish_requests`, and not read until then.
        analytics::mark_spell_days_dirty(conn).await
    })
    .await
}

/// After the last batch: the rollup of the spells by day, rebuilt from them.
pub(crate) async fn finish_requests(conn: &mut Conn) -> Result<(), Failure> {
    analytics::rebuild_spell_days(conn).await.map(|_| ())
}
