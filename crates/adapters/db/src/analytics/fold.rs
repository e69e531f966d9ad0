//! The fold of the analytics reads: the rows both databases select, turned into the
//! port's figures with the domain's definitions (docs/analytics.md), once for both.
//!
//! - An instant `t` is in bucket `i` when `boundaries[i] ≤ t < boundaries[i + 1]`
//!   (`analytics::bucket_index`): an instant exactly at a boundary is in the later bucket.
//! - Processing times are `seconds_between(submitted_at, closed_at)`, on time is
//!   `closed_on_time(closed_at, sla_due_at)`, summaries are `DurationSummary::of`; a
//!   request closed in the range was open at its start when `open_at` says so.
//! - A range figure is computed over the range's rows: counts are the sums of the
//!   buckets' (the buckets partition the range), and the range's durations are all of the
//!   buckets' durations, summarised together, never a median of medians.

use super::spells::{SpellDayRow, SpellItems, stage};
use crate::failure::Failure;
use consular_domain::analytics::{DurationSummary, closed_on_time, open_at, seconds_between};
use consular_domain::{AppointmentStatus, MissionId, RequestStatus, ServiceTypeId};
use consular_ports::{AnalyticsQuery, RepoError, RequestCounts, RequestGroup, SeatCounts, StageGroup};
use std::collections::BTreeMap;
use time::OffsetDateTime;
use uuid::Uuid;

/// What a query reads: its buckets (as instants, clipped to `now`), the range
/// `[start, end)`, `now`, and the filters. `end` is `E`, the instant of `by_status`.
#[derive(Debug, Clone)]
pub(crate) struct Window {
    /// The boundaries in Unix nanoseconds, which order instants as they do: a view sorts a
    /// few hundred thousand instants into buckets, and comparing integers is what makes
    /// that cheap (the domain's `bucket_index` compares `OffsetDateTime`s; a test checks
    /// that [`Window::bucket`] agrees with it everywhere).
    boundaries: Vec<i128>,
    pub start: OffsetDateTime,
    pub end: OffsetDateTime,
    /// `generated_at`: the instant read inside the view's snapshot, which the figures
    /// marked "now" are taken at.
    pub now: OffsetDateTime,
    /// `MissionScope::One`: every table is filtered by this mission.
    pub mission: Option<MissionId>,
    /// Requests and spells only (appointments ignore it).
    pub service_type: Option<ServiceTypeId>,
}

impl Window {
    /// The window of `query` at `now`, whose boundaries must not descend (at least one: a
    /// single boundary is an empty range with no bucket). Every boundary is clipped to
    /// `now` (a range ending today is counted up to it; nothing after it exists yet), so
    /// two boundaries may be equal: an empty bucket, which no instant is in (a call at the
    /// very instant a day starts ends on a bucket of no length).
    pub(crate) fn of(query: &AnalyticsQuery, now: OffsetDateTime) -> Result<Window, Failure> {
        let invalid = |why: &str| Failure::Outcome(RepoError::Other(format!("analytics query: {why}")));
        if query.boundaries.windows(2).any(|pair| matches!(pair, [a, b] if a > b)) {
            return Err(invalid("the bucket boundaries descend"));
        }
        let clipped: Vec<OffsetDateTime> = query.boundaries.iter().map(|b| (*b).min(now)).collect();
        let (Some(&start), Some(&end)) = (clipped.first(), clipped.last()) else {
            return Err(invalid("no bucket boundary"));
        };
        Ok(Window {
            boundaries: clipped.iter().map(|b| b.unix_timestamp_nanos()).collect(),
            start,
            end,
            now,
            mission: query.missions.mission(),
            service_type: query.service_type,
        })
    }

    /// How many buckets.
    pub(crate) fn len(&self) -> usize {
        self.boundaries.len().saturating_sub(1)
    }

    /// The bucket `instant` is in, if any: `i` when `boundaries[i] ≤ instant <
    /// boundaries[i + 1]` (`bucket_index`).
    fn bucket(&self, instant: OffsetDateTime) -> Option<usize> {
        self.bucket_at_nanos(instant.unix_timestamp_nanos())
    }

    /// [`Window::bucket`] of the instant `t` Unix nanoseconds.
    fn bucket_at_nanos(&self, t: i128) -> Option<usize> {
        // How many boundaries are at or before `t`: 0 before the range, n + 1 at its end.
        let at_or_before = self.boundaries.partition_point(|boundary| *boundary <= t);
        at_or_before.checked_sub(1).filter(|bucket| *bucket < self.len())
    }
}

/// How the requests of a view are grouped: the overview's one group, the services view's
/// service types, the staff view's (mission, current assignee).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Grouping {
    Overview,
    ServiceType,
    Staff,
}

/// A group: [`RequestGroup::mission`] and [`RequestGroup::key`].
pub(crate) type GroupKey = (Option<Uuid>, Option<Uuid>);

impl Grouping {
    /// The group of a request of `mission` and `service_type` assigned to `assignee`.
    pub(crate) fn key(self, mission: Uuid, service_type: Uuid, assignee: Option<Uuid>) -> GroupKey {
        match self {
            Grouping::Overview => (None, None),
            Grouping::ServiceType => (None, Some(service_type)),
            Grouping::Staff => (Some(mission), assignee),
        }
    }
}

/// The summaries of durations bucket by bucket, and of the range: all of them together
/// (`DurationSummary::of` of the union, never a combination of the buckets' summaries).
/// Each bucket is sorted first, so that the range's list is made of sorted runs, which the
/// standard library's (stable) sort merges rather than sorting again.
fn summaries(mut buckets: Vec<Vec<i64>>) -> (DurationSummary, Vec<DurationSummary>) {
    for seconds in &mut buckets {
        seconds.sort_unstable();
    }
    let mut range = buckets.concat();
    range.sort();
    (DurationSummary::of(range), buckets.into_iter().map(DurationSummary::of).collect())
}

/// What a view reads: its requests, and the stage spells (services) or the seats
/// (overview) when it shows them.
#[derive(Debug)]
pub(crate) struct Folds<'w> {
    pub(crate) requests: RequestFold<'w>,
    pub(crate) stages: Option<StageFold<'w>>,
    pub(crate) seats: Option<SeatFold<'w>>,
}

/// The figures of one group while they are being added up.
#[derive(Debug)]
struct GroupSums {
    buckets: Vec<RequestCounts>,
    /// The processing times of the requests closed in each bucket.
    processing: Vec<Vec<i64>>,
    open_at_start: u64,
    open_now: u64,
    overdue_now: u64,
}

impl GroupSums {
    fn new(buckets: usize) -> GroupSums {
        GroupSums {
            buckets: vec![RequestCounts::default(); buckets],
            processing: vec![Vec::new(); buckets],
            open_at_start: 0,
            open_now: 0,
            overdue_now: 0,
        }
    }

    fn into_group((mission, key): GroupKey, sums: GroupSums) -> RequestGroup {
        let mut range = RequestCounts::default();
        for counts in &sums.buckets {
            range.submitted += counts.submitted;
            for (total, count) in range.by_status.0.iter_mut().zip(counts.by_status.0) {
                *total += count;
            }
            range.completed += counts.completed;
            range.rejected += counts.rejected;
            range.cancelled += counts.cancelled;
            range.on_time += counts.on_time;
        }
        let (processing, by_bucket) = summaries(sums.processing);
        range.processing = processing;
        let buckets = sums
            .buckets
            .into_iter()
            .zip(by_bucket)
            .map(|(counts, processing)| RequestCounts { processing, ..counts })
            .collect();
        RequestGroup {
            mission: mission.map(MissionId),
            key,
            range,
            buckets,
            open_at_start: sums.open_at_start,
            open_now: sums.open_now,
            overdue_now: sums.overdue_now,
        }
    }

    fn is_zero(&self) -> bool {
        self.open_at_start == 0
            && self.open_now == 0
            && self.overdue_now == 0
            && self.buckets.iter().all(|counts| *counts == RequestCounts::default())
    }
}

/// The request figures of a view, group by group.
#[derive(Debug)]
pub(crate) struct RequestFold<'w> {
    window: &'w Window,
    grouping: Grouping,
    groups: BTreeMap<GroupKey, GroupSums>,
}

impl<'w> RequestFold<'w> {
    pub(crate) fn new(window: &'w Window, grouping: Grouping) -> RequestFold<'w> {
        RequestFold { window, grouping, groups: BTreeMap::new() }
    }

    pub(crate) fn grouping(&self) -> Grouping {
        self.grouping
    }

    /// The group `key`, to add requests to.
    pub(crate) fn group(&mut self, key: GroupKey) -> GroupFold<'_> {
        let buckets = self.window.len();
        GroupFold {
            window: self.window,
            sums: self.groups.entry(key).or_insert_with(|| GroupSums::new(buckets)),
        }
    }

    /// The groups with a non-zero figure, by key (`None` first). The overview has exactly
    /// one group, zeros included.
    pub(crate) fn finish(mut self) -> Vec<RequestGroup> {
        let overview = self.grouping == Grouping::Overview;
        if overview {
            self.group((None, None));
        }
        self.groups
            .into_iter()
            .filter(|(_, sums)| overview || !sums.is_zero())
            .map(|(key, sums)| GroupSums::into_group(key, sums))
            .collect()
    }
}

/// One group of a [`RequestFold`].
pub(crate) struct GroupFold<'a> {
    window: &'a Window,
    sums: &'a mut GroupSums,
}

impl GroupFold<'_> {
    /// A request submitted at `submitted_at` whose status at the end of the range is
    /// `status_at_end` (`None`: no history entry before it).
    pub(crate) fn submitted(&mut self, submitted_at: OffsetDateTime, status_at_end: Option<RequestStatus>) {
        let Some(counts) = self.window.bucket(submitted_at).and_then(|b| self.sums.buckets.get_mut(b)) else {
            return;
        };
        counts.submitted += 1;
        if let Some(status) = status_at_end {
            counts.by_status.add(status, 1);
        }
    }

    /// A request closed at `closed_at`, in the range, in `status` (final: `closed_at` is
    /// set exactly when a request reaches a final status; any other is not a closing and
    /// is left out of the closed figures). Also its part of the backlog at the start of
    /// the range: it was open then if it had been submitted (`open_at`).
    pub(crate) fn closed(
        &mut self,
        status: RequestStatus,
        submitted_at: OffsetDateTime,
        closed_at: OffsetDateTime,
        sla_due_at: OffsetDateTime,
    ) {
        let Some(bucket) = self.window.bucket(closed_at) else { return };
        if open_at(submitted_at, Some(closed_at), self.window.start) {
            self.sums.open_at_start += 1;
        }
        let (Some(counts), Some(processing)) =
            (self.sums.buckets.get_mut(bucket), self.sums.processing.get_mut(bucket))
        else {
            return;
        };
        match status {
            RequestStatus::Completed => counts.completed += 1,
            RequestStatus::Rejected => counts.rejected += 1,
            RequestStatus::Cancelled => counts.cancelled += 1,
            _ => return,
        }
        if closed_on_time(closed_at, sla_due_at) {
            counts.on_time += 1;
        }
        processing.push(seconds_between(submitted_at, closed_at));
    }

    /// Requests open at the start of the range (`open_at(start)`; those closed in the
    /// range are counted by [`GroupFold::closed`]), open at `now` (`open_at(now)`), and of
    /// those, past their SLA at `now`.
    pub(crate) fn open(&mut self, open_at_start: u64, open_now: u64, overdue_now: u64) {
        self.sums.open_at_start += open_at_start;
        self.sums.open_now += open_now;
        self.sums.overdue_now += overdue_now;
    }
}

/// The stage spells of the services view, by (service type, stage).
#[derive(Debug)]
pub(crate) struct StageFold<'w> {
    window: &'w Window,
    /// The lengths of the spells that ended in each bucket.
    stages: BTreeMap<(Uuid, u32), Vec<Vec<i64>>>,
}

impl<'w> StageFold<'w> {
    pub(crate) fn new(window: &'w Window) -> StageFold<'w> {
        StageFold { window, stages: BTreeMap::new() }
    }

    /// The spells of `stage` of the requests of `service_type`, to add spells to.
    pub(crate) fn stage(&mut self, service_type: Uuid, stage: u32) -> SpellFold<'_> {
        let buckets = self.window.len();
        let lengths = self.stages.entry((service_type, stage)).or_insert_with(|| vec![Vec::new(); buckets]);
        SpellFold { window: self.window, lengths }
    }

    /// The spells of rows of `stage_spell_days` (those of the window are counted, by their
    /// own `left_at`).
    pub(crate) fn spell_days(&mut self, rows: Vec<SpellDayRow>) -> Result<(), Failure> {
        for row in rows {
            let mut spells = self.stage(row.service_type_id.0, stage(row.stage)?);
            for item in SpellItems::parse(&row.spells) {
                let (micros, seconds) = item?;
                spells.spell_at_micros(micros, seconds);
            }
        }
        Ok(())
    }

    /// One group per (service type, stage) with a spell in the range, in that order.
    pub(crate) fn finish(self) -> Vec<StageGroup> {
        self.stages
            .into_iter()
            .filter(|(_, buckets)| buckets.iter().any(|lengths| !lengths.is_empty()))
            .map(|((service_type, stage), buckets)| {
                let (range, buckets) = summaries(buckets);
                StageGroup { service_type: ServiceTypeId(service_type), stage, range, buckets }
            })
            .collect()
    }
}

/// One stage of a [`StageFold`].
pub(crate) struct SpellFold<'a> {
    window: &'a Window,
    lengths: &'a mut Vec<Vec<i64>>,
}

impl SpellFold<'_> {
    /// A spell that ended at `left_at` after `seconds` (`seconds_between(entered_at,
    /// left_at)`).
    pub(crate) fn spell(&mut self, left_at: OffsetDateTime, seconds: i64) {
        if let Some(lengths) = self.window.bucket(left_at).and_then(|b| self.lengths.get_mut(b)) {
            lengths.push(seconds);
        }
    }

    /// [`SpellFold::spell`] with `left_at` in Unix microseconds (`stage_spell_days`).
    pub(crate) fn spell_at_micros(&mut self, left_at: i64, seconds: i64) {
        let nanos = i128::from(left_at) * 1_000;
        if let Some(lengths) = self.window.bucket_at_nanos(nanos).and_then(|b| self.lengths.get_mut(b)) {
            lengths.push(seconds);
        }
    }
}

/// The overview's appointments, bucket by bucket.
#[derive(Debug)]
pub(crate) struct SeatFold<'w> {
    window: &'w Window,
    buckets: Vec<SeatCounts>,
}

impl<'w> SeatFold<'w> {
    pub(crate) fn new(window: &'w Window) -> SeatFold<'w> {
        SeatFold { window, buckets: vec![SeatCounts::default(); window.len()] }
    }

    /// An open slot starting at `starts_at`.
    pub(crate) fn slot(&mut self, starts_at: OffsetDateTime, booked: u64, capacity: u64) {
        if let Some(counts) = self.window.bucket(starts_at).and_then(|bucket| self.buckets.get_mut(bucket)) {
            counts.booked += booked;
            counts.capacity += capacity;
        }
    }

    /// An appointment starting at `starts_at` in `status`: attended and missed ones count.
    pub(crate) fn appointment(&mut self, starts_at: OffsetDateTime, status: AppointmentStatus) {
        if let Some(counts) = self.window.bucket(starts_at).and_then(|bucket| self.buckets.get_mut(bucket)) {
            match status {
                AppointmentStatus::Attended => counts.attended += 1,
                AppointmentStatus::NoShow => counts.no_show += 1,
                AppointmentStatus::Booked | AppointmentStatus::Cancelled => {}
            }
        }
    }

    pub(crate) fn finish(self) -> Vec<SeatCounts> {
        self.buckets
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use consular_domain::RequestStatus::*;
    use consular_ports::MissionScope;
    use time::Duration;
    use time::macros::datetime;

    const T0: OffsetDateTime = datetime!(2026-03-01 00:00 UTC);

    fn window(buckets: i64) -> Window {
        let query = AnalyticsQuery {
            missions: MissionScope::All,
            service_type: None,
            boundaries: (0..=buckets).map(|day| T0 + Duration::days(day)).collect(),
        };
        Window::of(&query, T0 + Duration::days(buckets)).unwrap()
    }

    #[test]
    fn boundaries_must_not_descend() {
        let mut query =
            AnalyticsQuery { missions: MissionScope::All, service_type: None, boundaries: vec![] };
        assert!(Window::of(&query, T0).is_err());
        query.boundaries = vec![T0, T0 - Duration::nanoseconds(1)];
        assert!(Window::of(&query, T0).is_err());
        query.boundaries = vec![T0];
        assert_eq!(Window::of(&query, T0).unwrap().len(), 0);
        query.boundaries = vec![T0, T0];
        assert_eq!(Window::of(&query, T0).unwrap().len(), 1);
    }

    /// A call at the instant a day starts: the last bucket, clipped to now, has no length
    /// and nothing is in it; an instant at its boundary is after the range.
    #[test]
    fn an_empty_last_bucket_holds_nothing() {
        let end = T0 + Duration::days(1);
        let query = AnalyticsQuery {
            missions: MissionScope::All,
            service_type: None,
            boundaries: vec![T0, end, end + Duration::days(1)],
        };
        let window = Window::of(&query, end).unwrap();
        assert_eq!((window.len(), window.end, window.now), (2, end, end));
        assert_eq!(window.bucket(T0), Some(0));
        assert_eq!(window.bucket(end - Duration::nanoseconds(1)), Some(0));
        assert_eq!(window.bucket(end), None);
        let mut fold = RequestFold::new(&window, Grouping::Overview);
        fold.group((None, None)).submitted(end - Duration::seconds(1), Some(Submitted));
        fold.group((None, None)).submitted(end, Some(Submitted));
        let groups = fold.finish();
        assert_eq!(groups[0].buckets.iter().map(|b| b.submitted).collect::<Vec<_>>(), [1, 0]);
        assert_eq!(groups[0].range.submitted, 1);
    }

    /// `Window::bucket` is the domain's `bucket_index`, at and around every boundary of
    /// buckets of uneven lengths (a daylight-saving day) and between them.
    #[test]
    fn buckets_are_the_domains() {
        use consular_domain::analytics::{Bucket, bucket_index};
        let boundaries = vec![
            T0,
            T0 + Duration::hours(23),
            T0 + Duration::hours(48),
            T0 + Duration::hours(48) + Duration::nanoseconds(1),
            T0 + Duration::days(30),
        ];
        let query = AnalyticsQuery { missions: MissionScope::All, service_type: None, boundaries };
        let window = Window::of(&query, T0 + Duration::days(30)).unwrap();
        let buckets: Vec<Bucket> = query
            .boundaries
            .windows(2)
            .map(|w| Bucket {
                label: String::new(),
                first_day: time::Date::MIN,
                last_day: time::Date::MIN,
                starts_at: w[0],
                ends_at: w[1],
            })
            .collect();
        let mut instants = vec![T0 - Duration::days(1), T0 + Duration::days(31)];
        for boundary in &query.boundaries {
            for offset in [-1_000, -1, 0, 1, 1_000] {
                instants.push(*boundary + Duration::nanoseconds(offset));
            }
        }
        instants.extend((0..2_000).map(|i| T0 - Duration::hours(3) + Duration::seconds(i * 1_327)));
        for instant in instants {
            assert_eq!(window.bucket(instant), bucket_index(&buckets, instant), "{instant}");
        }
        // Other offsets than UTC: the same instants.
        let paris = time::UtcOffset::from_hms(1, 0, 0).unwrap();
        assert_eq!(window.bucket((T0 + Duration::hours(23)).to_offset(paris)), Some(1));
    }

    #[test]
    fn an_instant_at_a_boundary_is_in_the_later_bucket() {
        let window = window(2);
        let mut fold = RequestFold::new(&window, Grouping::Overview);
        let mut group = fold.group((None, None));
        group.submitted(T0 + Duration::days(1), Some(Submitted));
        group.submitted(T0 + Duration::days(1) - Duration::microseconds(1), Some(InReview));
        group.submitted(T0 + Duration::days(2), Some(InReview));
        let [group] = fold.finish().try_into().unwrap();
        assert_eq!(group.buckets[0].submitted, 1);
        assert_eq!(group.buckets[1].submitted, 1);
        assert_eq!(group.buckets[1].by_status.get(Submitted), 1);
        assert_eq!(group.range.submitted, 2);
    }

    #[test]
    fn range_medians_are_over_the_range_not_of_the_buckets() {
        let window = window(2);
        let mut fold = RequestFold::new(&window, Grouping::ServiceType);
        let key = (None, Some(Uuid::nil()));
        let due = T0 + Duration::days(10);
        // Bucket 0: 10 and 20 seconds; bucket 1: 1000 seconds.
        for (closed, seconds) in [(0, 10), (0, 20), (1, 1000)] {
            let closed_at = T0 + Duration::days(closed) + Duration::hours(1);
            fold.group(key).closed(Completed, closed_at - Duration::seconds(seconds), closed_at, due);
        }
        fold.group(key).closed(Rejected, T0, T0 + Duration::hours(2), T0 + Duration::hours(1));
        // Submitted before the range, closed in it: open at its start.
        fold.group(key).closed(Cancelled, T0 - Duration::seconds(1), T0 + Duration::days(1), due);
        let [group] = fold.finish().try_into().unwrap();
        // Bucket 0 also holds the rejection: 10, 20 and 7200 seconds.
        assert_eq!(group.buckets[0].processing.median_seconds, Some(20.0));
        assert_eq!(group.buckets[0].completed, 2);
        assert_eq!(group.buckets[0].rejected, 1);
        assert_eq!(group.buckets[0].on_time, 2);
        assert_eq!(group.range.processing.count, 5);
        // 10, 20, 1000, 7200, 86401: the middle value.
        assert_eq!(group.range.processing.median_seconds, Some(1000.0));
        assert_eq!(group.range.closed(), 5);
        assert_eq!(group.open_at_start, 1);
    }

    #[test]
    fn the_overview_group_is_there_when_nothing_is_and_others_only_with_a_figure() {
        let window = window(3);
        let overview = RequestFold::new(&window, Grouping::Overview).finish();
        assert_eq!(overview.len(), 1);
        assert_eq!(overview[0].buckets.len(), 3);
        assert_eq!((overview[0].mission, overview[0].key), (None, None));
        let mut staff = RequestFold::new(&window, Grouping::Staff);
        staff.group((Some(Uuid::nil()), None)).open(0, 0, 0);
        staff.group((Some(Uuid::max()), None)).open(1, 0, 0);
        let groups = staff.finish();
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].mission, Some(MissionId(Uuid::max())));
        assert_eq!(groups[0].open_at_start, 1);
    }

    #[test]
    fn spells_and_seats_are_bucketed_by_their_instant() {
        let window = window(2);
        let mut stages = StageFold::new(&window);
        let mut stage = stages.stage(Uuid::nil(), 1);
        stage.spell(T0 + Duration::days(1), 30);
        stage.spell(T0, 10);
        stage.spell(T0 + Duration::days(2), 99);
        stages.stage(Uuid::nil(), 2).spell(T0 - Duration::seconds(1), 5);
        let [stage] = stages.finish().try_into().unwrap();
        assert_eq!((stage.buckets[0].count, stage.buckets[1].count, stage.range.count), (1, 1, 2));
        assert_eq!(stage.range.median_seconds, Some(20.0));
        let mut seats = SeatFold::new(&window);
        seats.slot(T0, 3, 4);
        seats.appointment(T0 + Duration::days(1), AppointmentStatus::NoShow);
        seats.appointment(T0 + Duration::days(1), AppointmentStatus::Booked);
        let seats = seats.finish();
        assert_eq!(seats[0], SeatCounts { booked: 3, capacity: 4, attended: 0, no_show: 0 });
        assert_eq!(seats[1], SeatCounts { booked: 0, capacity: 0, attended: 0, no_show: 1 });
    }
}
