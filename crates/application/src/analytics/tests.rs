//! The analytics use cases on mocked ports: who is refused before anything is read, the
//! zone and the buckets a view asks the repository for, and the figures made from its
//! counts (backlogs carried forward, rates null on zero, shares over the mission's whole
//! open load, which services and members are listed).

use super::*;
use crate::fixtures::{admin_with, any_mission, principal, service_type};
use consular_domain::analytics::{DurationSummary, Granularity};
use consular_domain::{PrincipalKind, RequestStatus, ServiceType, StaffMember};
use consular_ports::{
    MockAnalyticsRepository, MockClock, MockMissionRepository, MockServiceTypeRepository, OverviewFigures,
    RequestCounts, RequestGroup, SeatCounts, ServiceFigures as RawServices, StaffGroups, StageGroup,
    StatusCounts,
};
use time::macros::datetime;
use uuid::Uuid;

/// 10:30 in Paris (UTC+1 in November).
const NOW: OffsetDateTime = datetime!(2026-11-24 09:30 UTC);

fn clock() -> Arc<MockClock> {
    let mut clock = MockClock::new();
    clock.expect_now().return_const(NOW);
    Arc::new(clock)
}

fn service(analytics: MockAnalyticsRepository, missions: MockMissionRepository) -> AnalyticsService {
    with_catalog(analytics, missions, MockServiceTypeRepository::new())
}

fn with_catalog(
    analytics: MockAnalyticsRepository,
    missions: MockMissionRepository,
    service_types: MockServiceTypeRepository,
) -> AnalyticsService {
    AnalyticsService::new(AnalyticsPorts {
        analytics: Arc::new(analytics),
        missions: Arc::new(missions),
        service_types: Arc::new(service_types),
        clock: clock(),
    })
}

fn request(from: &str, to: &str, granularity: &str) -> ViewRequest {
    ViewRequest {
        from: Some(from.into()),
        to: Some(to.into()),
        granularity: Some(granularity.into()),
        ..ViewRequest::default()
    }
}

fn counts(submitted: u64, completed: u64, rejected: u64, on_time: u64, seconds: Vec<i64>) -> RequestCounts {
    let mut by_status = StatusCounts::default();
    by_status.add(RequestStatus::Submitted, submitted);
    RequestCounts {
        submitted,
        by_status,
        completed,
        rejected,
        cancelled: 0,
        on_time,
        processing: DurationSummary::of(seconds),
    }
}

#[tokio::test]
async fn staff_and_citizens_are_refused_before_anything_is_read() {
    let mission = MissionId::new();
    for actor in [
        principal(PrincipalKind::Staff, Uuid::now_v7(), "staff", Some(mission)),
        principal(PrincipalKind::Citizen, Uuid::now_v7(), "citizen", Some(mission)),
    ] {
        // No expectation is set: any read would panic.
        let service = service(MockAnalyticsRepository::new(), MockMissionRepository::new());
        let refused = service.overview(&actor, ViewRequest::default()).await.unwrap_err();
        assert!(matches!(refused, ServiceError::InsufficientScope { .. }), "{refused:?}");
        assert!(service.staff(&actor, ViewRequest::default()).await.is_err());
        assert!(service.services(&actor, ViewRequest::default()).await.is_err());
    }
}

#[tokio::test]
async fn a_mission_admin_asking_for_another_mission_is_forbidden_not_redirected() {
    let own = MissionId::new();
    let service = service(MockAnalyticsRepository::new(), MockMissionRepository::new());
    let asked = ViewRequest { mission_id: Some(MissionId::new()), ..ViewRequest::default() };
    let refused = service.overview(&admin_with("admin", Some(own)), asked).await.unwrap_err();
    assert!(matches!(refused, ServiceError::Forbidden(_)), "{refused:?}");
}

#[tokio::test]
async fn an_unknown_mission_or_service_type_and_a_bad_period_are_validation_errors() {
    let mut missions = MockMissionRepository::new();
    missions.expect_get().returning(|_| Ok(None));
    let unknown_mission = service(MockAnalyticsRepository::new(), missions);
    let asked = ViewRequest { mission_id: Some(MissionId::new()), ..ViewRequest::default() };
    let ServiceError::Validation(errors) =
        unknown_mission.overview(&admin_with("admin", None), asked).await.unwrap_err()
    else {
        panic!("not a validation error")
    };
    assert_eq!(errors.0[0].pointer, "/mission_id");

    let mut catalog = MockServiceTypeRepository::new();
    catalog.expect_get().returning(|_| Ok(None));
    let unknown_type = with_catalog(MockAnalyticsRepository::new(), any_mission(), catalog);
    let asked = ViewRequest { service_type_id: Some(ServiceTypeId::new()), ..ViewRequest::default() };
    let ServiceError::Validation(errors) =
        unknown_type.overview(&admin_with("admin", None), asked).await.unwrap_err()
    else {
        panic!("not a validation error")
    };
    assert_eq!(errors.0[0].pointer, "/service_type_id");

    let period = service(MockAnalyticsRepository::new(), any_mission());
    let ServiceError::Validation(errors) = period
        .overview(&admin_with("admin", None), request("2026-11-25", "2026-11-20", "hour"))
        .await
        .unwrap_err()
    else {
        panic!("not a validation error")
    };
    let found: Vec<(&str, &str)> = errors.0.iter().map(|e| (e.pointer.as_str(), e.code.as_str())).collect();
    assert_eq!(found, [("/granularity", "invalid"), ("/from", "in_future")]);
}

#[tokio::test]
async fn a_mission_view_is_bucketed_in_its_zone_up_to_now_and_its_backlog_carried_forward() {
    let mission = MissionId::new();
    let mut analytics = MockAnalyticsRepository::new();
    analytics
        .expect_overview()
        .withf(move |query, _, _| {
            // Paris is UTC+1: its days start at 23:00 UTC. Today's bucket is whole: the
            // repository clips it to the instant of its snapshot.
            query.missions == MissionScope::One(mission)
                && query.boundaries
                    == [
                        datetime!(2026-11-21 23:00 UTC),
                        datetime!(2026-11-22 23:00 UTC),
                        datetime!(2026-11-23 23:00 UTC),
                        datetime!(2026-11-24 23:00 UTC),
                    ]
        })
        .returning(|_, _, _| {
            Ok(OverviewFigures {
                generated_at: NOW,
                requests: RequestGroup {
                    range: counts(5, 2, 1, 2, vec![100, 200, 400]),
                    buckets: vec![
                        counts(2, 0, 0, 0, vec![]),
                        counts(3, 2, 0, 2, vec![100, 200]),
                        counts(0, 0, 1, 0, vec![400]),
                    ],
                    open_at_start: 10,
                    open_now: 11,
                    overdue_now: 4,
                    ..RequestGroup::default()
                },
                appointments: vec![
                    SeatCounts { booked: 3, capacity: 4, attended: 2, no_show: 1 },
                    SeatCounts::default(),
                    SeatCounts { booked: 1, capacity: 4, attended: 0, no_show: 0 },
                ],
            })
        });
    let service = service(analytics, any_mission());
    let asked = ViewRequest { mission_id: Some(mission), ..request("2026-11-22", "2026-11-24", "day") };
    let overview = service.overview(&admin_with("admin", None), asked).await.unwrap();

    assert_eq!(overview.scope.timezone, "Europe/Paris");
    assert_eq!(overview.scope.generated_at, NOW);
    assert_eq!(overview.scope.period.granularity(), Granularity::Day);
    let labels: Vec<&str> = overview.series.iter().map(|p| p.bucket.label.as_str()).collect();
    assert_eq!(labels, ["2026-11-22", "2026-11-23", "2026-11-24"]);
    let backlogs: Vec<u64> = overview.series.iter().map(|p| p.requests.backlog).collect();
    assert_eq!(backlogs, [12, 13, 12], "10 open at the start, +2, +3−2, −1");
    assert_eq!(overview.totals.backlog, 12);
    assert_eq!(overview.totals.closed, 3);
    assert_eq!(overview.totals.completion_rate, Some(2.0 / 3.0));
    assert_eq!(overview.totals.rejection_rate, Some(1.0 / 3.0));
    assert_eq!(overview.totals.cancellation_rate, Some(0.0));
    assert_eq!(overview.totals.sla_compliance, Some(2.0 / 3.0));
    assert_eq!(overview.totals.processing_median_seconds, Some(200.0), "over the range, not per bucket");
    assert_eq!(overview.series[0].requests.completion_rate, None, "nothing closed: null, not 0");
    assert_eq!(overview.series[1].requests.processing_median_seconds, Some(150.0));
    assert_eq!((overview.open, overview.open_overdue), (11, 4));
    assert_eq!(overview.appointments.utilisation, Some(4.0 / 8.0));
    assert_eq!(overview.appointments.no_show_rate, Some(1.0 / 3.0));
    assert_eq!(overview.series[1].appointments.utilisation, None, "no open slot: null");
}

/// An overview with nothing in any bucket of `query`.
fn empty_overview(query: &AnalyticsQuery) -> OverviewFigures {
    OverviewFigures {
        generated_at: NOW,
        requests: RequestGroup {
            buckets: vec![RequestCounts::default(); query.bucket_count()],
            ..RequestGroup::default()
        },
        appointments: vec![SeatCounts::default(); query.bucket_count()],
    }
}

#[tokio::test]
async fn the_global_view_is_in_utc_and_defaults_to_the_last_30_days() {
    let mut analytics = MockAnalyticsRepository::new();
    analytics
        .expect_overview()
        .withf(|query, _, _| {
            query.missions == MissionScope::All
                && query.boundaries.len() == 31
                && query.boundaries[0] == datetime!(2026-10-26 00:00 UTC)
                && query.boundaries[30] == datetime!(2026-11-25 00:00 UTC)
        })
        .returning(|query, _, _| Ok(empty_overview(query)));
    let overview = service(analytics, MockMissionRepository::new())
        .overview(&admin_with("admin", None), ViewRequest::default())
        .await
        .unwrap();
    assert_eq!(overview.scope.timezone, "UTC");
    assert_eq!(overview.series.len(), 30);
    assert_eq!(overview.totals.processing_median_seconds, None);
}

/// A call at the very instant today starts: today's bucket is listed (the repository
/// clips it to nothing, docs/analytics.md), with no figure.
#[tokio::test]
async fn a_call_at_midnight_ends_on_an_empty_bucket() {
    const MIDNIGHT: OffsetDateTime = datetime!(2026-11-24 00:00 UTC);
    let mut clock = MockClock::new();
    clock.expect_now().return_const(MIDNIGHT);
    let mut analytics = MockAnalyticsRepository::new();
    analytics
        .expect_overview()
        .withf(|query, _, _| {
            query.boundaries.len() == 31
                && query.boundaries[29] == MIDNIGHT
                && query.boundaries[30] == datetime!(2026-11-25 00:00 UTC)
        })
        .returning(|query, _, _| Ok(empty_overview(query)));
    let service = AnalyticsService::new(AnalyticsPorts {
        analytics: Arc::new(analytics),
        missions: Arc::new(MockMissionRepository::new()),
        service_types: Arc::new(MockServiceTypeRepository::new()),
        clock: Arc::new(clock),
    });
    let overview = service.overview(&admin_with("admin", None), ViewRequest::default()).await.unwrap();
    assert_eq!(overview.series.len(), 30);
    assert_eq!(overview.series.last().map(|p| p.requests.submitted), Some(0));
}

#[tokio::test]
async fn services_list_active_types_with_zeros_and_inactive_ones_only_with_figures() {
    let (active, quiet, retired, unused) =
        (service_type(true), service_type(true), service_type(false), service_type(false));
    let (active_id, retired_id) = (active.id, retired.id);
    let catalog = vec![
        ServiceType { code: "a".into(), ..active },
        ServiceType { code: "b".into(), ..quiet },
        ServiceType { code: "c".into(), ..retired },
        ServiceType { code: "d".into(), ..unused },
    ];
    let mut analytics = MockAnalyticsRepository::new();
    analytics.expect_service_types().returning(move || Ok(catalog.clone()));
    analytics.expect_services().returning(move |query, _, _| {
        let group = |id: ServiceTypeId| RequestGroup {
            key: Some(id.as_uuid()),
            range: counts(1, 1, 0, 1, vec![60]),
            buckets: vec![RequestCounts::default(); query.bucket_count()],
            ..RequestGroup::default()
        };
        Ok(RawServices {
            generated_at: NOW,
            requests: vec![group(active_id), group(retired_id)],
            stages: vec![StageGroup {
                service_type: active_id,
                stage: 3,
                range: DurationSummary::of(vec![10, 20]),
                buckets: vec![DurationSummary::default(); query.bucket_count()],
            }],
        })
    });
    let services = service(analytics, MockMissionRepository::new())
        .services(&admin_with("admin", None), request("2026-11-01", "2026-11-24", "week"))
        .await
        .unwrap();
    let codes: Vec<&str> = services.services.iter().map(|s| s.code.as_str()).collect();
    assert_eq!(codes, ["a", "b", "c"]);
    assert_eq!(services.services[1].totals.submitted, 0);
    assert_eq!(services.services[1].series.len(), 5, "2026-W44 (clipped) to 2026-W48");
    let stage = &services.services[0].stages[0];
    assert_eq!(
        (stage.position, stage.name.as_deref(), stage.spells),
        (3, None, 2),
        "the type has 2 stages now"
    );
    assert_eq!(stage.median_seconds, Some(15.0));
}

#[tokio::test]
async fn a_members_share_counts_the_missions_unassigned_requests_too() {
    let mission = MissionId::new();
    let member = |name: &str, active: bool| StaffMember {
        name: name.into(),
        email: format!("{name}@example.org"),
        active,
        ..consular_domain::fixtures::staff_member(mission, NOW)
    };
    let (ana, bea, gone) = (member("Ana", true), member("Bea", true), member("Gone", false));
    let ana_id = ana.id;
    let members = vec![bea.clone(), gone, ana];
    let mut analytics = MockAnalyticsRepository::new();
    analytics.expect_staff_members().returning(move |_| Ok(members.clone()));
    analytics.expect_staff().returning(move |query, _, _| {
        let group = |key: Option<Uuid>, open_now: u64| RequestGroup {
            mission: Some(mission),
            key,
            open_now,
            overdue_now: 1,
            range: counts(0, 2, 0, 2, vec![30, 90]),
            buckets: vec![RequestCounts::default(); query.bucket_count()],
            ..RequestGroup::default()
        };
        Ok(StaffGroups { generated_at: NOW, groups: vec![group(Some(ana_id.as_uuid()), 3), group(None, 1)] })
    });
    let view = service(analytics, any_mission())
        .staff(&admin_with("admin", Some(mission)), ViewRequest::default())
        .await
        .unwrap();
    assert_eq!(view.missions, [MissionLoad { mission_id: mission, open: 4, unassigned_open: 1 }]);
    let names: Vec<&str> = view.staff.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["Ana", "Bea"], "an inactive member without figures is left out");
    assert_eq!(view.staff[0].share_of_open_load, Some(0.75));
    assert_eq!((view.staff[0].closed, view.staff[0].handling_median_seconds), (2, Some(60.0)));
    assert_eq!(view.staff[1].share_of_open_load, Some(0.0));
    assert_eq!(view.staff[1].series.len(), 30);
}

/// Issue 30: the instant of the figures marked "now" is the one the repository read from
/// the clock inside its snapshot, not the earlier one the period was resolved at: a write
/// committed in between is then either in the snapshot and stamped before that instant,
/// or not in it at all.
#[tokio::test]
async fn the_figures_now_are_dated_by_the_repositorys_snapshot_not_by_the_call() {
    const LATER: OffsetDateTime = datetime!(2026-11-24 09:30:00.000_270 UTC);
    let mut clock = MockClock::new();
    clock.expect_now().times(1..).return_const(NOW);
    let clock: Arc<dyn Clock> = Arc::new(clock);
    let mut analytics = MockAnalyticsRepository::new();
    // The repository is handed the service's clock, to read once its snapshot has begun.
    let expected_clock = Arc::clone(&clock);
    analytics
        .expect_overview()
        .withf(move |_, clock, _| Arc::ptr_eq(clock, &expected_clock))
        .returning(|query, _, _| Ok(OverviewFigures { generated_at: LATER, ..empty_overview(query) }));
    analytics
        .expect_services()
        .returning(|_, _, _| Ok(RawServices { generated_at: LATER, requests: vec![], stages: vec![] }));
    analytics.expect_service_types().returning(|| Ok(vec![]));
    analytics.expect_staff().returning(|_, _, _| Ok(StaffGroups { generated_at: LATER, groups: vec![] }));
    analytics.expect_staff_members().returning(|_| Ok(vec![]));
    let service = AnalyticsService::new(AnalyticsPorts {
        analytics: Arc::new(analytics),
        missions: Arc::new(MockMissionRepository::new()),
        service_types: Arc::new(MockServiceTypeRepository::new()),
        clock,
    });
    let admin = admin_with("admin", None);
    let overview = service.overview(&admin, ViewRequest::default()).await.unwrap();
    assert_eq!(overview.scope.generated_at, LATER);
    let services = service.services(&admin, ViewRequest::default()).await.unwrap();
    assert_eq!(services.scope.generated_at, LATER);
    let staff = service.staff(&admin, ViewRequest::default()).await.unwrap();
    assert_eq!(staff.scope.generated_at, LATER);
}
