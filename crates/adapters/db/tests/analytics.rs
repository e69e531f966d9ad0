//! The analytics reads (`AnalyticsRepository`, docs/analytics.md) on both databases: every
//! figure is computed again here, by brute force over the generated demo data set (or the
//! rows a test wrote), with plain loops that follow docs/analytics.md literally, and
//! compared whole with what the database computed. The cases: the last 30 days in UTC
//! (requests still open), one mission in its own zone by weeks (+05:30, daylight saving),
//! a service-type filter, empty ranges, the same dates cut in two zones, the appointments
//! of the overview, the scope of one mission, and the stage spells' projection under live
//! transitions.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;

use consular_application::demo::{DemoPlan, DemoService, Generator};
use consular_db::Database;
use consular_domain::analytics::{
    Granularity, Period, StageSpell, buckets, local_date, stage_spells, status_at,
};
use consular_domain::{
    Action, Appointment, AppointmentAction, AppointmentChange, AppointmentEntry, AppointmentStatus,
    CancelledBy, CitizenId, Cutoffs, MissionId, PrincipalId, PrincipalKind, RequestId, RequestStatus, Role,
    ServiceRequest, ServiceType, ServiceTypeId, Slot, SlotId, StaffMember, Stage, Subject,
};
use consular_ports::{
    AnalyticsQuery, AnalyticsRepository, AppointmentRepository, BookOutcome, MissionScope, OverviewFigures,
    RequestCounts, RequestGroup, RequestRepository, SeatCounts, SeededRequest, ServiceFigures,
    ServiceTypeRepository, SlotUpsert, StaffRepository, StageGroup, SystemClock, WriteMeta,
};
use std::sync::Arc;
use time::{Date, Duration, OffsetDateTime};

// ---------------------------------------------------------------- the brute force

mod expected {
    //! docs/analytics.md restated as loops over requests and their histories. Only the
    //! domain's table-tested primitives are borrowed (`percentile`, `seconds_between`,
    //! `status_at`, `stage_spells`); scoping, grouping, bucketing and counting are done here.

    use consular_domain::analytics::{DurationSummary, percentile, seconds_between, stage_spells, status_at};
    use consular_domain::{MissionId, RequestStatus, ServiceRequest};
    use consular_ports::{
        AnalyticsQuery, MissionScope, RequestCounts, RequestGroup, SeededRequest, StageGroup,
    };
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
            open_at_start: count(&|r| r.submitted_at < start && r.closed_at.is_none_or(|c| c >= start)),
            open_now: count(&|r| r.status.is_open()),
            overdue_now: count(&|r| r.status.is_open() && r.sla_due_at < q.now),
        }
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
    ) -> Vec<RequestGroup> {
        let mut groups: BTreeMap<K, Vec<&SeededRequest>> = BTreeMap::new();
        for s in scoped(all, q) {
            groups.entry(key_of(&s.request)).or_default().push(s);
        }
        let mut out: Vec<RequestGroup> = groups
            .into_iter()
            .map(|(k, rs)| {
                let (mission, key) = label(k);
                group(&rs, q, mission, key)
            })
            .filter(nonzero)
            .collect();
        out.sort_by_key(|g| (g.mission, g.key));
        out
    }

    /// The overview's requests: one group of everything in scope.
    pub fn overview(all: &[SeededRequest], q: &AnalyticsQuery) -> RequestGroup {
        group(&scoped(all, q), q, None, None)
    }

    /// The services view's groups, by service type.
    pub fn services(all: &[SeededRequest], q: &AnalyticsQuery) -> Vec<RequestGroup> {
        grouped(all, q, |r| r.service_type_id, |t| (None, Some(t.0)))
    }

    /// The staff view's groups, by (mission, current assignee).
    pub fn staff(all: &[SeededRequest], q: &AnalyticsQuery) -> Vec<RequestGroup> {
        grouped(all, q, |r| (r.mission_id, r.assignee_id), |(m, a)| (Some(m), a.map(|a| a.0)))
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
}

// ---------------------------------------------------------------- fixtures

/// Three missions: London (daylight saving), New York (daylight saving), New Delhi
/// (+05:30). 240 days hold a daylight-saving change of both hemispheres' rules whatever
/// the day the tests run.
fn plan() -> DemoPlan {
    DemoPlan { missions: 3, requests: 1_200, seed: 2026, days: 240, now: now() }
}

struct Seeded {
    generator: Generator,
    requests: Vec<SeededRequest>,
}

impl Seeded {
    /// The data set's `now` (whole seconds): the instant every query is made at.
    fn now(&self) -> OffsetDateTime {
        self.generator.plan().now
    }

    fn mission(&self, timezone: &str) -> MissionId {
        self.generator.missions().iter().find(|m| m.timezone == timezone).expect(timezone).id
    }
}

async fn seeded(db: &Database) -> Seeded {
    let plan = plan();
    let generator = Generator::new(plan.clone()).unwrap();
    DemoService::new(Arc::new(db.clone()), Arc::new(SystemClock)).seed_plan(plan, |_| {}).await.unwrap();
    let requests = generator.requests(1_000).flat_map(|b| b.unwrap()).collect();
    Seeded { generator, requests }
}

fn today(timezone: &str, now: OffsetDateTime) -> Date {
    local_date(timezone, now).unwrap()
}

/// The query of the days `from..=to` in `timezone`, as the use case makes it: the
/// buckets' boundaries, the last one clipped to `now`.
fn query(
    missions: MissionScope,
    service_type: Option<ServiceTypeId>,
    timezone: &str,
    (from, to): (Date, Date),
    granularity: Granularity,
    now: OffsetDateTime,
) -> AnalyticsQuery {
    let period = Period::new(from, to, granularity, today(timezone, now)).unwrap();
    let buckets = buckets(&period, timezone).unwrap();
    let mut boundaries: Vec<OffsetDateTime> = buckets.iter().map(|b| b.starts_at).collect();
    boundaries.push(buckets.last().unwrap().ends_at.min(now));
    AnalyticsQuery { missions, service_type, boundaries, now }
}

/// The last `days` days in `timezone`, today included.
fn last_days(timezone: &str, now: OffsetDateTime, days: i64) -> (Date, Date) {
    let to = today(timezone, now);
    (to - Duration::days(days - 1), to)
}

const OPEN: [RequestStatus; 4] = [
    RequestStatus::Submitted,
    RequestStatus::InReview,
    RequestStatus::ActionRequired,
    RequestStatus::Approved,
];

// ---------------------------------------------------------------- comparisons

fn assert_group(actual: &RequestGroup, expected: &RequestGroup, what: &str) {
    assert_eq!((actual.mission, actual.key), (expected.mission, expected.key), "{what}: the group");
    assert_eq!(actual.range, expected.range, "{what}: the range");
    assert_eq!(actual.buckets.len(), expected.buckets.len(), "{what}: the buckets");
    for (i, (a, e)) in actual.buckets.iter().zip(&expected.buckets).enumerate() {
        assert_eq!(a, e, "{what}: bucket {i}");
    }
    assert_eq!(
        (actual.open_at_start, actual.open_now, actual.overdue_now),
        (expected.open_at_start, expected.open_now, expected.overdue_now),
        "{what}: (open_at_start, open_now, overdue_now)"
    );
    assert_eq!(actual, expected, "{what}");
}

fn assert_groups(mut actual: Vec<RequestGroup>, expected: &[RequestGroup], what: &str) -> Vec<RequestGroup> {
    actual.sort_by_key(|g| (g.mission, g.key));
    let keys = |groups: &[RequestGroup]| groups.iter().map(|g| (g.mission, g.key)).collect::<Vec<_>>();
    assert_eq!(keys(&actual), keys(expected), "{what}: the groups");
    for (a, e) in actual.iter().zip(expected) {
        assert_group(a, e, &format!("{what}, group {:?}/{:?}", e.mission, e.key));
    }
    actual
}

fn assert_stages(mut actual: Vec<StageGroup>, expected: &[StageGroup], what: &str) -> Vec<StageGroup> {
    actual.sort_by_key(|s| (s.service_type, s.stage));
    let keys = |stages: &[StageGroup]| stages.iter().map(|s| (s.service_type, s.stage)).collect::<Vec<_>>();
    assert_eq!(keys(&actual), keys(expected), "{what}: the stages");
    for (a, e) in actual.iter().zip(expected) {
        let what = format!("{what}, stage {} of {}", e.stage, e.service_type);
        assert_eq!(a.range, e.range, "{what}: the range");
        assert_eq!(a.buckets.len(), e.buckets.len(), "{what}: the buckets");
        for (i, (x, y)) in a.buckets.iter().zip(&e.buckets).enumerate() {
            assert_eq!(x, y, "{what}: bucket {i}");
        }
    }
    assert_eq!(actual, expected, "{what}");
    actual
}

struct Figures {
    overview: OverviewFigures,
    services: ServiceFigures,
    staff: Vec<RequestGroup>,
}

/// The three reads of `q`, each compared with the brute force over `requests`.
async fn check(db: &Database, requests: &[SeededRequest], q: &AnalyticsQuery, what: &str) -> Figures {
    let overview = AnalyticsRepository::overview(db, q).await.unwrap();
    assert_group(&overview.requests, &expected::overview(requests, q), &format!("{what}: overview"));
    assert_eq!(overview.appointments.len(), q.bucket_count(), "{what}: one seat count per bucket");

    let services = AnalyticsRepository::services(db, q).await.unwrap();
    let groups =
        assert_groups(services.requests, &expected::services(requests, q), &format!("{what}: services"));
    let stages = assert_stages(services.stages, &expected::stages(requests, q), &format!("{what}: stages"));

    let staff = AnalyticsRepository::staff(db, q).await.unwrap();
    let staff = assert_groups(staff, &expected::staff(requests, q), &format!("{what}: staff"));
    Figures { overview, services: ServiceFigures { requests: groups, stages }, staff }
}

/// Within one group, the buckets add up to the range (medians aside).
fn assert_buckets_add_up(g: &RequestGroup, what: &str) {
    let sum = |f: &dyn Fn(&RequestCounts) -> u64| g.buckets.iter().map(f).sum::<u64>();
    assert_eq!(sum(&|c| c.submitted), g.range.submitted, "{what}");
    assert_eq!(sum(&|c| c.completed), g.range.completed, "{what}");
    assert_eq!(sum(&|c| c.rejected), g.range.rejected, "{what}");
    assert_eq!(sum(&|c| c.cancelled), g.range.cancelled, "{what}");
    assert_eq!(sum(&|c| c.on_time), g.range.on_time, "{what}");
    assert_eq!(sum(&|c| c.processing.count), g.range.processing.count, "{what}");
    for status in RequestStatus::ALL {
        assert_eq!(sum(&|c| c.by_status.get(status)), g.range.by_status.get(status), "{what}: {status}");
    }
}

// ---------------------------------------------------------------- catalog and staff

async fn the_catalog_and_the_staff_of_the_scope_are_listed(db: Database) {
    let s = seeded(&db).await;
    // Inactive ones too: a retired service type, a member who left.
    let retired = ServiceType { active: false, ..service_type("a_retired_service") };
    ServiceTypeRepository::insert(&db, &retired, &WriteMeta::default()).await.unwrap();
    let mut catalog = s.generator.service_types().to_vec();
    catalog.push(retired);
    catalog.sort_by(|a, b| a.code.cmp(&b.code));
    assert_eq!(AnalyticsRepository::service_types(&db).await.unwrap(), catalog, "every type, by code");

    let left = s.generator.staff()[1].clone();
    let left = StaffMember { active: false, version: left.version + 1, ..left };
    StaffRepository::update(&db, &left, left.version - 1, &WriteMeta::default()).await.unwrap();
    let mut everyone: Vec<StaffMember> =
        s.generator.staff().iter().map(|m| if m.id == left.id { left.clone() } else { m.clone() }).collect();
    everyone.sort_by_key(|m| m.id);
    assert_eq!(AnalyticsRepository::staff_members(&db, MissionScope::All).await.unwrap(), everyone, "by id");
    for mission in s.generator.missions() {
        let theirs: Vec<_> = everyone.iter().filter(|m| m.mission_id == mission.id).cloned().collect();
        assert!(!theirs.is_empty());
        assert_eq!(
            AnalyticsRepository::staff_members(&db, MissionScope::One(mission.id)).await.unwrap(),
            theirs,
            "{}",
            mission.timezone
        );
    }
    assert!(
        AnalyticsRepository::staff_members(&db, MissionScope::One(MissionId::new()))
            .await
            .unwrap()
            .is_empty()
    );
}

// ---------------------------------------------------------------- the default view

/// All missions, UTC days, the last 30 days ending now: requests still open are counted
/// by their current status, and the missions' figures add up to the global ones.
async fn the_last_thirty_days_of_every_mission_in_utc(db: Database) {
    let s = seeded(&db).await;
    let now = s.now();
    let q = query(MissionScope::All, None, "UTC", last_days("UTC", now, 30), Granularity::Day, now);
    assert_eq!(q.bucket_count(), 30);
    assert_eq!(*q.boundaries.last().unwrap(), now, "a range ending today ends now");

    let all = check(&db, &s.requests, &q, "global, 30 UTC days").await;
    let overview = &all.overview.requests;
    assert_eq!(all.overview.appointments, vec![SeatCounts::default(); 30], "no appointment seeded");
    assert_buckets_add_up(overview, "global");
    // Requests still open: counted now, and by their (open) status in the range.
    assert!(overview.open_now > 0 && overview.range.submitted > 0 && overview.range.closed() > 0);
    assert!(OPEN.iter().map(|st| overview.range.by_status.get(*st)).sum::<u64>() > 0, "{overview:?}");
    for SeededRequest { request, history } in &s.requests {
        assert_eq!(status_at(history, now), Some(request.status), "at now, the current status");
    }
    assert!(all.staff.iter().all(|g| g.mission.is_some()));

    // One mission at a time over the same instants: the global figures are their sums.
    let mut submitted = 0;
    let mut closed = 0;
    let mut open_now = 0;
    let mut by_status = [0; 7];
    let mut staff_groups = 0;
    for mission in s.generator.missions() {
        let one = AnalyticsQuery { missions: MissionScope::One(mission.id), ..q.clone() };
        let figures = check(&db, &s.requests, &one, &format!("{} in UTC", mission.timezone)).await;
        let g = &figures.overview.requests;
        assert!(g.range.submitted < overview.range.submitted, "one mission is not all of them");
        submitted += g.range.submitted;
        closed += g.range.closed();
        open_now += g.open_now;
        for (total, n) in by_status.iter_mut().zip(g.range.by_status.0) {
            *total += n;
        }
        assert!(figures.staff.iter().all(|g| g.mission == Some(mission.id)), "only the mission's staff");
        staff_groups += figures.staff.len();
    }
    assert_eq!(
        (submitted, closed, open_now, by_status, staff_groups),
        (
            overview.range.submitted,
            overview.range.closed(),
            overview.open_now,
            overview.range.by_status.0,
            all.staff.len()
        )
    );
}

// ---------------------------------------------------------------- a mission in its zone

/// One mission in its own zone by ISO weeks over the whole data set: New Delhi's
/// boundaries are at 18:30 UTC, London's and New York's weeks around a change of daylight
/// saving last 167 or 169 hours. No figure includes another mission's rows.
async fn one_mission_in_its_own_zone_by_weeks(db: Database) {
    let s = seeded(&db).await;
    let now = s.now();
    for timezone in ["Asia/Kolkata", "Europe/London", "America/New_York"] {
        let mission = s.mission(timezone);
        let from = today(timezone, s.generator.start());
        let q = query(
            MissionScope::One(mission),
            None,
            timezone,
            (from, today(timezone, now)),
            Granularity::Week,
            now,
        );
        let inner = &q.boundaries[..q.boundaries.len() - 1];
        let whole_days = inner.windows(2).all(|w| (w[1] - w[0]).whole_seconds() % 86_400 == 0);
        match timezone {
            "Asia/Kolkata" => assert!(whole_days && inner.iter().all(|b| b.minute() == 30), "+05:30"),
            // Changes at most 217 days apart: one is in 240 days before the current week.
            "Europe/London" => assert!(!whole_days, "a week of 167 or 169 hours"),
            _ => {}
        }

        let figures = check(&db, &s.requests, &q, &format!("{timezone} by weeks")).await;
        let g = &figures.overview.requests;
        assert_buckets_add_up(g, timezone);
        let theirs = s.requests.iter().filter(|r| r.request.mission_id == mission).count() as u64;
        assert_eq!(g.range.submitted + g.open_at_start, theirs, "{timezone}: every request of the mission");
        assert!(figures.staff.iter().all(|g| g.mission == Some(mission)), "{timezone}: only its staff");
        assert!(!figures.services.stages.is_empty());
    }
}

// ---------------------------------------------------------------- a service type

/// `service_type=`: only that type's requests and spells, every view; the types' figures
/// add up to the unfiltered ones.
async fn a_service_type_filter_narrows_every_view(db: Database) {
    let s = seeded(&db).await;
    let now = s.now();
    let from = today("UTC", s.generator.start());
    let q = query(MissionScope::All, None, "UTC", (from, today("UTC", now)), Granularity::Month, now);
    let all = check(&db, &s.requests, &q, "all types by months").await;

    let mut submitted = 0;
    let mut spells = 0;
    for t in s.generator.service_types() {
        let one = AnalyticsQuery { service_type: Some(t.id), ..q.clone() };
        let figures = check(&db, &s.requests, &one, &format!("{} by months", t.code)).await;
        assert!(figures.services.requests.iter().all(|g| g.key == Some(t.id.0)), "{}", t.code);
        assert!(figures.services.stages.iter().all(|g| g.service_type == t.id), "{}", t.code);
        assert_eq!(figures.overview.appointments, vec![SeatCounts::default(); q.bucket_count()]);
        submitted += figures.overview.requests.range.submitted;
        spells += figures.services.stages.iter().map(|g| g.range.count).sum::<u64>();
    }
    assert_eq!(submitted, all.overview.requests.range.submitted);
    assert_eq!(spells, all.services.stages.iter().map(|g| g.range.count).sum::<u64>());

    // A type and a mission together, in the mission's zone, by days.
    let mission = s.mission("Asia/Kolkata");
    let visa = s.generator.service_types().iter().find(|t| t.code.ends_with("_visa")).unwrap();
    let q = query(
        MissionScope::One(mission),
        Some(visa.id),
        "Asia/Kolkata",
        last_days("Asia/Kolkata", now, 60),
        Granularity::Day,
        now,
    );
    check(&db, &s.requests, &q, "visas of New Delhi by days").await;
    // A type nobody asked for: nothing but the overview's zeros.
    let none = AnalyticsQuery { service_type: Some(ServiceTypeId::new()), ..q.clone() };
    let figures = check(&db, &s.requests, &none, "an unknown type").await;
    assert_eq!(figures.overview.requests.range, RequestCounts::default());
    assert_eq!(figures.overview.requests.open_now, 0);
    assert!(figures.services.requests.is_empty() && figures.services.stages.is_empty());
    assert!(figures.staff.is_empty());
}

// ---------------------------------------------------------------- empty ranges

fn zero_group(buckets: usize) -> RequestGroup {
    RequestGroup { buckets: vec![RequestCounts::default(); buckets], ..RequestGroup::default() }
}

/// A database with nothing in it, and a range before any data: zero counts, null
/// medians, empty buckets present; only the figures taken now can be non-zero.
async fn empty_ranges_count_nothing(db: Database) {
    let now = now();
    let q = query(MissionScope::All, None, "UTC", last_days("UTC", now, 30), Granularity::Day, now);
    for q in [q.clone(), AnalyticsQuery { missions: MissionScope::One(MissionId::new()), ..q.clone() }] {
        let overview = AnalyticsRepository::overview(&db, &q).await.unwrap();
        assert_eq!(
            overview,
            OverviewFigures { requests: zero_group(30), appointments: vec![SeatCounts::default(); 30] }
        );
        let services = AnalyticsRepository::services(&db, &q).await.unwrap();
        assert!(services.requests.is_empty() && services.stages.is_empty(), "{services:?}");
        assert!(AnalyticsRepository::staff(&db, &q).await.unwrap().is_empty());
    }

    let s = seeded(&db).await;
    let now = s.now();
    let before = today("UTC", s.generator.start()) - Duration::days(1);
    for (timezone, granularity, days) in [
        ("UTC", Granularity::Day, 30),
        ("Asia/Kolkata", Granularity::Week, 90),
        ("UTC", Granularity::Month, 400),
    ] {
        let range = (before - Duration::days(days - 1), before);
        for missions in [MissionScope::All, MissionScope::One(s.mission("Europe/London"))] {
            let q = query(missions, None, timezone, range, granularity, now);
            let what = format!("before the data, {timezone} {granularity:?} {missions:?}");
            let figures = check(&db, &s.requests, &q, &what).await;
            let g = &figures.overview.requests;
            assert_eq!(
                (&g.range, &g.buckets, g.open_at_start),
                (&RequestCounts::default(), &vec![RequestCounts::default(); q.bucket_count()], 0),
                "{what}"
            );
            assert!(g.open_now > 0, "{what}: taken now");
            assert!(figures.services.stages.is_empty(), "{what}");
            for group in figures.services.requests.iter().chain(&figures.staff) {
                assert_eq!((&group.range, group.open_at_start), (&RequestCounts::default(), 0), "{what}");
                assert!(group.open_now > 0, "{what}: listed for what is open now only");
            }
        }
    }
}

// ---------------------------------------------------------------- a day in two zones

/// The same calendar dates, two weeks ending two weeks ago, in Paris and in New Delhi:
/// different instants, different figures, each what the brute force counts. The range
/// ends before now, so statuses are those at its end, not the current ones.
async fn the_same_dates_in_two_zones_are_different_instants(db: Database) {
    let s = seeded(&db).await;
    let now = s.now();
    let to = today("UTC", now) - Duration::days(14);
    let range = (to - Duration::days(13), to);
    let mut figures = Vec::new();
    for timezone in ["Europe/Paris", "Asia/Kolkata"] {
        for granularity in [Granularity::Day, Granularity::Week] {
            let q = query(MissionScope::All, None, timezone, range, granularity, now);
            assert!(*q.boundaries.last().unwrap() < now);
            let f = check(&db, &s.requests, &q, &format!("{timezone} {granularity:?}")).await;
            assert_buckets_add_up(&f.overview.requests, timezone);
            figures.push((q, f));
        }
    }
    let paris = &figures[0].1.overview.requests;
    let delhi = &figures[2].1.overview.requests;
    assert_ne!(figures[0].0.boundaries, figures[2].0.boundaries);
    assert_ne!(
        paris.buckets.iter().map(|b| b.submitted).collect::<Vec<_>>(),
        delhi.buckets.iter().map(|b| b.submitted).collect::<Vec<_>>(),
        "New York's afternoons are in one Paris day and the next New Delhi day"
    );

    // The coverage of the case: some request of the range changed status after its end.
    let e = *figures[0].0.boundaries.last().unwrap();
    let start = figures[0].0.boundaries[0];
    assert!(
        s.requests.iter().any(|r| {
            (start..e).contains(&r.request.submitted_at) && status_at(&r.history, e) != Some(r.request.status)
        }),
        "a request open at the end of the range and closed since"
    );
    assert!(OPEN.iter().map(|st| paris.range.by_status.get(*st)).sum::<u64>() > 0);
}

// ---------------------------------------------------------------- appointments

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fate {
    Booked,
    Attended,
    NoShow,
    Cancelled,
}

/// A slot to store: mission, citizen, day (from the first day), minutes after UTC
/// midnight, capacity, the fates of its bookings, whether it is closed in the end.
struct Planned {
    mission: MissionId,
    citizen: CitizenId,
    day: i64,
    minute: i64,
    capacity: u32,
    fates: Vec<Fate>,
    closed: bool,
}

fn entry_of(a: &Appointment) -> AppointmentEntry {
    let change = match (a.status, a.cancelled_by) {
        (AppointmentStatus::Booked, _) => AppointmentChange::Booked,
        (AppointmentStatus::Attended, _) => AppointmentChange::Attended,
        (AppointmentStatus::NoShow, _) => AppointmentChange::NoShow,
        (AppointmentStatus::Cancelled, Some(CancelledBy::Mission)) => AppointmentChange::CancelledByMission,
        (AppointmentStatus::Cancelled, _) => AppointmentChange::Cancelled,
    };
    AppointmentEntry::of(a, change, a.booked_by).unwrap()
}

/// Slots and appointments in the past, as they would be after the days went by: booked
/// two days ahead, then attended, missed, cancelled, or still not marked.
async fn appointments_fill_the_overview_per_bucket(db: Database) {
    let here = stored_mission(&db, "fr-appointments").await;
    let there = stored_mission(&db, "de-appointments").await;
    let passport = stored_service_type(&db, "passport").await;
    let alice = stored_citizen(&db, here.id, "AP0001").await.id;
    let bob = stored_citizen(&db, there.id, "AP0002").await.id;
    let now = now();
    let first_day = today("UTC", now) - Duration::days(10);
    let midnight = first_day.midnight().assume_utc();
    use Fate::*;
    let planned = [
        Planned {
            mission: here.id,
            citizen: alice,
            day: 0,
            minute: 600,
            capacity: 3,
            fates: vec![Attended, NoShow, Cancelled],
            closed: false,
        },
        Planned {
            mission: here.id,
            citizen: alice,
            day: 0,
            minute: 840,
            capacity: 2,
            fates: vec![Booked],
            closed: false,
        },
        // Closed from the start: no seat offered.
        Planned {
            mission: here.id,
            citizen: alice,
            day: 1,
            minute: 540,
            capacity: 4,
            fates: vec![],
            closed: true,
        },
        // 23:30 UTC: the UTC day 1, the Paris day 2.
        Planned {
            mission: here.id,
            citizen: alice,
            day: 1,
            minute: 1410,
            capacity: 1,
            fates: vec![NoShow],
            closed: false,
        },
        // Exactly at a UTC boundary: the later bucket.
        Planned {
            mission: here.id,
            citizen: alice,
            day: 2,
            minute: 0,
            capacity: 2,
            fates: vec![Attended, Attended],
            closed: false,
        },
        // Its bookings cancelled, then closed: neither seats nor attendance.
        Planned {
            mission: here.id,
            citizen: alice,
            day: 3,
            minute: 660,
            capacity: 2,
            fates: vec![Cancelled, Cancelled],
            closed: true,
        },
        Planned {
            mission: here.id,
            citizen: alice,
            day: 3,
            minute: 720,
            capacity: 5,
            fates: vec![],
            closed: false,
        },
        // Another mission, the same day.
        Planned {
            mission: there.id,
            citizen: bob,
            day: 0,
            minute: 600,
            capacity: 5,
            fates: vec![NoShow, Attended, Booked],
            closed: false,
        },
    ];

    // (mission, starts_at, capacity, booked, open) and (mission, starts_at, status).
    let mut slots: Vec<(MissionId, OffsetDateTime, u32, u32, bool)> = Vec::new();
    let mut appointments: Vec<(MissionId, OffsetDateTime, Fate)> = Vec::new();
    for p in &planned {
        let starts_at = midnight + Duration::days(p.day) + Duration::minutes(p.minute);
        let booked_at = starts_at - Duration::days(2);
        let slot = Slot {
            id: SlotId::new(),
            mission_id: p.mission,
            starts_at,
            ends_at: starts_at + Duration::minutes(30),
            capacity: p.capacity,
            booked: 0,
            service_types: vec![passport.id],
            open: !(p.closed && p.fates.is_empty()),
            cutoffs: Cutoffs::default(),
            version: 1,
            created_at: booked_at - Duration::days(1),
            updated_at: booked_at - Duration::days(1),
        };
        let upsert = SlotUpsert { slots: vec![(slot.clone(), None)], cancelled: vec![] };
        AppointmentRepository::upsert_slots(&db, &upsert, &WriteMeta::default()).await.unwrap();
        let subject = Subject { kind: PrincipalKind::Citizen, id: PrincipalId(p.citizen.0) };
        for fate in &p.fates {
            let mut a = Appointment::book(&slot, p.citizen, passport.id, None, subject, booked_at);
            let outcome =
                AppointmentRepository::book(&db, &a, &entry_of(&a), booked_at, &WriteMeta::default())
                    .await
                    .unwrap();
            assert_eq!(outcome, BookOutcome::Booked);
            match fate {
                Booked => {}
                Attended | NoShow => {
                    let action = if *fate == Attended {
                        AppointmentAction::Attend
                    } else {
                        AppointmentAction::MarkNoShow
                    };
                    a.record_attendance(Role::Staff, action, starts_at + Duration::minutes(5)).unwrap();
                    AppointmentRepository::record_attendance(
                        &db,
                        &a,
                        &entry_of(&a),
                        1,
                        &WriteMeta::default(),
                    )
                    .await
                    .unwrap();
                }
                Cancelled => {
                    a.cancel(Role::Staff, &slot, booked_at + Duration::hours(1)).unwrap();
                    AppointmentRepository::cancel(&db, &a, &entry_of(&a), 1, &WriteMeta::default())
                        .await
                        .unwrap();
                }
            }
            appointments.push((p.mission, starts_at, *fate));
        }
        if p.closed && !p.fates.is_empty() {
            let current = AppointmentRepository::get_slot(&db, slot.id).await.unwrap().unwrap();
            let closed = Slot { open: false, version: current.version + 1, ..current.clone() };
            let upsert = SlotUpsert { slots: vec![(closed, Some(current.version))], cancelled: vec![] };
            AppointmentRepository::upsert_slots(&db, &upsert, &WriteMeta::default()).await.unwrap();
        }
        let stored = AppointmentRepository::get_slot(&db, slot.id).await.unwrap().unwrap();
        let holding = p.fates.iter().filter(|f| **f != Cancelled).count() as u32;
        assert_eq!((stored.booked, stored.open), (holding, !p.closed), "the fixture is what it says");
        slots.push((p.mission, starts_at, p.capacity, holding, !p.closed));
    }

    // The brute force: open slots and appointments by `starts_at` in each bucket.
    let seats = |q: &AnalyticsQuery| -> Vec<SeatCounts> {
        let scoped =
            |m: MissionId| matches!(q.missions, MissionScope::All) || q.missions == MissionScope::One(m);
        q.boundaries
            .windows(2)
            .map(|w| {
                let inside = |t: OffsetDateTime| w[0] <= t && t < w[1];
                let mut c = SeatCounts::default();
                for (m, at, capacity, booked, open) in &slots {
                    if scoped(*m) && inside(*at) && *open {
                        c.booked += u64::from(*booked);
                        c.capacity += u64::from(*capacity);
                    }
                }
                for (m, at, fate) in &appointments {
                    if scoped(*m) && inside(*at) {
                        c.attended += u64::from(*fate == Attended);
                        c.no_show += u64::from(*fate == NoShow);
                    }
                }
                c
            })
            .collect()
    };

    let range = (first_day, first_day + Duration::days(4));
    let cases = [
        (query(MissionScope::All, None, "UTC", range, Granularity::Day, now), "all, UTC days"),
        (query(MissionScope::One(here.id), None, "UTC", range, Granularity::Day, now), "Paris, UTC days"),
        (query(MissionScope::One(here.id), None, "Europe/Paris", range, Granularity::Day, now), "Paris days"),
        (query(MissionScope::One(there.id), None, "UTC", range, Granularity::Week, now), "the other, weeks"),
        (
            query(
                MissionScope::One(here.id),
                Some(ServiceTypeId::new()),
                "UTC",
                range,
                Granularity::Day,
                now,
            ),
            "a type filter does not apply to appointments",
        ),
    ];
    for (q, what) in &cases {
        let overview = AnalyticsRepository::overview(&db, q).await.unwrap();
        assert_eq!(overview.appointments, seats(q), "{what}");
        assert_eq!(overview.requests, expected::overview(&[], q), "{what}: no request");
    }
    // The figures the fixture was built for, spelled out.
    let all = seats(&cases[0].0);
    assert_eq!(
        all,
        [
            SeatCounts { booked: 2 + 1 + 3, capacity: 3 + 2 + 5, attended: 1 + 1, no_show: 1 + 1 },
            SeatCounts { booked: 1, capacity: 1, attended: 0, no_show: 1 },
            SeatCounts { booked: 2, capacity: 2, attended: 2, no_show: 0 },
            SeatCounts { booked: 0, capacity: 5, attended: 0, no_show: 0 },
            SeatCounts::default(),
        ]
    );
    assert_ne!(seats(&cases[1].0), seats(&cases[2].0), "23:30 UTC is tomorrow in Paris");
}

// ---------------------------------------------------------------- live transitions

/// What the stored requests are now, read back through the request repository.
async fn stored_requests(db: &Database, ids: &[RequestId]) -> Vec<SeededRequest> {
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        let request = RequestRepository::get(db, *id).await.unwrap().unwrap();
        let history = db.history(*id).await.unwrap();
        out.push(SeededRequest { request, history });
    }
    out
}

/// A step of a script: who does what, hours after the submission.
type Step = (Role, Action, f64);

/// Applies `action` at `at` and stores it as the use case does.
async fn step(db: &Database, r: &mut ServiceRequest, role: Role, action: Action, at: OffsetDateTime) {
    let version = r.version;
    let actor = match role {
        Role::Citizen => Subject { kind: PrincipalKind::Citizen, id: PrincipalId(r.citizen_id.0) },
        Role::Staff => Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() },
    };
    let entry = r.apply(role, action, Some(actor), Some("live".to_owned()), at).unwrap();
    RequestRepository::update(db, r, version, Some(entry), &WriteMeta::default()).await.unwrap();
}

/// The next step towards completion: the next stage, the approval, the completion.
fn forward(r: &ServiceRequest) -> Action {
    let allowed = r.allowed_actions(Role::Staff);
    [
        Action::AdvanceStage,
        Action::To(RequestStatus::Approved),
        Action::To(RequestStatus::Completed),
        Action::To(RequestStatus::InReview),
    ]
    .into_iter()
    .find(|a| allowed.contains(a))
    .unwrap()
}

/// The stage spells are kept as requests move (`RequestRepository::update`): spells of
/// the seeded data set, of seeded requests moved on live, and of new requests walked
/// through their stages (sub-second instants, two entries at one instant, an
/// `action_required` round trip, a spell ending exactly at a boundary, reassignments),
/// all equal to the brute force over what the request repository reads back, row for row
/// in `request_stage_spells`; rebuilding the projection from the history changes nothing.
async fn stage_spells_follow_live_transitions(db: Database) {
    let s = seeded(&db).await;
    let now = s.now() + Duration::hours(1);
    let mut ids: Vec<RequestId> = s.requests.iter().map(|r| r.request.id).collect();

    // Seeded open requests moved on after the data set's `now`: most to completion.
    let open: Vec<&SeededRequest> =
        s.requests.iter().filter(|r| r.request.status.is_open()).take(24).collect();
    assert_eq!(open.len(), 24);
    for (i, seeded) in open.iter().enumerate() {
        let mut r = seeded.request.clone();
        let mut at = s.now() + Duration::seconds(i as i64 * 60);
        let steps = if i % 3 == 0 { 1 } else { 12 };
        for _ in 0..steps {
            if r.status.is_final() {
                break;
            }
            at += Duration::seconds(2);
            let action = forward(&r);
            step(&db, &mut r, Role::Staff, action, at).await;
        }
    }
    // Reassignments (no history entry): an open request and a closed one change hands, a
    // closed one is left to nobody.
    let open_one =
        s.requests.iter().find(|r| r.request.status.is_open() && r.request.assignee_id.is_some()).unwrap();
    let mut closed =
        s.requests.iter().filter(|r| r.request.status.is_final() && r.request.assignee_id.is_some());
    for (r, to_nobody) in [(open_one, false), (closed.next().unwrap(), false), (closed.next().unwrap(), true)]
    {
        let mut r = RequestRepository::get(&db, r.request.id).await.unwrap().unwrap();
        let other = s
            .generator
            .staff()
            .iter()
            .find(|m| m.mission_id == r.mission_id && Some(m.id) != r.assignee_id)
            .unwrap()
            .id;
        let version = r.version;
        r.reassign((!to_nobody).then_some(other), now - Duration::minutes(1)).unwrap();
        RequestRepository::update(&db, &r, version, None, &WriteMeta::default()).await.unwrap();
    }

    // New requests of a three-stage type, walked through at sub-second instants.
    let mission = stored_mission(&db, "fr-live").await;
    let mut live_type = service_type("live_passport");
    live_type.stages.push(Stage { name: "Dispatch".to_owned(), description: String::new() });
    ServiceTypeRepository::insert(&db, &live_type, &WriteMeta::default()).await.unwrap();
    let citizen = stored_citizen(&db, mission.id, "LV0001").await;
    let midnight = (today("UTC", now) - Duration::days(6)).midnight().assume_utc();
    let hours = |h: f64| Duration::seconds_f64(h * 3_600.0);
    use RequestStatus::*;
    let (staff, citizen_role) = (Role::Staff, Role::Citizen);
    let scripts: Vec<(OffsetDateTime, Vec<Step>)> = vec![
        // Three stages, the approval and the last advance at one instant.
        (
            midnight - hours(50.3) + Duration::milliseconds(700),
            vec![
                (staff, Action::To(InReview), 1.1),
                (staff, Action::AdvanceStage, 5.25),
                (staff, Action::To(Approved), 6.0),
                (staff, Action::AdvanceStage, 6.0),
                (staff, Action::To(Completed), 30.9),
            ],
        ),
        // An `action_required` round trip in stage 0, then rejected there.
        (
            midnight - hours(80.0) + Duration::milliseconds(700),
            vec![
                (staff, Action::To(InReview), 2.0),
                (staff, Action::To(ActionRequired), 3.0),
                (staff, Action::To(InReview), 50.5),
                (staff, Action::To(Rejected), 51.0),
            ],
        ),
        // Cancelled by the citizen before any review.
        (
            midnight - hours(4.7) + Duration::milliseconds(700),
            vec![(citizen_role, Action::To(Cancelled), 0.4)],
        ),
        // Open in stage 1: only stage 0 ended.
        (
            midnight - hours(30.0) + Duration::milliseconds(700),
            vec![(staff, Action::To(InReview), 1.0), (staff, Action::AdvanceStage, 26.0)],
        ),
        // Never touched: no spell.
        (midnight - hours(3.0) + Duration::milliseconds(700), vec![]),
        // Stage 0 left exactly at a UTC midnight (the later bucket), then to the end.
        (
            midnight - hours(3.0) + Duration::milliseconds(250),
            vec![
                (staff, Action::To(InReview), 1.0),
                (staff, Action::AdvanceStage, 3.0 - 0.25 / 3_600.0),
                (staff, Action::AdvanceStage, 20.0),
                (staff, Action::To(Approved), 21.0),
                (staff, Action::To(Completed), 22.0),
            ],
        ),
        // Two advances at one instant (a spell of 0 seconds in stage 1), then cancelled by
        // staff once approved, in stage 2.
        (
            midnight + hours(1.0) + Duration::milliseconds(700),
            vec![
                (staff, Action::To(InReview), 0.5),
                (staff, Action::AdvanceStage, 1.5),
                (staff, Action::AdvanceStage, 1.5),
                (staff, Action::To(Approved), 3.5),
                (staff, Action::To(Cancelled), 4.5),
            ],
        ),
    ];
    for (submitted_at, steps) in scripts {
        let r = ServiceRequest {
            submitted_at,
            sla_due_at: submitted_at + Duration::days(2),
            updated_at: submitted_at,
            ..request(mission.id, citizen.id, &live_type)
        };
        let mut r = stored_request(&db, r).await;
        for (role, action, after) in steps {
            step(&db, &mut r, role, action, submitted_at + hours(after)).await;
        }
        ids.push(r.id);
    }

    let stored = stored_requests(&db, &ids).await;
    let live = &stored[stored.len() - 7..];
    assert_eq!(live.iter().map(|r| r.history.len()).sum::<usize>(), 6 + 5 + 2 + 3 + 1 + 6 + 6);
    let queries = [
        (
            query(MissionScope::All, None, "UTC", last_days("UTC", now, 30), Granularity::Day, now),
            "all, UTC days",
        ),
        (
            query(
                MissionScope::One(mission.id),
                None,
                "Europe/Paris",
                last_days("Europe/Paris", now, 14),
                Granularity::Day,
                now,
            ),
            "the live mission, Paris days",
        ),
        (
            query(
                MissionScope::All,
                Some(live_type.id),
                "UTC",
                last_days("UTC", now, 10),
                Granularity::Week,
                now,
            ),
            "the live type, UTC weeks",
        ),
    ];
    let mut before = Vec::new();
    for (q, what) in &queries {
        let figures = check(&db, &stored, q, what).await;
        assert!(!figures.services.stages.is_empty(), "{what}");
        before.push(figures);
    }

    // The projection as stored: the brute force's spells, request by request, in order.
    let mut spells: Vec<(RequestId, u32, StageSpell)> = stored
        .iter()
        .flat_map(|r| {
            let spells = stage_spells(&r.history, r.request.closed_at);
            spells.into_iter().enumerate().map(|(i, spell)| (r.request.id, i as u32, spell))
        })
        .collect();
    spells.sort_by_key(|(id, ordinal, _)| (*id, *ordinal));
    assert_eq!(db.stored_stage_spells().await.unwrap(), spells, "the rows the writes maintained");
    // The rollup by day the writes appended to (the views over all missions read it) is
    // what a rebuild from the projection gives.
    let appended = db.stored_spell_days().await.unwrap();
    assert!(db.rebuild_spell_days().await.unwrap() > 0);
    assert_eq!(db.stored_spell_days().await.unwrap(), appended, "the rollup the writes maintained");
    // Rebuilt from the history: the same rows, the same figures.
    assert_eq!(db.recompute_stage_spells().await.unwrap(), spells.len() as u64);
    assert_eq!(db.stored_stage_spells().await.unwrap(), spells, "the rows rebuilt");
    for ((q, what), before) in queries.iter().zip(&before) {
        let after = check(&db, &stored, q, &format!("{what}, rebuilt")).await;
        assert_eq!(after.overview, before.overview, "{what}");
        assert_eq!(after.services.requests, before.services.requests, "{what}");
        assert_eq!(after.services.stages, before.services.stages, "{what}");
        assert_eq!(after.staff, before.staff, "{what}");
    }
    let live_stages = expected::stages(
        live,
        &query(MissionScope::All, None, "UTC", last_days("UTC", now, 10), Granularity::Day, now),
    );
    assert_eq!(
        live_stages.iter().map(|g| (g.stage, g.range.count)).collect::<Vec<_>>(),
        [(0, 6), (1, 3), (2, 3)],
        "the fixture's spells: stage 0 of all but the untouched one, stages 1 and 2 of three"
    );
    let spells: Vec<_> = live.iter().flat_map(|r| stage_spells(&r.history, r.request.closed_at)).collect();
    assert!(spells.iter().any(|spell| spell.seconds() == 0), "a spell of 0 seconds");
    assert!(spells.iter().any(|spell| spell.left_at == midnight), "a spell ending at a boundary");
}

on_both_databases!(
    the_catalog_and_the_staff_of_the_scope_are_listed,
    the_last_thirty_days_of_every_mission_in_utc,
    one_mission_in_its_own_zone_by_weeks,
    a_service_type_filter_narrows_every_view,
    empty_ranges_count_nothing,
    the_same_dates_in_two_zones_are_different_instants,
    appointments_fill_the_overview_per_bucket,
    stage_spells_follow_live_transitions,
);
