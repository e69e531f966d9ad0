//! The API behind PgBouncer (docs/operations.md "Connection pooling"): `consular serve`
//! with its `database_url` on a PgBouncer of the test's own, in front of a fresh database
//! of the throwaway cluster, with more concurrent clients than PgBouncer has server
//! connections. PostgreSQL only.
//!
//! - Transaction pooling without PgBouncer's tracking of prepared statements (Debian 12's
//!   1.18 has none; 1.21 and later with `max_prepared_statements = 0`) breaks: every
//!   query of the adapter is a named prepared statement of tokio-postgres, which the next
//!   transaction runs on another server connection, where it does not exist.
//! - Transaction pooling with `max_prepared_statements` (PgBouncer 1.21 and later) serves
//!   a real workload, every answer right. Debian 12 ships 1.18: this test runs where the
//!   binary is 1.21 or later (`PGBOUNCER=/path/to/pgbouncer`) and says why it did not
//!   otherwise.
//! - Session pooling serves the same workload on any version.
//! - A session `SET` (how a node applies `db_statement_timeout_ms`) reaches the next
//!   client of its server connection in transaction pooling.
//!
//! The database is migrated before the node starts (it is cloned from the migrated
//! template), as the docs ask of a deployment behind PgBouncer, so the node's own
//! migration step finds nothing pending; it still takes the migrations' session advisory
//! lock, and each test checks where that lock ends: held by a pooled server connection in
//! transaction mode, released by the reset query `pg_advisory_unlock_all()` where it is
//! configured, and by the reset at the session's end in session mode. Skipped, with a
//! message, only when no `pgbouncer` binary is installed (CI installs Debian's).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[allow(dead_code)]
mod requests_support;

use consular_testkit::pgbouncer::{self, Options, PgBouncer, PoolMode};
use consular_tests::reqwest::StatusCode;
use consular_tests::{Stack, TestApp, expect_problem};
use requests_support::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use time::{Duration, OffsetDateTime};

/// PgBouncer's server connections to the database: fewer than the API's pool and than the
/// concurrent clients, so that transactions of different clients share server connections.
const SERVER_POOL: u32 = 3;
/// The API's pool (over two workers) and the concurrent citizens.
const API_POOL: u32 = 10;
const CITIZENS: usize = 12;
/// Seats of the one slot every citizen tries to book.
const SEATS: usize = 5;
/// PgBouncer's `query_wait_timeout` here: a client waiting longer for a server connection
/// is disconnected, so that a stall fails the test in seconds rather than minutes.
const QUERY_WAIT_SECS: u32 = 5;
/// `database.rs`'s `MIGRATION_LOCK` ("consular"), as `pg_locks` shows a bigint key.
const MIGRATION_LOCK: i64 = 0x636f_6e73_756c_6172;

/// The binary and its version, or `None` (with the reason printed) when none is installed.
fn installed() -> Option<(PathBuf, (u32, u32))> {
    let Some(binary) = pgbouncer::binary() else {
        eprintln!("SKIPPED: no pgbouncer binary (apt-get install pgbouncer, or set PGBOUNCER)");
        return None;
    };
    let version = pgbouncer::version(&binary).unwrap_or_else(|e| panic!("{e}"));
    Some((binary, version))
}

fn tracks_prepared_statements(version: (u32, u32)) -> bool {
    version >= (1, 21)
}

/// `consular serve` (a child process) on a fresh database, its `database_url` on a new
/// PgBouncer with `options` in front of that database; the node, the PgBouncer and the
/// database's direct URL.
async fn serve_through(binary: &Path, options: Options) -> (TestApp, PgBouncer, String) {
    let mut started = None;
    let app = TestApp::spawn_process(Stack::POSTGRES_LOCAL, |settings| {
        let bouncer =
            PgBouncer::start(binary, &settings.database_url, options).unwrap_or_else(|e| panic!("{e}"));
        let direct = std::mem::replace(&mut settings.database_url, bouncer.url());
        settings.db_max_connections = API_POOL;
        settings.workers = 2;
        started = Some((bouncer, direct));
    })
    .await;
    let (bouncer, direct) = started.expect("the settings were prepared");
    (app, bouncer, direct)
}

fn psql(url: &str, sql: &str) -> String {
    let output = Command::new("psql")
        .args([url, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// The migrations took `pg_advisory_lock` through PgBouncer and closed their connection,
/// which releases a session lock on PostgreSQL; in transaction mode the lock stays held by
/// the server connection the statement ran on, now back in the pool (a later node's
/// migrations landing on another server connection wait for it). In session mode the
/// server connection is reset when the client leaves (`server_reset_query`, `DISCARD
/// ALL`), which releases it.
fn migration_locks_held(direct: &str) -> u32 {
    let (high, low) = (MIGRATION_LOCK >> 32, MIGRATION_LOCK & 0xffff_ffff);
    psql(
        direct,
        &format!(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted \
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
             AND classid = {high} AND objid = {low} AND objsubid = 1"
        ),
    )
    .parse()
    .unwrap()
}

/// The local date `days` from today, `YYYY-MM-DD`.
fn day(days: i64) -> String {
    let d = (OffsetDateTime::now_utc() + Duration::days(days)).date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

/// A real workload, its answers checked: a mission, a service type and a slot of
/// [`SEATS`] seats; [`CITIZENS`] citizens with their clients; then every citizen at
/// once submits a request, reads it back, lists their own requests, books the slot (the
/// first [`SEATS`] win, the others are told it is full) and lists their appointments;
/// finally the staff-side lists count every request and booking.
async fn workload(app: &TestApp) {
    let admin = app.admin_token().await;
    let mission = mission(app, &admin, "fr-paris").await;
    let service = text(&service_type(app, &admin, "passport_renewal", &STAGES, 21).await, "id");
    let slots = json!({
        "mission_id": mission,
        "slots": [{ "starts_at": format!("{}T09:00", day(10)), "minutes": 60,
                    "capacity": SEATS, "service_type_ids": [service] }],
    });
    let report =
        expect(app.post_json("/api/v1/appointments/slots", &admin, &slots).await, StatusCode::OK, "slots")
            .await;
    assert_eq!(report["created"], 1, "{report}");
    let mut citizens = Vec::new();
    for i in 0..CITIZENS {
        citizens.push(citizen(app, &admin, &mission, &format!("X{i:05}P")).await);
    }
    let open = list_all(
        app,
        &citizens[0].token,
        &with_query("/api/v1/appointments/slots", &[("mission_id", &mission), ("service_type_id", &service)]),
    )
    .await;
    assert_eq!(open.len(), 1, "{open:?}");
    let slot = text(&open[0], "id");

    let runs = citizens.iter().map(|person| {
        let (service, slot) = (service.clone(), slot.clone());
        async move {
            let request = submit_own(app, person, &service).await;
            let id = text(&request, "id");
            let (_, read_back) = read(app, &person.token, &id).await;
            assert_eq!(read_back["id"], request["id"]);
            assert_eq!(read_back["citizen_id"], json!(person.id), "{read_back}");
            let own = list_all(app, &person.token, REQUESTS).await;
            assert_eq!(ids(&own), std::slice::from_ref(&id), "a citizen lists their own request only");
            let booking = json!({ "slot_id": slot, "service_type_id": service });
            let response = app.post_json("/api/v1/appointments", &person.token, &booking).await;
            let booked = match response.status() {
                StatusCode::CREATED => {
                    let appointment = response.json::<Value>().await.unwrap();
                    assert_eq!(appointment["slot_id"], json!(slot), "{appointment}");
                    true
                }
                _ => {
                    expect_problem(response, 409, "slot_full").await;
                    false
                }
            };
            let mine = list_all(app, &person.token, "/api/v1/appointments").await;
            assert_eq!(mine.len(), usize::from(booked), "{mine:?}");
            (id, booked)
        }
    });
    let outcomes = futures_util::future::join_all(runs).await;
    assert_eq!(outcomes.iter().filter(|(_, booked)| *booked).count(), SEATS, "every seat taken once");

    let mut submitted: Vec<String> = outcomes.into_iter().map(|(id, _)| id).collect();
    submitted.sort();
    let mut listed = ids(&list_all(app, &admin, REQUESTS).await);
    listed.sort();
    assert_eq!(listed, submitted, "the admin lists every request submitted");
    let open = list_all(
        app,
        &admin,
        &with_query("/api/v1/appointments/slots", &[("mission_id", &mission), ("service_type_id", &service)]),
    )
    .await;
    assert!(open.iter().all(|s| s["id"] != json!(slot) || s["remaining"] == 0), "{open:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_transaction_pooling_without_prepared_statement_tracking_breaks_the_api() {
    let Some((binary, version)) = installed() else { return };
    // 1.21 and later track prepared statements unless told not to; 1.18 cannot.
    let max_prepared_statements = tracks_prepared_statements(version).then_some(0);
    let options = Options {
        pool_mode: PoolMode::Transaction,
        pool_size: SERVER_POOL,
        max_prepared_statements,
        release_advisory_locks: false,
        query_wait_timeout_secs: QUERY_WAIT_SECS,
    };
    let (app, bouncer, direct) = serve_through(&binary, options).await;
    assert_eq!(migration_locks_held(&direct), 1, "the migrations' session lock outlives them");

    // Rounds of concurrent reads and writes, more at once than PgBouncer has server
    // connections, until one fails (on a busy machine a round may stay on one server
    // connection), at most ten.
    let admin = app.admin_token().await;
    let (mut failed, mut sent) = (0, 0);
    for round in 0..10 {
        let calls = (0..40).map(|i| {
            let (app, admin) = (&app, &admin);
            async move {
                if i % 2 == 0 {
                    let body = consular_tests::mission_body(&format!("m-{round}-{i}"));
                    app.post_json("/api/v1/missions", admin, &body).await
                } else {
                    app.get("/api/v1/missions", admin).await
                }
                .status()
            }
        });
        let statuses = futures_util::future::join_all(calls).await;
        sent += statuses.len();
        failed += statuses.iter().filter(|s| s.is_server_error()).count();
        if failed > 0 {
            break;
        }
    }
    let log = app.server_log();
    if let Some(line) = log.lines().find(|line| line.contains("prepared statement")) {
        eprintln!("{failed} of {sent} requests failed, e.g.: {line}");
    }
    assert!(failed > 0, "none of {sent} requests failed:\n{log}");
    assert!(
        log.contains("prepared statement \\\"s") || log.contains("prepared statement \"s"),
        "the failures are prepared statements missing on the server connection:\n{log}\n{}",
        bouncer.log()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_transaction_pooling_with_prepared_statement_tracking_serves_the_api() {
    let Some((binary, version)) = installed() else { return };
    if !tracks_prepared_statements(version) {
        eprintln!(
            "SKIPPED: pgbouncer {}.{} cannot track prepared statements in transaction mode (1.21 \
             and later can, with max_prepared_statements); set PGBOUNCER to such a binary",
            version.0, version.1
        );
        return;
    }
    let options = Options {
        pool_mode: PoolMode::Transaction,
        pool_size: SERVER_POOL,
        max_prepared_statements: Some(200),
        release_advisory_locks: true,
        query_wait_timeout_secs: QUERY_WAIT_SECS,
    };
    let (app, _bouncer, direct) = serve_through(&binary, options).await;
    // The reset query released the migrations' session lock when their transaction ended.
    consular_tests::eventually(std::time::Duration::from_secs(5), "the reset releases the lock", || async {
        migration_locks_held(&direct) == 0
    })
    .await;
    workload(&app).await;
    let log = app.server_log();
    assert!(!log.contains("prepared statement"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_session_pooling_serves_the_api() {
    let Some((binary, _)) = installed() else { return };
    // A client keeps its server connection for its whole session: PgBouncer needs as many
    // as the API's pool holds (the migrations' connection is gone before the pool opens).
    let options = Options {
        pool_mode: PoolMode::Session,
        pool_size: API_POOL,
        max_prepared_statements: None,
        release_advisory_locks: false,
        query_wait_timeout_secs: QUERY_WAIT_SECS,
    };
    let (app, _bouncer, direct) = serve_through(&binary, options).await;
    // PgBouncer resets the server connection once the client has gone, soon after.
    consular_tests::eventually(std::time::Duration::from_secs(5), "the reset releases the lock", || async {
        migration_locks_held(&direct) == 0
    })
    .await;
    workload(&app).await;
}

/// Why `statement_timeout` goes on the role behind transaction pooling: a node sets it
/// with a session `SET` when it opens a connection, and PgBouncer gives that server
/// connection, setting included, to whichever client comes next (one server connection
/// here, so the next client is certain to get it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_session_setting_crosses_clients_in_transaction_pooling() {
    let Some((binary, _)) = installed() else { return };
    let options = Options {
        pool_mode: PoolMode::Transaction,
        pool_size: 1,
        max_prepared_statements: None,
        release_advisory_locks: false,
        query_wait_timeout_secs: QUERY_WAIT_SECS,
    };
    let server = consular_testkit::postgres::server_url().unwrap();
    let bouncer = PgBouncer::start(&binary, &server, options).unwrap();
    let before = psql(&bouncer.url(), "SHOW statement_timeout");
    assert_eq!(psql(&bouncer.url(), "SET statement_timeout = 4321"), "SET");
    // Another client, after the first has gone.
    assert_eq!(psql(&bouncer.url(), "SHOW statement_timeout"), "4321ms", "was {before} before");
}
