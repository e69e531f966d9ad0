//! TEMPORARY timing harness (removed before hand-over).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::{Database, DbConfig};
use consular_domain::MissionId;
use consular_ports::{AnalyticsQuery, AnalyticsRepository, MissionScope};
use std::time::Instant;
use time::{Duration, OffsetDateTime, Time};

fn query(missions: MissionScope, days: i64) -> AnalyticsQuery {
    past(missions, days, 0)
}

/// `days` daily buckets ending `ago` days before today (0: ending now).
fn past(missions: MissionScope, days: i64, ago: i64) -> AnalyticsQuery {
    let now = OffsetDateTime::now_utc();
    let today = now.replace_time(Time::MIDNIGHT) - Duration::days(ago);
    let mut boundaries: Vec<_> = (0..days).map(|d| today - Duration::days(days - 1 - d)).collect();
    boundaries.push(if ago == 0 { now } else { today + Duration::days(1) });
    AnalyticsQuery { missions, service_type: None, boundaries, now }
}

fn p(mut xs: Vec<f64>, q: f64) -> f64 {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    xs[((xs.len() - 1) as f64 * q).round() as usize]
}

#[tokio::test(flavor = "multi_thread")]
#[ignore]
async fn bench_views() {
    let url = std::env::var("ANALYTICS_BENCH_URL").unwrap();
    let mission: uuid::Uuid = std::env::var("ANALYTICS_BENCH_MISSION").unwrap().parse().unwrap();
    let runs: usize = std::env::var("ANALYTICS_BENCH_RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(30);
    let db = Database::connect(&DbConfig::new(url)).unwrap();
    let one = MissionScope::One(MissionId(mission));
    for (name, scope, ago) in [
        ("all", MissionScope::All, 0),
        ("one", one, 0),
        ("all-past", MissionScope::All, 30),
        ("one-past", one, 30),
    ] {
        let q = past(scope, 90, ago);
        for view in ["overview", "services", "staff"] {
            let mut times = Vec::new();
            for _ in 0..runs {
                let t = Instant::now();
                match view {
                    "overview" => {
                        let f = db.overview(&q).await.unwrap();
                        std::hint::black_box(f);
                    }
                    "services" => {
                        let f = db.services(&q).await.unwrap();
                        std::hint::black_box(f);
                    }
                    _ => {
                        let f = db.staff(&q).await.unwrap();
                        std::hint::black_box(f);
                    }
                }
                times.push(t.elapsed().as_secs_f64() * 1000.0);
            }
            println!(
                "{name:4} {view:9} p50 {:7.1} ms  p95 {:7.1} ms  max {:7.1} ms",
                p(times.clone(), 0.5),
                p(times.clone(), 0.95),
                p(times, 1.0)
            );
        }
    }
    let f = db.overview(&query(MissionScope::All, 90)).await.unwrap();
    println!("overview range: {:?}", f.requests.range);
    println!(
        "open_at_start {} open_now {} overdue {}",
        f.requests.open_at_start, f.requests.open_now, f.requests.overdue_now
    );
    let s = db.services(&query(MissionScope::All, 90)).await.unwrap();
    println!("services: {} groups, {} stage groups", s.requests.len(), s.stages.len());
    let st = db.staff(&query(MissionScope::All, 90)).await.unwrap();
    println!("staff: {} groups", st.len());
}

#[test]
#[ignore]
fn bench_bucket_index() {
    let q = query(MissionScope::All, 90);
    let window = super::fold::Window::of(&q).unwrap();
    let start = q.boundaries[0];
    let instants: Vec<OffsetDateTime> =
        (0..250_000i64).map(|i| start + Duration::seconds((i * 7919) % (89 * 86_400))).collect();
    let t = Instant::now();
    let mut fold = super::fold::StageFold::new(&window);
    for (i, at) in instants.iter().enumerate() {
        fold.stage(uuid::Uuid::nil(), (i % 5) as u32).spell(*at, i as i64 % 100_000);
    }
    let spelled = t.elapsed();
    let groups = fold.finish();
    println!(
        "fold 250k spells: {:?}, finish: {:?} ({} groups)",
        spelled,
        t.elapsed() - spelled,
        groups.len()
    );
    let t = Instant::now();
    let n: usize = instants.iter().filter_map(|at| window.bucket(*at)).sum();
    println!("{n} {:?}", t.elapsed());
}
