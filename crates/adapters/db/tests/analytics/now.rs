//! Issue 30: the figures marked "now" are taken at the instant the repository read from the
//! clock, `generated_at`, whatever the snapshot holds after it. Here the clock is stopped
//! at `T` while the database holds writes stamped after `T` (a request closed, and one
//! submitted, a few microseconds later), as a view reads when those writes commit between
//! the instant and its snapshot (or when a node's clock is behind another's): every figure
//! counts them as they were at `T`, so that `open` is the backlog at the end of the range.

use super::*;

async fn the_figures_now_are_those_at_the_instant_read(db: Database) {
    let t = now();
    let micros = Duration::microseconds;
    let mission = stored_mission(&db, "fr-now").await;
    let service = stored_service_type(&db, "now_passport").await;
    let citizen = stored_citizen(&db, mission.id, "NW0001").await;
    let submitted = |at: OffsetDateTime, sla_due_at: OffsetDateTime| ServiceRequest {
        submitted_at: at,
        updated_at: at,
        sla_due_at,
        ..request(mission.id, citizen.id, &service)
    };
    let (later, overdue) = (t + Duration::days(20), t - Duration::seconds(1));
    let cancel = Action::To(RequestStatus::Cancelled);

    // Open at T, cancelled 1 µs after it.
    let mut closed_after = stored_request(&db, submitted(t - Duration::hours(2), later)).await;
    live::step(&db, &mut closed_after, Role::Citizen, cancel, t + micros(1)).await;
    // Open and past its SLA at T, cancelled 270 µs after it.
    let mut overdue_closed_after = stored_request(&db, submitted(t - Duration::hours(3), overdue)).await;
    live::step(&db, &mut overdue_closed_after, Role::Citizen, cancel, t + micros(270)).await;
    // Submitted 5 µs after T: nothing yet at T.
    stored_request(&db, submitted(t + micros(5), later)).await;
    // Open and past its SLA at T, and still.
    stored_request(&db, submitted(t - Duration::hours(4), overdue)).await;
    // Cancelled 1 µs before T.
    let mut closed_before = stored_request(&db, submitted(t - Duration::hours(1), later)).await;
    live::step(&db, &mut closed_before, Role::Citizen, cancel, t - micros(1)).await;

    for (missions, what) in
        [(MissionScope::All, "all missions"), (MissionScope::One(mission.id), "the mission")]
    {
        let q = query(missions, None, "UTC", last_days("UTC", t, 7), Granularity::Day, t);
        let overview = AnalyticsRepository::overview(&db, &q, &at(t), Consistency::Latest).await.unwrap();
        assert_eq!(overview.generated_at, t);
        let g = &overview.requests;
        assert_eq!((g.open_now, g.overdue_now), (3, 2), "{what}: open and overdue at T");
        let closed: u64 = g.buckets.iter().map(RequestCounts::closed).sum();
        let submitted: u64 = g.buckets.iter().map(|b| b.submitted).sum();
        assert_eq!((submitted, closed, g.open_at_start), (4, 1, 0), "{what}: in the range, before T");
        assert_eq!(g.open_at_start + submitted - closed, g.open_now, "{what}: the backlog at T is `open`");
        // The statuses of a range ending at T are the current ones (docs/analytics.md: with
        // one clock, the snapshot holds nothing stamped after T); they still count the
        // requests submitted before T only.
        assert_eq!(g.range.by_status.total(), 4, "{what}: {:?}", g.range.by_status);

        let services = AnalyticsRepository::services(&db, &q, &at(t), Consistency::Latest).await.unwrap();
        let ours: Vec<&RequestGroup> =
            services.requests.iter().filter(|g| g.key == Some(service.id.as_uuid())).collect();
        assert_eq!(ours.len(), 1, "{what}");
        assert_eq!((ours[0].open_now, ours[0].overdue_now, &ours[0].range), (3, 2, &g.range), "{what}");

        let staff = AnalyticsRepository::staff(&db, &q, &at(t), Consistency::Latest).await.unwrap();
        let unassigned: Vec<&RequestGroup> =
            staff.groups.iter().filter(|g| g.mission == Some(mission.id) && g.key.is_none()).collect();
        assert_eq!(unassigned.len(), 1, "{what}");
        assert_eq!((unassigned[0].open_now, unassigned[0].overdue_now), (3, 2), "{what}: the mission's load");
    }
}

on_both_databases!(the_figures_now_are_those_at_the_instant_read,);
