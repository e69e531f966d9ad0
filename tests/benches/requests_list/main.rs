//! `GET /api/v1/requests` under load on PostgreSQL, beside the same query run straight
//! against the database with `pgbench`; then one request's detail, a token and a
//! submission, each beside its database counterpart (`more.rs`). Run with `make bench` (or
//! `cargo bench -p consular-tests --bench requests_list`); see docs/benchmarks.md.
//!
//! 1. Starts the real server in-process on 127.0.0.1 (the test harness, a fresh database
//!    of the shared PostgreSQL test cluster; release build, 2 HTTP workers, pool of 10).
//! 2. Creates a mission, 5 service types, 10 staff members and one citizen through the
//!    API, clones the citizen to 1 000 and inserts 100 000 service requests (90 days,
//!    UUIDv7 ids built from `submitted_at`, one history row each) with SQL; `VACUUM ANALYZE`.
//! 3. Per scenario: N keep-alive clients for a fixed time after a warm-up, only 200s
//!    counted (anything else fails the run); checks that the server ran exactly the SQL
//!    this file writes out (`pg_stat_activity`) and that it is planned on the same index
//!    as the adapter's own query (`Database::explain_request_list`); then the same
//!    statement with `pgbench -M prepared` (bind parameters, as diesel-async sends it).
//!    CPU time is split per request from `/proc`: server threads, load generator,
//!    PostgreSQL backends, pgbench, interrupts and the machine's other processes (noise).
//! 4. Calibration: `/health/live` (HTTP alone), a request that only authenticates (a
//!    staff token refused an admin view: the bearer check and a 403, no database),
//!    `limit=1` (cost per row), pgbench with a generic plan and with the `SELECT $1` check
//!    the pool used to make, JSON encoding of one page.
//! 5. `GET /api/v1/requests/{id}`, `POST /api/v1/auth/token` and `POST /api/v1/requests`,
//!    each over HTTP and through pgbench (`more.rs`); then the detail read by its owner
//!    and by their guardian naming them in `On-Behalf-Of` (`acting.rs`).
//! 6. A concurrency sweep of the first scenario against the same server in a process of
//!    its own (the `consular` binary, same settings and database): 8, 64 and 512
//!    keep-alive connections, throughput, p50/p99 and the server process's resident memory.
//! 7. Prints the summary tables; exits non-zero on any error.
//!
//! Knobs (environment): `BENCH_SECONDS` (measured seconds per run, default 10),
//! `BENCH_WARMUP_SECONDS` (2), `BENCH_CLIENTS` (8), `BENCH_REQUESTS` (100000).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod acting;
mod calibration;
mod database;
mod more;
mod report;
mod scenarios;
mod seed;
mod sweep;

use calibration::*;
use database::*;
use report::*;
use scenarios::*;
use seed::*;
use sweep::*;

use consular_domain::{MissionId, PageRequest, RequestStatus};
use consular_ports::RequestFilter;
use consular_tests::TestApp;
use consular_tests::bench::{
    self, DbRun, HttpRun, MakeRequest, Result, bench_main, bench_server, drop_database, env_number, indexes,
    load, psql,
};
use consular_tests::child::{ServerProcess, rss_of};
use consular_tests::serde_json::{Value, json};
use std::fmt::Write as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};

/// Concurrent HTTP clients and pgbench clients.
fn clients() -> usize {
    env_number("BENCH_CLIENTS", 8)
}

fn main() -> ExitCode {
    bench_main("requests_list", run)
}

// ------------------------------------------------------------------------------ the run

async fn run() -> Result<()> {
    let seconds = env_number("BENCH_SECONDS", 10) as u64;
    let warmup = env_number("BENCH_WARMUP_SECONDS", 2) as u64;
    let rows = env_number("BENCH_REQUESTS", 100_000);
    let (app, url) = bench_server(
        "requests_list: GET /api/v1/requests over HTTP vs the same SQL through pgbench (PostgreSQL)",
    )
    .await?;

    let outcome = async {
        let seeded = seed(&app, rows).await?;
        let scenarios = scenarios(&seeded)?;
        let mut results = Vec::new();
        for scenario in &scenarios {
            results.push(measure(&app, &url, scenario, warmup, seconds).await?);
        }
        let pairs = vec![
            more::detail(&app, &url, &seeded, warmup, seconds).await?,
            more::token(&app, &url, &seeded, warmup, seconds).await?,
            more::submit(&app, &url, &seeded, warmup, seconds).await?,
        ];
        let acting = acting::acting(&app, &url, &seeded, warmup, seconds).await?;
        let calibration = calibrate(&app, &url, &scenarios[0], &seeded, (seconds * 3 / 10).max(3)).await?;
        let sweep = sweep(&app, &scenarios[0], (seconds / 2).max(3)).await?;
        print_table(&results, &calibration, seconds, warmup, rows);
        print_pairs(&pairs);
        print_acting(&acting);
        print_sweep(&scenarios[0], &sweep);
        Ok(())
    }
    .await;
    drop(app);
    // The database is dropped at once (it is 100k rows); when the bench started the
    // cluster, stopping it removes everything anyway.
    let dropped = drop_database(&url).await;
    outcome.and(dropped)
}

/// What the seeding created that the scenarios need.
pub(crate) struct Seeded {
    admin_token: String,
    mission_id: String,
    /// An admin of the mission (the third list scenario, the detail).
    pub mission_admin_token: String,
    /// The citizen registered through the API, with their client.
    pub citizen_client_id: String,
    pub citizen_secret: String,
    pub citizen_token: String,
    pub citizen_id: String,
    /// The first service type.
    pub service_type_id: String,
    /// A request with a thread and notes (`more::detail`).
    pub detail_id: String,
}
