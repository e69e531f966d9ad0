//! Read replicas with read-your-writes (issue 26 item 3; docs/operations.md "Read
//! replicas"): what a write mark costs, what routing a tolerant read costs, how many of a
//! writer's next reads the replica serves, and how much read load leaves the primary. Run
//! with `make bench` (or `cargo bench -p consular-tests --bench read_replicas`); see
//! docs/benchmarks.md "Read replicas".
//!
//! Setup (`world.rs`): a primary and its synchronous streaming standby of the bench's own
//! (`consular_testkit::replication::ReplicatedPair`, 127.0.0.1), its database seeded by the
//! product's generator (`consular demo seed`'s use case: 4 missions, `BENCH_REQUESTS`
//! requests over 90 days), then two server nodes in this process on it, as every
//! PostgreSQL bench runs them (release build, 2 HTTP workers, pool of 10, log level warn)
//! and alike but for one setting: the *plain* node has no `database_read_url`, the
//! *replicated* node reads tolerant reads from the standby. Through the API: 16 citizens,
//! 8 staff members and 8 admins of the largest mission, each with a client.
//!
//! 1. Write marks (`measure.rs`): the citizens' submissions (`POST /api/v1/requests`) with
//!    1 and 4 keep-alive clients on each node (the replicated one marks every submission
//!    before answering it): req/s, p50, p99. Then the mark alone: `WriteMarks::mark`
//!    called `BENCH_MARKS` times in a row for one writer through a `Database` with a read
//!    URL.
//! 2. Routing a tolerant read: the staff's requests list (`GET /api/v1/requests?limit=50`,
//!    their mission's), 4 clients, on the plain node, then on the replicated node
//!    (caught up) for staff who never wrote and for staff with a mark the replica has
//!    replayed: req/s, p50, p99, and the CPU each server's processes used per read. Which
//!    server served is counted exactly through the ports (`Database::tolerant_reads`) on
//!    the same list read `BENCH_SPLIT_READS` times.
//! 3. Read-your-writes (`writers.rs`) under a steady write load (citizens submitting
//!    `BENCH_WRITE_RATE` a second on the replicated node): 4 staff members each add a note
//!    to a request over HTTP on the replicated node (which marks it) and, a gap of 0, 5 or
//!    50 ms after its answer, read the requests list through the ports with
//!    `Consistency::OwnWrites` on a `Database` of their own, whose `tolerant_reads` counts
//!    tell which server served that read. Then sessions of 8 staff members: a write, the
//!    list read at once and then every 200 ms for 0.2 to 4 s (uniform, seeded), a write
//!    again; the share of reads the replica served beside the share a fixed window after
//!    each write (1 s, 2 s; the alternative the issue names, as Rails does it) would have
//!    left it, computed from each read's time since its reader's last write answer.
//!    `pg_stat_replication.replay_lag` is sampled every 250 ms meanwhile.
//! 4. Offload: 8 mission admins reading the analytics overview back to back while
//!    citizens submit `BENCH_OFFLOAD_WRITE_RATE` a second, on the plain node then on the
//!    replicated one: reads/s, p50, p99 and the cores each server's processes used.
//!
//! Knobs (environment): `BENCH_SECONDS` (seconds of each HTTP run, default 3; one warm-up
//! second before each node's first run of a kind), `BENCH_RYW_SECONDS` (seconds per gap and
//! of the sessions, 3), `BENCH_REQUESTS` (20000), `BENCH_MARKS` (2000), `BENCH_SPLIT_READS`
//! (500), `BENCH_WRITE_RATE` (50), `BENCH_OFFLOAD_WRITE_RATE` (20).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod measure;
mod world;
mod writers;

use consular_tests::bench::{Result, bench_main, env_number, print_machine};
use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    bench_main("read_replicas", run)
}

/// The knobs.
#[derive(Clone, Copy)]
pub struct Knobs {
    pub seconds: Duration,
    pub ryw_seconds: Duration,
    pub requests: u64,
    pub marks: usize,
    pub split_reads: usize,
    pub write_rate: usize,
    pub offload_write_rate: usize,
}

async fn run() -> Result<()> {
    let knobs = Knobs {
        seconds: Duration::from_secs(env_number("BENCH_SECONDS", 3) as u64),
        ryw_seconds: Duration::from_secs(env_number("BENCH_RYW_SECONDS", 3) as u64),
        requests: env_number("BENCH_REQUESTS", 20_000) as u64,
        marks: env_number("BENCH_MARKS", 2000),
        split_reads: env_number("BENCH_SPLIT_READS", 500),
        write_rate: env_number("BENCH_WRITE_RATE", 50),
        offload_write_rate: env_number("BENCH_OFFLOAD_WRITE_RATE", 20),
    };
    print_machine(
        "read replicas: write marks, routed tolerant reads, read-your-writes and offload \
         (PostgreSQL primary + synchronous streaming standby, both on this machine)",
    )
    .await;
    let world = world::World::start(knobs).await?;
    let outcome = async {
        let mut out = String::new();
        measure::write_marks(&world, knobs, &mut out).await?;
        measure::tolerant_reads(&world, knobs, &mut out).await?;
        writers::read_your_writes(&world, knobs, &mut out).await?;
        measure::offload(&world, knobs, &mut out).await?;
        println!("{out}");
        Ok(())
    }
    .await;
    world.stop().await;
    outcome
}
