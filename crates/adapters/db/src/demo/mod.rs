//! The demo data set (`consular demo seed`): [`DemoRepository`], bulk inserts into the
//! tables of the areas that own them (missions, service types, staff, citizens, requests,
//! their history and its stage spells), with those areas' rows and conversions. No table of its own, and
//! no `WriteMeta`: seeded history is not an event (see the port).
//!
//! The one thing that differs per database is how rows are sent, so it is not in
//! `queries.rs` (compiled for both) but here, as [`BulkInsert`] implemented on each
//! connection type: PostgreSQL takes multi-row `INSERT`s, as many rows per statement as
//! its 65,535 bind parameters allow; SQLite takes one statement per row (multi-row inserts
//! do not compile for SQLite through diesel-async), run on the connection's blocking thread
//! in one go per batch, which inside one transaction is what SQLite is fast at anyway.
//! `queries.rs` opens the transactions and calls these.

use crate::analytics::{SpellRow, request_stage_spells};
use crate::catalog::{ServiceTypeRow, service_types};
use crate::citizens::{CitizenRow, citizens};
use crate::failure::Failure;
use crate::missions::{MissionRow, missions};
use crate::requests::{HistoryRow, RequestRow, request_history, service_requests};
use crate::shared::repository;
use crate::staff::{AssignmentRow, StaffRow, staff_assignments, staff_members};
use consular_domain::{Citizen, Mission, ServiceType, StaffMember};
use consular_ports::{DemoRepository, SeededRequest};
use diesel_async::RunQueryDsl;

repository! {
    impl DemoRepository for Database => demo {
        fn insert_reference(missions: &[Mission], service_types: &[ServiceType], staff: &[StaffMember]);
        fn insert_citizens(citizens: &[Citizen]);
        fn insert_requests(requests: &[SeededRequest]);
        fn finish_requests();
    }
}

/// PostgreSQL's limit of bind parameters in one statement.
const MAX_BINDS: usize = 65_535;

/// `BulkInsert`, one method per row type: `fn method(Row => table, columns)`, `columns`
/// the number of values a row binds (which sizes PostgreSQL's chunks).
macro_rules! bulk_insert {
    ($( fn $method:ident($row:ty => $table:ident, $columns:literal); )*) => {
        /// Inserts many rows of one table on the connection it is called on, inside the
        /// caller's transaction, in order (the order `request_history` ids are drawn in).
        pub(crate) trait BulkInsert {
            $( async fn $method(&mut self, rows: &[$row]) -> Result<(), Failure>; )*
        }

        impl BulkInsert for crate::pg::Conn {
            $(
                async fn $method(&mut self, rows: &[$row]) -> Result<(), Failure> {
                    for chunk in rows.chunks(MAX_BINDS / $columns) {
                        diesel::insert_into($table::table).values(chunk).execute(self).await?;
                    }
                    Ok(())
                }
            )*
        }

        impl BulkInsert for crate::sqlite::Conn {
            $(
                async fn $method(&mut self, rows: &[$row]) -> Result<(), Failure> {
                    // On the blocking thread once for the whole batch, not once per row.
                    let rows = rows.to_vec();
                    self.spawn_blocking(move |conn| {
                        for row in &rows {
                            diesel::RunQueryDsl::execute(diesel::insert_into($table::table).values(row), conn)?;
                        }
                        Ok(())
                    })
                    .await?;
                    Ok(())
                }
            )*
        }
    };
}

bulk_insert! {
    fn insert_missions(MissionRow => missions, 9);
    fn insert_service_types(ServiceTypeRow => service_types, 14);
    fn insert_staff(StaffRow => staff_members, 9);
    fn insert_assignments(AssignmentRow => staff_assignments, 3);
    fn insert_citizens(CitizenRow => citizens, 22);
    fn insert_requests(RequestRow => service_requests, 13);
    fn insert_history(HistoryRow => request_history, 10);
    fn insert_spells(SpellRow => request_stage_spells, 8);
}
