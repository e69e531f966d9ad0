//! Analytics: the definitions of docs/analytics.md that need no I/O, shared by the use
//! cases and both database adapters so that every figure has one definition.
//!
//! A [`Period`] is a validated range of whole local days with a [`Granularity`];
//! [`buckets`] turns it into intervals of instants in a time zone (DST-aware, clipped to
//! the range). Durations are whole seconds ([`seconds_between`]); [`percentile`] is
//! PostgreSQL's `percentile_cont`; [`rate`] is null on a zero denominator. [`open_at`],
//! [`status_at`] and [`stage_spells`] read a request's state at an instant and where it
//! waited.

use crate::ValidationErrors;
use crate::appointment::local_day;
use crate::request::{HistoryEntry, RequestStatus};
use crate::text_enum::text_enum;
use chrono::Datelike;
use chrono_tz::Tz;
use time::macros::format_description;
use time::{Date, Duration, Month, OffsetDateTime};

text_enum!(
    /// The length of the buckets of a trend series (docs/analytics.md "Periods").
    #[derive(Default)]
    Granularity ("granularity") {
        /// The default.
        #[default]
        Day = "day",
        /// An ISO 8601 week, Monday to Sunday.
        Week = "week",
        Month = "month",
    }
);

/// The days of the default range: the last 30 days, today included.
pub const DEFAULT_DAYS: i64 = 30;
/// The most days a range spans with `day` granularity.
pub const MAX_DAYS_DAILY: i64 = 366;
/// The most days a range spans: five years (the longest five calendar years).
pub const MAX_DAYS: i64 = 1827;
/// The median, as a percentile.
pub const MEDIAN: f64 = 0.5;
/// The 90th percentile.
pub const P90: f64 = 0.9;

/// A range of whole local days, `from` and `to` both included, in the view's time zone,
/// with the granularity of its trend series. Valid by construction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    from: Date,
    to: Date,
    granularity: Granularity,
}

impl Period {
    /// The period from `from` to `to` (both included) given `today` in the view's zone:
    /// every failure at once otherwise (docs/analytics.md, the table of failures).
    pub fn new(
        from: Date,
        to: Date,
        granularity: Granularity,
        today: Date,
    ) -> Result<Period, ValidationErrors> {
        let mut errors = ValidationErrors::new();
        check(&mut errors, from, to, Some(granularity), today);
        errors.into_result()?;
        Ok(Period { from, to, granularity })
    }

    /// The period as a query asks for it (`YYYY-MM-DD` dates, `day`/`week`/`month`), with
    /// the defaults: `to` today, `from` 29 days before `to`, granularity `day`.
    pub fn parse(
        from: Option<&str>,
        to: Option<&str>,
        granularity: Option<&str>,
        today: Date,
    ) -> Result<Period, ValidationErrors> {
        let mut errors = ValidationErrors::new();
        let from = parse_date(&mut errors, "/from", from);
        let granularity = match granularity.map(str::parse::<Granularity>) {
            None => Some(Granularity::default()),
            Some(Ok(granularity)) => Some(granularity),
            Some(Err(_)) => {
                errors.add("/granularity", "invalid", "must be day, week or month");
                None
            }
        };
        let to = parse_date(&mut errors, "/to", to);
        if let (Ok(from), Ok(to)) = (from, to) {
            let to = to.unwrap_or(today);
            let from =
                from.unwrap_or_else(|| to.checked_sub(Duration::days(DEFAULT_DAYS - 1)).unwrap_or(Date::MIN));
            check(&mut errors, from, to, granularity, today);
            if errors.is_empty()
                && let Some(granularity) = granularity
            {
                return Ok(Period { from, to, granularity });
            }
        }
        Err(errors)
    }

    /// The first day.
    pub fn from(&self) -> Date {
        self.from
    }

    /// The last day (included).
    pub fn to(&self) -> Date {
        self.to
    }

    pub fn granularity(&self) -> Granularity {
        self.granularity
    }

    /// How many days the period spans.
    pub fn days(&self) -> i64 {
        span(self.from, self.to)
    }

    /// The instants the period covers in `timezone`, `[start, end)`. `None` for an
    /// unknown zone name.
    pub fn instants(&self, timezone: &str) -> Option<(OffsetDateTime, OffsetDateTime)> {
        Some((local_day(timezone, self.from)?.0, local_day(timezone, self.to)?.1))
    }
}

/// Days from `from` to `to`, both included.
fn span(from: Date, to: Date) -> i64 {
    (to - from).whole_days() + 1
}

/// A date `YYYY-MM-DD`: `Ok(None)` when absent, `Err` (recorded) when malformed.
fn parse_date(errors: &mut ValidationErrors, field: &str, raw: Option<&str>) -> Result<Option<Date>, ()> {
    let Some(raw) = raw else { return Ok(None) };
    match Date::parse(raw, format_description!("[year]-[month]-[day]")) {
        Ok(date) => Ok(Some(date)),
        Err(_) => {
            errors.add(field, "invalid", "must be a date YYYY-MM-DD");
            Err(())
        }
    }
}

/// The range rules, `granularity` `None` when it was invalid. A `to` left out is today:
/// then only a `from` after it can be wrong, and it is reported as such.
fn check(errors: &mut ValidationErrors, from: Date, to: Date, granularity: Option<Granularity>, today: Date) {
    for (field, day) in [("/from", from), ("/to", to)] {
        if day > today {
            errors.add(field, "in_future", format!("must not be after today ({today})"));
        }
    }
    if to < from {
        if from <= today {
            errors.add("/to", "before_from", "must not be before from");
        }
    } else if span(from, to) > MAX_DAYS {
        errors.add("/to", "out_of_range", format!("the range spans at most {MAX_DAYS} days (five years)"));
    } else if granularity == Some(Granularity::Day) && span(from, to) > MAX_DAYS_DAILY {
        errors.add(
            "/granularity",
            "too_fine",
            format!("a range of more than {MAX_DAYS_DAILY} days needs week or month"),
        );
    }
}

/// One bucket of a trend series: the local days `first_day..=last_day` (clipped to the
/// period), the instants they span `[starts_at, ends_at)` in UTC, and the label of the
/// whole day, ISO week or month.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bucket {
    /// `2026-03-29`, `2026-W13` or `2026-03`.
    pub label: String,
    pub first_day: Date,
    pub last_day: Date,
    pub starts_at: OffsetDateTime,
    pub ends_at: OffsetDateTime,
}

impl Bucket {
    /// Whether `instant` is in the bucket: `starts_at ≤ instant < ends_at`.
    pub fn contains(&self, instant: OffsetDateTime) -> bool {
        self.starts_at <= instant && instant < self.ends_at
    }
}

/// The buckets of `period` in `timezone`, in order, contiguous, together exactly the
/// period; the first and last clipped to it. `None` for an unknown zone name.
pub fn buckets(period: &Period, timezone: &str) -> Option<Vec<Bucket>> {
    let mut buckets = Vec::new();
    let mut first_day = period.from;
    loop {
        let last_day = last_day_of(period.granularity, first_day)?.min(period.to);
        buckets.push(Bucket {
            label: label(period.granularity, first_day),
            first_day,
            last_day,
            starts_at: local_day(timezone, first_day)?.0,
            ends_at: local_day(timezone, last_day)?.1,
        });
        if last_day >= period.to {
            return Some(buckets);
        }
        first_day = last_day.next_day()?;
    }
}

/// The index of the bucket `instant` is in, if any (`buckets` as [`buckets`] makes them).
pub fn bucket_index(buckets: &[Bucket], instant: OffsetDateTime) -> Option<usize> {
    let index = buckets.partition_point(|bucket| bucket.ends_at <= instant);
    buckets.get(index).filter(|bucket| bucket.contains(instant)).map(|_| index)
}

/// The last day of the day, ISO week or month `day` is in.
fn last_day_of(granularity: Granularity, day: Date) -> Option<Date> {
    match granularity {
        Granularity::Day => Some(day),
        Granularity::Week => {
            day.checked_add(Duration::days(6 - i64::from(day.weekday().number_days_from_monday())))
        }
        Granularity::Month => {
            Date::from_calendar_date(day.year(), day.month(), day.month().length(day.year())).ok()
        }
    }
}

fn label(granularity: Granularity, day: Date) -> String {
    match granularity {
        Granularity::Day => format!("{:04}-{:02}-{:02}", day.year(), u8::from(day.month()), day.day()),
        Granularity::Week => {
            let (year, week, _) = day.to_iso_week_date();
            format!("{year:04}-W{week:02}")
        }
        Granularity::Month => format!("{:04}-{:02}", day.year(), u8::from(day.month())),
    }
}

/// The local date of `instant` in `timezone` (today, for the default range). `None` for
/// an unknown zone name.
pub fn local_date(timezone: &str, instant: OffsetDateTime) -> Option<Date> {
    let tz: Tz = timezone.parse().ok()?;
    let local =
        chrono::DateTime::from_timestamp(instant.unix_timestamp(), 0)?.with_timezone(&tz).date_naive();
    let month = Month::try_from(u8::try_from(local.month()).ok()?).ok()?;
    Date::from_calendar_date(local.year(), month, u8::try_from(local.day()).ok()?).ok()
}

/// Whole seconds from `start` to `end`: `⌊end⌋ − ⌊start⌋` in Unix seconds, sub-second
/// parts dropped from each instant before subtracting (as both databases compute it).
pub fn seconds_between(start: OffsetDateTime, end: OffsetDateTime) -> i64 {
    end.unix_timestamp() - start.unix_timestamp()
}

/// Whether a request submitted at `submitted_at` and closed at `closed_at` (if it is) is
/// open at `instant`: submitted before it and not closed before it.
pub fn open_at(
    submitted_at: OffsetDateTime,
    closed_at: Option<OffsetDateTime>,
    instant: OffsetDateTime,
) -> bool {
    submitted_at < instant && closed_at.is_none_or(|closed_at| closed_at >= instant)
}

/// Whether a request closed at `closed_at` met its SLA: on or before `sla_due_at`.
pub fn closed_on_time(closed_at: OffsetDateTime, sla_due_at: OffsetDateTime) -> bool {
    closed_at <= sla_due_at
}

/// A request's status at `instant`: that of its last history entry strictly before it
/// (entries at the same instant in their order). `None` before its submission.
pub fn status_at(history: &[HistoryEntry], instant: OffsetDateTime) -> Option<RequestStatus> {
    history
        .iter()
        .filter(|entry| entry.at < instant)
        .fold(None::<&HistoryEntry>, |last, entry| match last {
            Some(last) if last.at > entry.at => Some(last),
            _ => Some(entry),
        })
        .map(|entry| entry.to_status)
}

/// The value at percentile `p` (0 to 1) of `sorted` (ascending), by linear interpolation
/// between closest ranks exactly as PostgreSQL's `percentile_cont` computes it: `None`
/// for no value or a `p` outside `[0, 1]`.
pub fn percentile(sorted: &[i64], p: f64) -> Option<f64> {
    if sorted.is_empty() || !(0.0..=1.0).contains(&p) {
        return None;
    }
    let h = p * (sorted.len() - 1) as f64;
    let (lo, hi) = (h.floor(), h.ceil());
    let first = *sorted.get(lo as usize)? as f64;
    if lo == hi {
        return Some(first);
    }
    let second = *sorted.get(hi as usize)? as f64;
    Some(first + (second - first) * (h - lo))
}

/// The median of `sorted` (ascending): the middle value, or the mean of the two middle
/// ones. `None` for no value.
pub fn median(sorted: &[i64]) -> Option<f64> {
    percentile(sorted, MEDIAN)
}

/// `numerator / denominator`, `None` (null) when the denominator is 0.
pub fn rate(numerator: u64, denominator: u64) -> Option<f64> {
    (denominator != 0).then(|| numerator as f64 / denominator as f64)
}

/// The count, median and p90 of a list of durations in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DurationSummary {
    pub count: u64,
    pub median_seconds: Option<f64>,
    pub p90_seconds: Option<f64>,
}

impl DurationSummary {
    /// The summary of `seconds`, in any order.
    pub fn of(mut seconds: Vec<i64>) -> DurationSummary {
        seconds.sort_unstable();
        DurationSummary {
            count: seconds.len() as u64,
            median_seconds: median(&seconds),
            p90_seconds: percentile(&seconds, P90),
        }
    }
}

/// A time a request spent in one stage of its workflow: from entering it to entering the
/// next one or closing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StageSpell {
    /// The stage's position, as `ServiceRequest::current_stage`.
    pub stage: usize,
    pub entered_at: OffsetDateTime,
    pub left_at: OffsetDateTime,
}

impl StageSpell {
    pub fn seconds(&self) -> i64 {
        seconds_between(self.entered_at, self.left_at)
    }
}

/// The ended stage spells of a request, in order, from its history (in any order; sorted
/// by `at`, ties in the given order) and its `closed_at`: a spell starts at the first
/// entry (the submission) or an entry that changes the stage, and ends at the next entry
/// that changes the stage or reaches a final status, or at `closed_at` when the history
/// stops before one. The current stage of an open request is no spell yet.
pub fn stage_spells(history: &[HistoryEntry], closed_at: Option<OffsetDateTime>) -> Vec<StageSpell> {
    let mut entries: Vec<&HistoryEntry> = history.iter().collect();
    entries.sort_by_key(|entry| entry.at);
    let mut spells = Vec::new();
    let mut current: Option<(usize, OffsetDateTime)> = None;
    for entry in entries {
        match current {
            None => current = Some((entry.to_stage, entry.at)),
            Some((stage, entered_at)) if entry.to_stage != stage => {
                spells.push(StageSpell { stage, entered_at, left_at: entry.at });
                current = Some((entry.to_stage, entry.at));
            }
            Some(_) => {}
        }
        if entry.to_status.is_final() {
            if let Some((stage, entered_at)) = current.take() {
                spells.push(StageSpell { stage, entered_at, left_at: entry.at });
            }
            return spells;
        }
    }
    if let (Some((stage, entered_at)), Some(left_at)) = (current, closed_at)
        && left_at >= entered_at
    {
        spells.push(StageSpell { stage, entered_at, left_at });
    }
    spells
}

#[cfg(test)]
mod tests;
