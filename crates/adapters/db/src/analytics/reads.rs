//! What the reads of a view need on each database: [`AnalyticsReads`], implemented in
//! `pg.rs` and `sqlite.rs`, and the readers of the values their rows carry.

use super::fold::{Folds, Window};
use crate::failure::Failure;
use crate::shared::columns::corrupt;

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

/// A request status read from a row; anything else is a corrupt row.
pub(crate) fn status(what: &str, text: &str) -> Result<consular_domain::RequestStatus, Failure> {
    text.parse().map_err(|e| corrupt(what, e))
}

/// A count or seat number read from a row (never negative).
pub(crate) fn count(value: i64) -> u64 {
    u64::try_from(value).unwrap_or_default()
}

/// An appointment status read from a row.
pub(crate) fn appointment_status(text: &str) -> Result<consular_domain::AppointmentStatus, Failure> {
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
