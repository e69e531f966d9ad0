//! Availability as an admin submits it, in the mission's local time (an IANA time zone):
//! a recurring schedule or a list of explicit start times, expanded to slots stored in
//! UTC (docs/appointments.md "Schedules and daylight saving").
//!
//! Local times are laid out on the wall clock and each start is resolved in the mission's
//! time zone: a start that does not exist (the hour skipped when clocks spring forward)
//! makes no slot; a start that exists twice (the hour repeated when clocks fall back) is
//! its first occurrence; a slot lasts exactly its length in elapsed time, and a slot that
//! would overlap the one before it on the same day (possible only right after a
//! spring-forward gap) is not made.

use super::{Cutoffs, Slot};
use crate::{MissionId, ServiceTypeId, SlotId, ValidationErrors};
use chrono::{NaiveDate, TimeZone};
use chrono_tz::Tz;
use std::collections::BTreeSet;
use time::{Date, Duration, OffsetDateTime, PrimitiveDateTime, Time, UtcOffset, Weekday};

/// The most days a recurring schedule spans.
pub const MAX_DAYS: i64 = 366;
/// The most slots one submission makes.
pub const MAX_SLOTS: usize = 10_000;
const SLOT_MINUTES: std::ops::RangeInclusive<u32> = 5..=480;
const CAPACITY: std::ops::RangeInclusive<u32> = 1..=1000;
const MAX_SERVICE_TYPES: usize = 50;
const MAX_INTERVALS: usize = 8;

/// What every slot of a submission shares.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SlotTemplate {
    pub slot_minutes: u32,
    pub capacity: u32,
    pub service_types: Vec<ServiceTypeId>,
    /// `false` closes the slots (submitting them again closed).
    pub open: bool,
    pub cutoffs: Cutoffs,
}

/// One daily opening interval, local wall-clock time, whole minutes: `opens < closes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OpeningHours {
    pub opens: Time,
    pub closes: Time,
}

/// Every `weekdays` day from `first_day` to `last_day` (both included, local dates),
/// except `excluded_dates`: slots of `slot_minutes` from each interval's opening, as many
/// as fit before it closes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RecurringSchedule {
    pub first_day: Date,
    pub last_day: Date,
    pub weekdays: Vec<Weekday>,
    pub hours: Vec<OpeningHours>,
    pub excluded_dates: Vec<Date>,
    pub template: SlotTemplate,
}

/// Slots at the given local start times, each `template.slot_minutes` long.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExplicitSlots {
    pub starts: Vec<PrimitiveDateTime>,
    pub template: SlotTemplate,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Availability {
    Recurring(RecurringSchedule),
    Explicit(ExplicitSlots),
}

/// A slot's times as the mission's clock shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalSlot {
    pub starts_at: OffsetDateTime,
    pub ends_at: OffsetDateTime,
}

impl LocalSlot {
    /// `slot`'s start and end with the offset the mission's zone has at each (they may
    /// differ across a change). `None` for an unknown zone name.
    pub fn of(slot: &Slot, timezone: &str) -> Option<LocalSlot> {
        LocalSlot::between(slot.starts_at, slot.ends_at, timezone)
    }

    /// The same for any start and end (an appointment copies its slot's).
    pub fn between(starts_at: OffsetDateTime, ends_at: OffsetDateTime, timezone: &str) -> Option<LocalSlot> {
        let tz: Tz = timezone.parse().ok()?;
        Some(LocalSlot { starts_at: in_zone(starts_at, tz)?, ends_at: in_zone(ends_at, tz)? })
    }
}

fn in_zone(instant: OffsetDateTime, tz: Tz) -> Option<OffsetDateTime> {
    let utc = chrono::DateTime::from_timestamp(instant.unix_timestamp(), 0)?.naive_utc();
    let seconds = chrono::Offset::fix(&tz.offset_from_utc_datetime(&utc)).local_minus_utc();
    Some(instant.to_offset(UtcOffset::from_whole_seconds(seconds).ok()?))
}

/// The instants a local calendar day of `timezone` spans, `[start, end)`: from its first
/// existing wall-clock time to the next day's (a day may last 23 or 25 hours across a
/// change). `None` for an unknown zone name.
pub fn local_day(timezone: &str, day: Date) -> Option<(OffsetDateTime, OffsetDateTime)> {
    let tz: Tz = timezone.parse().ok()?;
    let first = |d: Date| {
        // Midnight is skipped in a few zones on their change day: the first hour that exists.
        (0u8..4).find_map(|h| resolve(tz, PrimitiveDateTime::new(d, Time::from_hms(h, 0, 0).ok()?)))
    };
    Some((first(day)?, first(day.next_day()?)?))
}

/// The instant a local wall-clock time names in `tz`: `None` when it does not exist
/// (skipped by a spring-forward change), the first occurrence when it exists twice.
fn resolve(tz: Tz, local: PrimitiveDateTime) -> Option<OffsetDateTime> {
    let naive =
        NaiveDate::from_ymd_opt(local.year(), u32::from(u8::from(local.month())), u32::from(local.day()))?
            .and_hms_opt(u32::from(local.hour()), u32::from(local.minute()), u32::from(local.second()))?;
    let instant = tz.from_local_datetime(&naive).earliest()?;
    OffsetDateTime::from_unix_timestamp(instant.timestamp()).ok()
}

/// The wall-clock time `minute` minutes after midnight (below 24 h).
fn wall_time(minute: u32) -> Option<Time> {
    Time::from_hms(u8::try_from(minute / 60).ok()?, u8::try_from(minute % 60).ok()?, 0).ok()
}

fn minutes_of(t: Time) -> u32 {
    u32::from(t.hour()) * 60 + u32::from(t.minute())
}

impl SlotTemplate {
    fn validate(&self, errors: &mut ValidationErrors) {
        if !SLOT_MINUTES.contains(&self.slot_minutes) {
            errors.add("/slot_minutes", "out_of_range", "must be between 5 and 480 minutes");
        }
        if !CAPACITY.contains(&self.capacity) {
            errors.add("/capacity", "out_of_range", "must be between 1 and 1000");
        }
        if self.service_types.is_empty() || self.service_types.len() > MAX_SERVICE_TYPES {
            errors.add("/service_types", "out_of_range", "must list 1 to 50 service types");
        }
        for (field, value) in [
            ("/booking_cutoff_minutes", self.cutoffs.booking_minutes),
            ("/cancellation_cutoff_minutes", self.cutoffs.cancellation_minutes),
        ] {
            if value > Cutoffs::MAX_MINUTES {
                errors.add(field, "out_of_range", "must be at most 43200 minutes (30 days)");
            }
        }
    }

    fn slot(&self, mission_id: MissionId, starts_at: OffsetDateTime, now: OffsetDateTime) -> Slot {
        let service_types: BTreeSet<ServiceTypeId> = self.service_types.iter().copied().collect();
        Slot {
            id: SlotId::new(),
            mission_id,
            starts_at,
            ends_at: starts_at + self.length(),
            capacity: self.capacity,
            booked: 0,
            service_types: service_types.into_iter().collect(),
            open: self.open,
            cutoffs: self.cutoffs,
            version: 1,
            created_at: now,
            updated_at: now,
        }
    }

    fn length(&self) -> Duration {
        Duration::minutes(i64::from(self.slot_minutes))
    }
}

impl Availability {
    pub fn template(&self) -> &SlotTemplate {
        match self {
            Availability::Recurring(s) => &s.template,
            Availability::Explicit(s) => &s.template,
        }
    }

    /// The slots this availability makes for `mission_id` in `timezone`, in UTC, start
    /// order, each with a fresh id at version 1, none starting at or before `now` (a
    /// schedule whose range has begun makes only its future slots). Every invalid field at
    /// once otherwise. Two submissions with the same content make slots with the same
    /// keys (`Slot::key`), which is what the repository upserts by.
    pub fn expand(
        &self,
        mission_id: MissionId,
        timezone: &str,
        now: OffsetDateTime,
    ) -> Result<Vec<Slot>, ValidationErrors> {
        let mut errors = ValidationErrors::new();
        self.template().validate(&mut errors);
        let tz = timezone.parse::<Tz>().ok();
        if tz.is_none() {
            errors.add("/timezone", "invalid_timezone", "the mission's time zone is not an IANA name");
        }
        let starts = match (self, tz) {
            (Availability::Recurring(s), Some(tz)) => s.starts(tz, &mut errors),
            (Availability::Explicit(s), Some(tz)) => s.starts(tz, now, &mut errors),
            (_, None) => Vec::new(),
        };
        if starts.len() > MAX_SLOTS {
            errors.add("/", "too_many_slots", format!("makes more than {MAX_SLOTS} slots"));
        }
        errors.0.sort_by(|a, b| a.pointer.cmp(&b.pointer));
        errors.into_result()?;
        let template = self.template();
        Ok(starts.into_iter().filter(|s| *s > now).map(|s| template.slot(mission_id, s, now)).collect())
    }
}

impl RecurringSchedule {
    fn starts(&self, tz: Tz, errors: &mut ValidationErrors) -> Vec<OffsetDateTime> {
        let days = (self.last_day - self.first_day).whole_days();
        if days < 0 {
            errors.add("/last_day", "before_first_day", "must not be before first_day");
        } else if days >= MAX_DAYS {
            errors.add("/last_day", "out_of_range", "the range spans at most 366 days");
        }
        if self.weekdays.is_empty() {
            errors.add("/weekdays", "required", "must name at least one weekday");
        }
        let mut hours = self.hours.clone();
        hours.sort_by_key(|h| h.opens);
        if hours.is_empty() || hours.len() > MAX_INTERVALS {
            errors.add("/hours", "out_of_range", "must list 1 to 8 opening intervals");
        }
        for (i, h) in self.hours.iter().enumerate() {
            if h.opens.second() != 0 || h.closes.second() != 0 || h.opens.nanosecond() != 0 {
                errors.add(&format!("/hours/{i}"), "whole_minutes", "times are whole minutes");
            }
            if h.opens >= h.closes {
                errors.add(&format!("/hours/{i}/closes"), "before_opens", "must be after opens");
            }
        }
        if hours.windows(2).any(|w| w[1].opens < w[0].closes) {
            errors.add("/hours", "overlapping", "opening intervals must not overlap");
        }
        if !errors.is_empty() {
            return Vec::new();
        }
        let length = self.template.slot_minutes;
        let mut starts = Vec::new();
        let mut day = self.first_day;
        while day <= self.last_day && starts.len() <= MAX_SLOTS {
            if self.weekdays.contains(&day.weekday()) && !self.excluded_dates.contains(&day) {
                let mut previous_end: Option<OffsetDateTime> = None;
                for h in &hours {
                    let mut minute = minutes_of(h.opens);
                    while minute + length <= minutes_of(h.closes) {
                        if let Some(start) =
                            wall_time(minute).and_then(|t| resolve(tz, PrimitiveDateTime::new(day, t)))
                            && previous_end.is_none_or(|end| start >= end)
                        {
                            starts.push(start);
                            previous_end = Some(start + self.template.length());
                        }
                        minute += length;
                    }
                }
            }
            match day.next_day() {
                Some(next) => day = next,
                None => break,
            }
        }
        starts
    }
}

impl ExplicitSlots {
    fn starts(&self, tz: Tz, now: OffsetDateTime, errors: &mut ValidationErrors) -> Vec<OffsetDateTime> {
        if self.starts.is_empty() || self.starts.len() > MAX_SLOTS {
            errors.add("/starts", "out_of_range", format!("must list 1 to {MAX_SLOTS} start times"));
        }
        let mut seen = BTreeSet::new();
        let mut starts = Vec::new();
        for (i, local) in self.starts.iter().enumerate() {
            let pointer = format!("/starts/{i}");
            match resolve(tz, *local) {
                None => errors.add(
                    &pointer,
                    "nonexistent_local_time",
                    "does not exist in the mission's time zone",
                ),
                Some(start) if start <= now => errors.add(&pointer, "in_the_past", "must be in the future"),
                Some(start) if !seen.insert(start) => errors.add(&pointer, "duplicate", "is listed twice"),
                Some(start) => starts.push(start),
            }
        }
        starts.sort();
        starts
    }
}

#[cfg(test)]
#[path = "schedule_tests.rs"]
mod tests;
