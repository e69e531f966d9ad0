//! The analytics reads (`AnalyticsRepository`, docs/analytics.md) on both databases: every
//! figure is computed again here, by brute force over the generated demo data set (or the
//! rows a test wrote), with plain loops that follow docs/analytics.md literally, and
//! compared whole with what the database computed. The cases: the last 30 days in UTC
//! (requests still open), one mission in its own zone by weeks (+05:30, daylight saving),
//! a service-type filter, empty ranges, the same dates cut in two zones, the appointments
//! of the overview, the scope of one mission, and the stage spells' projection under live
//! transitions.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../common/mod.rs"]
mod common;

mod appointments;
/// The brute force: docs/analytics.md restated as loops.
mod expected;
mod live;
mod now;

use common::*;
use consular_ports::Consistency;

use consular_application::demo::{DemoPlan, DemoPorts, DemoService, Generator};
use consular_db::Database;
use consular_domain::analytics::{
    Granularity, Period, StageSpell, buckets, local_date, stage_spells, status_at,
};
use consular_domain::{
    Action, Appointment, AppointmentAction, AppointmentChange, AppointmentEntry, AppointmentStatus,
    CancelledBy, CitizenId, MissionId, PrincipalId, PrincipalKind, RequestId, RequestStatus, Role,
    ServiceRequest, ServiceType, ServiceTypeId, Slot, StaffMember, Stage, Subject,
};
use consular_ports::{
    AnalyticsQuery, AnalyticsRepository, AppointmentRepository, BookOutcome, Clock, MissionScope,
    OverviewFigures, RequestCounts, RequestGroup, RequestRepository, SeatCounts, SeededRequest,
    ServiceFigures, ServiceTypeRepository, SlotUpsert, StaffRepository, StageGroup, SystemClock, WriteMeta,
};
use std::sync::Arc;
use time::{Date, Duration, OffsetDateTime};

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
    DemoService::new(DemoPorts { demo: Arc::new(db.clone()), clock: Arc::new(SystemClock) })
        .seed_plan(plan, |_| {})
        .await
        .unwrap();
    let requests = generator.requests(1_000).flat_map(|b| b.unwrap()).collect();
    Seeded { generator, requests }
}

fn today(timezone: &str, now: OffsetDateTime) -> Date {
    local_date(timezone, now).unwrap()
}

/// The query of the days `from..=to` in `timezone`: the buckets' boundaries, the last one
/// clipped to `now` (as the repository clips them to the instant it reads, `now` here,
/// which the brute force takes them at).
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
    AnalyticsQuery { missions, service_type, boundaries }
}

/// A clock stopped at `now`: the instant the repository reads inside its snapshot.
struct At(OffsetDateTime);

impl Clock for At {
    fn now(&self) -> OffsetDateTime {
        self.0
    }
}

fn at(now: OffsetDateTime) -> Arc<dyn Clock> {
    Arc::new(At(now))
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
async fn check(
    db: &Database,
    requests: &[SeededRequest],
    q: &AnalyticsQuery,
    now: OffsetDateTime,
    what: &str,
) -> Figures {
    let overview = AnalyticsRepository::overview(db, q, &at(now), Consistency::Latest).await.unwrap();
    assert_eq!(overview.generated_at, now, "{what}: the instant read from the clock");
    assert_group(&overview.requests, &expected::overview(requests, q, now), &format!("{what}: overview"));
    assert_eq!(overview.appointments.len(), q.bucket_count(), "{what}: one seat count per bucket");

    let services = AnalyticsRepository::services(db, q, &at(now), Consistency::Latest).await.unwrap();
    assert_eq!(services.generated_at, now, "{what}");
    let expected = expected::services(requests, q, now);
    let groups = assert_groups(services.requests, &expected, &format!("{what}: services"));
    let stages = assert_stages(services.stages, &expected::stages(requests, q), &format!("{what}: stages"));

    let staff = AnalyticsRepository::staff(db, q, &at(now), Consistency::Latest).await.unwrap();
    assert_eq!(staff.generated_at, now, "{what}");
    let staff = assert_groups(staff.groups, &expected::staff(requests, q, now), &format!("{what}: staff"));
    Figures { overview, services: ServiceFigures { generated_at: now, requests: groups, stages }, staff }
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

    let all = check(&db, &s.requests, &q, now, "global, 30 UTC days").await;
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
        let figures = check(&db, &s.requests, &one, now, &format!("{} in UTC", mission.timezone)).await;
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

        let figures = check(&db, &s.requests, &q, now, &format!("{timezone} by weeks")).await;
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
    let all = check(&db, &s.requests, &q, now, "all types by months").await;

    let mut submitted = 0;
    let mut spells = 0;
    for t in s.generator.service_types() {
        let one = AnalyticsQuery { service_type: Some(t.id), ..q.clone() };
        let figures = check(&db, &s.requests, &one, now, &format!("{} by months", t.code)).await;
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
    check(&db, &s.requests, &q, now, "visas of New Delhi by days").await;
    // A type nobody asked for: nothing but the overview's zeros.
    let none = AnalyticsQuery { service_type: Some(ServiceTypeId::new()), ..q.clone() };
    let figures = check(&db, &s.requests, &none, now, "an unknown type").await;
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
        let overview = AnalyticsRepository::overview(&db, &q, &at(now), Consistency::Latest).await.unwrap();
        assert_eq!(
            overview,
            OverviewFigures {
                generated_at: now,
                requests: zero_group(30),
                appointments: vec![SeatCounts::default(); 30]
            }
        );
        let services = AnalyticsRepository::services(&db, &q, &at(now), Consistency::Latest).await.unwrap();
        assert!(services.requests.is_empty() && services.stages.is_empty(), "{services:?}");
        assert!(
            AnalyticsRepository::staff(&db, &q, &at(now), Consistency::Latest)
                .await
                .unwrap()
                .groups
                .is_empty()
        );
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
            let figures = check(&db, &s.requests, &q, now, &what).await;
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
            let f = check(&db, &s.requests, &q, now, &format!("{timezone} {granularity:?}")).await;
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

on_both_databases!(
    the_catalog_and_the_staff_of_the_scope_are_listed,
    the_last_thirty_days_of_every_mission_in_utc,
    one_mission_in_its_own_zone_by_weeks,
    a_service_type_filter_narrows_every_view,
    empty_ranges_count_nothing,
    the_same_dates_in_two_zones_are_different_instants,
);
