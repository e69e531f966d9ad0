//! When PostgreSQL is down or the pool is exhausted, every request gets a 503 problem
//! with `Retry-After` within a bounded time: never a hang, never a crash, and the service
//! recovers by itself when the database comes back. PostgreSQL only: these tests stop and
//! lock a real server. `/health/ready` says which dependency failed (the database there;
//! the blob storage, made unwritable, on both databases).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_tests::serde_json::{self, Value, json};
use consular_tests::{Backend, TestApp, both, expect_problem, header};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn psql(url: &str, sql: &str) -> std::process::Output {
    Command::new("psql").args([url, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql]).output().expect("psql runs")
}

/// The database name and the server's admin URL for a test database URL.
fn split(url: &str) -> (String, String) {
    let name = url.rsplit('/').next().unwrap().split('?').next().unwrap().to_owned();
    (name, consular_testkit::postgres::server_url().unwrap())
}

async fn expect_unavailable(app: &TestApp, token: &str, bound: Duration) {
    let started = Instant::now();
    let response = app.get("/api/v1/missions", token).await;
    assert!(started.elapsed() < bound, "answered in {:?}", started.elapsed());
    let (headers, _) = expect_problem(response, 503, "service_unavailable").await;
    assert!(header(&headers, "retry-after").parse::<u64>().is_ok());
}

/// `/health/ready` answers 503 with `Retry-After: 5` and its documented report (not a
/// problem), which names the dependency that failed (docs/operations.md "Health").
async fn expect_not_ready(app: &TestApp, checks: Value) {
    let ready = app.request(reqwest::Method::GET, "/health/ready").send().await.unwrap();
    let (status, headers) = (ready.status(), ready.headers().clone());
    let text = ready.text().await.unwrap();
    assert_eq!(status, 503, "{text}");
    assert_eq!(header(&headers, "content-type"), "application/json", "{text}");
    assert_eq!(header(&headers, "retry-after"), "5");
    let body: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    assert_eq!(body, json!({ "status": "unavailable", "checks": checks }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_that_refuses_connections_is_a_503_and_the_service_recovers() {
    let app = TestApp::spawn_with(Backend::Postgres, |s| {
        s.db_acquire_timeout_ms = 500;
    })
    .await;
    let token = app.admin_token().await;
    assert_eq!(app.get("/api/v1/missions", &token).await.status(), 200);

    let (name, admin) = split(&app.settings.database_url);
    let cut = psql(
        &admin,
        &format!(
            "ALTER DATABASE {name} ALLOW_CONNECTIONS false; \
             SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}';"
        ),
    );
    assert!(cut.status.success(), "{}", String::from_utf8_lossy(&cut.stderr));
    expect_unavailable(&app, &token, Duration::from_secs(5)).await;
    expect_not_ready(&app, json!({ "database": "unavailable", "storage": "ok" })).await;

    let back = psql(&admin, &format!("ALTER DATABASE {name} ALLOW_CONNECTIONS true;"));
    assert!(back.status.success(), "{}", String::from_utf8_lossy(&back.stderr));
    consular_tests::eventually(Duration::from_secs(10), "the service recovers", || async {
        app.get("/api/v1/missions", &token).await.status() == 200
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exhausted_pool_is_a_503_not_a_hang() {
    let app = TestApp::spawn_with(Backend::Postgres, |s| {
        s.db_max_connections = 1;
        s.db_acquire_timeout_ms = 300;
        s.db_statement_timeout_ms = 1500;
    })
    .await;
    let token = app.admin_token().await;
    assert_eq!(app.get("/api/v1/missions", &token).await.status(), 200);

    // Another session holds a lock on missions: the one pooled connection blocks on it.
    let mut holder = Command::new("psql")
        .args([
            app.settings.database_url.as_str(),
            "-q",
            "-c",
            "BEGIN; LOCK TABLE missions IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(4); COMMIT;",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;

    let blocked = {
        let (app_url, token) = (app.url("/api/v1/missions"), token.clone());
        let http = app.http.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            let status = http.get(app_url).bearer_auth(token).send().await.unwrap().status();
            (status, started.elapsed())
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    expect_unavailable(&app, &token, Duration::from_secs(3)).await;
    let (status, elapsed) = blocked.await.unwrap();
    assert_eq!(status, 503, "the blocked request ends at the statement timeout");
    assert!(elapsed < Duration::from_secs(4), "{elapsed:?}");

    holder.wait().unwrap();
    consular_tests::eventually(Duration::from_secs(10), "the pool recovers", || async {
        app.get("/api/v1/missions", &token).await.status() == 200
    })
    .await;
}

/// Connections PostgreSQL closes under the pool (`pg_terminate_backend`, as an
/// administrator, a restart or a failover does) are never handed to a request twice. The
/// pool checks each connection it hands out without a round trip (`RecyclingMethod::Fast`:
/// the transaction state, and whether tokio-postgres has seen the connection close, which
/// it does as soon as PostgreSQL's goodbye arrives); a request handed one in the instant
/// before that gets a 503 with `Retry-After`, and the connection is discarded. So after the
/// cut, at most one request per terminated connection fails, each with a 503, and then
/// every request succeeds (docs/benchmarks.md weighs this against a `SELECT 1` per
/// request).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_closed_under_the_pool_are_never_handed_out() {
    let app = TestApp::spawn_with(Backend::Postgres, |s| {
        s.db_max_connections = 4;
    })
    .await;
    let token = app.admin_token().await;
    // Several requests at once, so that the pool opens several connections.
    let burst = futures_util::future::join_all((0..8).map(|_| app.get("/api/v1/missions", &token))).await;
    assert!(burst.iter().all(|r| r.status() == 200));

    let (name, admin) = split(&app.settings.database_url);
    let sql = format!(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
         WHERE datname = '{name}' AND pid <> pg_backend_pid();"
    );
    let cut = Command::new("psql")
        .args([admin.as_str(), "-v", "ON_ERROR_STOP=1", "-At", "-c", &sql])
        .output()
        .unwrap();
    assert!(cut.status.success(), "{}", String::from_utf8_lossy(&cut.stderr));
    let terminated: u32 = String::from_utf8_lossy(&cut.stdout).trim().parse().unwrap();
    assert!(terminated >= 2, "the pool's connections were cut ({terminated})");
    let mut statuses = Vec::new();
    for _ in 0..12 {
        statuses.push(app.get("/api/v1/missions", &token).await.status().as_u16());
    }
    let failed = statuses.iter().filter(|s| **s != 200).count();
    assert!(statuses.iter().all(|s| *s == 200 || *s == 503), "after the cut: {statuses:?}");
    assert!(failed <= terminated as usize, "a dead connection handed out twice: {statuses:?}");
    // Each request takes at most one dead connection from the queue, and fails on it or
    // finds it discarded: after as many requests as there were connections, none is left.
    let after = statuses.get(terminated as usize..).unwrap_or_default();
    assert!(after.iter().all(|s| *s == 200), "after the cut: {statuses:?}");
    // And at once, several at a time: only live connections are left.
    let burst = futures_util::future::join_all((0..8).map(|_| app.get("/api/v1/missions", &token))).await;
    assert!(burst.iter().all(|r| r.status() == 200));
}

/// The blob storage made unwritable (its directory replaced by a file): the readiness
/// report names it, and the database as fine; the node is ready again once it is back.
async fn readiness_names_the_storage_when_it_fails(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let ready = app.request(reqwest::Method::GET, "/health/ready").send().await.unwrap();
    assert_eq!(ready.status(), 200);
    let root = app.settings.storage_url.trim_start_matches("file://").to_owned();
    std::fs::remove_dir_all(&root).unwrap();
    std::fs::write(&root, b"not a directory").unwrap();
    expect_not_ready(&app, json!({ "database": "ok", "storage": "unavailable" })).await;

    std::fs::remove_file(&root).unwrap();
    std::fs::create_dir(&root).unwrap();
    let ready = app.request(reqwest::Method::GET, "/health/ready").send().await.unwrap();
    assert_eq!(ready.status(), 200);
}
both!(readiness_names_the_storage_when_it_fails);
