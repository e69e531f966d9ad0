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
use crate::{MissionId, ServiceTypeId, SlotId, ValidationErrors, rules};
use chrono::{NaiveDate, TimeZone};
use chrono_tz::Tz;
use std::borrow::Cow;
use std::collections::BTreeSet;
use time::{Date, Duration, OffsetDateTime, PrimitiveDateTime, Time, UtcOffset, Weekday};
use validator::{Validate, ValidationError};

/// The most days a recurring schedule spans.
pub const MAX_DAYS: i64 = 366;
/// The most slots one submission makes.
pub const MAX_SLOTS: usize = 10_000;
const MAX_INTERVALS: usize = 8;

/// What every slot of a submission shares. Its fields are answered at the top of the
/// submission (`/slot_minutes`, `/booking_cutoff_minutes`), as the API shapes it.
#[derive(Debug, Clone, PartialEq, Eq, Validate, serde::Serialize, serde::Deserialize)]
// Each `schema` repeats its options (`skip_on_field_errors`), which clippy takes for
// a duplicated attribute.
#[allow(clippy::duplicated_attributes)]
#[validate(schema(function = "booking_cutoff", skip_on_field_errors = false))]
#[validate(schema(function = "cancellation_cutoff", skip_on_field_errors = false))]
pub struct SlotTemplate {
    #[validate(range(
        min = 5,
        max = 480,
        code = "out_of_range",
        message = "must be between 5 and 480 minutes"
    ))]
    pub slot_minutes: u32,
    #[validate(range(min = 1, max = 1000, code = "out_of_range", message = "must be between 1 and 1000"))]
    pub capacity: u32,
    #[validate(length(
        min = 1,
        max = 50,
        code = "out_of_range",
        message = "must list 1 to 50 service types"
    ))]
    pub service_types: Vec<ServiceTypeId>,
    /// `false` closes the slots (submitting them again closed).
    pub open: bool,
    pub cutoffs: Cutoffs,
}

fn cutoff(field: &'static str, minutes: u32) -> Result<(), ValidationError> {
    if minutes > Cutoffs::MAX_MINUTES {
        Err(rules::at(field, "out_of_range", "must be at most 43200 minutes (30 days)"))
    } else {
        Ok(())
    }
}

fn booking_cutoff(template: &SlotTemplate) -> Result<(), ValidationError> {
    cutoff("booking_cutoff_minutes", template.cutoffs.booking_minutes)
}

fn cancellation_cutoff(template: &SlotTemplate) -> Result<(), ValidationError> {
    cutoff("cancellation_cutoff_minutes", template.cutoffs.cancellation_minutes)
}

/// One daily opening interval, local wall-clock time, whole minutes: `opens < closes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Validate, serde::Serialize, serde::Deserialize)]
// Each `schema` repeats its options (`skip_on_field_errors`), which clippy takes for
// a duplicated attribute.
#[allow(clippy::duplicated_attributes)]
#[validate(schema(function = "whole_minutes", skip_on_field_errors = false))]
#[validate(schema(function = "closes_after_opens", skip_on_field_errors = false))]
pub struct OpeningHours {
    pub opens: Time,
    pub closes: Time,
}

fn whole_minutes(h: &OpeningHours) -> Result<(), ValidationError> {
    if h.opens.second() != 0 || h.closes.second() != 0 || h.opens.nanosecond() != 0 {
        Err(ValidationError::new("whole_minutes").with_message(Cow::Borrowed("times are whole minutes")))
    } else {
        Ok(())
    }
}

fn closes_after_opens(h: &OpeningHours) -> Result<(), ValidationError> {
    if h.opens >= h.closes { Err(rules::at("closes", "before_opens", "must be after opens")) } else { Ok(()) }
}

/// Every `weekdays` day from `first_day` to `last_day` (both included, local dates),
/// except `excluded_dates`: slots of `slot_minutes` from each interval's opening, as many
/// as fit before it closes.
#[derive(Debug, Clone, PartialEq, Eq, Validate, serde::Serialize, serde::Deserialize)]
// Each `schema` repeats its options (`skip_on_field_errors`), which clippy takes for
// a duplicated attribute.
#[allow(clippy::duplicated_attributes)]
#[validate(schema(function = "days_in_range", skip_on_field_errors = false))]
#[validate(schema(function = "interval_count", skip_on_field_errors = false))]
#[validate(schema(function = "no_overlap", skip_on_field_errors = false))]
pub struct RecurringSchedule {
    pub first_day: Date,
    pub last_day: Date,
    #[validate(length(min = 1, code = "required", message = "must name at least one weekday"))]
    pub weekdays: Vec<Weekday>,
    #[validate(nested)]
    pub hours: Vec<OpeningHours>,
    pub excluded_dates: Vec<Date>,
    pub template: SlotTemplate,
}

fn days_in_range(s: &RecurringSchedule) -> Result<(), ValidationError> {
    let days = (s.last_day - s.first_day).whole_days();
    if days < 0 {
        Err(rules::at("last_day", "before_first_day", "must not be before first_day"))
    } else if days >= MAX_DAYS {
        Err(rules::at("last_day", "out_of_range", "the range spans at most 366 days"))
    } else {
        Ok(())
    }
}

fn interval_count(s: &RecurringSchedule) -> Result<(), ValidationError> {
    if s.hours.is_empty() || s.hours.len() > MAX_INTERVALS {
        Err(rules::at("hours", "out_of_range", "must list 1 to 8 opening intervals"))
    } else {
        Ok(())
    }
}

fn no_overlap(s: &RecurringSchedule) -> Result<(), ValidationError> {
    if s.sorted_hours().windows(2).any(|w| w[1].opens < w[0].closes) {
        Err(rules::at("hours", "overlapping", "opening intervals must not overlap"))
    } else {
        Ok(())
    }
}

/// Slots at the given local start times, each `template.slot_minutes` long. What only
/// the mission's time zone and the time of the submission tell (a start that does not
/// exist there, one in the past, one listed twice) is reported as the slots are made.
#[derive(Debug, Clone, PartialEq, Eq, Validate, serde::Serialize, serde::Deserialize)]
pub struct ExplicitSlots {
    #[validate(length(
        min = 1,
        max = 10_000,
        code = "out_of_range",
        message = "must list 1 to 10000 start times"
    ))]
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
            release_at: None,
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
        errors.extend(rules::flatten(Validate::validate(self.template())));
        let tz = timezone.parse::<Tz>().ok();
        if tz.is_none() {
            errors.add("/timezone", "invalid_timezone", "the mission's time zone is not an IANA name");
        }
        // The days and times are judged only in a known zone.
        let starts = match (self, tz) {
            (Availability::Recurring(s), Some(tz)) => {
                errors.extend(rules::flatten(Validate::validate(s)));
                if errors.is_empty() { s.starts(tz) } else { Vec::new() }
            }
            (Availability::Explicit(s), Some(tz)) => {
                errors.extend(rules::flatten(Validate::validate(s)));
                s.starts(tz, now, &mut errors)
            }
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
    fn sorted_hours(&self) -> Vec<OpeningHours> {
        let mut hours = self.hours.clone();
        hours.sort_by_key(|h| h.opens);
        hours
    }

    /// The starts of a valid schedule.
    fn starts(&self, tz: Tz) -> Vec<OffsetDateTime> {
        let hours = self.sorted_hours();
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
