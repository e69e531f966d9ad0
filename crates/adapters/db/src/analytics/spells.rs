//! The stage spells as stored: `request_stage_spells` (one row per ended spell of a
//! request, [`SpellRow`]) and its rollup by day, `stage_spell_days` ([`SpellDayRow`], its
//! items [`SpellItems`]); what the folds, the reads of each database and the writes of the
//! `requests` and `demo` areas share (see `analytics/mod.rs`).

use crate::failure::Failure;
use crate::shared::columns::corrupt;
use crate::shared::sql_types::{DbDate, DbTime, DbUuid};
use consular_domain::analytics::{StageSpell, stage_spells};
use consular_domain::{HistoryEntry, RequestId, ServiceRequest};
use diesel::prelude::*;

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

/// A stage position read from `request_stage_spells`.
pub(crate) fn stage(value: i32) -> Result<u32, Failure> {
    u32::try_from(value).map_err(|e| corrupt("request_stage_spells.stage", e))
}
