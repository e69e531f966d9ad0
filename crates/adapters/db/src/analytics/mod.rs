//! Analytics (docs/analytics.md): the `request_stage_spells` projection, its row and its
//! maintenance helpers (used by the `requests` and `demo` areas), and
//! [`AnalyticsRepository`] with
//! [`Database::recompute_stage_spells`](crate::Database::recompute_stage_spells) and
//! [`Database::stored_stage_spells`](crate::Database::stored_stage_spells) for tests.
//!
//! # How a view is read
//!
//! Each port method reads in one snapshot (`read_tx!`, `queries.rs`), and reads the instant
//! of its figures marked "now" from the clock once that snapshot has started
//! (`queries.rs::snapshot_instant`); every "now" figure is computed *at* that instant from
//! the requests' own instants, as the backlog at the end of the range is, so that the two
//! always agree (docs/analytics.md "How the figures are computed"). The database selects
//! the rows a view needs (a range scan of a covering index each, see the migration
//! `2026-11-24-000010_analytics`) and hands over the few columns the figures are made of;
//! [`fold`] turns them into the port's figures with the domain's definitions (the bucket
//! of an instant as `bucket_index`, `open_at`, `seconds_between`, `closed_on_time`,
//! `DurationSummary::of`), the same code for both databases, so that both give the same
//! number by construction (docs/analytics.md "Both databases": "the adapters compute
//! counts, sums and sorted durations; rates and percentiles come from the same Rust
//! functions"). Only the counts of open requests are summed by the database, with the
//! formulas of docs/analytics.md written in SQL.
//!
//! What differs per database is how those columns travel, so it is not in `queries.rs`
//! but in [`AnalyticsReads`], implemented on each connection type (as `demo`'s
//! `BulkInsert`): PostgreSQL aggregates each statement's rows into a few rows of arrays
//! (`array_agg`) and pipelines the statements, which is what keeps a 90-day view over a
//! million requests fast (`pg.rs`); SQLite, in process, returns the rows themselves
//! (`sqlite.rs`).
//!
//! # Stage spells
//!
//! `request_stage_spells` holds the output of `consular_domain::analytics::stage_spells`
//! for every request, one row per spell (`ordinal` its index in that output), so that
//! "the spells that ended in a range" is an index range scan. It is written in the
//! transaction that writes the history (`requests::insert`, `requests::update`,
//! `demo::insert_requests`) with that same function: the definition exists once, in the
//! domain. The migration fills it for the requests stored before it with SQL that
//! reproduces the function; the adapter runs that statement of the migration file itself
//! ([`AnalyticsReads::backfill_stage_spells`], [`migration_statement`]).

mod fold;
mod pg;
mod sqlite;
mod statement;

pub(crate) use fold::{Folds, Grouping, RequestFold, SeatFold, StageFold, Window};

use crate::Database;
use crate::database::Pools;
use crate::error::Failure;
use crate::shared::columns::corrupt;
use crate::shared::sql_types::{DbDate, DbTime, DbUuid};
use crate::shared::{repository, run};
use consular_domain::analytics::{StageSpell, stage_spells};
use consular_domain::{HistoryEntry, RequestId, ServiceRequest, ServiceType, StaffMember};
use consular_ports::{
    AnalyticsQuery, AnalyticsRepository, Clock, MissionScope, OverviewFigures, RepoError, ServiceFigures,
    StaffGroups,
};
use deadpool::managed::Timeouts;
use diesel::prelude::*;
use std::sync::Arc;
use std::time::Duration;

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableTimestamp, PortableUuid};

    /// One ended stage spell of a request (see the module's documentation).
    request_stage_spells (request_id, ordinal) {
        request_id -> PortableUuid,
        ordinal -> Integer,
        mission_id -> PortableUuid,
        service_type_id -> PortableUuid,
        stage -> Integer,
        entered_at -> PortableTimestamp,
        left_at -> PortableTimestamp,
        seconds -> BigInt,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::{PortableDate, PortableUuid};

    /// The stage spells by UTC day of `left_at`, service type and stage (see the
    /// migration `2026-11-24-000011_stage_spell_days` and [`SpellItems`]).
    stage_spell_days (day, service_type_id, stage) {
        day -> PortableDate,
        service_type_id -> PortableUuid,
        stage -> Integer,
        spells -> Text,
    }
}

diesel::table! {
    use diesel::sql_types::*;

    /// The derived tables that may be out of date (`dirty`): not read until rebuilt.
    analytics_rollups (name) {
        name -> Text,
        dirty -> Bool,
    }
}

/// The name of `stage_spell_days` in `analytics_rollups`.
pub(crate) const SPELL_DAYS: &str = "stage_spell_days";

/// The unique constraints of the area (see `crate::error`).
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] = &[
    ("request_stage_spells_pkey", "request_stage_spells.request_id, request_stage_spells.ordinal"),
    (
        "stage_spell_days_pkey",
        "stage_spell_days.day, stage_spell_days.service_type_id, stage_spell_days.stage",
    ),
    ("analytics_rollups_pkey", "analytics_rollups.name"),
];

/// `view!(db, function(query, clock))`: as `run!`, and on PostgreSQL with a second connection
/// when the pool has one free at once (never waiting for it: without one, the view is read
/// on one connection), which [`AnalyticsReads::read`] runs its longest statement on.
macro_rules! view {
    ($db:expr, $function:ident ( $query:expr, $clock:expr )) => {{
        let result: Result<_, Failure> = match $db.pools() {
            Pools::Postgres { pool, .. } => {
                async {
                    let mut conn = pool.get().await?;
                    let at_once = Timeouts { wait: Some(Duration::ZERO), ..pool.timeouts() };
                    let mut helper = pool.timeout_get(&at_once).await.ok();
                    crate::pg::queries::analytics::$function(&mut conn, helper.as_deref_mut(), $query, $clock)
                        .await
                }
                .await
            }
            Pools::Sqlite { pool, .. } => {
                async {
                    let mut conn = pool.get().await?;
                    crate::sqlite::queries::analytics::$function(&mut conn, None, $query, $clock).await
                }
                .await
            }
        };
        result.map_err(RepoError::from)
    }};
}

#[async_trait::async_trait]
impl AnalyticsRepository for Database {
    async fn overview(
        &self,
        query: &AnalyticsQuery,
        clock: &Arc<dyn Clock>,
    ) -> Result<OverviewFigures, RepoError> {
        view!(self, overview(query, clock))
    }

    async fn services(
        &self,
        query: &AnalyticsQuery,
        clock: &Arc<dyn Clock>,
    ) -> Result<ServiceFigures, RepoError> {
        view!(self, services(query, clock))
    }

    async fn staff(&self, query: &AnalyticsQuery, clock: &Arc<dyn Clock>) -> Result<StaffGroups, RepoError> {
        view!(self, staff(query, clock))
    }

    async fn service_types(&self) -> Result<Vec<ServiceType>, RepoError> {
        run!(self, analytics::service_types())
    }

    async fn staff_members(&self, missions: MissionScope) -> Result<Vec<StaffMember>, RepoError> {
        run!(self, analytics::staff_members(missions))
    }
}

repository! {
    impl Database => analytics {
        /// Replaces every row of `request_stage_spells` with the spells the migration's
        /// backfill statement computes from `request_history` (the same SQL text), and
        /// returns how many it stored; for tests, which compare them with the rows the
        /// writes maintained.
        #[doc(hidden)]
        pub fn recompute_stage_spells() -> u64;
        /// Every stored stage spell, by request id and ordinal: `(request, ordinal, spell)`;
        /// for tests.
        #[doc(hidden)]
        pub fn stored_stage_spells() -> Vec<(RequestId, u32, StageSpell)>;
        /// Rebuilds the rollup of the spells by day (`stage_spell_days`) from
        /// `request_stage_spells` with the migration's statement, and returns how many rows
        /// it stored; for tests, which compare it with the rows the writes maintained.
        #[doc(hidden)]
        pub fn rebuild_spell_days() -> u64;
        /// Every row of the rollup by day: (UTC day, service type, stage) and its items,
        /// sorted; for tests.
        #[doc(hidden)]
        pub fn stored_spell_days() -> Vec<(SpellDayKey, Vec<String>)>;
    }
}

/// The statement of `migration` that starts a line with `start`, through its `;`: the
/// backfills the adapter runs again (`recompute_stage_spells`, `rebuild_spell_days`) are
/// the migrations' own text, read from the files, so the two cannot differ.
pub(crate) fn migration_statement(migration: &'static str, start: &str) -> Result<&'static str, Failure> {
    let missing = || Failure::Corrupt(format!("no statement `{start}…;` in the migration"));
    let from = migration.find(&format!("\n{start}")).ok_or_else(missing)? + 1;
    let rest = migration.get(from..).ok_or_else(missing)?;
    let end = rest.find(';').ok_or_else(missing)?;
    rest.get(..=end).ok_or_else(missing)
}

/// A row of `stage_spell_days`.
#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = stage_spell_days)]
pub(crate) struct SpellDayRow {
    pub day: DbDate,
    pub service_type_id: DbUuid,
    pub stage: i32,
    pub spells: String,
}

/// The key of a row of `stage_spell_days`: the UTC day a spell ended, its service type,
/// its stage.
pub(crate) type SpellDayKey = (time::Date, uuid::Uuid, i32);

/// The items of `stage_spell_days.spells`: `<left_at in Unix microseconds>:<seconds>`,
/// joined by commas, in no order (the migration's format, which its rebuild statement
/// writes too).
pub(crate) struct SpellItems;

impl SpellItems {
    /// The row a spell belongs to, and its item.
    pub(crate) fn of(row: &SpellRow) -> (SpellDayKey, String) {
        let left_at = row.left_at.0.to_offset(time::UtcOffset::UTC);
        // Microseconds as stored: the columns keep microseconds (see `sqlite_instant`).
        let micros = left_at.unix_timestamp_nanos().div_euclid(1_000);
        ((left_at.date(), row.service_type_id.0, row.stage), format!("{micros}:{}", row.seconds))
    }

    /// The items of `spells` as (Unix microseconds, seconds). A view reads some 150,000
    /// of them, so the text is read byte by byte, once, rather than split and parsed.
    pub(crate) fn parse(spells: &str) -> impl Iterator<Item = Result<(i64, i64), Failure>> + '_ {
        let mut bytes = spells.as_bytes();
        std::iter::from_fn(move || {
            if bytes.is_empty() {
                return None;
            }
            let item = (|| {
                let micros = SpellItems::number(&mut bytes, b':')?;
                let seconds = SpellItems::number(&mut bytes, b',')?;
                Some((micros, seconds))
            })();
            Some(item.ok_or_else(|| {
                bytes = &[];
                Failure::Corrupt("stage_spell_days.spells: a malformed item".to_owned())
            }))
        })
    }

    /// The integer at the start of `bytes` (`-`? digits), which must end at `end` or at the
    /// end of the text; `bytes` moves past it (and `end`).
    fn number(bytes: &mut &[u8], end: u8) -> Option<i64> {
        let negative = bytes.first() == Some(&b'-');
        let mut at = usize::from(negative);
        let mut value: i64 = 0;
        while let Some(&digit) = bytes.get(at).filter(|b| b.is_ascii_digit()) {
            value = value.checked_mul(10)?.checked_sub(i64::from(digit - b'0'))?;
            at += 1;
        }
        if at == usize::from(negative) {
            return None;
        }
        match bytes.get(at) {
            None => *bytes = &[],
            Some(&b) if b == end => *bytes = bytes.get(at + 1..).unwrap_or_default(),
            Some(_) => return None,
        }
        // Accumulated negatively, so that `i64::MIN` parses too.
        if negative { Some(value) } else { value.checked_neg() }
    }

    /// `spells` without one occurrence of each of `removed` (those not there are ignored).
    pub(crate) fn without(spells: &str, removed: &[String]) -> String {
        let mut removed: Vec<&str> = removed.iter().map(String::as_str).collect();
        let kept: Vec<&str> = spells
            .split(',')
            .filter(|item| !item.is_empty())
            .filter(|item| match removed.iter().position(|r| r == item) {
                Some(at) => {
                    removed.swap_remove(at);
                    false
                }
                None => true,
            })
            .collect();
        kept.join(",")
    }

    /// `spells` grouped by their row, rows in key order (which is the order writes lock
    /// them in, so that two writes never wait for each other crosswise).
    pub(crate) fn by_day(spells: &[SpellRow]) -> std::collections::BTreeMap<SpellDayKey, Vec<String>> {
        let mut days = std::collections::BTreeMap::<SpellDayKey, Vec<String>>::new();
        for spell in spells {
            let (key, item) = SpellItems::of(spell);
            days.entry(key).or_default().push(item);
        }
        days
    }
}

/// A request status read from a row; anything else is a corrupt row.
fn status(what: &str, text: &str) -> Result<consular_domain::RequestStatus, Failure> {
    text.parse().map_err(|e| corrupt(what, e))
}

/// A count or seat number read from a row (never negative).
fn count(value: i64) -> u64 {
    u64::try_from(value).unwrap_or_default()
}

/// A stage position read from `request_stage_spells`.
fn stage(value: i32) -> Result<u32, Failure> {
    u32::try_from(value).map_err(|e| corrupt("request_stage_spells.stage", e))
}

/// An appointment status read from a row.
fn appointment_status(text: &str) -> Result<consular_domain::AppointmentStatus, Failure> {
    text.parse().map_err(|e| corrupt("appointments.status", e))
}

/// The reads of the views, written per database (see the module's documentation).
pub(crate) trait AnalyticsReads {
    /// The text of the migration `2026-11-24-000010_analytics` in this database's tree.
    const ANALYTICS_MIGRATION: &'static str;

    /// The text of the migration `2026-11-24-000011_stage_spell_days` in this database's
    /// tree.
    const SPELL_DAYS_MIGRATION: &'static str;

    /// The migration's statement that fills `request_stage_spells` from `request_history`.
    fn backfill_stage_spells() -> Result<&'static str, Failure> {
        migration_statement(Self::ANALYTICS_MIGRATION, "INSERT INTO request_stage_spells")
    }

    /// The migration's statement that fills `stage_spell_days` from `request_stage_spells`.
    fn rebuild_spell_days() -> Result<&'static str, Failure> {
        migration_statement(Self::SPELL_DAYS_MIGRATION, "INSERT INTO stage_spell_days")
    }

    /// Inside a write transaction, before `stage_spell_days` is rebuilt: keeps concurrent
    /// writes from appending to it until the transaction ends (PostgreSQL locks the table;
    /// SQLite's writes are one at a time already).
    async fn lock_spell_days(&mut self) -> Result<(), Failure>;

    /// Feeds `folds` with the rows of the window's missions (and service type, for
    /// requests and spells), inside the caller's read transaction: the requests submitted
    /// in the window (with their status at its end), closed in it, open now, and the
    /// counts of those open at its start that were not closed in it, by the key of the
    /// requests' grouping; the stage spells that ended in it, and the open slots and
    /// attended or missed appointments starting in it, when `folds` asks for them.
    ///
    /// `helper`, a second connection when the pool had one free at once, lets PostgreSQL
    /// run the longest statement beside the others, in the same snapshot (`pg.rs`);
    /// SQLite has one connection and never gets one.
    async fn read(
        &mut self,
        helper: Option<&mut Self>,
        window: &Window,
        folds: &mut Folds<'_>,
    ) -> Result<(), Failure>;
}

/// A history entry that may end a stage spell: it changes the stage or closes the request
/// (`stage_spells` ends a spell at nothing else). Only those make the write recompute the
/// request's spells.
pub(crate) fn may_end_a_spell(entry: &HistoryEntry) -> bool {
    entry.from_stage != Some(entry.to_stage) || entry.to_status.is_final()
}

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable, Insertable)]
#[diesel(table_name = request_stage_spells)]
#[diesel(treat_none_as_default_value = false)]
pub(crate) struct SpellRow {
    pub request_id: DbUuid,
    pub ordinal: i32,
    pub mission_id: DbUuid,
    pub service_type_id: DbUuid,
    pub stage: i32,
    pub entered_at: DbTime,
    pub left_at: DbTime,
    pub seconds: i64,
}

impl SpellRow {
    /// The rows of `spells`, the spells of `request` from ordinal `first` on.
    pub(crate) fn all_of(
        request: &ServiceRequest,
        first: usize,
        spells: &[StageSpell],
    ) -> Result<Vec<SpellRow>, Failure> {
        (first..)
            .zip(spells)
            .map(|(ordinal, spell)| {
                Ok(SpellRow {
                    request_id: DbUuid(request.id.0),
                    ordinal: i32::try_from(ordinal).map_err(|e| corrupt("stage spell ordinal", e))?,
                    mission_id: DbUuid(request.mission_id.0),
                    service_type_id: DbUuid(request.service_type_id.0),
                    stage: i32::try_from(spell.stage).map_err(|e| corrupt("stage spell stage", e))?,
                    entered_at: DbTime(spell.entered_at),
                    left_at: DbTime(spell.left_at),
                    seconds: spell.seconds(),
                })
            })
            .collect()
    }

    /// The rows of every spell of `request` given its whole `history` (the demo data set,
    /// a new request).
    pub(crate) fn of_history(
        request: &ServiceRequest,
        history: &[HistoryEntry],
    ) -> Result<Vec<SpellRow>, Failure> {
        SpellRow::all_of(request, 0, &stage_spells(history, request.closed_at))
    }

    pub(crate) fn into_spell(self) -> Result<(RequestId, u32, StageSpell), Failure> {
        let ordinal = u32::try_from(self.ordinal).map_err(|e| corrupt("request_stage_spells.ordinal", e))?;
        let stage = usize::try_from(self.stage).map_err(|e| corrupt("request_stage_spells.stage", e))?;
        Ok((
            RequestId(self.request_id.0),
            ordinal,
            StageSpell { stage, entered_at: self.entered_at.0, left_at: self.left_at.0 },
        ))
    }
}

/// What a history write changes in `request_stage_spells`: the request's rows must be
/// `stage_spells(history, closed_at)` of its whole history after the write. The spells a
/// new entry ends come after the earlier ones (`Append`, the rows beyond those stored);
/// if the stored rows are not the start of the new list (an entry dated before earlier
/// ones reorders the history, or rows stored before a fix), they are all rewritten
/// (`Replace`), so the table never keeps a spell the definition does not give.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SpellChange {
    Append(Vec<SpellRow>),
    Replace(Vec<SpellRow>),
}

impl SpellChange {
    /// `history` in insertion order (as `requests::history` reads it), `stored` the
    /// request's rows by ordinal.
    pub(crate) fn of(
        request: &ServiceRequest,
        history: &[HistoryEntry],
        stored: &[SpellRow],
    ) -> Result<SpellChange, Failure> {
        let rows = SpellRow::of_history(request, history)?;
        if rows.starts_with(stored) {
            Ok(SpellChange::Append(rows.get(stored.len()..).unwrap_or_default().to_vec()))
        } else {
            Ok(SpellChange::Replace(rows))
        }
    }
}

#[cfg(test)]
mod tests;
