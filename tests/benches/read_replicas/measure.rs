//! Measurements 1, 2 and 4 (see `main.rs`): what a write mark costs, what routing a
//! tolerant read costs, and how much read load the replica takes off the primary.

use crate::Knobs;
use crate::world::{Caller, ServerCpu, Submissions, World};
use consular_domain::{PageRequest, Subject};
use consular_ports::{Consistency, RequestFilter, RequestRepository, WriteMarks};
use consular_tests::TestApp;
use consular_tests::bench::{HttpRun, MakeRequest, Result, load};
use consular_tests::consular_db::{Database, TolerantReads};
use consular_tests::serde_json::json;
use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::{Duration, Instant};

/// The warm-up before a node's first run of a kind.
const WARM_UP: Duration = Duration::from_secs(1);
/// Keep-alive clients of the write and read runs (measurements 1 and 2).
const CLIENTS: usize = 4;
/// Readers of the analytics overview (measurement 4).
const OVERVIEW_READERS: usize = 8;

/// One HTTP run with the CPU of each server over it.
struct Measured {
    run: HttpRun,
    servers: ServerCpu,
}

/// `clients` clients sending `make`'s requests for `duration` (after a warm-up when
/// `warm`), every answer `expected`.
async fn measured(
    world: &World,
    clients: usize,
    make: &MakeRequest,
    expected: u16,
    duration: Duration,
    warm: bool,
) -> Result<Measured> {
    let next = Arc::new(AtomicUsize::new(0));
    if warm {
        load(clients, make, &next, expected, WARM_UP).await?;
    }
    let before = world.servers.sample();
    let run = load(clients, make, &next, expected, duration).await?;
    let servers = world.servers.sample().since(&before);
    Ok(Measured { run, servers })
}

/// `POST /api/v1/requests` by the citizens, round robin.
fn submissions(app: &TestApp, citizens: &[Caller], service: &str) -> MakeRequest {
    let url = app.url("/api/v1/requests");
    let tokens: Vec<String> = citizens.iter().map(|c| c.token.clone()).collect();
    let body = json!({ "service_type_id": service });
    Arc::new(move |http: &reqwest::Client, i: usize| {
        Ok(http.post(&url).bearer_auth(&tokens[i % tokens.len()]).json(&body))
    })
}

/// `GET path` by `callers`, round robin.
fn reads(app: &TestApp, callers: &[Caller], path: &str) -> MakeRequest {
    let url = app.url(path);
    let tokens: Vec<String> = callers.iter().map(|c| c.token.clone()).collect();
    Arc::new(move |http: &reqwest::Client, i: usize| {
        Ok(http.get(&url).bearer_auth(&tokens[i % tokens.len()]))
    })
}

fn row(out: &mut String, label: &str, m: &Measured) {
    let (primary, standby) = m.servers.per(m.run.requests);
    let _ = writeln!(
        out,
        "  {label:<34} {:>3} {:>8.0} {:>7.2} {:>7.2} {:>9.0} {:>9.0} {:>9.0}",
        m.run.clients,
        m.run.per_second,
        m.run.p50_ms,
        m.run.p99_ms,
        primary,
        standby,
        m.run.cpu.per("server", m.run.requests as f64)
    );
}

fn header(out: &mut String, first: &str) {
    let _ = writeln!(
        out,
        "  {first:<34} {:>3} {:>8} {:>7} {:>7} {:>9} {:>9} {:>9}",
        "cl", "req/s", "p50 ms", "p99 ms", "PG prim", "PG stby", "server"
    );
    let _ = writeln!(
        out,
        "  {:<34} {:>3} {:>8} {:>7} {:>7} {:>9} {:>9} {:>9}",
        "", "", "", "", "", "µs/req", "µs/req", "µs/req"
    );
}

/// Measurement 1: submissions on each node with 1 and 4 clients; the mark alone.
pub async fn write_marks(world: &World, knobs: Knobs, out: &mut String) -> Result<()> {
    println!("1. write marks: submissions on each node, then WriteMarks::mark alone ...");
    let _ = writeln!(
        out,
        "\n1. Write marks: citizens' submissions (POST /api/v1/requests, 201), {} s a run",
        knobs.seconds.as_secs()
    );
    header(out, "database_read_url");
    let plain = submissions(&world.plain, &world.citizens, &world.service);
    let replicated = submissions(&world.replicated, &world.citizens, &world.service);
    for (i, clients) in [1, CLIENTS].into_iter().enumerate() {
        let unset = measured(world, clients, &plain, 201, knobs.seconds, i == 0).await?;
        let set = measured(world, clients, &replicated, 201, knobs.seconds, i == 0).await?;
        row(out, "unset (no mark)", &unset);
        row(out, "set (marked before the answer)", &set);
    }

    let db = world.replicated_database(2)?;
    let writer = world.staff[0].subject;
    let timed = mark_alone(&db, writer, knobs.marks).await;
    db.close();
    let (mean, p50, p99) = timed?;
    let _ = writeln!(
        out,
        "  the mark alone (WriteMarks::mark, {} calls in a row, one writer, through ports): \
         mean {mean:.0} µs, p50 {p50:.0} µs, p99 {p99:.0} µs",
        knobs.marks
    );
    Ok(())
}

/// Mean, p50 and p99 of `n` marks in a row, in µs.
async fn mark_alone(db: &Database, writer: Subject, n: usize) -> Result<(f64, f64, f64)> {
    let mut micros = Vec::with_capacity(n);
    let started = Instant::now();
    for _ in 0..n {
        let call = Instant::now();
        db.mark(writer).await.map_err(|e| format!("mark: {e:?}"))?;
        micros.push(call.elapsed().as_secs_f64() * 1e6);
    }
    let mean = started.elapsed().as_secs_f64() * 1e6 / n.max(1) as f64;
    micros.sort_by(f64::total_cmp);
    let at = |q: f64| micros[((micros.len() - 1) as f64 * q) as usize];
    Ok((mean, at(0.5), at(0.99)))
}

/// The requests list of `reader` through the ports, as a tolerant read of theirs.
pub async fn list_as(db: &Database, world: &World, reader: Subject) -> Result<()> {
    RequestRepository::list(
        db,
        RequestFilter { mission_id: Some(world.mission), ..RequestFilter::default() },
        PageRequest { limit: 50, after: None },
        Consistency::OwnWrites(reader),
    )
    .await
    .map(drop)
    .map_err(|e| format!("the requests list: {e:?}"))
}

/// Who served `db`'s tolerant reads so far.
pub fn served(db: &Database) -> Result<TolerantReads> {
    db.tolerant_reads().ok_or_else(|| "a database without a read replica".to_owned())
}

/// Measurement 2: the staff's list on the plain node, on the replicated node without
/// marks and with replayed marks; who served, through the ports.
pub async fn tolerant_reads(world: &World, knobs: Knobs, out: &mut String) -> Result<()> {
    println!("2. tolerant reads: the staff's requests list on each node ...");
    // A staff member's list is their mission's.
    let path = "/api/v1/requests?limit=50";
    // Four staff members who never wrote, four with a mark.
    let (unmarked, marked) = world.staff.split_at(world.staff.len() / 2);
    let db = world.replicated_database(2)?;
    let outcome = async {
        for reader in marked {
            db.mark(reader.subject).await.map_err(|e| format!("mark: {e:?}"))?;
        }
        world.caught_up().await?;
        let primary =
            measured(world, CLIENTS, &reads(&world.plain, unmarked, path), 200, knobs.seconds, true).await?;
        let fresh =
            measured(world, CLIENTS, &reads(&world.replicated, unmarked, path), 200, knobs.seconds, true)
                .await?;
        let replayed =
            measured(world, CLIENTS, &reads(&world.replicated, marked, path), 200, knobs.seconds, false)
                .await?;
        let _ = writeln!(
            out,
            "\n2. Routing a tolerant read: GET {path} as staff, replica caught up, {} s a run",
            knobs.seconds.as_secs()
        );
        header(out, "");
        row(out, "read URL unset (primary)", &primary);
        row(out, "set, reader never wrote", &fresh);
        row(out, "set, reader's mark replayed", &replayed);
        // Exactly who served, through the ports: the same list, one reader of each kind.
        let mut split = Vec::new();
        for reader in [unmarked[0].subject, marked[0].subject] {
            let before = served(&db)?;
            for _ in 0..knobs.split_reads {
                list_as(&db, world, reader).await?;
            }
            let after = served(&db)?;
            split.push((after.replica - before.replica, after.primary - before.primary));
        }
        let _ = writeln!(
            out,
            "  served (ports, Database::tolerant_reads, {} reads each): never wrote: replica {} primary {}; \
             mark replayed: replica {} primary {}",
            knobs.split_reads, split[0].0, split[0].1, split[1].0, split[1].1
        );
        Ok(())
    }
    .await;
    db.close();
    outcome
}

/// Measurement 4: the admins' overview, 8 readers, with citizens submitting, on each node.
pub async fn offload(world: &World, knobs: Knobs, out: &mut String) -> Result<()> {
    println!("4. offload: 8 readers of the analytics overview and a writer, on each node ...");
    let _ = writeln!(
        out,
        "\n4. Offload: {OVERVIEW_READERS} mission admins reading GET /api/v1/analytics/overview back to back, \
         citizens submitting {}/s on the same node, {} s a run",
        knobs.offload_write_rate,
        knobs.seconds.as_secs()
    );
    let _ = writeln!(
        out,
        "  {:<34} {:>3} {:>8} {:>7} {:>7} {:>9} {:>9} {:>8} {:>8}",
        "database_read_url", "cl", "reads/s", "p50 ms", "p99 ms", "PG prim", "PG stby", "prim", "stby"
    );
    let _ = writeln!(
        out,
        "  {:<34} {:>3} {:>8} {:>7} {:>7} {:>9} {:>9} {:>8} {:>8}",
        "", "", "", "", "", "µs/read", "µs/read", "cores", "cores"
    );
    for (label, app) in [("unset (primary)", &world.plain), ("set (replica)", &world.replicated)] {
        world.caught_up().await?;
        let writer = Submissions::start(app, &world.citizens, &world.service, knobs.offload_write_rate);
        let make = reads(app, &world.admins, "/api/v1/analytics/overview");
        let run = measured(world, OVERVIEW_READERS, &make, 200, knobs.seconds, true).await;
        let written = writer.stop().await?;
        let m = run?;
        let (primary, standby) = m.servers.per(m.run.requests);
        let _ = writeln!(
            out,
            "  {label:<34} {:>3} {:>8.0} {:>7.2} {:>7.2} {:>9.0} {:>9.0} {:>8.2} {:>8.2}   ({written} submissions)",
            m.run.clients,
            m.run.per_second,
            m.run.p50_ms,
            m.run.p99_ms,
            primary,
            standby,
            m.servers.primary,
            m.servers.standby
        );
    }
    Ok(())
}
