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
//! ([`AnalyticsReads::backfill_stage_spells`],
//! [`migration_statement`](reads::migration_statement)).
//!
//! # Files
//!
//! Each file uses only those listed before it: `spells.rs` (the two spell tables, their
//! rows and [`SpellItems`]), `fold.rs`, `statement.rs` (the SQL text shared by both
//! databases), `reads.rs` ([`AnalyticsReads`] and the readers of row values), `pg.rs` and
//! `sqlite.rs`; this file re-exports what the other areas and `queries.rs` use and
//! implements the port.

mod fold;
mod pg;
mod reads;
mod spells;
mod sqlite;
mod statement;

pub(crate) use fold::{Folds, Grouping, RequestFold, SeatFold, StageFold, Window};
pub(crate) use reads::AnalyticsReads;
pub(crate) use spells::{
    SpellDayKey, SpellDayRow, SpellItems, SpellRow, request_stage_spells, stage_spell_days,
};

use crate::Database;
use crate::database::Pools;
use crate::failure::Failure;
use crate::replica::{Routed, route};
use crate::shared::{repository, run};
use consular_domain::analytics::StageSpell;
use consular_domain::{HistoryEntry, RequestId, ServiceRequest, ServiceType, StaffMember};
use consular_ports::{
    AnalyticsQuery, AnalyticsRepository, Clock, Consistency, MissionScope, OverviewFigures, RepoError,
    ServiceFigures, StaffGroups,
};
use deadpool::managed::Timeouts;
use std::sync::Arc;
use std::time::Duration;

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

/// `view!(db, function(query, clock), consistency)`: as `run_tolerant!` (the views are
/// tolerant: a read replica may serve them), and on PostgreSQL with a
/// second connection to the same server when its pool has one free at once (never waiting
/// for it: without one, the view is read on one connection), which
/// [`AnalyticsReads::read`] runs its longest statement on.
macro_rules! view {
    ($db:expr, $function:ident ( $query:expr, $clock:expr ), $consistency:expr) => {{
        let result: Result<_, Failure> = match $db.pools() {
            Pools::Postgres { pool, replica, .. } => {
                async {
                    let Routed { mut conn, pool } = route(pool, replica.as_ref(), $consistency).await?;
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
        consistency: Consistency,
    ) -> Result<OverviewFigures, RepoError> {
        view!(self, overview(query, clock), consistency)
    }

    async fn services(
        &self,
        query: &AnalyticsQuery,
        clock: &Arc<dyn Clock>,
        consistency: Consistency,
    ) -> Result<ServiceFigures, RepoError> {
        view!(self, services(query, clock), consistency)
    }

    async fn staff(
        &self,
        query: &AnalyticsQuery,
        clock: &Arc<dyn Clock>,
        consistency: Consistency,
    ) -> Result<StaffGroups, RepoError> {
        view!(self, staff(query, clock), consistency)
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

/// A history entry that may end a stage spell: it changes the stage or closes the request
/// (`stage_spells` ends a spell at nothing else). Only those make the write recompute the
/// request's spells.
pub(crate) fn may_end_a_spell(entry: &HistoryEntry) -> bool {
    entry.from_stage != Some(entry.to_stage) || entry.to_status.is_final()
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
