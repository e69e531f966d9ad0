//! Availability under a stampede on PostgreSQL (docs/appointments.md "Release morning",
//! docs/benchmarks.md "availability_stampede"): many clients polling one mission's
//! availability, as on the morning slots open. Run with
//! `cargo bench -p consular-tests --bench availability_stampede`.
//!
//! 1. The server as the other benches start it (`bench_server`: in-process, 2 HTTP
//!    workers, a pool of 10, the availability cache off), and a second node on the same
//!    database with the cache on (`availability_cache_ms` 1000). Through the API: a
//!    mission, a service type, `BENCH_CLIENTS` citizens with their clients, and 60 slots
//!    over the next days (a page is the first 20).
//! 2. Three runs of `BENCH_SECONDS` (after `BENCH_WARMUP_SECONDS`), `BENCH_CLIENTS`
//!    keep-alive clients, each polling the same question as its own citizen:
//!    - the node without the cache (every poll queries);
//!    - the node with the cache, plain `GET` (200, the page from memory);
//!    - the node with the cache, `If-None-Match` with the page's `ETag` (304, no body).
//!
//!    Each prints polls per second, p50 and p99, the CPU per poll (server, PostgreSQL),
//!    and the database transactions per second (`pg_stat_database.xact_commit` over the
//!    run and the 11 s an idle backend may wait to flush its statistics, less the rate of
//!    an idle window of the same length: the nodes' background tasks).
//!
//! Nothing is enforced but the statuses: the numbers are for docs/benchmarks.md.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_tests::bench::{
    HttpRun, MakeRequest, Result, bench_main, bench_server, drop_database, env_number, load, psql,
};
use consular_tests::serde_json::json;
use consular_tests::{CITIZENS, SERVICES, TestApp, citizen_body, header, service_body, text};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

const SLOTS: &str = "/api/v1/appointments/slots";

fn main() -> ExitCode {
    bench_main("availability_stampede", run)
}

/// How long a PostgreSQL 15 backend may keep its statistics before flushing them once it
/// is idle (`PGSTAT_IDLE_INTERVAL`, 10 s), and a margin: a run's transactions are counted
/// after it, not in the next run.
const STATS_FLUSH: Duration = Duration::from_secs(11);

/// Transactions committed in the bench's database so far, once every backend has
/// flushed its statistics.
async fn commits(url: &str) -> Result<f64> {
    tokio::time::sleep(STATS_FLUSH).await;
    let out =
        psql(url, "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()").await?;
    out.trim().parse::<f64>().map_err(|e| format!("xact_commit `{out}`: {e}"))
}

async fn run() -> Result<()> {
    let seconds = env_number("BENCH_SECONDS", 10) as u64;
    let warmup = env_number("BENCH_WARMUP_SECONDS", 2) as u64;
    let clients = env_number("BENCH_CLIENTS", 8);
    let (app, url) =
        bench_server("availability_stampede: one mission's availability polled by many (PostgreSQL)").await?;
    let outcome = stampede(&app, &url, seconds, warmup, clients).await;
    drop(app);
    let dropped = drop_database(&url).await;
    outcome.and(dropped)
}

async fn stampede(app: &TestApp, url: &str, seconds: u64, warmup: u64, clients: usize) -> Result<()> {
    let mut settings = app.settings.clone();
    settings.availability_cache_ms = 1_000;
    let cached = app.spawn_node_with(settings).await;

    let admin = app.admin_token().await;
    let mission = text(&app.create_mission(&admin, "fr-bench").await, "id");
    let service = text(&app.create_at(SERVICES, &admin, &service_body("bench_passport")).await, "id");
    let mut tokens = Vec::new();
    for i in 0..clients {
        let mut citizen = citizen_body(&mission, &format!("BENCH{i:04}"));
        citizen["registration_status"] = json!("active");
        citizen["issue_client"] = json!(true);
        tokens.push(app.issued(app.create_at(CITIZENS, &admin, &citizen).await).await.token);
    }
    let today = time::OffsetDateTime::now_utc().date();
    let starts: Vec<String> = (0..60)
        .map(|i| {
            let d = today + time::Duration::days(2 + i / 10);
            format!("{:04}-{:02}-{:02}T{:02}:00", d.year(), u8::from(d.month()), d.day(), 8 + i % 10)
        })
        .collect();
    let slots: Vec<_> = starts
        .iter()
        .map(|s| json!({ "starts_at": s, "minutes": 30, "capacity": 5, "service_type_ids": [service] }))
        .collect();
    let submitted = app.post_json(SLOTS, &admin, &json!({ "mission_id": mission, "slots": slots })).await;
    if submitted.status() != 200 {
        return Err(format!("POST slots: {}", submitted.status()));
    }
    let path = format!("{SLOTS}?mission_id={mission}&service_type_id={service}");
    let first = cached.get(&path, &tokens[0]).await;
    let etag = header(first.headers(), "etag");
    if first.status() != 200 || etag.is_empty() {
        return Err(format!("GET {path}: {} without an ETag", first.status()));
    }

    let idle_before = commits(url).await?;
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let idle = (commits(url).await? - idle_before).max(0.0) / (seconds as f64 + STATS_FLUSH.as_secs_f64());
    println!("idle: {idle:.1} transactions per second (the two nodes' background tasks)");

    let tokens = Arc::new(tokens);
    let scenarios: [(&str, &TestApp, Option<String>, u16); 3] = [
        ("no cache, GET", app, None, 200),
        ("cache 1 s, GET", &cached, None, 200),
        ("cache 1 s, If-None-Match", &cached, Some(etag.clone()), 304),
    ];
    println!(
        "\n{:<26} {:>9} {:>8} {:>8} {:>10} {:>11} {:>9}",
        "", "polls/s", "p50 ms", "p99 ms", "server µs", "postgres µs", "DB tx/s"
    );
    for (name, node, if_none_match, expected) in scenarios {
        let make: MakeRequest = {
            let (url, tokens) = (node.url(&path), tokens.clone());
            Arc::new(move |http: &consular_tests::reqwest::Client, i: usize| {
                let mut request = http.get(&url).bearer_auth(&tokens[i % tokens.len()]);
                if let Some(tag) = &if_none_match {
                    request = request.header("if-none-match", tag);
                }
                Ok(request)
            })
        };
        let next = Arc::new(AtomicUsize::new(0));
        load(clients, &make, &next, expected, Duration::from_secs(warmup)).await?;
        let before = commits(url).await?;
        let run: HttpRun = load(clients, &make, &next, expected, Duration::from_secs(seconds)).await?;
        let after = commits(url).await?;
        let polls = run.requests as f64;
        // Less the idle rate over the run and the wait for the statistics.
        let transactions =
            (after - before - idle * (seconds as f64 + STATS_FLUSH.as_secs_f64())).max(0.0) / seconds as f64;
        println!(
            "{name:<26} {:>9.0} {:>8.2} {:>8.2} {:>10.0} {:>11.0} {:>9.1}",
            run.per_second,
            run.p50_ms,
            run.p99_ms,
            run.cpu.per("server", polls),
            run.cpu.per("postgres", polls),
            transactions,
        );
        println!("   cpu: {}", run.cpu.per_unit(polls, "poll"));
    }
    Ok(())
}
