//! Notification delivery on PostgreSQL: how fast the outbox worker turns a backlog of
//! events into in-app notifications (events per second, one worker node and two), and the
//! delay from an event's commit to its notification at a steady rate of writes over HTTP
//! (p50, p99, max). Run with `make bench` (or
//! `cargo bench -p consular-tests --bench notifications`); see docs/benchmarks.md.
//!
//! 1. Starts the real server in-process on 127.0.0.1 as the other benches do (the test
//!    harness, a fresh database of the shared PostgreSQL test cluster; release build,
//!    2 HTTP workers, pool of 10, log level warn). The harness runs it with
//!    `run_worker = false`: this node only serves the API. Creates a mission, a service
//!    type, a staff member assigned to it and a citizen (both with their clients) and
//!    `BENCH_REQUESTS` requests submitted by the citizen, through the API. The setup's own
//!    events (submissions, assignments) are marked delivered, so that every later backlog
//!    is exactly the bench's events.
//! 2. Throughput: `BENCH_EVENTS` undelivered `message.posted` events by staff (the payload
//!    the API writes) inserted with one SQL statement, round robin over the requests, with
//!    UUIDv7-shaped ids increasing in insertion order (the worker claims in id order); then
//!    a worker node is started on the same database (`spawn_node_with`: `run_worker`,
//!    `outbox_batch` = `BENCH_BATCH`, no `smtp_url`, so in-app only) and timed from its
//!    start until no event is undelivered (polled every 50 ms). Each event must have
//!    produced exactly one `message_from_staff` notification to the citizen (the bench
//!    fails otherwise). Then the same with two fresh worker nodes on a new backlog, and
//!    which node delivered how many events.
//! 3. Latency: one worker node running, the staff member posts messages over HTTP
//!    (`POST /api/v1/requests/{id}/messages`) at `BENCH_RATE` per second for
//!    `BENCH_SECONDS`; once the outbox is drained, the delay from each event's
//!    `created_at` (stamped by the API node just before its commit) to its notification's
//!    `created_at` (stamped by the worker) in SQL: p50, p99, max. Once with the default
//!    idle poll (`outbox_poll_ms` 200 ms), once with 20 ms. No limit on the delay (it is
//!    printed); a missing or duplicated notification fails the bench.
//!
//! Knobs (environment): `BENCH_EVENTS` (events per throughput run, default 20000),
//! `BENCH_REQUESTS` (500, the requests the events are spread over), `BENCH_BATCH`
//! (`outbox_batch` of the workers, 200), `BENCH_RATE` (messages per second of the latency
//! runs, 100), `BENCH_SECONDS` (seconds of each latency run, 10).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_ports::NotificationRepository;
use consular_tests::bench::{
    CpuSample, CpuSplit, Result, TICKS_PER_SECOND, bench_main, bench_server, drop_database, env_number, psql,
    stat_ticks,
};
use consular_tests::consular_app::Settings;
use consular_tests::consular_db::{Database, DbConfig};
use consular_tests::serde_json::{Value, json};
use consular_tests::{
    CITIZENS, Issued, SERVICES, STAFF, TestApp, citizen_body, service_body, set_setting, staff_body, text,
};
use futures_util::StreamExt;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The idle poll interval of the second latency run (the default is `outbox_poll_ms`).
const FAST_POLL_MS: u64 = 20;
/// How long a backlog may take to drain before the bench gives up.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(300);
/// Submissions in flight while the requests are created.
const SUBMITTERS: usize = 4;

fn main() -> ExitCode {
    bench_main("notifications", run)
}

/// The knobs.
#[derive(Clone, Copy)]
struct Knobs {
    events: usize,
    requests: usize,
    batch: usize,
    rate: usize,
    seconds: usize,
}

async fn run() -> Result<()> {
    let knobs = Knobs {
        events: env_number("BENCH_EVENTS", 20_000),
        requests: env_number("BENCH_REQUESTS", 500),
        batch: env_number("BENCH_BATCH", 200),
        rate: env_number("BENCH_RATE", 100),
        seconds: env_number("BENCH_SECONDS", 10),
    };
    let (app, url) =
        bench_server("notifications: outbox to in-app notifications, throughput and delay (PostgreSQL)")
            .await?;
    let db = Database::connect(&DbConfig::new(url.clone())).map_err(|e| format!("database handle: {e}"))?;
    let outcome = async {
        let world = seed(&app, &url, knobs).await?;
        let default_poll = app.settings.outbox_poll_ms;
        println!(
            "workers: outbox_batch {}, outbox_poll_ms {default_poll} (idle poll; {FAST_POLL_MS} in the last run), \
             outbox_lease_secs {}, no smtp_url (in-app only), pool of {} each",
            knobs.batch, app.settings.outbox_lease_secs, app.settings.db_max_connections
        );

        // Throughput: a backlog, then one worker node; a new backlog, then two.
        let one = throughput(&app, &db, &url, &world, knobs, &["bench-worker-1"]).await?;
        let two = throughput(&app, &db, &url, &world, knobs, &["bench-worker-2", "bench-worker-3"]).await?;

        // Latency: one worker node at the default idle poll, then one at FAST_POLL_MS.
        let mut delays = Vec::new();
        for (name, poll) in [("bench-worker-4", default_poll), ("bench-worker-5", FAST_POLL_MS)] {
            let node = app.spawn_node_with(worker_settings(&app, name, knobs.batch, poll)?).await;
            delays.push(latency(&app, &db, &url, &world, knobs, poll).await?);
            stop(vec![node]).await;
        }
        everything_once(&url, &world).await?;
        print_summary(knobs, &world, &one, &two, &delays);
        Ok(())
    }
    .await;
    db.close();
    drop(app);
    let dropped = drop_database(&url).await;
    outcome.and(dropped)
}

// ------------------------------------------------------------------------------ seeding

/// What the setup created.
struct World {
    citizen: String,
    staff: Issued,
    requests: Vec<String>,
}

async fn seed(app: &TestApp, url: &str, knobs: Knobs) -> Result<World> {
    let started = Instant::now();
    let admin = app.admin_token().await;
    let mission = text(&app.create_mission(&admin, "fr-bench").await, "id");
    let mut service = service_body("bench_passport");
    // No required documents (nothing here approves a request).
    service["required_documents"] = json!([]);
    let service = text(&app.create_at(SERVICES, &admin, &service).await, "id");
    let mut staff = staff_body(&mission, "Bench Officer");
    staff["service_type_ids"] = json!([service]);
    staff["issue_client"] = json!(true);
    let staff = app.issued(app.create_at(STAFF, &admin, &staff).await).await;
    let mut citizen = citizen_body(&mission, "BENCH0001");
    citizen["registration_status"] = json!("active");
    citizen["issue_client"] = json!(true);
    let citizen = app.issued(app.create_at(CITIZENS, &admin, &citizen).await).await;

    let body = json!({ "service_type_id": service });
    let submissions = futures_util::stream::iter(0..knobs.requests)
        .map(|_| async {
            let response = app.post_json("/api/v1/requests", &citizen.token, &body).await;
            let status = response.status();
            let answer: Value = response.json().await.map_err(|e| format!("submission: {e}"))?;
            if status.as_u16() != 201 {
                return Err(format!("submission: {status}: {answer}"));
            }
            Ok(text(&answer, "id"))
        })
        .buffer_unordered(SUBMITTERS)
        .collect::<Vec<Result<String>>>()
        .await;
    let mut requests = submissions.into_iter().collect::<Result<Vec<_>>>()?;
    requests.sort();

    // The submissions' own events (submitted, assigned) are not the bench's: delivered
    // now, they produce nothing, and every backlog below is exactly the bench's events.
    let setup = number(
        url,
        "WITH d AS (UPDATE outbox_events SET delivered_at = now(), delivered_by = 'bench-setup' \
         WHERE delivered_at IS NULL RETURNING 1) SELECT count(*) FROM d",
    )
    .await?;
    println!(
        "seeded: a mission, a service type, a staff member assigned to it, a citizen and {} requests \
         through the API in {:.1?} ({setup} setup events marked delivered)",
        requests.len(),
        started.elapsed()
    );
    Ok(World { citizen: citizen.id, staff, requests })
}

/// A number from one SQL statement.
async fn number(url: &str, sql: &str) -> Result<u64> {
    let out = psql(url, sql).await?;
    out.trim().parse().map_err(|e| format!("{sql}: {e}: {out}"))
}

/// The settings of a worker node: the server's (same database, signing keys), with the
/// worker on, `node_id` (what `delivered_by` shows), its batch and idle poll, no SMTP.
fn worker_settings(app: &TestApp, node: &str, batch: usize, poll_ms: u64) -> Result<Settings> {
    let mut settings = app.settings.clone();
    set_setting(&mut settings, "run_worker", json!(true));
    set_setting(&mut settings, "node_id", json!(node));
    set_setting(&mut settings, "outbox_batch", json!(batch));
    set_setting(&mut settings, "outbox_poll_ms", json!(poll_ms));
    set_setting(&mut settings, "smtp_url", Value::Null);
    settings.validate().map_err(|e| format!("worker settings: {e}"))?;
    Ok(settings)
}

/// Stops worker nodes (idle: their outbox is drained) and gives their background tasks,
/// aborted once each server has stopped, a moment to end.
async fn stop(nodes: Vec<TestApp>) {
    for node in &nodes {
        node.stop().await;
    }
    drop(nodes);
    tokio::time::sleep(Duration::from_millis(200)).await;
}

/// The database's clock, to mark where a run's events begin (`created_at >= mark`).
async fn db_now(url: &str) -> Result<String> {
    Ok(psql(url, "SELECT clock_timestamp()").await?.trim().to_owned())
}

/// Waits until no event is undelivered (the count `/metrics` reports, polled every
/// 50 ms); how long it took.
async fn drain(db: &Database, started: Instant) -> Result<Duration> {
    loop {
        let backlog = db.backlog().await.map_err(|e| format!("the backlog: {e}"))?;
        if backlog.pending_events == 0 {
            return Ok(started.elapsed());
        }
        if started.elapsed() > DRAIN_TIMEOUT {
            return Err(format!(
                "{} events still undelivered after {DRAIN_TIMEOUT:?}",
                backlog.pending_events
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

// -------------------------------------------------------------------------- checks

/// The events of a run (`message.posted` written since `mark`) and their notifications.
struct Window {
    events: u64,
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
}

/// Every `message.posted` event since `mark` must be delivered with exactly one
/// notification, `message_from_staff` to the citizen, and there must be `expected` of
/// them; the delays from the event's `created_at` to its notification's.
async fn window(url: &str, world: &World, mark: &str, expected: u64) -> Result<Window> {
    let delay = "extract(epoch FROM n.created_at - e.created_at)::float8";
    let out = psql(
        url,
        &format!(
            "SELECT count(DISTINCT e.id), count(n.id), count(DISTINCT n.event_id), \
             count(DISTINCT e.id) FILTER (WHERE e.delivered_at IS NULL), \
             count(n.id) FILTER (WHERE n.kind <> 'message_from_staff' OR n.recipient_id <> '{citizen}' \
             OR n.recipient_kind <> 'citizen' OR n.request_id IS DISTINCT FROM e.aggregate_id), \
             coalesce(1000 * percentile_cont(0.5) WITHIN GROUP (ORDER BY {delay}), 0), \
             coalesce(1000 * percentile_cont(0.99) WITHIN GROUP (ORDER BY {delay}), 0), \
             coalesce(1000 * max({delay}), 0) \
             FROM outbox_events e LEFT JOIN notifications n ON n.event_id = e.id \
             WHERE e.kind = 'message.posted' AND e.created_at >= '{mark}'",
            citizen = world.citizen
        ),
    )
    .await?;
    let fields: Vec<&str> = out.trim().split('|').collect();
    let [events, notifications, distinct, undelivered, wrong, p50, p99, max] = fields.as_slice() else {
        return Err(format!("unexpected check output: {out}"));
    };
    let int = |s: &str| s.parse::<u64>().map_err(|e| format!("{s}: {e}"));
    let float = |s: &str| s.parse::<f64>().map_err(|e| format!("{s}: {e}"));
    let (events, notifications, distinct) = (int(events)?, int(notifications)?, int(distinct)?);
    let (undelivered, wrong) = (int(undelivered)?, int(wrong)?);
    if events != expected || undelivered != 0 || notifications != events || distinct != events || wrong != 0 {
        return Err(format!(
            "{events} events (expected {expected}), {undelivered} undelivered, {notifications} notifications \
             for {distinct} distinct events, {wrong} not a message_from_staff to the citizen about the request: \
             a notification is missing or duplicated"
        ));
    }
    Ok(Window { events, p50_ms: float(p50)?, p99_ms: float(p99)?, max_ms: float(max)? })
}

/// At the end: every `message.posted` event of the bench delivered, each with exactly
/// one notification; no event anywhere with more than one.
async fn everything_once(url: &str, world: &World) -> Result<()> {
    let out = psql(
        url,
        &format!(
            "SELECT (SELECT count(*) FROM outbox_events WHERE delivered_at IS NULL), \
             (SELECT count(*) FROM outbox_events e WHERE e.kind = 'message.posted' \
                AND (SELECT count(*) FROM notifications n WHERE n.event_id = e.id) <> 1), \
             (SELECT count(*) FROM (SELECT event_id FROM notifications GROUP BY event_id HAVING count(*) > 1) d), \
             (SELECT count(*) FROM notifications WHERE recipient_id = '{}'), \
             (SELECT count(*) FROM outbox_events WHERE kind = 'message.posted')",
            world.citizen
        ),
    )
    .await?;
    let fields: Vec<&str> = out.trim().split('|').collect();
    let [undelivered, not_once, duplicated, notifications, events] = fields.as_slice() else {
        return Err(format!("unexpected check output: {out}"));
    };
    if (*undelivered, *not_once, *duplicated) != ("0", "0", "0") || notifications != events {
        return Err(format!(
            "at the end: {undelivered} undelivered events, {not_once} message events without exactly one \
             notification, {duplicated} events with several; {notifications} notifications to the citizen \
             for {events} message events"
        ));
    }
    println!(
        "\nexactly once: {events} message.posted events, {notifications} notifications to the citizen, \
         none missing or duplicated"
    );
    Ok(())
}

// --------------------------------------------------------------------------- throughput

/// One throughput run.
struct Throughput {
    workers: usize,
    events: u64,
    /// From the worker nodes' start to the last event delivered.
    elapsed: Duration,
    /// Of which starting the nodes (building them: pool, keys, listener).
    start: Duration,
    /// `delivered_by` and its count, by node.
    by_node: Vec<(String, u64)>,
    cpu: CpuSplit,
    /// Seconds of CPU of the bench database's backends, the worker nodes' new ones included.
    postgres: f64,
}

impl Throughput {
    fn per_second(&self) -> f64 {
        self.events as f64 / self.elapsed.as_secs_f64()
    }

    /// CPU of the worker tasks per event, µs: they run on the bench's runtime (its
    /// threads are the "client" of the CPU split; the pools' blocking threads "other
    /// in-process").
    fn worker_us(&self) -> f64 {
        let events = self.events as f64;
        self.cpu.per("client", events) + self.cpu.per("other in-process", events)
    }

    /// CPU of PostgreSQL per event, µs.
    fn postgres_us(&self) -> f64 {
        self.postgres / (self.events as f64).max(1.0) * 1e6
    }

    /// Cores used by everything else: the machine's busy time less the worker, the
    /// server's threads, the bench database's backends and interrupts (other databases of
    /// the shared cluster count here).
    fn noise(&self) -> f64 {
        let ours: f64 = ["client", "other in-process", "server", "interrupts"]
            .into_iter()
            .map(|kind| self.cpu.kinds.get(kind).copied().unwrap_or(0.0))
            .sum();
        ((self.cpu.busy - ours - self.postgres) / self.cpu.seconds.max(1e-9)).max(0.0)
    }
}

/// CPU ticks of the PostgreSQL backends connected to database `name`, by pid (a
/// backend's command line is `postgres: user database host(port) state`; the test
/// cluster is shared with other databases).
fn postgres_ticks(name: &str) -> HashMap<u32, u64> {
    let mut ticks = HashMap::new();
    let ours = format!(" {name} ");
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let Some(("postgres", used)) = stat_ticks(&stat) else { continue };
        let command = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&command).contains(&ours) {
            ticks.insert(pid, used);
        }
    }
    ticks
}

/// Seconds of CPU the backends of database `name` used since `before`. A backend that
/// started since counts in full: the worker nodes open their connections during the run,
/// and the CPU split (`CpuSample::since`) leaves such processes unattributed.
fn postgres_seconds(name: &str, before: &HashMap<u32, u64>) -> f64 {
    let ticks: u64 = postgres_ticks(name)
        .into_iter()
        .map(|(pid, now)| now.saturating_sub(before.get(&pid).copied().unwrap_or(0)))
        .sum();
    ticks as f64 / TICKS_PER_SECOND
}

/// `BENCH_EVENTS` undelivered `message.posted` events by staff, round robin over the
/// requests, in one statement. Ids: UUIDv7 layout, the transaction's millisecond then a
/// counter (version 7, variant 8), so they increase in insertion order as the API's do.
const EVENTS_SQL: &str = r#"
WITH r AS (SELECT array_agg(id ORDER BY id) AS ids FROM service_requests WHERE citizen_id = '{CITIZEN}')
INSERT INTO outbox_events (id, kind, aggregate_id, payload, created_at)
SELECT (lpad(to_hex(floor(extract(epoch FROM now()) * 1000)::bigint), 12, '0') || '70008'
        || lpad(to_hex(n), 15, '0'))::uuid,
    'message.posted',
    r.ids[1 + n % cardinality(r.ids)],
    jsonb_build_object('message_id', gen_random_uuid(), 'author_kind', 'staff', 'citizen_id', '{CITIZEN}'),
    now()
FROM r CROSS JOIN generate_series(0, {EVENTS} - 1) AS n;
ANALYZE outbox_events;
"#;

async fn throughput(
    app: &TestApp,
    db: &Database,
    url: &str,
    world: &World,
    knobs: Knobs,
    names: &[&str],
) -> Result<Throughput> {
    let workers = names.len();
    println!(
        "\n== throughput, {workers} worker node{}: {} events in the outbox, then the worker{} started",
        if workers == 1 { "" } else { "s" },
        knobs.events,
        if workers == 1 { "" } else { "s" }
    );
    let before = number(url, "SELECT count(*) FROM notifications").await?;
    let mark = db_now(url).await?;
    let inserting = Instant::now();
    psql(
        url,
        &EVENTS_SQL.replace("{CITIZEN}", &world.citizen).replace("{EVENTS}", &knobs.events.to_string()),
    )
    .await?;
    let pending = db.backlog().await.map_err(|e| format!("the backlog: {e}"))?.pending_events;
    if pending != knobs.events as u64 {
        return Err(format!("{pending} events undelivered after inserting {}", knobs.events));
    }
    println!(
        "   outbox {pending} undelivered events inserted in {:.1?} (one statement)",
        inserting.elapsed()
    );

    let settings = names
        .iter()
        .map(|name| worker_settings(app, name, knobs.batch, app.settings.outbox_poll_ms))
        .collect::<Result<Vec<_>>>()?;
    let cpu_before = CpuSample::take();
    let database = url.rsplit('/').next().unwrap_or_default().split('?').next().unwrap_or_default();
    let postgres_before = postgres_ticks(database);
    let started = Instant::now();
    let nodes = futures_util::future::join_all(settings.into_iter().map(|s| app.spawn_node_with(s))).await;
    let start = started.elapsed();
    let elapsed = drain(db, started).await?;
    let cpu = CpuSample::take().since(&cpu_before);
    let postgres = postgres_seconds(database, &postgres_before);
    // The next run starts its own nodes on a new backlog.
    stop(nodes).await;

    let added = number(url, "SELECT count(*) FROM notifications").await? - before;
    let window = window(url, world, &mark, knobs.events as u64).await?;
    if added != knobs.events as u64 {
        return Err(format!("{added} notifications for {} events", knobs.events));
    }
    let by_node = psql(
        url,
        &format!(
            "SELECT coalesce(delivered_by, '-'), count(*) FROM outbox_events \
             WHERE kind = 'message.posted' AND created_at >= '{mark}' GROUP BY 1 ORDER BY 1"
        ),
    )
    .await?
    .lines()
    .filter_map(|line| line.split_once('|'))
    .map(|(node, n)| Ok((node.to_owned(), n.parse::<u64>().map_err(|e| format!("{n}: {e}"))?)))
    .collect::<Result<Vec<_>>>()?;
    let run = Throughput { workers, events: window.events, elapsed, start, by_node, cpu, postgres };
    println!(
        "   worker {:>8.0} events/s  {} events in {:.2?} from the node{} start ({:.0?} to start), \
         {added} notifications (+{added})",
        run.per_second(),
        run.events,
        run.elapsed,
        if workers == 1 { "'s" } else { "s'" },
        run.start
    );
    println!(
        "   nodes  {}",
        run.by_node.iter().map(|(node, n)| format!("{node} {n}")).collect::<Vec<_>>().join(", ")
    );
    println!(
        "   CPU    worker (in-process) {:.0} µs, PostgreSQL {:.0} µs per event; cores busy {:.2} \
         (other processes {:.2})",
        run.worker_us(),
        run.postgres_us(),
        run.cpu.busy / run.cpu.seconds.max(1e-9),
        run.noise()
    );
    if workers > 1 && run.by_node.len() < workers {
        println!("   NOTE   not every worker node delivered events");
    }
    if workers > 1 && world.requests.len() < workers * knobs.batch {
        println!(
            "   NOTE   {} requests for {workers} batches of {}: an event waits while an earlier one of its \
             request is leased, so the nodes' batches can hardly overlap (docs/benchmarks.md)",
            world.requests.len(),
            knobs.batch
        );
    }
    Ok(run)
}

// ------------------------------------------------------------------------------ latency

/// One latency run.
struct Latency {
    poll_ms: u64,
    posted: u64,
    /// The POSTs' own latency.
    http_p50_ms: f64,
    http_p99_ms: f64,
    window: Window,
}

async fn latency(
    app: &TestApp,
    db: &Database,
    url: &str,
    world: &World,
    knobs: Knobs,
    poll_ms: u64,
) -> Result<Latency> {
    let total = knobs.rate * knobs.seconds;
    println!(
        "\n== latency, one worker node, outbox_poll_ms {poll_ms}: {} staff messages/s over HTTP for {} s",
        knobs.rate, knobs.seconds
    );
    let http = consular_tests::reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| format!("HTTP client: {e}"))?;
    // The worker node has started; its first (empty) pass is behind it.
    tokio::time::sleep(Duration::from_millis(poll_ms.max(100))).await;
    let mark = db_now(url).await?;
    let mut ticker = tokio::time::interval(Duration::from_secs_f64(1.0 / knobs.rate as f64));
    let mut tasks = Vec::with_capacity(total);
    for i in 0..total {
        ticker.tick().await;
        let request = &world.requests[i % world.requests.len()];
        let post = http
            .post(app.url(&format!("/api/v1/requests/{request}/messages")))
            .bearer_auth(&world.staff.token)
            .json(&json!({ "body": format!("Your appointment letter is ready ({i}).") }));
        tasks.push(tokio::spawn(async move {
            let sent = Instant::now();
            let response = post.send().await.map_err(|e| format!("POST message: {e}"))?;
            let status = response.status();
            let body = response.text().await.map_err(|e| format!("POST message: {e}"))?;
            if status.as_u16() != 201 {
                return Err(format!("POST message: {status}: {body}"));
            }
            Ok(sent.elapsed())
        }));
    }
    let mut answers = Vec::with_capacity(total);
    for task in tasks {
        answers.push(task.await.map_err(|e| format!("a POST task failed: {e}"))??);
    }
    drain(db, Instant::now()).await?;
    answers.sort_unstable();
    let at = |q: f64| answers[((answers.len() - 1) as f64 * q) as usize].as_secs_f64() * 1000.0;
    let window = window(url, world, &mark, total as u64).await?;
    let run = Latency { poll_ms, posted: total as u64, http_p50_ms: at(0.5), http_p99_ms: at(0.99), window };
    println!(
        "   delay  p50 {:>7.1} ms  p99 {:>7.1} ms  max {:>7.1} ms  from commit to notification ({} events, \
         each one notification)",
        run.window.p50_ms, run.window.p99_ms, run.window.max_ms, run.window.events
    );
    println!(
        "   HTTP   p50 {:>7.1} ms  p99 {:>7.1} ms  POST /api/v1/requests/{{id}}/messages ({} answers 201)",
        run.http_p50_ms, run.http_p99_ms, run.posted
    );
    Ok(run)
}

// ------------------------------------------------------------------------------ report

fn print_summary(knobs: Knobs, world: &World, one: &Throughput, two: &Throughput, delays: &[Latency]) {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nnotifications on PostgreSQL: message.posted events by staff over {} requests of one citizen, \
         in-app only; outbox_batch {}",
        world.requests.len(),
        knobs.batch
    );
    let _ = writeln!(
        out,
        "{:<28} {:>8} {:>9} {:>10} {:>11} {:>9}  delivered by",
        "throughput", "events", "seconds", "events/s", "worker µs", "PG µs"
    );
    for run in [one, two] {
        let _ = writeln!(
            out,
            "{:<28} {:>8} {:>9.2} {:>10.0} {:>11.0} {:>9.0}  {}",
            format!("{} worker node{}", run.workers, if run.workers == 1 { "" } else { "s" }),
            run.events,
            run.elapsed.as_secs_f64(),
            run.per_second(),
            run.worker_us(),
            run.postgres_us(),
            run.by_node.iter().map(|(node, n)| format!("{node} {n}")).collect::<Vec<_>>().join(", ")
        );
    }
    let _ = writeln!(
        out,
        "\n{:<28} {:>8} {:>9} {:>10} {:>9} {:>9} {:>9} {:>12}",
        "delay, commit to notification",
        "poll ms",
        "msgs/s",
        "events",
        "p50 ms",
        "p99 ms",
        "max ms",
        "POST p99 ms"
    );
    for run in delays {
        let _ = writeln!(
            out,
            "{:<28} {:>8} {:>9} {:>10} {:>9.1} {:>9.1} {:>9.1} {:>12.1}",
            "1 worker node",
            run.poll_ms,
            knobs.rate,
            run.window.events,
            run.window.p50_ms,
            run.window.p99_ms,
            run.window.max_ms,
            run.http_p99_ms
        );
    }
    print!("{out}");
}
