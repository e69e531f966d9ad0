//! The analytics views at scale: `GET /api/v1/analytics/{overview,services,staff}` on
//! PostgreSQL with `BENCH_REQUESTS` (default 1,000,000) generated requests and on SQLite
//! with `BENCH_SQLITE_REQUESTS` (100,000), each view for the largest mission and for all
//! missions over a 90-day range by day, while requests are submitted and changed over HTTP.
//! Run with `make bench` (or `cargo bench -p consular-tests --bench analytics`); see
//! docs/benchmarks.md.
//!
//! 1. Starts the real server in-process (release build, 2 HTTP workers, pool of 10, log
//!    level warn) on a fresh database and seeds it with the product's generator
//!    (`consular demo seed`'s use case): `BENCH_MISSIONS` (40) missions, the requests
//!    spread over `BENCH_DAYS` (1826: five years) days, seed 1; then `VACUUM ANALYZE`.
//! 2. PostgreSQL only, before any write: each view's range figures beside the same figures
//!    computed by a plain SQL aggregate over the base tables (`service_requests`, and
//!    `request_history` windowed into stage spells), timed; the bench fails unless they are
//!    equal, exactly (counts, rates' numerators, medians and p90s as doubles).
//! 3. The latency: writers submit requests for seeded citizens and move them (in review,
//!    next stage, rejected) over HTTP at `BENCH_WRITE_RATE` (20) writes per second; one
//!    reader calls each view `BENCH_CALLS` (40) times after 3 warm-up calls, for the largest
//!    mission (as its mission admin) and for all missions (as a global admin): p50, p95,
//!    max. Fails when a p95 is over its target (100 ms on PostgreSQL, 300 ms on SQLite),
//!    printing every figure first.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_application::demo::{DemoPlan, DemoPorts, DemoService};
use consular_domain::analytics::local_date;
use consular_ports::{Clock, SystemClock};
use consular_tests::bench::{Result, bench_main, bench_server, env_number, psql};
use consular_tests::serde_json::{Value, json};
use consular_tests::{Backend, TestApp, text, with_query};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use time::OffsetDateTime;

const VIEWS: [&str; 3] = ["overview", "services", "staff"];
const RANGE_DAYS: i64 = 90;

fn main() -> ExitCode {
    bench_main("analytics", run)
}

async fn run() -> Result<()> {
    let missions = env_number("BENCH_MISSIONS", 40) as u32;
    let days = env_number("BENCH_DAYS", 1826) as u32;
    let backends = std::env::var("BENCH_BACKENDS").unwrap_or_else(|_| "postgres,sqlite".to_owned());
    let pg_ok = if backends.contains("postgres") { postgres(missions, days).await? } else { true };
    let lite_ok = if backends.contains("sqlite") { sqlite(missions, days).await? } else { true };
    if pg_ok && lite_ok { Ok(()) } else { Err("a p95 is over its target".to_owned()) }
}

/// The PostgreSQL part; whether every p95 is under 100 ms.
async fn postgres(missions: u32, days: u32) -> Result<bool> {
    let (app, url) = bench_server("analytics views on PostgreSQL").await?;
    let requests = env_number("BENCH_REQUESTS", 1_000_000) as u64;
    let seeded = seed(&app, missions, requests, days).await?;
    psql(&url, "VACUUM ANALYZE").await?;
    let admin = app.admin_token().await;
    let largest = largest_mission(&app, &admin).await?;
    compare_with_plain_sql(&app, &admin, &url, &largest).await?;
    let pg = latencies(&app, &admin, &largest).await?;
    println!("PostgreSQL, {seeded}");
    Ok(report(&pg, 100.0))
}

/// The SQLite part; whether every p95 is under 300 ms.
async fn sqlite(missions: u32, days: u32) -> Result<bool> {
    println!("\nanalytics views on SQLite");
    let app = TestApp::spawn_with(Backend::Sqlite, |settings| {
        settings.workers = 2;
        settings.log_level = "warn".to_owned();
    })
    .await;
    let requests = env_number("BENCH_SQLITE_REQUESTS", 100_000) as u64;
    let seeded = seed(&app, missions, requests, days).await?;
    let admin = app.admin_token().await;
    let largest = largest_mission(&app, &admin).await?;
    let lite = latencies(&app, &admin, &largest).await?;
    println!("SQLite, {seeded}");
    Ok(report(&lite, 300.0))
}

/// Seeds the data set; a line saying what and how long.
async fn seed(app: &TestApp, missions: u32, requests: u64, days: u32) -> Result<String> {
    let started = Instant::now();
    let plan = DemoPlan { missions, requests, seed: 1, days, now: SystemClock.now() };
    let service =
        DemoService::new(DemoPorts { demo: Arc::new(app.database()), clock: Arc::new(SystemClock) });
    let counts = service.seed_plan(plan, |_| {}).await.map_err(|e| format!("seeding: {e:?}"))?;
    Ok(format!(
        "{} missions, {} requests ({} history entries) over {days} days, seeded in {:.0?}",
        counts.missions,
        counts.requests,
        counts.history_entries,
        started.elapsed()
    ))
}

/// A mission of the data set.
struct Mission {
    id: String,
    timezone: String,
}

/// The mission with the most requests submitted in the last 30 days, found through the
/// API (the overview of each mission).
async fn largest_mission(app: &TestApp, admin: &str) -> Result<Mission> {
    let missions: Value =
        app.get("/api/v1/missions?limit=100", admin).await.json().await.map_err(|e| e.to_string())?;
    let mut largest: Option<(u64, Mission)> = None;
    for mission in missions["items"].as_array().cloned().unwrap_or_default() {
        let candidate = Mission { id: text(&mission, "id"), timezone: text(&mission, "timezone") };
        let overview = call(app, admin, "overview", Some(&candidate)).await?;
        let submitted = overview["totals"]["submitted"].as_u64().unwrap_or_default();
        if largest.as_ref().is_none_or(|(most, _)| submitted > *most) {
            largest = Some((submitted, candidate));
        }
    }
    largest.map(|(_, mission)| mission).ok_or_else(|| "no mission".to_owned())
}

/// `from`, `to`: the last 90 days in `timezone` (today included).
fn range(timezone: &str) -> (String, String) {
    let today = local_date(timezone, OffsetDateTime::now_utc()).expect("a known zone");
    ((today - time::Duration::days(RANGE_DAYS - 1)).to_string(), today.to_string())
}

async fn call(app: &TestApp, token: &str, view: &str, mission: Option<&Mission>) -> Result<Value> {
    let body = fetch(app, token, view, mission).await?;
    consular_tests::serde_json::from_slice(&body).map_err(|e| format!("{view}: {e}"))
}

/// The view's body, as bytes: what the latency is measured to (parsing it is the client's
/// business).
async fn fetch(app: &TestApp, token: &str, view: &str, mission: Option<&Mission>) -> Result<Vec<u8>> {
    let zone = mission.map_or("UTC", |m| m.timezone.as_str());
    let (from, to) = range(zone);
    let mut query = vec![("from", from), ("to", to), ("granularity", "day".to_owned())];
    if let Some(m) = mission {
        query.push(("mission_id", m.id.clone()));
    }
    let query: Vec<(&str, &str)> = query.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let path = with_query(&format!("/api/v1/analytics/{view}"), &query);
    let response =
        app.authed(reqwest::Method::GET, &path, token).send().await.map_err(|e| format!("{view}: {e}"))?;
    let status = response.status();
    let body = response.bytes().await.map_err(|e| format!("{view}: {e}"))?;
    if status != 200 {
        return Err(format!("{view}: {status} {}", String::from_utf8_lossy(&body)));
    }
    Ok(body.to_vec())
}

/// The range of a view's answer as SQL literals `[start, end)`.
fn bounds(view: &Value) -> (String, String) {
    let series = view["series"].as_array().or_else(|| view["services"][0]["series"].as_array()).cloned();
    let series = series.unwrap_or_default();
    let start = series.first().map(|p| text(&p["bucket"], "starts_at")).unwrap_or_default();
    let end = series.last().map(|p| text(&p["bucket"], "ends_at")).unwrap_or_default();
    (start, end)
}

fn number(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The view's range figures and the same by plain SQL over the base tables: equal, or
/// the bench fails. Both scopes; prints the SQL's time beside.
async fn compare_with_plain_sql(app: &TestApp, admin: &str, url: &str, largest: &Mission) -> Result<()> {
    println!("\nrange figures, API vs a plain SQL aggregate over the base tables (before any write):");
    for mission in [None, Some(largest)] {
        let scope = mission.map_or("all missions".to_owned(), |m| format!("mission {}", m.id));
        let filter = mission.map_or(String::new(), |m| format!("AND r.mission_id = '{}'", m.id));
        let overview = call(app, admin, "overview", mission).await?;
        let (start, end) = bounds(&overview);
        // Overview: closed requests in the range; SLA compliance as the same division of
        // two counts (float8 division is IEEE's, as Rust's).
        let sql = format!(
            "\\timing on\nSELECT count(*), count(*) FILTER (WHERE status = 'completed'), \
             count(*) FILTER (WHERE closed_at <= sla_due_at)::float8 / NULLIF(count(*), 0), \
             percentile_cont(0.5) WITHIN GROUP (ORDER BY secs), percentile_cont(0.9) WITHIN GROUP (ORDER BY secs) \
             FROM (SELECT r.*, (floor(extract(epoch FROM closed_at)) - floor(extract(epoch FROM submitted_at)))::float8 AS secs \
                   FROM service_requests r WHERE closed_at >= '{start}' AND closed_at < '{end}' {filter}) c"
        );
        let (sql_totals, ms) = timed(url, &sql).await?;
        let t = &overview["totals"];
        let api =
            ["closed", "completed", "sla_compliance", "processing_median_seconds", "processing_p90_seconds"]
                .map(|figure| number(&t[figure]))
                .join("|");
        check("overview", &scope, &api, &sql_totals, ms)?;

        // Services: the time spent in each stage, from the history itself.
        let services = call(app, admin, "services", mission).await?;
        let mut api_stages = Vec::new();
        for service in services["services"].as_array().cloned().unwrap_or_default() {
            for stage in service["stages"].as_array().cloned().unwrap_or_default() {
                api_stages.push(format!(
                    "{}|{}|{}|{}",
                    text(&service, "service_type_id"),
                    stage["position"],
                    stage["spells"],
                    number(&stage["median_seconds"])
                ));
            }
        }
        api_stages.sort();
        let sql = format!(
            "\\timing on\nWITH e AS (SELECT h.request_id, h.id, h.at, h.to_stage, h.to_status, r.service_type_id, \
                 lag(h.to_stage) OVER w AS prev_stage, row_number() OVER w AS n \
               FROM request_history h JOIN service_requests r ON r.id = h.request_id \
               WHERE r.submitted_at < '{end}' AND (r.closed_at IS NULL OR r.closed_at >= '{start}') {filter} \
               WINDOW w AS (PARTITION BY h.request_id ORDER BY h.at, h.id)), \
             b AS (SELECT * FROM e WHERE n = 1 OR to_stage <> prev_stage \
                   OR to_status IN ('completed', 'rejected', 'cancelled')), \
             s AS (SELECT service_type_id, lag(to_stage) OVER w AS stage, lag(at) OVER w AS entered, at AS left_at, \
                     lag(to_status) OVER w AS prev_status \
                   FROM b WINDOW w AS (PARTITION BY request_id ORDER BY at, id)) \
             SELECT service_type_id, stage, count(*), percentile_cont(0.5) WITHIN GROUP (ORDER BY \
                 (floor(extract(epoch FROM left_at)) - floor(extract(epoch FROM entered)))::float8) \
             FROM s WHERE stage IS NOT NULL AND prev_status NOT IN ('completed', 'rejected', 'cancelled') \
               AND left_at >= '{start}' AND left_at < '{end}' GROUP BY 1, 2"
        );
        let (out, ms) = timed(url, &sql).await?;
        let mut sql_stages: Vec<String> = out.lines().filter(|l| !l.is_empty()).map(str::to_owned).collect();
        sql_stages.sort();
        check("services (stages)", &scope, &api_stages.join("\n"), &sql_stages.join("\n"), ms)?;

        // Staff: closed in the range and the median handling time, per assignee.
        let staff = call(app, admin, "staff", mission).await?;
        let mut api_staff: Vec<String> = staff["staff"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .filter(|m| m["closed"].as_u64() > Some(0))
            .map(|m| {
                format!("{}|{}|{}", text(m, "staff_id"), m["closed"], number(&m["handling_median_seconds"]))
            })
            .collect();
        api_staff.sort();
        let sql = format!(
            "\\timing on\nSELECT assignee_id, count(*), percentile_cont(0.5) WITHIN GROUP (ORDER BY \
                 (floor(extract(epoch FROM closed_at)) - floor(extract(epoch FROM submitted_at)))::float8) \
             FROM service_requests r WHERE closed_at >= '{start}' AND closed_at < '{end}' \
               AND assignee_id IS NOT NULL {filter} GROUP BY 1"
        );
        let (out, ms) = timed(url, &sql).await?;
        let mut sql_staff: Vec<String> = out.lines().filter(|l| !l.is_empty()).map(str::to_owned).collect();
        sql_staff.sort();
        check("staff", &scope, &api_staff.join("\n"), &sql_staff.join("\n"), ms)?;
    }
    Ok(())
}

/// Runs `sql` with `\timing on`: its rows and the server-reported milliseconds.
async fn timed(url: &str, sql: &str) -> Result<(String, f64)> {
    let out = psql(url, sql).await?;
    let mut rows = Vec::new();
    let mut ms = 0.0;
    for line in out.lines() {
        if let Some(rest) = line.strip_prefix("Time: ") {
            ms = rest.split_whitespace().next().and_then(|v| v.parse().ok()).unwrap_or(0.0);
        } else {
            rows.push(line);
        }
    }
    Ok((rows.join("\n"), ms))
}

/// Every `|`-separated number written the same way (JSON's `940627.0` and psql's
/// `940627` are the same double).
fn normalised(rows: &str) -> String {
    rows.lines()
        .map(|row| {
            row.split('|')
                .map(|cell| cell.parse::<f64>().map_or_else(|_| cell.to_owned(), |n| n.to_string()))
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn check(what: &str, scope: &str, api: &str, sql: &str, ms: f64) -> Result<()> {
    let rows = api.lines().count();
    let (api, sql) = (normalised(api), normalised(sql));
    if api == sql {
        println!("  {what:<18} {scope:<50} equal ({rows} rows); plain SQL {ms:.0} ms");
        Ok(())
    } else {
        Err(format!("{what} for {scope}: the API and the base tables differ\nAPI:\n{api}\nSQL:\n{sql}"))
    }
}

/// One measured (view, scope): milliseconds, sorted.
struct Measured {
    view: &'static str,
    scope: &'static str,
    ms: Vec<f64>,
    /// The size of the JSON answer.
    bytes: usize,
}

/// Each view for the largest mission (its admin) and all missions (a global admin), under
/// writes; the writes per second achieved.
async fn latencies(app: &TestApp, admin: &str, largest: &Mission) -> Result<(Vec<Measured>, f64)> {
    let mission_admin = app.principal_by(admin, &["admin"], Some(&largest.id)).await.token;
    let calls = env_number("BENCH_CALLS", 40);
    let stop = Arc::new(AtomicBool::new(false));
    let writes = Arc::new(AtomicU64::new(0));
    let writer = tokio::spawn(write_load(app.url(""), admin.to_owned(), stop.clone(), writes.clone()));
    let started = Instant::now();
    let mut measured = Vec::new();
    for view in VIEWS {
        for (scope, token, mission) in
            [("one mission", mission_admin.as_str(), Some(largest)), ("all missions", admin, None)]
        {
            for _ in 0..3 {
                call(app, token, view, mission).await?;
            }
            let mut ms = Vec::with_capacity(calls);
            let mut bytes = 0;
            for _ in 0..calls {
                let sent = Instant::now();
                bytes = fetch(app, token, view, mission).await?.len();
                ms.push(sent.elapsed().as_secs_f64() * 1000.0);
            }
            ms.sort_by(f64::total_cmp);
            measured.push(Measured { view, scope, ms, bytes });
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    writer.await.map_err(|e| format!("writer: {e}"))??;
    Ok((measured, writes.load(Ordering::Relaxed) as f64 / elapsed))
}

/// Submits requests for seeded citizens and moves each through in review, the next stage
/// and rejection, at the write rate, until `stop`.
async fn write_load(
    base: String,
    admin: String,
    stop: Arc<AtomicBool>,
    writes: Arc<AtomicU64>,
) -> Result<()> {
    let http = consular_tests::http_client();
    let get = async |path: &str| -> Result<Vec<Value>> {
        let page: Value = http
            .get(format!("{base}{path}"))
            .bearer_auth(&admin)
            .send()
            .await
            .map_err(|e| e.to_string())?
            .json()
            .await
            .map_err(|e| e.to_string())?;
        Ok(page["items"].as_array().cloned().unwrap_or_default())
    };
    let citizens: Vec<String> =
        get("/api/v1/citizens?limit=100").await?.iter().map(|c| text(c, "id")).collect();
    let services: Vec<String> = get("/api/v1/services?limit=100")
        .await?
        .iter()
        .filter(|s| s["active"] == true)
        .map(|s| text(s, "id"))
        .collect();
    if citizens.is_empty() || services.is_empty() {
        return Err("no citizen or service to write for".to_owned());
    }
    let rate = env_number("BENCH_WRITE_RATE", 20) as f64;
    let mut ticker = tokio::time::interval(Duration::from_secs_f64(1.0 / rate));
    let mut i = 0usize;
    while !stop.load(Ordering::Relaxed) {
        let body = json!({ "citizen_id": citizens[i % citizens.len()], "service_type_id": services[i % services.len()] });
        i += 1;
        ticker.tick().await;
        let submitted = http
            .post(format!("{base}/api/v1/requests"))
            .bearer_auth(&admin)
            .json(&body)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if submitted.status() != 201 {
            return Err(format!(
                "submit: {} {}",
                submitted.status(),
                submitted.text().await.unwrap_or_default()
            ));
        }
        let id = text(&submitted.json::<Value>().await.map_err(|e| e.to_string())?, "id");
        writes.fetch_add(1, Ordering::Relaxed);
        let steps = [
            json!({ "status": "in_review", "reason": "bench" }),
            json!({ "advance_stage": true }),
            json!({ "status": "rejected", "reason": "bench" }),
        ];
        let mut version = 1;
        for step in &steps {
            ticker.tick().await;
            let changed = http
                .patch(format!("{base}/api/v1/requests/{id}/status"))
                .bearer_auth(&admin)
                .header("If-Match", format!("\"{version}\""))
                .json(step)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            // A one-stage service has no next stage (409): the rejection follows anyway.
            match changed.status().as_u16() {
                200 => {
                    version += 1;
                    writes.fetch_add(1, Ordering::Relaxed);
                }
                409 => {}
                other => return Err(format!("change: {other} {}", changed.text().await.unwrap_or_default())),
            }
        }
    }
    Ok(())
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).ceil() as usize]
}

/// Prints the table; whether every p95 is under `target`.
fn report((measured, writes): &(Vec<Measured>, f64), target: f64) -> bool {
    println!(
        "  {writes:.1} writes/s over HTTP during the reads; 90 days by day; {} calls each",
        measured[0].ms.len()
    );
    println!(
        "  {:<10} {:<14} {:>8} {:>8} {:>8} {:>9}",
        "view", "scope", "p50 ms", "p95 ms", "max ms", "JSON KiB"
    );
    let mut ok = true;
    for m in measured {
        let p95 = percentile(&m.ms, 0.95);
        ok &= p95 < target;
        println!(
            "  {:<10} {:<14} {:>8.1} {:>8.1} {:>8.1} {:>9}{}",
            m.view,
            m.scope,
            percentile(&m.ms, 0.5),
            p95,
            m.ms[m.ms.len() - 1],
            m.bytes / 1024,
            if p95 < target { "" } else { "  OVER TARGET" }
        );
    }
    ok
}
