//! [`AnalyticsReads`] on PostgreSQL. Each statement is a range scan of a covering index
//! (index-only; see the migration) grouped by the view's key with a hash aggregate, which
//! sends each group's columns as arrays (`array_agg`; the aggregates of one group see its
//! rows in the same order, so the arrays line up, which [`same_length`] checks): a view is
//! a few rows on the wire whatever the number of requests. The statements are pipelined,
//! and the fold ([`super::fold`]) does the rest with the domain's functions.
//!
//! The planner must hash, not sort, to group: sorting some 50,000 rows by group costs
//! more than scanning them. It reckons 8 kB per `array_agg` and group, so the reads raise
//! `work_mem` for their transaction ([`WORK_MEM`]), and the migration tells it how many
//! (mission, assignee, service type, status) combinations there are (extended statistics)
//! rather than letting it multiply each column's count.
//!
//! Why not `percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (…) … GROUPING SETS (…)` with
//! `width_bucket`: an ordered-set aggregate cannot be hashed, so PostgreSQL sorts every row
//! of the range by group and bucket, then sorts each group again. Measured on a million
//! requests (a 90-day range, all missions), the stage spells alone took 85–95 ms that way
//! and the processing times about 50 ms, against some 25 ms and 15 ms for these scans.
//! The numbers are the same: `analytics::percentile` is `percentile_cont`'s interpolation,
//! operation for operation (docs/analytics.md "Percentile" allows either).
//!
//! The statements are SQL text (`array_agg`, the correlated status lookup): the filters of
//! the window are appended with their binds, `$1`, `$2`, … in the order they are bound.

use super::fold::{Folds, GroupKey, Grouping, Window};
use super::reads::{AnalyticsReads, appointment_status, count, status};
use super::spells::{SpellDayRow, stage};
use super::statement::{Statement, open_counts, status_at_end};
use crate::failure::Failure;
use crate::pg::queries::analytics::{spell_days, spell_days_current};
use crate::shared::sql_types::{DbTime, DbUuid, PortableTimestamp, PortableUuid};
use diesel::QueryableByName;
use diesel::pg::Pg;
use diesel::query_builder::{BoxedSqlQuery, SqlQuery};
use diesel::sql_types::{Array, BigInt, Integer, Nullable, Text};
use diesel_async::RunQueryDsl;

type Conn = crate::pg::Conn;

/// Run first in each read: the memory a hash aggregate may take before the planner prefers
/// to sort (for this transaction only). A 90-day view over a million requests holds a few
/// megabytes of arrays; the planner's reckoning is far higher (see the module's
/// documentation).
const WORK_MEM: &str = "SET LOCAL work_mem = '64MB'";

/// The group key columns of `grouping`, named `group_mission` and `group_key`.
fn key_columns(grouping: Grouping) -> &'static str {
    match grouping {
        Grouping::Overview => "NULL::uuid AS group_mission, NULL::uuid AS group_key",
        Grouping::ServiceType => "NULL::uuid AS group_mission, service_requests.service_type_id AS group_key",
        Grouping::Staff => {
            "service_requests.mission_id AS group_mission, service_requests.assignee_id AS group_key"
        }
    }
}

fn key(mission: Option<DbUuid>, key: Option<DbUuid>) -> GroupKey {
    (mission.map(|m| m.0), key.map(|k| k.0))
}

/// Arrays aggregated from the same rows have the same length; anything else is a bug.
fn same_length(what: &str, lengths: impl IntoIterator<Item = usize>) -> Result<(), Failure> {
    let lengths: Vec<usize> = lengths.into_iter().collect();
    if lengths.windows(2).all(|pair| matches!(pair, [a, b] if a == b)) {
        Ok(())
    } else {
        Err(Failure::Corrupt(format!("{what}: arrays of different lengths {lengths:?}")))
    }
}

/// The requests of one group submitted in the range, in one status at its end.
#[derive(QueryableByName)]
struct SubmittedRow {
    #[diesel(sql_type = Nullable<PortableUuid>)]
    group_mission: Option<DbUuid>,
    #[diesel(sql_type = Nullable<PortableUuid>)]
    group_key: Option<DbUuid>,
    #[diesel(sql_type = Nullable<Text>)]
    status_at_end: Option<String>,
    #[diesel(sql_type = Array<PortableTimestamp>)]
    submitted_at: Vec<DbTime>,
}

/// The requests of one group closed in the range in one final status.
#[derive(QueryableByName)]
struct ClosedRow {
    #[diesel(sql_type = Nullable<PortableUuid>)]
    group_mission: Option<DbUuid>,
    #[diesel(sql_type = Nullable<PortableUuid>)]
    group_key: Option<DbUuid>,
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = Array<PortableTimestamp>)]
    submitted_at: Vec<DbTime>,
    #[diesel(sql_type = Array<PortableTimestamp>)]
    closed_at: Vec<DbTime>,
    #[diesel(sql_type = Array<PortableTimestamp>)]
    sla_due_at: Vec<DbTime>,
}

#[derive(QueryableByName)]
struct OpenRow {
    #[diesel(sql_type = Nullable<PortableUuid>)]
    group_mission: Option<DbUuid>,
    #[diesel(sql_type = Nullable<PortableUuid>)]
    group_key: Option<DbUuid>,
    #[diesel(sql_type = BigInt)]
    open_at_start: i64,
    #[diesel(sql_type = BigInt)]
    open_now: i64,
    #[diesel(sql_type = BigInt)]
    overdue_now: i64,
}

#[derive(QueryableByName)]
struct SpellsRow {
    #[diesel(sql_type = PortableUuid)]
    service_type_id: DbUuid,
    #[diesel(sql_type = Integer)]
    stage: i32,
    #[diesel(sql_type = Array<PortableTimestamp>)]
    left_at: Vec<DbTime>,
    #[diesel(sql_type = Array<BigInt>)]
    seconds: Vec<i64>,
}

#[derive(QueryableByName)]
struct SlotsRow {
    #[diesel(sql_type = Nullable<Array<PortableTimestamp>>)]
    starts_at: Option<Vec<DbTime>>,
    #[diesel(sql_type = Nullable<Array<Integer>>)]
    booked: Option<Vec<i32>>,
    #[diesel(sql_type = Nullable<Array<Integer>>)]
    capacity: Option<Vec<i32>>,
}

#[derive(QueryableByName)]
struct AppointmentsRow {
    #[diesel(sql_type = Text)]
    status: String,
    #[diesel(sql_type = Array<PortableTimestamp>)]
    starts_at: Vec<DbTime>,
}

type Query = BoxedSqlQuery<'static, Pg, SqlQuery>;

/// Submitted in the range, per group and status at its end (`status_at_end`): grouped by
/// status rather than sending each request's status as text, which took half the
/// statement's time on a million requests.
fn submitted(window: &Window, grouping: Grouping) -> Query {
    let keys = key_columns(grouping);
    let mut statement = Statement::<Pg>::new(&[window.start, window.end]);
    let scope = statement.scope(window, "service_requests", true);
    let status_at_end = status_at_end::<Pg>(window);
    statement.query(&format!(
        "SELECT {keys}, {status_at_end} AS status_at_end, \
         array_agg(service_requests.submitted_at) AS submitted_at \
         FROM service_requests \
         WHERE service_requests.submitted_at >= $1 AND service_requests.submitted_at < $2{scope} \
         GROUP BY 1, 2, 3"
    ))
}

/// Closed in the range, per group and final status.
fn closed(window: &Window, grouping: Grouping) -> Query {
    let keys = key_columns(grouping);
    let mut statement = Statement::<Pg>::new(&[window.start, window.end]);
    let scope = statement.scope(window, "service_requests", true);
    statement.query(&format!(
        "SELECT {keys}, service_requests.status AS status, \
         array_agg(service_requests.submitted_at) AS submitted_at, \
         array_agg(service_requests.closed_at) AS closed_at, \
         array_agg(service_requests.sla_due_at) AS sla_due_at \
         FROM service_requests \
         WHERE service_requests.closed_at >= $1 AND service_requests.closed_at < $2{scope} \
         GROUP BY 1, 2, 3"
    ))
}

/// [`open_counts`] per group.
fn open(window: &Window, grouping: Grouping) -> Query {
    let keys = key_columns(grouping);
    let mut statement = Statement::<Pg>::new(&[window.start, window.now, window.end]);
    let scope = statement.scope(window, "service_requests", true);
    let counts = open_counts::<Pg>(keys, &scope);
    statement.query(&format!(
        "SELECT group_mission, group_key, sum(open_at_start)::bigint AS open_at_start, \
         sum(open_now)::bigint AS open_now, sum(overdue_now)::bigint AS overdue_now \
         FROM ({counts}) AS open GROUP BY 1, 2"
    ))
}

/// The stage spells that ended in the range, per (service type, stage): the catalog's
/// few groups, which the planner knows from the columns' statistics.
fn spells(window: &Window) -> Query {
    let mut statement = Statement::<Pg>::new(&[window.start, window.end]);
    let scope = statement.scope(window, "request_stage_spells", true);
    statement.query(&format!(
        "SELECT request_stage_spells.service_type_id AS service_type_id, \
         request_stage_spells.stage AS stage, \
         array_agg(request_stage_spells.left_at) AS left_at, \
         array_agg(request_stage_spells.seconds) AS seconds \
         FROM request_stage_spells \
         WHERE request_stage_spells.left_at >= $1 AND request_stage_spells.left_at < $2{scope} \
         GROUP BY 1, 2"
    ))
}

/// The open slots starting in the range (appointments ignore the service type).
fn slots(window: &Window) -> Query {
    let mut statement = Statement::<Pg>::new(&[window.start, window.end]);
    let scope = statement.scope(window, "slots", false);
    statement.query(&format!(
        "SELECT array_agg(slots.starts_at) AS starts_at, array_agg(slots.booked) AS booked, \
         array_agg(slots.capacity) AS capacity \
         FROM slots WHERE slots.is_open AND slots.starts_at >= $1 AND slots.starts_at < $2{scope}"
    ))
}

/// The attended and missed appointments starting in the range.
fn appointments(window: &Window) -> Query {
    let mut statement = Statement::<Pg>::new(&[window.start, window.end]);
    let scope = statement.scope(window, "appointments", false);
    statement.query(&format!(
        "SELECT appointments.status AS status, array_agg(appointments.starts_at) AS starts_at \
         FROM appointments \
         WHERE appointments.status IN ('attended', 'no_show') \
         AND appointments.starts_at >= $1 AND appointments.starts_at < $2{scope} \
         GROUP BY 1"
    ))
}

/// Loads `query` if there is one.
async fn load_some<T>(conn: &Conn, query: Option<Query>) -> Result<Option<Vec<T>>, Failure>
where
    T: QueryableByName<Pg> + Send + 'static,
{
    match query {
        Some(query) => Ok(Some(query.load::<T>(&mut &*conn).await?)),
        None => Ok(None),
    }
}

/// Exports the snapshot of the caller's transaction (its id, `pg_export_snapshot`), for a
/// helper connection to read in.
async fn export_snapshot(conn: &mut Conn) -> Result<String, Failure> {
    #[derive(QueryableByName)]
    struct Snapshot {
        #[diesel(sql_type = Text)]
        id: String,
    }
    let snapshot: Snapshot = diesel::sql_query("SELECT pg_export_snapshot() AS id").get_result(conn).await?;
    // An identifier such as `00000003-0000001B-1`, written into `SET TRANSACTION SNAPSHOT`
    // (which takes no parameter): checked rather than trusted.
    if snapshot.id.is_empty() || !snapshot.id.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
        return Err(Failure::Corrupt(format!("unexpected snapshot identifier {:?}", snapshot.id)));
    }
    Ok(snapshot.id)
}

/// What one connection reads of a view, beside the statements only the caller's
/// connection runs.
#[derive(Default)]
struct Reads {
    spells: Option<Query>,
    submitted: Option<Query>,
    /// The rollup by day (`spell_days`), after the statements.
    spell_days: bool,
}

/// What [`Reads`] loaded.
#[derive(Default)]
struct Loaded {
    spells: Option<Vec<SpellsRow>>,
    submitted: Option<Vec<SubmittedRow>>,
    spell_days: Option<Vec<SpellDayRow>>,
}

/// Runs `reads` on `helper`, in a read-only transaction in `snapshot`: the exporting
/// transaction's view of the data, exactly.
async fn in_snapshot(
    helper: &mut Conn,
    snapshot: &str,
    window: &Window,
    reads: Reads,
) -> Result<Loaded, Failure> {
    let set_snapshot = format!("SET TRANSACTION SNAPSHOT '{snapshot}'");
    helper
        .build_transaction()
        .read_only()
        .repeatable_read()
        .run(async |helper: &mut Conn| -> Result<_, Failure> {
            diesel::sql_query(set_snapshot).execute(&mut *helper).await?;
            diesel::sql_query(WORK_MEM).execute(&mut *helper).await?;
            let conn: &Conn = helper;
            let (spells, submitted) = tokio::try_join!(
                load_some::<SpellsRow>(conn, reads.spells),
                load_some::<SubmittedRow>(conn, reads.submitted)
            )?;
            let spell_days = match reads.spell_days {
                true => Some(spell_days(helper, window).await?),
                false => None,
            };
            Ok(Loaded { spells, submitted, spell_days })
        })
        .await
}

impl AnalyticsReads for Conn {
    const ANALYTICS_MIGRATION: &'static str =
        include_str!("../../../../../migrations/postgres/2026-11-24-000010_analytics/up.sql");
    const SPELL_DAYS_MIGRATION: &'static str =
        include_str!("../../../../../migrations/postgres/2026-11-24-000011_stage_spell_days/up.sql");

    /// Appends (`ROW EXCLUSIVE`) wait for the rebuild's transaction, and it for theirs.
    async fn lock_spell_days(&mut self) -> Result<(), Failure> {
        diesel::sql_query("LOCK TABLE stage_spell_days IN SHARE ROW EXCLUSIVE MODE").execute(self).await?;
        Ok(())
    }

    /// The statements are pipelined (polled together, diesel-async sends each as soon as
    /// it can on the connection, inside the caller's transaction): PostgreSQL runs them
    /// one after the other, while the rows of each are decoded here as the next one runs.
    ///
    /// With a `helper`, the longest statement (the stage spells when the view has them,
    /// else the submitted requests) runs on it at the same time, in the snapshot of the
    /// caller's transaction, exported (`pg_export_snapshot`) and imported (`SET
    /// TRANSACTION SNAPSHOT`): the view still reads one state of the data, in about the
    /// time of its longest statement rather than the sum (docs/analytics.md "Two
    /// connections, one snapshot (PostgreSQL)").
    async fn read(
        &mut self,
        helper: Option<&mut Conn>,
        window: &Window,
        folds: &mut Folds<'_>,
    ) -> Result<(), Failure> {
        let grouping = folds.requests.grouping();
        diesel::sql_query(WORK_MEM).execute(&mut *self).await?;
        let helper = match helper {
            Some(helper) => Some((helper, export_snapshot(self).await?)),
            None => None,
        };
        let Folds { requests: fold, stages, seats } = folds;
        // Over all missions, the spells come from the rollup by day when it is up to date.
        let days = stages.is_some() && window.mission.is_none() && spell_days_current(self).await?;
        let mut mine = Reads {
            spells: (stages.is_some() && !days).then(|| spells(window)),
            submitted: Some(submitted(window, grouping)),
            spell_days: days,
        };
        // The helper takes the stage spells, else the submitted requests and the rollup (a
        // few milliseconds each): about as long as the closed and open requests here.
        let mut theirs = Reads::default();
        if helper.is_some() {
            if mine.spells.is_some() {
                theirs.spells = mine.spells.take();
            } else {
                theirs.submitted = mine.submitted.take();
                theirs.spell_days = std::mem::take(&mut mine.spell_days);
            }
        }
        let beside = async {
            match helper {
                Some((helper, snapshot)) => in_snapshot(helper, &snapshot, window, theirs).await,
                None => Ok(Loaded::default()),
            }
        };
        let conn: &Conn = self;
        let (beside, spells, submitted, closed, open, slots, appointments) = tokio::try_join!(
            beside,
            load_some::<SpellsRow>(conn, mine.spells),
            load_some::<SubmittedRow>(conn, mine.submitted),
            load_some::<ClosedRow>(conn, Some(closed(window, grouping))),
            load_some::<OpenRow>(conn, Some(open(window, grouping))),
            load_some::<SlotsRow>(conn, seats.is_some().then(|| slots(window))),
            load_some::<AppointmentsRow>(conn, seats.is_some().then(|| appointments(window))),
        )?;
        let spell_days = match mine.spell_days {
            true => Some(spell_days(self, window).await?),
            false => beside.spell_days,
        };
        let (spells, submitted) = (beside.spells.or(spells), beside.submitted.or(submitted));

        if let Some(fold) = stages.as_mut() {
            fold.spell_days(spell_days.unwrap_or_default())?;
            for row in spells.unwrap_or_default() {
                same_length("stage spells", [row.left_at.len(), row.seconds.len()])?;
                let mut spells = fold.stage(row.service_type_id.0, stage(row.stage)?);
                for (left_at, seconds) in row.left_at.into_iter().zip(row.seconds) {
                    spells.spell(left_at.0, seconds);
                }
            }
        }
        for row in submitted.unwrap_or_default() {
            let status_at_end = row
                .status_at_end
                .map(|s| status("request status at the end of the range", &s))
                .transpose()?;
            let mut group = fold.group(key(row.group_mission, row.group_key));
            for submitted_at in row.submitted_at {
                group.submitted(submitted_at.0, status_at_end);
            }
        }
        for row in closed.unwrap_or_default() {
            let lengths = [row.submitted_at.len(), row.closed_at.len(), row.sla_due_at.len()];
            same_length("closed requests", lengths)?;
            let closed = status("service_requests.status", &row.status)?;
            let mut group = fold.group(key(row.group_mission, row.group_key));
            let times = row.submitted_at.into_iter().zip(row.closed_at).zip(row.sla_due_at);
            for ((submitted_at, closed_at), sla_due_at) in times {
                group.closed(closed, submitted_at.0, closed_at.0, sla_due_at.0);
            }
        }
        for row in open.unwrap_or_default() {
            let mut group = fold.group(key(row.group_mission, row.group_key));
            group.open(count(row.open_at_start), count(row.open_now), count(row.overdue_now));
        }

        if let Some(fold) = seats {
            for row in slots.unwrap_or_default() {
                let (starts_at, booked, capacity) = (
                    row.starts_at.unwrap_or_default(),
                    row.booked.unwrap_or_default(),
                    row.capacity.unwrap_or_default(),
                );
                same_length("slots", [starts_at.len(), booked.len(), capacity.len()])?;
                for ((starts_at, booked), capacity) in starts_at.into_iter().zip(booked).zip(capacity) {
                    fold.slot(starts_at.0, count(booked.into()), count(capacity.into()));
                }
            }
            for row in appointments.unwrap_or_default() {
                let status = appointment_status(&row.status)?;
                for starts_at in row.starts_at {
                    fold.appointment(starts_at.0, status);
                }
            }
        }
        Ok(())
    }
}
