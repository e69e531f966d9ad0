//! docs/analytics.md restated as loops over requests and their histories. Only the
//! domain's table-tested primitives are borrowed (`percentile`, `seconds_between`,
//! `status_at`, `stage_spells`); scoping, grouping, bucketing and counting are done here.

use consular_domain::analytics::{DurationSummary, percentile, seconds_between, stage_spells, status_at};
use consular_domain::{MissionId, RequestStatus, ServiceRequest};
use consular_ports::{AnalyticsQuery, MissionScope, RequestCounts, RequestGroup, SeededRequest, StageGroup};
use std::collections::BTreeMap;
use time::OffsetDateTime;

/// `start ≤ t < end`.
fn within(t: OffsetDateTime, start: OffsetDateTime, end: OffsetDateTime) -> bool {
    start <= t && t < end
}

fn in_scope(r: &ServiceRequest, q: &AnalyticsQuery) -> bool {
    let mission = match q.missions {
        MissionScope::All => true,
        MissionScope::One(m) => r.mission_id == m,
    };
    mission && q.service_type.is_none_or(|t| r.service_type_id == t)
}

/// Count, median and p90 of durations in any order.
pub fn summary(mut seconds: Vec<i64>) -> DurationSummary {
    seconds.sort_unstable();
    DurationSummary {
        count: seconds.len() as u64,
        median_seconds: percentile(&seconds, 0.5),
        p90_seconds: percentile(&seconds, 0.9),
    }
}

/// The request figures of `[start, end)`, statuses taken at `e`.
fn counts(
    requests: &[&SeededRequest],
    start: OffsetDateTime,
    end: OffsetDateTime,
    e: OffsetDateTime,
) -> RequestCounts {
    let mut c = RequestCounts::default();
    let mut processing = Vec::new();
    for SeededRequest { request: r, history } in requests.iter().copied() {
        if within(r.submitted_at, start, end) {
            c.submitted += 1;
            c.by_status.add(status_at(history, e).expect("submitted before E"), 1);
        }
        if let Some(closed_at) = r.closed_at
            && within(closed_at, start, end)
        {
            match r.status {
                RequestStatus::Completed => c.completed += 1,
                RequestStatus::Rejected => c.rejected += 1,
                RequestStatus::Cancelled => c.cancelled += 1,
                open => panic!("{} is {open} with a closed_at", r.id),
            }
            if closed_at <= r.sla_due_at {
                c.on_time += 1;
            }
            processing.push(seconds_between(r.submitted_at, closed_at));
        }
    }
    c.processing = summary(processing);
    c
}

/// The figures of one group of (already scoped) requests.
fn group(
    requests: &[&SeededRequest],
    q: &AnalyticsQuery,
    now: OffsetDateTime,
    mission: Option<MissionId>,
    key: Option<uuid::Uuid>,
) -> RequestGroup {
    let b = &q.boundaries;
    let (start, e) = (b[0], b[b.len() - 1]);
    let count =
        |f: &dyn Fn(&ServiceRequest) -> bool| requests.iter().filter(|s| f(&s.request)).count() as u64;
    RequestGroup {
        mission,
        key,
        range: counts(requests, start, e, e),
        buckets: b.windows(2).map(|w| counts(requests, w[0], w[1], e)).collect(),
        open_at_start: count(&|r| open_at(r, start)),
        open_now: count(&|r| open_at(r, now)),
        overdue_now: count(&|r| open_at(r, now) && r.sla_due_at < now),
    }
}

/// Open at `t`: submitted before it, and not closed before it (closed exactly at `t` is
/// still open at `t`).
fn open_at(r: &ServiceRequest, t: OffsetDateTime) -> bool {
    r.submitted_at < t && r.closed_at.is_none_or(|c| c >= t)
}

/// Whether a group has anything to show (the services and staff views list only those).
fn nonzero(g: &RequestGroup) -> bool {
    g.range.submitted > 0 || g.range.closed() > 0 || g.open_at_start > 0 || g.open_now > 0
}

fn scoped<'a>(all: &'a [SeededRequest], q: &AnalyticsQuery) -> Vec<&'a SeededRequest> {
    all.iter().filter(|s| in_scope(&s.request, q)).collect()
}

/// Groups by `key_of`, keeping the non-zero ones, in key order.
fn grouped<K: Ord + Copy>(
    all: &[SeededRequest],
    q: &AnalyticsQuery,
    key_of: impl Fn(&ServiceRequest) -> K,
    label: impl Fn(K) -> (Option<MissionId>, Option<uuid::Uuid>),
    now: OffsetDateTime,
) -> Vec<RequestGroup> {
    let mut groups: BTreeMap<K, Vec<&SeededRequest>> = BTreeMap::new();
    for s in scoped(all, q) {
        groups.entry(key_of(&s.request)).or_default().push(s);
    }
    let mut out: Vec<RequestGroup> = groups
        .into_iter()
        .map(|(k, rs)| {
            let (mission, key) = label(k);
            group(&rs, q, now, mission, key)
        })
        .filter(nonzero)
        .collect();
    out.sort_by_key(|g| (g.mission, g.key));
    out
}

/// The overview's requests: one group of everything in scope.
pub fn overview(all: &[SeededRequest], q: &AnalyticsQuery, now: OffsetDateTime) -> RequestGroup {
    group(&scoped(all, q), q, now, None, None)
}

/// The services view's groups, by service type.
pub fn services(all: &[SeededRequest], q: &AnalyticsQuery, now: OffsetDateTime) -> Vec<RequestGroup> {
    grouped(all, q, |r| r.service_type_id, |t| (None, Some(t.0)), now)
}

/// The staff view's groups, by (mission, current assignee).
pub fn staff(all: &[SeededRequest], q: &AnalyticsQuery, now: OffsetDateTime) -> Vec<RequestGroup> {
    grouped(all, q, |r| (r.mission_id, r.assignee_id), |(m, a)| (Some(m), a.map(|a| a.0)), now)
}

/// The stage spells that ended in the range, by (service type, stage position).
pub fn stages(all: &[SeededRequest], q: &AnalyticsQuery) -> Vec<StageGroup> {
    let b = &q.boundaries;
    let n = b.len() - 1;
    let mut spells: BTreeMap<_, (Vec<i64>, Vec<Vec<i64>>)> = BTreeMap::new();
    for SeededRequest { request: r, history } in scoped(all, q) {
        for spell in stage_spells(history, r.closed_at) {
            let Some(i) = (0..n).find(|&i| within(spell.left_at, b[i], b[i + 1])) else { continue };
            let (range, buckets) = spells
                .entry((r.service_type_id, spell.stage as u32))
                .or_insert_with(|| (Vec::new(), vec![Vec::new(); n]));
            let seconds = seconds_between(spell.entered_at, spell.left_at);
            range.push(seconds);
            buckets[i].push(seconds);
        }
    }
    spells
        .into_iter()
        .map(|((service_type, stage), (range, buckets))| StageGroup {
            service_type,
            stage,
            range: summary(range),
            buckets: buckets.into_iter().map(summary).collect(),
        })
        .collect()
}
