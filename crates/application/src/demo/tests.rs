use super::generate::*;
use super::{DemoPorts, DemoService, SeedCounts};
use consular_domain::{
    Action, Citizen, HistoryEntry, NewCitizen, NewMission, NewServiceType, NewStaffMember, PrincipalKind,
    RequestStatus, Role, ServiceRequest, StaffId,
};
use consular_ports::{MockDemoRepository, SeededRequest};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use time::OffsetDateTime;
use time::macros::datetime;

const NOW: OffsetDateTime = datetime!(2026-03-29 14:30:15.123456 UTC);

fn plan(missions: u32, requests: u64, seed: u64) -> DemoPlan {
    DemoPlan { missions, requests, seed, days: 365, now: NOW }
}

fn all_requests(generator: &Generator, batch: usize) -> Vec<SeededRequest> {
    generator.requests(batch).flat_map(|b| b.unwrap()).collect()
}

fn all_citizens(generator: &Generator, batch: usize) -> Vec<Citizen> {
    generator.citizens(batch).flatten().collect()
}

#[test]
fn the_same_plan_gives_the_same_data_and_another_seed_other_data() {
    let a = Generator::new(plan(4, 3_000, 7)).unwrap();
    let b = Generator::new(plan(4, 3_000, 7)).unwrap();
    assert_eq!(a.missions(), b.missions());
    assert_eq!(a.service_types(), b.service_types());
    assert_eq!(a.staff(), b.staff());
    let first_a = a.requests(1_000).next().unwrap().unwrap();
    let first_b = b.requests(1_000).next().unwrap().unwrap();
    assert_eq!(first_a, first_b);
    assert_eq!(all_citizens(&a, 100), all_citizens(&b, 100));

    // Batch sizes do not change the sequence.
    assert_eq!(all_requests(&a, 1_000), all_requests(&b, 7));
    assert_eq!(all_citizens(&a, 1_000), all_citizens(&b, 13));

    let c = Generator::new(plan(4, 3_000, 8)).unwrap();
    assert_ne!(a.missions()[0].id, c.missions()[0].id);
    assert_ne!(a.missions()[0].code, c.missions()[0].code);
    let first_c = c.requests(1_000).next().unwrap().unwrap();
    assert_ne!(
        first_a.iter().map(|r| r.request.submitted_at).collect::<Vec<_>>(),
        first_c.iter().map(|r| r.request.submitted_at).collect::<Vec<_>>()
    );
}

/// Pinned values: a change of the generator (or of a dependency's output) shows here, so
/// that the data sets of the README and the benchmarks stay the ones described.
/// The first requests of `plan(3, 10, 1)`: id, status and history length.
const PINNED: [&str; 4] = [
    "019b6958-ec50-7b3d-95ed-c93d162584fc completed 5",
    "0195fcc0-0308-73dc-b3b2-8c1d486a2e7b completed 7",
    "019caf65-ac50-7d35-8c42-264559be2274 cancelled 2",
    "0199729f-69d0-7caf-928b-76c7be39edbe completed 6",
];

#[test]
fn the_output_is_pinned() {
    let g = Generator::new(plan(3, 10, 1)).unwrap();
    let codes: Vec<&str> = g.missions().iter().map(|m| m.code.as_str()).collect();
    assert_eq!(codes, ["gb-demo-s1-001", "us-demo-s1-002", "in-demo-s1-003"]);
    assert_eq!(g.service_types()[0].code, "demo_s1_passport_renewal");
    let fingerprint: Vec<String> = all_requests(&g, 10)
        .iter()
        .take(4)
        .map(|r| format!("{} {} {}", r.request.id, r.request.status, r.history.len()))
        .collect();
    assert_eq!(fingerprint, PINNED);
}

#[test]
fn the_reference_data_passes_the_domain_rules() {
    let g = Generator::new(plan(25, 500, 3)).unwrap();
    assert_eq!(g.missions().len(), 25);
    let zones: BTreeSet<&str> = g.missions().iter().map(|m| m.timezone.as_str()).collect();
    for zone in ["Europe/London", "Asia/Kolkata", "Asia/Kathmandu", "America/St_Johns", "Australia/Adelaide"]
    {
        assert!(zones.contains(zone), "{zone}");
    }
    let codes: BTreeSet<&str> = g.missions().iter().map(|m| m.code.as_str()).collect();
    assert_eq!(codes.len(), 25, "mission codes are unique");
    for m in g.missions() {
        let new = NewMission {
            code: m.code.clone(),
            name: m.name.clone(),
            country: m.country.clone(),
            city: m.city.clone(),
            timezone: m.timezone.clone(),
        };
        assert_eq!(new.validate(), Ok(()), "{m:?}");
        assert!(m.created_at < g.start());
    }
    assert_eq!(g.service_types().len(), 6);
    for t in g.service_types() {
        let new = NewServiceType {
            code: t.code.clone(),
            name: t.name.clone(),
            description: t.description.clone(),
            fee: t.fee.clone(),
            sla_days: t.sla_days,
            retention_days: t.retention_days,
            required_documents: t.required_documents.clone(),
            stages: t.stages.clone(),
            active: t.active,
        };
        assert_eq!(new.validate(), Ok(()), "{t:?}");
        assert!((2..=4).contains(&t.stages.len()));
        assert!(t.required_documents.is_empty());
    }
    for m in g.missions() {
        let members: Vec<_> = g.staff().iter().filter(|s| s.mission_id == m.id).collect();
        assert!((3..=10).contains(&members.len()), "{}", members.len());
        for t in g.service_types() {
            assert!(members.iter().any(|s| s.service_type_ids.contains(&t.id)), "{} has no handler", t.code);
        }
    }
    for s in g.staff() {
        let new = NewStaffMember {
            mission_id: s.mission_id,
            name: s.name.clone(),
            email: s.email.clone(),
            job_title: s.job_title.clone(),
            service_type_ids: s.service_type_ids.clone(),
        };
        assert_eq!(new.validate(), Ok(()), "{s:?}");
    }
}

#[test]
fn citizens_pass_the_domain_rules_and_are_unique_per_mission() {
    let g = Generator::new(plan(5, 5_000, 11)).unwrap();
    let citizens = all_citizens(&g, 333);
    assert_eq!(citizens.len() as u64, g.citizen_count());
    assert!(
        (900..=1_100).contains(&citizens.len()),
        "about one citizen per five requests: {}",
        citizens.len()
    );
    let today = NOW.date();
    let mut passports = BTreeSet::new();
    let mut ids = BTreeSet::new();
    for c in &citizens {
        let new = NewCitizen {
            mission_id: c.mission_id,
            given_name: c.given_name.clone(),
            family_name: c.family_name.clone(),
            date_of_birth: c.date_of_birth,
            place_of_birth: c.place_of_birth.clone(),
            nationality: c.nationality.clone(),
            passport_number: c.passport_number.clone(),
            passport_expiry: c.passport_expiry,
            email: c.email.clone(),
            phone: c.phone.clone(),
            address: c.address.clone(),
            emergency_contact: c.emergency_contact.clone(),
            preferred_language: c.preferred_language.clone(),
            registration_status: c.registration_status,
        };
        assert_eq!(new.validate(today), Ok(()), "{c:?}");
        assert!(passports.insert((c.mission_id, c.passport_number.clone())));
        assert!(ids.insert(c.id));
        assert!(c.created_at < g.start());
    }
}

/// Replays a history through the domain: every entry must be a legal step from the state
/// the previous ones left, and the request must be where its history ends.
fn check_history(r: &ServiceRequest, history: &[HistoryEntry]) {
    let first = &history[0];
    assert_eq!((first.from_status, first.to_status, first.to_stage), (None, RequestStatus::Submitted, 0));
    assert_eq!(first.at, r.submitted_at);
    let mut replay = ServiceRequest {
        status: RequestStatus::Submitted,
        current_stage: 0,
        closed_at: None,
        version: 1,
        updated_at: r.submitted_at,
        ..r.clone()
    };
    let mut previous = first.at;
    for entry in &history[1..] {
        assert!(entry.at > previous, "entries move forward in time");
        previous = entry.at;
        assert_eq!(entry.from_status, Some(replay.status));
        assert_eq!(entry.from_stage, Some(replay.current_stage));
        let action = if entry.to_stage != replay.current_stage {
            Action::AdvanceStage
        } else {
            Action::To(entry.to_status)
        };
        let role = match entry.actor.map(|a| a.kind) {
            Some(PrincipalKind::Citizen) => Role::Citizen,
            _ => Role::Staff,
        };
        let replayed = replay.apply(role, action, entry.actor, entry.reason.clone(), entry.at).unwrap();
        assert_eq!(&replayed, entry);
        if matches!(action, Action::To(s) if s != RequestStatus::Cancelled) {
            assert!(entry.reason.is_some(), "a status change through the workflow has a reason");
        }
    }
    assert_eq!(replay.status, r.status);
    assert_eq!(replay.current_stage, r.current_stage);
    assert_eq!(replay.closed_at, r.closed_at);
    // A pick-up that also assigns is one change, one version.
    assert_eq!(replay.version, r.version);
    assert_eq!(replay.updated_at, r.updated_at);
}

#[test]
fn every_request_follows_the_state_machine_and_belongs_to_its_mission() {
    let g = Generator::new(plan(6, 20_000, 5)).unwrap();
    let staff: HashMap<StaffId, _> = g.staff().iter().map(|s| (s.id, s)).collect();
    let citizens: HashMap<_, _> = all_citizens(&g, 1_000).into_iter().map(|c| (c.id, c)).collect();
    let types: HashMap<_, _> = g.service_types().iter().map(|t| (t.id, t)).collect();
    let mut ids = BTreeSet::new();
    for SeededRequest { request: r, history } in all_requests(&g, 1_000) {
        assert!(ids.insert(r.id), "ids are unique");
        check_history(&r, &history);
        assert_eq!(r.closed_at.is_some(), r.status.is_final(), "closed_at iff final");
        assert!(r.submitted_at >= g.start() && r.submitted_at < g.plan().now);
        assert!(r.updated_at < g.plan().now);
        let citizen = citizens.get(&r.citizen_id).expect("the citizen is generated");
        assert_eq!(citizen.mission_id, r.mission_id);
        let service_type = types[&r.service_type_id];
        assert_eq!(r.stages, service_type.stages);
        assert_eq!(r.sla_due_at - r.submitted_at, time::Duration::days(i64::from(service_type.sla_days)));
        if let Some(assignee) = r.assignee_id {
            let member = staff.get(&assignee).expect("the assignee is generated");
            assert_eq!(member.mission_id, r.mission_id);
            assert!(member.service_type_ids.contains(&r.service_type_id));
        } else {
            let staff_acted = history.iter().any(|e| e.actor.is_some_and(|a| a.kind == PrincipalKind::Staff));
            assert!(!staff_acted, "a request staff worked on has an assignee");
        }
        for at in [r.submitted_at, r.sla_due_at, r.updated_at] {
            assert_eq!(at.nanosecond(), 0, "whole seconds");
        }
    }
}

#[test]
fn the_distribution_is_realistic() {
    let g = Generator::new(plan(8, 30_000, 2)).unwrap();
    let requests = all_requests(&g, 1_000);
    let mut by_status: BTreeMap<RequestStatus, usize> = BTreeMap::new();
    for r in &requests {
        *by_status.entry(r.request.status).or_default() += 1;
    }
    let share = |s: RequestStatus| by_status.get(&s).copied().unwrap_or(0) as f64 / requests.len() as f64;
    assert!(share(RequestStatus::Completed) > 0.7, "{by_status:?}");
    assert!((0.02..0.15).contains(&share(RequestStatus::Rejected)), "{by_status:?}");
    assert!((0.01..0.1).contains(&share(RequestStatus::Cancelled)), "{by_status:?}");
    let open = requests.iter().filter(|r| r.request.status.is_open()).count() as f64 / requests.len() as f64;
    assert!((0.01..0.2).contains(&open), "{by_status:?}");
    for status in RequestStatus::ALL {
        assert!(by_status.contains_key(&status), "{status} missing: {by_status:?}");
    }

    // Recent requests are open more often than old ones.
    let recent = g.plan().now - time::Duration::days(14);
    let open_share = |recent_ones: bool| {
        let set: Vec<_> =
            requests.iter().filter(|r| (r.request.submitted_at >= recent) == recent_ones).collect();
        set.iter().filter(|r| r.request.status.is_open()).count() as f64 / set.len() as f64
    };
    assert!(open_share(true) > 3.0 * open_share(false));

    let now = g.plan().now;
    let overdue = requests.iter().filter(|r| r.request.is_overdue(now)).count();
    assert!(overdue > 0);
    let late =
        requests.iter().filter(|r| r.request.closed_at.is_some_and(|c| c > r.request.sla_due_at)).count();
    assert!(late > 0 && late < requests.len() / 4, "{late}");

    // Weekdays and office hours dominate (in the mission's zone).
    let weekend = requests
        .iter()
        .filter(|r| {
            let m = g.missions().iter().find(|m| m.id == r.request.mission_id).unwrap();
            let day = consular_domain::analytics::local_date(&m.timezone, r.request.submitted_at).unwrap();
            day.weekday().number_days_from_monday() >= 5
        })
        .count();
    assert!(weekend * 10 < requests.len(), "{weekend}");

    // Medians of processing differ per service.
    let mut medians = BTreeMap::new();
    for t in g.service_types() {
        let mut seconds: Vec<i64> = requests
            .iter()
            .filter(|r| r.request.service_type_id == t.id && r.request.status == RequestStatus::Completed)
            .map(|r| (r.request.closed_at.unwrap() - r.request.submitted_at).whole_seconds())
            .collect();
        seconds.sort_unstable();
        assert!(!seconds.is_empty(), "{}", t.code);
        medians.insert(t.code.clone(), seconds[seconds.len() / 2]);
    }
    let distinct: BTreeSet<i64> = medians.values().map(|s| s / 3_600).collect();
    assert_eq!(distinct.len(), 6, "{medians:?}");

    // Every mission gets requests, and staff share the load unevenly but all work.
    let missions: BTreeSet<_> = requests.iter().map(|r| r.request.mission_id).collect();
    assert_eq!(missions.len(), 8);
    let history: usize = requests.iter().map(|r| r.history.len()).sum();
    assert!(history > 4 * requests.len(), "{history}");
}

#[test]
fn a_bad_plan_is_refused_with_every_field() {
    let bad = DemoPlan { missions: 0, requests: DemoPlan::MAX_REQUESTS + 1, seed: 1, days: 0, now: NOW };
    let Err(DemoError::Plan(errors)) = Generator::new(bad) else { panic!("accepted") };
    let fields: Vec<&str> = errors.0.iter().map(|e| e.pointer.as_str()).collect();
    assert_eq!(fields.len(), 3, "{fields:?}");
    let told: Vec<(&str, &str, &str)> =
        errors.0.iter().map(|e| (e.pointer.as_str(), e.code.as_str(), e.message.as_str())).collect();
    let (missions, requests, days) = (
        format!("must be 1 to {}", DemoPlan::MAX_MISSIONS),
        format!("must be at most {}", DemoPlan::MAX_REQUESTS),
        format!("must be 1 to {}", DemoPlan::MAX_DAYS),
    );
    assert_eq!(
        told,
        [
            ("/missions", "out_of_range", missions.as_str()),
            ("/requests", "out_of_range", requests.as_str()),
            ("/days", "out_of_range", days.as_str())
        ],
        "in the order of the fields, the messages naming the limits"
    );
}

#[test]
fn a_single_day_and_no_requests_work() {
    let g = Generator::new(DemoPlan { missions: 1, requests: 0, seed: 1, days: 1, now: NOW }).unwrap();
    assert_eq!(g.requests(10).count(), 0);
    assert_eq!(g.citizen_count(), 1);
    let g = Generator::new(DemoPlan { missions: 2, requests: 50, seed: 1, days: 1, now: NOW }).unwrap();
    let requests = all_requests(&g, 10);
    assert_eq!(requests.len(), 50);
    assert!(requests.iter().all(|r| r.request.submitted_at >= g.start()));
}

#[tokio::test]
async fn the_service_stores_reference_data_then_batches() {
    let stored = Arc::new(Mutex::new((0usize, 0usize, 0usize)));
    let mut repo = MockDemoRepository::new();
    repo.expect_insert_reference().times(1).returning(|m, t, s| {
        assert_eq!((m.len(), t.len()), (2, 6));
        assert!(s.len() >= 6);
        Ok(())
    });
    let seen = stored.clone();
    repo.expect_insert_citizens().returning(move |c| {
        seen.lock().unwrap().0 += c.len();
        Ok(())
    });
    let seen = stored.clone();
    repo.expect_finish_requests().returning(|| Ok(()));
    repo.expect_insert_requests().returning(move |r| {
        assert!(r.len() <= super::BATCH);
        let mut s = seen.lock().unwrap();
        s.1 += r.len();
        s.2 += 1;
        Ok(())
    });
    let mut clock = consular_ports::MockClock::new();
    clock.expect_now().return_const(NOW);
    let service = DemoService::new(DemoPorts { demo: Arc::new(repo), clock: Arc::new(clock) });
    let mut calls = 0;
    let counts = service
        .seed(super::SeedOptions { missions: 2, requests: 2_500, seed: 1, days: 90 }, |_: &SeedCounts| {
            calls += 1
        })
        .await
        .unwrap();
    let (citizens, requests, batches) = *stored.lock().unwrap();
    assert_eq!((counts.requests, requests, batches), (2_500, 2_500, 3));
    assert_eq!(counts.citizens, citizens as u64);
    assert!(counts.history_entries > counts.requests);
    assert!(calls >= 5);
}
