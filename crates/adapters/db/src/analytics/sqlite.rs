//! [`AnalyticsReads`] on SQLite: in process, rows cost little to hand over, so each
//! statement returns the narrow rows of its figures (a range scan of a covering index) and
//! the fold ([`super::fold`]) adds them up with the domain's functions. Instants are
//! fixed-width UTC text, so comparing them as text compares them in time, and the window's
//! bounds are bound as such text. SQLite has no `percentile_cont`: the durations are
//! summarised by `DurationSummary::of` (docs/analytics.md "Percentile").

use super::fold::{Folds, RequestFold, SeatFold, StageFold, Window};
use super::reads::{AnalyticsReads, appointment_status, count, status};
use super::spells::stage;
use super::statement::{Statement, open_counts, status_at_end};
use crate::failure::Failure;
use crate::shared::sql_types::{DbTime, DbUuid, PortableTimestamp, PortableUuid};
use crate::sqlite::queries::analytics::{spell_days, spell_days_current};
use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Integer, Nullable, Text};
use diesel::sqlite::Sqlite;
use diesel_async::RunQueryDsl;

type Conn = crate::sqlite::Conn;

#[derive(QueryableByName)]
struct SubmittedRow {
    #[diesel(sql_type = PortableUuid)]
    mission_id: DbUuid,
    #[diesel(sql_type = PortableUuid)]
    service_type_id: DbUuid,
    #[diesel(sql_type = Nullable<PortableUuid>)]
    assignee_id: Option<DbUuid>,
    #[diesel(sql_type = PortableTimestamp)]
    submitted_at: DbTime,
    #[diesel(sql_type = Nullable<Text>)]
    status_at_end: Option<String>,
}

#[derive(QueryableByName)]
struct ClosedRow {
    #[diesel(sql_type = PortableUuid)]
    mission_id: DbUuid,
    #[diesel(sql_type = PortableUuid)]
    service_type_id: DbUuid,
    #[diesel(sql_type = Nullable<PortableUuid>)]
    assignee_id: Option<DbUuid>,
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = PortableTimestamp)]
    submitted_at: DbTime,
    #[diesel(sql_type = PortableTimestamp)]
    closed_at: DbTime,
    #[diesel(sql_type = PortableTimestamp)]
    sla_due_at: DbTime,
}

#[derive(QueryableByName)]
struct OpenRow {
    #[diesel(sql_type = PortableUuid)]
    mission_id: DbUuid,
    #[diesel(sql_type = PortableUuid)]
    service_type_id: DbUuid,
    #[diesel(sql_type = Nullable<PortableUuid>)]
    assignee_id: Option<DbUuid>,
    #[diesel(sql_type = BigInt)]
    open_at_start: i64,
    #[diesel(sql_type = BigInt)]
    open_now: i64,
    #[diesel(sql_type = BigInt)]
    overdue_now: i64,
}

#[derive(QueryableByName)]
struct SpellRow {
    #[diesel(sql_type = PortableUuid)]
    service_type_id: DbUuid,
    #[diesel(sql_type = Integer)]
    stage: i32,
    #[diesel(sql_type = PortableTimestamp)]
    left_at: DbTime,
    #[diesel(sql_type = BigInt)]
    seconds: i64,
}

#[derive(QueryableByName)]
struct SlotRow {
    #[diesel(sql_type = PortableTimestamp)]
    starts_at: DbTime,
    #[diesel(sql_type = Integer)]
    booked: i32,
    #[diesel(sql_type = Integer)]
    capacity: i32,
}

#[derive(QueryableByName)]
struct AppointmentRow {
    #[diesel(sql_type = PortableTimestamp)]
    starts_at: DbTime,
    #[diesel(sql_type = Text)]
    status: String,
}

async fn requests(conn: &mut Conn, window: &Window, fold: &mut RequestFold<'_>) -> Result<(), Failure> {
    let grouping = fold.grouping();

    // Submitted in the range, with their status at its end (`status_at_end`).
    let mut statement = Statement::<Sqlite>::new(&[window.start, window.end]);
    let scope = statement.scope(window, "service_requests", true);
    let status_at_end = status_at_end::<Sqlite>(window);
    let sql = format!(
        "SELECT service_requests.mission_id AS mission_id, \
         service_requests.service_type_id AS service_type_id, \
         service_requests.assignee_id AS assignee_id, \
         service_requests.submitted_at AS submitted_at, \
         {status_at_end} AS status_at_end \
         FROM service_requests \
         WHERE service_requests.submitted_at >= ?1 AND service_requests.submitted_at < ?2{scope}"
    );
    let rows: Vec<SubmittedRow> = statement.query(&sql).load(conn).await?;
    for row in rows {
        let status_at_end =
            row.status_at_end.map(|s| status("request status at the end of the range", &s)).transpose()?;
        let key = grouping.key(row.mission_id.0, row.service_type_id.0, row.assignee_id.map(|a| a.0));
        fold.group(key).submitted(row.submitted_at.0, status_at_end);
    }

    // Closed in the range.
    let mut statement = Statement::<Sqlite>::new(&[window.start, window.end]);
    let scope = statement.scope(window, "service_requests", true);
    let sql = format!(
        "SELECT service_requests.mission_id AS mission_id, \
         service_requests.service_type_id AS service_type_id, \
         service_requests.assignee_id AS assignee_id, service_requests.status AS status, \
         service_requests.submitted_at AS submitted_at, service_requests.closed_at AS closed_at, \
         service_requests.sla_due_at AS sla_due_at \
         FROM service_requests \
         WHERE service_requests.closed_at >= ?1 AND service_requests.closed_at < ?2{scope}"
    );
    let rows: Vec<ClosedRow> = statement.query(&sql).load(conn).await?;
    for row in rows {
        let key = grouping.key(row.mission_id.0, row.service_type_id.0, row.assignee_id.map(|a| a.0));
        let closed = status("service_requests.status", &row.status)?;
        fold.group(key).closed(closed, row.submitted_at.0, row.closed_at.0, row.sla_due_at.0);
    }

    // `open_counts` per (mission, service type, assignee), which every grouping's key is
    // made of.
    let mut statement = Statement::<Sqlite>::new(&[window.start, window.now, window.end]);
    let scope = statement.scope(window, "service_requests", true);
    let keys = "service_requests.mission_id AS mission_id, \
                service_requests.service_type_id AS service_type_id, \
                service_requests.assignee_id AS assignee_id";
    let counts = open_counts::<Sqlite>(keys, &scope);
    let sql = format!(
        "SELECT mission_id, service_type_id, assignee_id, sum(open_at_start) AS open_at_start, \
         sum(open_now) AS open_now, sum(overdue_now) AS overdue_now FROM ({counts}) GROUP BY 1, 2, 3"
    );
    let rows: Vec<OpenRow> = statement.query(&sql).load(conn).await?;
    for row in rows {
        let key = grouping.key(row.mission_id.0, row.service_type_id.0, row.assignee_id.map(|a| a.0));
        fold.group(key).open(count(row.open_at_start), count(row.open_now), count(row.overdue_now));
    }
    Ok(())
}

/// The stage spells that ended in the range: from the rollup by day over all missions when
/// it is up to date, else from the projection.
async fn stage_spells(conn: &mut Conn, window: &Window, fold: &mut StageFold<'_>) -> Result<(), Failure> {
    if window.mission.is_none() && spell_days_current(conn).await? {
        return fold.spell_days(spell_days(conn, window).await?);
    }
    let mut statement = Statement::<Sqlite>::new(&[window.start, window.end]);
    let scope = statement.scope(window, "request_stage_spells", true);
    let sql = format!(
        "SELECT request_stage_spells.service_type_id AS service_type_id, \
         request_stage_spells.stage AS stage, request_stage_spells.left_at AS left_at, \
         request_stage_spells.seconds AS seconds \
         FROM request_stage_spells \
         WHERE request_stage_spells.left_at >= ?1 AND request_stage_spells.left_at < ?2{scope}"
    );
    let rows: Vec<SpellRow> = statement.query(&sql).load(conn).await?;
    for row in rows {
        fold.stage(row.service_type_id.0, stage(row.stage)?).spell(row.left_at.0, row.seconds);
    }
    Ok(())
}

async fn seats(conn: &mut Conn, window: &Window, fold: &mut SeatFold<'_>) -> Result<(), Failure> {
    let mut statement = Statement::<Sqlite>::new(&[window.start, window.end]);
    let scope = statement.scope(window, "slots", false);
    let sql = format!(
        "SELECT slots.starts_at AS starts_at, slots.booked AS booked, slots.capacity AS capacity \
         FROM slots WHERE slots.is_open = 1 AND slots.starts_at >= ?1 AND slots.starts_at < ?2{scope}"
    );
    let rows: Vec<SlotRow> = statement.query(&sql).load(conn).await?;
    for row in rows {
        fold.slot(row.starts_at.0, count(row.booked.into()), count(row.capacity.into()));
    }

    let mut statement = Statement::<Sqlite>::new(&[window.start, window.end]);
    let scope = statement.scope(window, "appointments", false);
    let sql = format!(
        "SELECT appointments.starts_at AS starts_at, appointments.status AS status \
         FROM appointments \
         WHERE appointments.status IN ('attended', 'no_show') \
         AND appointments.starts_at >= ?1 AND appointments.starts_at < ?2{scope}"
    );
    let rows: Vec<AppointmentRow> = statement.query(&sql).load(conn).await?;
    for row in rows {
        fold.appointment(row.starts_at.0, appointment_status(&row.status)?);
    }
    Ok(())
}

impl AnalyticsReads for Conn {
    const ANALYTICS_MIGRATION: &'static str =
        include_str!("../../../../../migrations/sqlite/2026-11-24-000010_analytics/up.sql");
    const SPELL_DAYS_MIGRATION: &'static str =
        include_str!("../../../../../migrations/sqlite/2026-11-24-000011_stage_spell_days/up.sql");

    /// SQLite runs one write transaction at a time: nothing to lock.
    async fn lock_spell_days(&mut self) -> Result<(), Failure> {
        Ok(())
    }

    async fn read(
        &mut self,
        _: Option<&mut Conn>,
        window: &Window,
        folds: &mut Folds<'_>,
    ) -> Result<(), Failure> {
        requests(self, window, &mut folds.requests).await?;
        if let Some(fold) = &mut folds.stages {
            stage_spells(self, window, fold).await?;
        }
        if let Some(fold) = &mut folds.seats {
            seats(self, window, fold).await?;
        }
        Ok(())
    }
}
