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
//!    each over HTTP and through pgbench (`more.rs`).
//! 6. A concurrency sweep of the first scenario against the same server in a process of
//!    its own (the `consular` binary, same settings and database): 8, 64 and 512
//!    keep-alive connections, throughput, p50/p99 and the server process's resident memory.
//! 7. Prints the summary tables; exits non-zero on any error.
//!
//! Knobs (environment): `BENCH_SECONDS` (measured seconds per run, default 10),
//! `BENCH_WARMUP_SECONDS` (2), `BENCH_CLIENTS` (8), `BENCH_REQUESTS` (100000).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

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

mod more;

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
        let calibration = calibrate(&app, &url, &scenarios[0], &seeded, (seconds * 3 / 10).max(3)).await?;
        let sweep = sweep(&app, &scenarios[0], (seconds / 2).max(3)).await?;
        print_table(&results, &calibration, seconds, warmup, rows);
        print_pairs(&pairs);
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
    /// The first service type.
    pub service_type_id: String,
    /// A request with a thread and notes (`more::detail`).
    pub detail_id: String,
}

// ------------------------------------------------------------------------------ seeding

/// `(code, name, sla_days, stage names)` of the service types.
const SERVICE_TYPES: [(&str, &str, i32, &[&str]); 5] = [
    ("bench_passport", "Passport renewal", 21, &["Document check", "Biometrics", "Printing"]),
    ("bench_visa", "Visa", 15, &["Document check", "Interview", "Decision", "Issuance"]),
    ("bench_birth", "Birth registration", 30, &["Document check", "Registration"]),
    ("bench_notarial", "Notarial act", 10, &["Signature"]),
    ("bench_etd", "Emergency travel document", 3, &["Identity check", "Issuance"]),
];

async fn seed(app: &TestApp, rows: usize) -> Result<Seeded> {
    let started = Instant::now();
    let admin_token = app.admin_token().await;
    let mission = app.create_mission(&admin_token, "fr-bench").await;
    let mission_id = text(&mission, "id")?;

    let mut type_ids = Vec::new();
    for (code, name, sla_days, stages) in SERVICE_TYPES {
        let stages: Vec<Value> = stages
            .iter()
            .map(|s| json!({ "name": s, "description": format!("{s} of the request") }))
            .collect();
        let body = json!({
            "code": code, "name": name, "description": format!("{name} at the consulate"),
            "fee": { "amount_minor": 8600, "currency": "EUR" }, "sla_days": sla_days,
            "required_documents": ["passport_photo", "old_passport"], "stages": stages,
        });
        type_ids.push(text(&created(app, "/api/v1/services", &admin_token, &body).await?, "id")?);
    }
    for n in 0..10 {
        let body = json!({
            "mission_id": mission_id, "name": format!("Officer {n}"), "email": format!("officer{n}@mission.example"),
            "job_title": "Consular officer", "service_type_ids": type_ids,
        });
        created(app, "/api/v1/staff", &admin_token, &body).await?;
    }
    let citizen = json!({
        "mission_id": mission_id, "given_name": "Alice", "family_name": "Martin", "date_of_birth": "1990-04-12",
        "place_of_birth": "Lyon", "nationality": "FR", "passport_number": "BENCH000000",
        "passport_expiry": "2031-04-11", "email": "alice.martin@example.org", "phone": "+33612345678",
        "address": { "line1": "1 Main Street", "city": "Ottawa", "country": "CA" }, "preferred_language": "fr",
        "registration_status": "active", "issue_client": true,
    });
    let citizen = created(app, "/api/v1/citizens", &admin_token, &citizen).await?;
    let (citizen_client_id, citizen_secret) =
        (text(&citizen["client"], "client_id")?, text(&citizen["client"], "client_secret")?);
    let citizen_token = app.token_for(&citizen_client_id, &citizen_secret, None).await.access_token;
    let mission_admin_token = app.principal_by(&admin_token, &["admin"], Some(&mission_id)).await.token;
    let api_done = started.elapsed();

    let sql = SEED_SQL
        .replace("{UUID7}", bench::SEED_UUID7)
        .replace("{MISSION}", &mission_id)
        .replace("{ROWS}", &rows.to_string());
    psql(&app.settings.database_url, &sql).await?;
    let count: usize = psql(&app.settings.database_url, "SELECT count(*) FROM service_requests")
        .await?
        .trim()
        .parse()
        .map_err(|e| format!("row count: {e}"))?;
    if count != rows {
        return Err(format!("seeded {count} service requests, expected {rows}"));
    }
    let summary = psql(
        &app.settings.database_url,
        "SELECT string_agg(status || ' ' || n, ', ' ORDER BY n DESC) FROM \
         (SELECT status, count(*) n FROM service_requests GROUP BY status) s",
    )
    .await?;
    let size =
        psql(&app.settings.database_url, "SELECT pg_size_pretty(pg_total_relation_size('service_requests'))")
            .await?;
    println!(
        "seeded: {count} service requests ({}), 1000 citizens, 5 service types, 10 staff, {count} history rows \
         in {:.1?} (API {:.1?})\n        statuses: {}",
        size.trim(),
        started.elapsed(),
        api_done,
        summary.trim()
    );
    psql(&app.settings.database_url, more::UUID7_FUNCTION).await?;
    let detail_id = psql(
        &app.settings.database_url,
        "SELECT id FROM service_requests WHERE status = 'in_review' ORDER BY id DESC LIMIT 1",
    )
    .await?
    .trim()
    .to_owned();
    more::thread(app, &admin_token, &detail_id).await?;
    Ok(Seeded {
        admin_token,
        mission_id,
        mission_admin_token,
        citizen_client_id,
        citizen_secret,
        citizen_token,
        service_type_id: type_ids[0].clone(),
        detail_id,
    })
}

/// The bulk of the data, in one psql session. `{UUID7}`, `{MISSION}` and `{ROWS}` are
/// replaced.
/// Ids are UUIDv7 built from the timestamp (48 bits of Unix milliseconds, version 7,
/// variant 10, the rest derived from the row number), so `ORDER BY id DESC` is newest
/// first as in production. Requests are spread over 90 days, one every 90 days / ROWS;
/// the last two weeks are mostly open, older requests mostly closed.
const SEED_SQL: &str = r#"
\set ON_ERROR_STOP 1
{UUID7}

BEGIN;
-- 999 more citizens, copies of the one registered through the API.
INSERT INTO citizens
SELECT (jsonb_populate_record(c, jsonb_build_object(
    'id', pg_temp.uuid7(c.created_at - n * interval '1 hour', n),
    'passport_number', 'BENCH' || lpad(n::text, 6, '0'),
    'given_name', 'Citizen',
    'family_name', 'No ' || n))).*
FROM citizens c CROSS JOIN generate_series(1, 999) n
WHERE c.mission_id = '{MISSION}';

CREATE TEMP TABLE bench_types ON COMMIT DROP AS
    SELECT (row_number() OVER (ORDER BY id) - 1)::int AS k, id, stages, jsonb_array_length(stages) AS stage_count, sla_days
    FROM service_types WHERE code LIKE 'bench\_%';
CREATE TEMP TABLE bench_staff ON COMMIT DROP AS
    SELECT (row_number() OVER (ORDER BY id) - 1)::int AS k, id FROM staff_members WHERE mission_id = '{MISSION}';
CREATE TEMP TABLE bench_citizens ON COMMIT DROP AS
    SELECT (row_number() OVER (ORDER BY id) - 1)::int AS k, id FROM citizens WHERE mission_id = '{MISSION}';

INSERT INTO service_requests (id, mission_id, citizen_id, service_type_id, status, stages, current_stage,
    assignee_id, submitted_at, sla_due_at, closed_at, version, updated_at)
SELECT pg_temp.uuid7(g.at, g.i), '{MISSION}', c.id, t.id, g.status, t.stages,
    CASE WHEN g.status = 'completed' THEN t.stage_count - 1
         WHEN g.status IN ('submitted', 'rejected', 'cancelled') THEN 0
         ELSE (g.h / 7) % t.stage_count END,
    CASE WHEN g.status = 'submitted' AND g.h % 3 = 0 THEN NULL ELSE s.id END,
    g.at,
    g.at + make_interval(days => t.sla_days),
    CASE WHEN g.status IN ('completed', 'rejected', 'cancelled')
         THEN least(g.at + make_interval(hours => (1 + (g.h / 11) % (24 * t.sla_days))::int), now()) END,
    CASE WHEN g.status = 'submitted' THEN 1 ELSE 2 + (g.h / 13) % 4 END,
    least(g.at + make_interval(hours => (1 + (g.h / 11) % (24 * t.sla_days))::int), now())
FROM (
    SELECT i, at, h,
        CASE WHEN at > now() - interval '14 days' THEN
            CASE WHEN h % 100 < 25 THEN 'submitted' WHEN h % 100 < 60 THEN 'in_review'
                 WHEN h % 100 < 70 THEN 'action_required' WHEN h % 100 < 85 THEN 'approved'
                 WHEN h % 100 < 95 THEN 'completed' WHEN h % 100 < 98 THEN 'rejected' ELSE 'cancelled' END
        ELSE
            CASE WHEN h % 100 < 70 THEN 'completed' WHEN h % 100 < 82 THEN 'rejected'
                 WHEN h % 100 < 90 THEN 'cancelled' WHEN h % 100 < 94 THEN 'in_review'
                 WHEN h % 100 < 97 THEN 'approved' WHEN h % 100 < 99 THEN 'action_required'
                 ELSE 'submitted' END
        END AS status
    FROM (
        SELECT i, now() - (({ROWS} - i) * (7776000.0 / {ROWS})) * interval '1 second' AS at,
            (i * 2654435761) % 4294967291 AS h
        FROM generate_series(1::bigint, {ROWS}) i
    ) numbered
) g
JOIN bench_types t ON t.k = (g.h / 100) % 5
JOIN bench_citizens c ON c.k = (g.h / 500) % 1000
JOIN bench_staff s ON s.k = (g.h / 500000) % 10;

-- The submission entry of each request (the list does not read it).
INSERT INTO request_history (request_id, at, actor_kind, actor_id, from_status, to_status, from_stage, to_stage)
SELECT id, submitted_at, 'citizen', citizen_id, NULL, 'submitted', NULL, 0 FROM service_requests;
COMMIT;

VACUUM (ANALYZE) citizens;
VACUUM (ANALYZE) service_requests;
VACUUM (ANALYZE) request_history;
"#;

/// POSTs `body` as `token`; the 201 body.
async fn created(app: &TestApp, path: &str, token: &str, body: &Value) -> Result<Value> {
    let response = app.post_json(path, token, body).await;
    let status = response.status();
    let text = response.text().await.map_err(|e| format!("POST {path}: {e}"))?;
    if status.as_u16() != 201 {
        return Err(format!("POST {path}: {status}: {text}"));
    }
    consular_tests::serde_json::from_str(&text).map_err(|e| format!("POST {path}: {e}: {text}"))
}

fn text(value: &Value, name: &str) -> Result<String> {
    value[name].as_str().map(str::to_owned).ok_or_else(|| format!("no `{name}` in {value}"))
}

// ---------------------------------------------------------------------------- scenarios

/// The columns of `RequestRow::as_select()`, as diesel writes them.
const SELECT: &str = r#"SELECT "service_requests"."id", "service_requests"."mission_id", "service_requests"."citizen_id", "service_requests"."service_type_id", "service_requests"."status", "service_requests"."stages", "service_requests"."current_stage", "service_requests"."assignee_id", "service_requests"."submitted_at", "service_requests"."sla_due_at", "service_requests"."closed_at", "service_requests"."version", "service_requests"."updated_at" FROM "service_requests""#;
const NEWEST_FIRST: &str = r#"ORDER BY "service_requests"."id" DESC"#;

struct Scenario {
    name: String,
    /// Path and query string.
    path: String,
    token: String,
    /// What the use case hands the adapter for this page (for its own EXPLAIN).
    filter: RequestFilter,
    /// The statement the adapter sends, with `$n` placeholders ...
    sql: String,
    /// ... and their values (LIMIT is the page size + 1: one more row tells whether a
    /// next page exists).
    params: Vec<String>,
    /// Checks one item of a page.
    item_check: Box<dyn Fn(&Value) -> bool>,
}

fn scenarios(seeded: &Seeded) -> Result<Vec<Scenario>> {
    let mission_admin = seeded.mission_admin_token.clone();
    let mission = seeded.mission_id.clone();
    let mission_uuid: uuid::Uuid = mission.parse().map_err(|e| format!("mission id: {e}"))?;
    Ok(vec![
        Scenario {
            name: "limit=20, global admin".to_owned(),
            path: "/api/v1/requests?limit=20".to_owned(),
            token: seeded.admin_token.clone(),
            filter: RequestFilter::default(),
            sql: format!("{SELECT} {NEWEST_FIRST} LIMIT $1"),
            params: vec!["21".to_owned()],
            item_check: Box::new(|_| true),
        },
        Scenario {
            name: "status=in_review&limit=20, global admin".to_owned(),
            path: "/api/v1/requests?status=in_review&limit=20".to_owned(),
            token: seeded.admin_token.clone(),
            filter: RequestFilter { statuses: vec![RequestStatus::InReview], ..RequestFilter::default() },
            sql: format!(r#"{SELECT} WHERE ("service_requests"."status" = $1) {NEWEST_FIRST} LIMIT $2"#),
            params: vec!["in_review".to_owned(), "21".to_owned()],
            item_check: Box::new(|item| item["status"] == "in_review"),
        },
        Scenario {
            name: "limit=20, mission admin".to_owned(),
            path: "/api/v1/requests?limit=20".to_owned(),
            token: mission_admin,
            filter: RequestFilter { mission_id: Some(MissionId(mission_uuid)), ..RequestFilter::default() },
            sql: format!(r#"{SELECT} WHERE ("service_requests"."mission_id" = $1) {NEWEST_FIRST} LIMIT $2"#),
            params: vec![mission.clone(), "21".to_owned()],
            item_check: Box::new(move |item| item["mission_id"] == mission.as_str()),
        },
    ])
}

/// The numbers of one scenario.
struct Measured {
    name: String,
    http: HttpRun,
    db: DbRun,
    page_bytes: usize,
    plan: Plan,
}

async fn measure(
    app: &TestApp,
    url: &str,
    scenario: &Scenario,
    warmup: u64,
    seconds: u64,
) -> Result<Measured> {
    println!("\n== {}: GET {}", scenario.name, scenario.path);
    let page_bytes = check_page(app, scenario).await?;

    load_get(app, &scenario.path, &scenario.token, Duration::from_secs(warmup)).await?;
    let http = load_get(app, &scenario.path, &scenario.token, Duration::from_secs(seconds)).await?;
    print_http(
        &http,
        &format!("{} requests, {} clients, page {page_bytes} bytes", http.requests, http.clients),
    );

    same_sql_as_the_adapter(url, scenario).await?;
    let plan = same_plan_as_the_adapter(url, scenario).await?;

    let db = pgbench(url, scenario, seconds, Variant::Plain).await?;
    print_pgbench(&db, &format!("{} transactions, {} clients, -M prepared", db.transactions, db.clients));
    Ok(Measured { name: scenario.name.clone(), http, db, page_bytes, plan })
}

/// The lines of an HTTP run as it is measured: throughput, latency, `note`, the CPU split.
fn print_http(run: &HttpRun, note: &str) {
    println!(
        "   HTTP   {:>8.0} req/s  p50 {:>7.2} ms  p99 {:>7.2} ms  ({note})",
        run.per_second, run.p50_ms, run.p99_ms
    );
    println!("          CPU: {}", run.cpu.per_unit(run.requests as f64, "request"));
}

/// The lines of a pgbench run as it is measured.
fn print_pgbench(run: &DbRun, note: &str) {
    println!("   pgbench{:>8.0} tps    avg {:>7.3} ms  ({note})", run.tps, run.latency_ms);
    println!("          CPU: {}", run.cpu.per_unit(run.tps * run.cpu.seconds, "transaction"));
}

/// One request: 200, 20 items that pass the scenario's check, a next cursor. The body size.
async fn check_page(app: &TestApp, scenario: &Scenario) -> Result<usize> {
    let response = app.get(&scenario.path, &scenario.token).await;
    let status = response.status();
    let body = response.text().await.map_err(|e| format!("GET {}: {e}", scenario.path))?;
    if status.as_u16() != 200 {
        return Err(format!("GET {}: {status}: {body}", scenario.path));
    }
    let page: Value = consular_tests::serde_json::from_str(&body).map_err(|e| format!("not JSON: {e}"))?;
    let items = page["items"].as_array().ok_or_else(|| format!("no items in {page}"))?;
    if items.len() != 20 || !page["next_cursor"].is_string() || !items.iter().all(&scenario.item_check) {
        return Err(format!("GET {}: not a full page of matching requests: {page}", scenario.path));
    }
    // Newest first by id and by submission alike: the seeded ids follow `submitted_at`.
    let newest_first = items.windows(2).all(|pair| {
        let key = |item: &Value| {
            let submitted = item["submitted_at"].as_str().and_then(|t| {
                time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok()
            });
            (item["id"].as_str().and_then(|id| id.parse::<uuid::Uuid>().ok()), submitted)
        };
        let ((id0, at0), (id1, at1)) = (key(&pair[0]), key(&pair[1]));
        id0.is_some() && at0.is_some() && id0 > id1 && at0 >= at1
    });
    if !newest_first {
        return Err(format!("GET {}: the page is not newest first: {page}", scenario.path));
    }
    Ok(body.len())
}

// --------------------------------------------------------------------------- HTTP load

/// `clients()` keep-alive clients sending `GET path` (with `token`) back to back for
/// `duration`; any failure or non-200 ends the run with an error.
async fn load_get(app: &TestApp, path: &str, token: &str, duration: Duration) -> Result<HttpRun> {
    load_get_expecting(app, path, token, 200, duration).await
}

/// [`load_get`], every answer having `status`.
async fn load_get_expecting(
    app: &TestApp,
    path: &str,
    token: &str,
    status: u16,
    duration: Duration,
) -> Result<HttpRun> {
    let url = app.url(path);
    let token = token.to_owned();
    let make: MakeRequest = Arc::new(move |http: &reqwest::Client, _| {
        let request = http.get(&url);
        Ok(if token.is_empty() { request } else { request.bearer_auth(&token) })
    });
    load(clients(), &make, &Arc::new(AtomicUsize::new(0)), status, duration).await
}

// ---------------------------------------------------------------- the same SQL, the same plan

/// The statement the server's connections last ran (`pg_stat_activity.query`, with its
/// `$n` placeholders) must be this file's, so that pgbench measures the very same thing.
async fn same_sql_as_the_adapter(url: &str, scenario: &Scenario) -> Result<()> {
    let seen = psql(
        url,
        "SELECT DISTINCT regexp_replace(query, '\\s+', ' ', 'g') FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'SELECT %service_requests%'",
    )
    .await?;
    let ours = scenario.sql.split_whitespace().collect::<Vec<_>>().join(" ");
    if seen.lines().any(|line| line.trim() == ours) {
        println!("   SQL    the server ran exactly the bench's statement (pg_stat_activity)");
        Ok(())
    } else {
        Err(format!(
            "the server's SQL is not the bench's (update `sql` in tests/benches/requests_list.rs)\n\
             bench:  {ours}\nserver: {}",
            seen.trim().replace('\n', "\n        ")
        ))
    }
}

/// The adapter's EXPLAIN (seq scans and sorts disabled, custom plan) and ours under the
/// same settings must use the same indexes; then the plans PostgreSQL really runs: the
/// custom plan (with EXPLAIN ANALYZE) and the generic plan that a prepared statement
/// switches to after five executions (both the server and pgbench -M prepared use them).
async fn same_plan_as_the_adapter(url: &str, scenario: &Scenario) -> Result<Plan> {
    let db = consular_db::Database::connect(&consular_db::DbConfig::new(url.to_owned()))
        .map_err(|e| format!("database handle: {e}"))?;
    let adapter =
        db.explain_request_list(scenario.filter.clone(), PageRequest { limit: 20, after: None }).await;
    db.close();
    let adapter = adapter.map_err(|e| format!("the adapter's EXPLAIN: {e}"))?.join("\n");

    let values = scenario.params.iter().map(|v| format!("'{v}'")).collect::<Vec<_>>().join(", ");
    let script = format!(
        "PREPARE list AS {sql};\n\
         BEGIN;\nSET LOCAL enable_seqscan = off;\nSET LOCAL enable_sort = off;\n\
         EXPLAIN EXECUTE list({values});\nCOMMIT;\n\\echo ====\n\
         EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY OFF) EXECUTE list({values});\n\\echo ====\n\
         EXPLAIN EXECUTE list({values});\n\\echo ====\n\
         SET plan_cache_mode = force_generic_plan;\n\
         EXPLAIN EXECUTE list({values});\n",
        sql = scenario.sql
    );
    let out = psql(url, &script).await?;
    let parts: Vec<&str> = out.split("====\n").collect();
    let [ours, analyzed, custom, generic] = parts.as_slice() else {
        return Err(format!("unexpected EXPLAIN output: {out}"));
    };
    let (adapter_indexes, our_indexes) = (indexes(&adapter), indexes(ours));
    if adapter_indexes.is_empty() || adapter_indexes != our_indexes {
        return Err(format!(
            "not the same plan as the adapter's query:\nadapter:\n{adapter}\nbench:\n{ours}"
        ));
    }
    let (custom_indexes, generic_indexes) = (indexes(custom), indexes(generic));
    println!(
        "   plan   adapter and bench: {}; as run (custom plan, EXPLAIN ANALYZE):\n            {}",
        adapter_indexes.join(", "),
        analyzed.trim().replace('\n', "\n            ")
    );
    if generic_indexes != custom_indexes {
        println!(
            "   NOTE   the generic plan uses {} instead:\n            {}",
            if generic_indexes.is_empty() { "no index".to_owned() } else { generic_indexes.join(", ") },
            generic.trim().replace('\n', "\n            ")
        );
    }
    let (custom_cost, generic_cost) = (total_cost(custom)?, total_cost(generic)?);
    // PostgreSQL keeps a prepared statement's generic plan once it is no dearer than the
    // custom plans' average cost plus an estimate of planning (1000 cpu_operator_cost per
    // relation + 1: 5 here); otherwise it plans again at every execution.
    let replanned = generic_cost > custom_cost + 5.0;
    if replanned {
        println!(
            "   NOTE   generic plan cost {generic_cost:.0} vs custom {custom_cost:.2}: PostgreSQL plans this prepared \
             statement again at every execution (the LIMIT is a bind parameter, estimated at 10% of the rows)"
        );
    }
    let scan = analyzed.lines().find(|l| l.contains(" using ")).map_or("", str::trim);
    Ok(Plan { scan: scan.trim_start_matches("->").trim().to_owned(), custom_cost, generic_cost, replanned })
}

/// The plan of a scenario's statement as PostgreSQL runs it.
struct Plan {
    /// The index scan line of EXPLAIN ANALYZE.
    scan: String,
    custom_cost: f64,
    generic_cost: f64,
    /// The generic plan looks dearer: every execution is planned anew.
    replanned: bool,
}

/// The total cost of a plan's top node: `cost=0.42..4.97` -> 4.97.
fn total_cost(plan: &str) -> Result<f64> {
    plan.lines()
        .next()
        .and_then(|line| line.split("cost=").nth(1))
        .and_then(|cost| cost.split_once(".."))
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(|total| total.parse().ok())
        .ok_or_else(|| format!("no cost in the plan:\n{plan}"))
}

// ----------------------------------------------------------------------------- pgbench

/// What pgbench runs besides the scenario's statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    /// The statement alone.
    Plain,
    /// `SELECT $1` first, as the server's pool does when it hands out a connection
    /// (diesel-async `RecyclingMethod::Verified`): the database work of one request.
    PoolCheck,
    /// The statement alone with `plan_cache_mode = force_generic_plan`: planned once per
    /// connection instead of at every execution.
    GenericPlan,
}

/// `pgbench -n -M prepared -c N -j 2 -T seconds` on the scenario's statement; its
/// placeholders become pgbench variables, sent as bind parameters like diesel-async does.
async fn pgbench(url: &str, scenario: &Scenario, seconds: u64, variant: Variant) -> Result<DbRun> {
    let pool_check = variant == Variant::PoolCheck;
    let mut script = scenario.sql.clone();
    for n in (1..=scenario.params.len()).rev() {
        script = script.replace(&format!("${n}"), &format!(":p{n}"));
    }
    let check = if pool_check { "SELECT :one;\n" } else { "" };
    let mut defines: Vec<(String, String)> =
        scenario.params.iter().enumerate().map(|(n, value)| (format!("p{}", n + 1), value.clone())).collect();
    if pool_check {
        defines.push(("one".to_owned(), "1".to_owned()));
    }
    let defines: Vec<(&str, String)> =
        defines.iter().map(|(name, value)| (name.as_str(), value.clone())).collect();
    let env: &[(&str, &str)] = if variant == Variant::GenericPlan {
        &[("PGOPTIONS", "-c plan_cache_mode=force_generic_plan")]
    } else {
        &[]
    };
    bench::pgbench(url, &format!("{check}{script};\n"), &defines, env, clients(), seconds).await
}

// ---------------------------------------------------------------------- concurrency sweep

/// The keep-alive connections of the sweep.
const SWEEP: [usize; 3] = [8, 64, 512];

/// The first scenario with 8, 64 and 512 keep-alive connections against the server in
/// a process of its own (the `consular` binary with the in-process server's settings, on
/// the same database): throughput, latency and the server process's resident memory at
/// each, now and at its peak (any error or non-200 fails the run, as everywhere).
async fn sweep(app: &TestApp, scenario: &Scenario, seconds: u64) -> Result<Vec<(HttpRun, (f64, f64))>> {
    println!("\n== concurrency sweep: {} (the server in its own process)", scenario.name);
    let dir = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let (server, _) = ServerProcess::start(&app.settings, &[], dir.path()).await;
    let url = format!("http://127.0.0.1:{}{}", server.port, scenario.path);
    let token = scenario.token.clone();
    let make: MakeRequest = Arc::new(move |http: &reqwest::Client, _| Ok(http.get(&url).bearer_auth(&token)));
    let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    let started = rss_of(server.pid);
    println!("   server pid {}, RSS {:.0} MiB after start", server.pid, mib(started.0));
    let mut runs = Vec::new();
    for clients in SWEEP {
        let run =
            load(clients, &make, &Arc::new(AtomicUsize::new(0)), 200, Duration::from_secs(seconds)).await?;
        let (rss, peak) = rss_of(server.pid);
        let rss = (mib(rss), mib(peak));
        println!(
            "   {clients:>4} connections  {:>7.0} req/s  p50 {:>6.2} ms  p99 {:>7.2} ms  server RSS {:.0} MiB (peak {:.0})",
            run.per_second, run.p50_ms, run.p99_ms, rss.0, rss.1
        );
        runs.push((run, rss));
    }
    server.terminate();
    Ok(runs)
}

/// The scenarios beside the list, each with what pgbench ran for it.
fn print_pairs(pairs: &[more::Pair]) {
    let mut out = String::new();
    let _ = writeln!(out, "\nthe other scenarios, each beside its database counterpart through pgbench:");
    let rows: Vec<Row> =
        pairs.iter().map(|p| (p.name.as_str(), &p.http, &p.db, p.counterpart.as_str())).collect();
    side_by_side(&mut out, 28, &rows);
    print!("{out}");
}

/// A scenario's name, its HTTP and pgbench runs, and what pgbench ran (or nothing).
type Row<'a> = (&'a str, &'a HttpRun, &'a DbRun, &'a str);

/// Two tables of scenarios, names `width` wide: throughput and latency over HTTP beside
/// pgbench with their ratio, then the CPU split ([`bench::cpu_table`]).
fn side_by_side(out: &mut String, width: usize, rows: &[Row]) {
    let _ = writeln!(
        out,
        "{:<width$} {:>9} {:>8} {:>8} {:>9} {:>8} {:>7}",
        "scenario", "HTTP r/s", "p50 ms", "p99 ms", "DB tps", "DB ms", "HTTP/DB"
    );
    for (name, http, db, ran) in rows {
        let _ = writeln!(
            out,
            "{name:<width$} {:>9.0} {:>8.2} {:>8.2} {:>9.0} {:>8.3} {:>6.0}%  {ran}",
            http.per_second,
            http.p50_ms,
            http.p99_ms,
            db.tps,
            db.latency_ms,
            100.0 * http.per_second / db.tps,
        );
    }
    let cpu: Vec<_> = rows.iter().map(|&(name, http, db, _)| (name, http, db)).collect();
    bench::cpu_table(out, width, &cpu);
}

fn print_sweep(scenario: &Scenario, runs: &[(HttpRun, (f64, f64))]) {
    println!(
        "\nconcurrency sweep, `{}` (errors: none, or the run would have failed; RSS: the server's own process):",
        scenario.name
    );
    println!(
        "  {:>11} {:>9} {:>8} {:>8} {:>9} {:>9}",
        "connections", "req/s", "p50 ms", "p99 ms", "RSS MiB", "peak MiB"
    );
    for (run, (rss, peak)) in runs {
        println!(
            "  {:>11} {:>9.0} {:>8.2} {:>8.2} {:>9.0} {:>9.0}",
            run.clients, run.per_second, run.p50_ms, run.p99_ms, rss, peak
        );
    }
}

// -------------------------------------------------------------------------- calibration

/// Two reference points for reading the table: the HTTP stack alone (an endpoint with
/// neither auth nor database) and the database work the server really asks for per
/// request (the pool's `SELECT $1` check, then the list statement).
struct Calibration {
    seconds: u64,
    scenario: String,
    floor: HttpRun,
    /// A request that only authenticates: a staff token asking for an admin view, refused
    /// (403) by the policy before anything is read.
    authenticated: HttpRun,
    /// The first scenario with `limit=1`: the same work with 2 rows instead of 21.
    one_row: HttpRun,
    pool_check: DbRun,
    /// The first scenario's statement, planned once per connection.
    generic: DbRun,
    /// Microseconds to serialize one page as a `serde_json::Value`, and its size.
    json_us: f64,
    page_bytes: usize,
}

async fn calibrate(
    app: &TestApp,
    url: &str,
    scenario: &Scenario,
    seeded: &Seeded,
    seconds: u64,
) -> Result<Calibration> {
    println!("\n== calibration");
    load_get(app, "/health/live", "", Duration::from_secs(1)).await?;
    let floor = load_get(app, "/health/live", "", Duration::from_secs(seconds)).await?;
    println!(
        "   HTTP   {:>8.0} req/s  p50 {:>7.2} ms  p99 {:>7.2} ms  GET /health/live (no auth, no database)",
        floor.per_second, floor.p50_ms, floor.p99_ms
    );
    println!("          CPU: {}", floor.cpu.per_unit(floor.requests as f64, "request"));
    let staff = app.principal_by(&seeded.admin_token, &["staff"], Some(&seeded.mission_id)).await.token;
    let overview = "/api/v1/analytics/overview";
    load_get_expecting(app, overview, &staff, 403, Duration::from_secs(1)).await?;
    let authenticated = load_get_expecting(app, overview, &staff, 403, Duration::from_secs(seconds)).await?;
    println!(
        "   HTTP   {:>8.0} req/s  p50 {:>7.2} ms  p99 {:>7.2} ms  GET {overview} as staff (bearer check, 403, no database)",
        authenticated.per_second, authenticated.p50_ms, authenticated.p99_ms
    );
    println!("          CPU: {}", authenticated.cpu.per_unit(authenticated.requests as f64, "request"));
    let one_row = scenario.path.replace("limit=20", "limit=1");
    load_get(app, &one_row, &scenario.token, Duration::from_secs(1)).await?;
    let one_row = load_get(app, &one_row, &scenario.token, Duration::from_secs(seconds)).await?;
    println!(
        "   HTTP   {:>8.0} req/s  p50 {:>7.2} ms  p99 {:>7.2} ms  the `{}` request with limit=1 (2 rows read)",
        one_row.per_second, one_row.p50_ms, one_row.p99_ms, scenario.name
    );
    println!("          CPU: {}", one_row.cpu.per_unit(one_row.requests as f64, "request"));
    let generic = pgbench(url, scenario, seconds, Variant::GenericPlan).await?;
    println!(
        "   pgbench{:>8.0} tps    avg {:>7.3} ms  the `{}` statement with plan_cache_mode = force_generic_plan",
        generic.tps, generic.latency_ms, scenario.name
    );
    println!("          CPU: {}", generic.cpu.per_unit(generic.tps * generic.cpu.seconds, "transaction"));
    let pool_check = pgbench(url, scenario, seconds, Variant::PoolCheck).await?;
    println!(
        "   pgbench{:>8.0} tps    avg {:>7.3} ms  SELECT $1, then the `{}` statement",
        pool_check.tps, pool_check.latency_ms, scenario.name
    );
    println!(
        "          CPU: {}",
        pool_check.cpu.per_unit(pool_check.tps * pool_check.cpu.seconds, "transaction")
    );
    let (json_us, page_bytes) = json_cost(app, scenario).await?;
    println!(
        "   JSON   {json_us:>8.1} µs to serialize one page ({page_bytes} bytes) from a serde_json::Value, on one core"
    );
    Ok(Calibration {
        seconds,
        scenario: scenario.name.clone(),
        floor,
        authenticated,
        one_row,
        pool_check,
        generic,
        json_us,
        page_bytes,
    })
}

/// Serializing a page of the scenario as a generic `serde_json::Value` (the server
/// serializes typed structs, which is somewhat cheaper): an upper bound of the JSON cost.
async fn json_cost(app: &TestApp, scenario: &Scenario) -> Result<(f64, usize)> {
    let body =
        app.get(&scenario.path, &scenario.token).await.text().await.map_err(|e| format!("GET: {e}"))?;
    let page: Value = consular_tests::serde_json::from_str(&body).map_err(|e| format!("not JSON: {e}"))?;
    let rounds = 2000;
    let started = Instant::now();
    let mut bytes = 0;
    for _ in 0..rounds {
        bytes +=
            consular_tests::serde_json::to_vec(std::hint::black_box(&page)).map_err(|e| e.to_string())?.len();
    }
    let per_page = started.elapsed().as_secs_f64() * 1e6 / f64::from(rounds);
    Ok((per_page, bytes / rounds as usize))
}

// ------------------------------------------------------------------------------ report

fn print_table(results: &[Measured], calibration: &Calibration, seconds: u64, warmup: u64, rows: usize) {
    let clients = clients();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nGET /api/v1/requests on PostgreSQL, {rows} service requests; {clients} keep-alive clients for {seconds} s \
         after {warmup} s of warm-up; pgbench -c {clients} -j 2 -T {seconds} -M prepared on the same statement"
    );
    let rows: Vec<Row> = results.iter().map(|r| (r.name.as_str(), &r.http, &r.db, "")).collect();
    side_by_side(&mut out, 40, &rows);
    let (floor, one_row, checked) = (&calibration.floor, &calibration.one_row, &calibration.pool_check);
    let _ = writeln!(
        out,
        "\ncalibration ({} s each; CPU in µs per request or transaction):",
        calibration.seconds
    );
    let mut http_line = |label: String, run: &HttpRun| {
        let requests = run.requests as f64;
        let _ = writeln!(
            out,
            "  {label:<48} {:>6.0} req/s  p50 {:>5.2} ms  server {:>3.0}  client {:>3.0}  postgres {:>3.0}",
            run.per_second,
            run.p50_ms,
            run.cpu.per("server", requests),
            run.cpu.per("client", requests),
            run.cpu.per("postgres", requests),
        );
    };
    http_line("GET /health/live (no auth, no database)".to_owned(), floor);
    http_line("bearer check only (403, no database)".to_owned(), &calibration.authenticated);
    http_line(format!("{}, limit=1 (2 rows)", calibration.scenario), one_row);
    let mut db_line = |label: String, run: &DbRun| {
        let _ = writeln!(
            out,
            "  {label:<48} {:>6.0} tps    avg {:>5.3} ms  postgres {:.0}",
            run.tps,
            run.latency_ms,
            run.cpu.per("postgres", run.tps * run.cpu.seconds),
        );
    };
    db_line(format!("pgbench: SELECT $1 (pool check) + {}", calibration.scenario), checked);
    db_line(format!("pgbench: {}, generic plan", calibration.scenario), &calibration.generic);
    let _ = writeln!(
        out,
        "  {:<48} {:>6.1} µs",
        format!("JSON of one page ({} bytes) from a serde_json::Value", calibration.page_bytes),
        calibration.json_us
    );
    let _ = writeln!(out, "\nplans (as run) and page sizes:");
    for r in results {
        let _ = writeln!(out, "  {:<40} {} ({} bytes/page)", r.name, r.plan.scan, r.page_bytes);
        if r.plan.replanned {
            let _ = writeln!(
                out,
                "  {:<40} planned again at every execution: generic plan cost {:.0} vs custom {:.2}",
                "", r.plan.generic_cost, r.plan.custom_cost
            );
        }
    }
    print!("{out}");
}
