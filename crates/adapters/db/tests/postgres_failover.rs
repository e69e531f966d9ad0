//! What the adapter does when the primary changes (docs/operations.md "High
//! availability"), against clusters of each test's own (never the shared one: a test
//! here turns its server read-only): a multi-host URL with
//! `target_session_attrs=read-write` skips a host that is down and one that does not take
//! writes, and a server that stops taking writes makes writes `Unavailable` (503, never
//! `Other`), every connection opened to it before is replaced, and writes go through
//! again as soon as it takes them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

// For its mission and audit fixtures; its `on_both_databases!` is not used here.
#[allow(unused_macros, unused_imports)]
mod common;

use common::{audited, mission};
use consular_db::{Database, DbConfig};
use consular_ports::{MissionRepository, RepoError};
use consular_testkit::postgres_tls::TlsCluster;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio_postgres::NoTls;

const PASSWORD: &str = "Failover4Consular";
/// The pool's connections say so, to be told from the test's own in `pg_stat_activity`.
const POOL: &str = "consular_failover_pool";

fn cluster() -> TlsCluster {
    TlsCluster::start_without_tls(PASSWORD).unwrap()
}

/// The cluster's `postgres` database, as the pool reaches it.
fn pool_url(cluster: &TlsCluster, query: &str) -> String {
    let separator = if query.is_empty() { "" } else { "&" };
    cluster.url("127.0.0.1", &format!("application_name={POOL}{separator}{query}"))
}

fn pool(url: &str, size: usize) -> Database {
    let config =
        DbConfig { max_connections: size, acquire_timeout: Duration::from_secs(10), ..DbConfig::new(url) };
    Database::connect(&config).unwrap()
}

async fn admin(cluster: &TlsCluster) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(&cluster.url("127.0.0.1", ""), NoTls).await.unwrap();
    tokio::spawn(connection);
    client
}

/// Turns the whole server read-only (`default_transaction_read_only`, as a failover
/// manager fencing an old primary does) or back, and waits until a new session sees it
/// (`pg_reload_conf` only signals the server).
async fn set_read_only(cluster: &TlsCluster, on: bool) {
    let session = admin(cluster).await;
    // ALTER SYSTEM runs outside a transaction block: one statement per call.
    let statement = if on {
        "ALTER SYSTEM SET default_transaction_read_only = on"
    } else {
        "ALTER SYSTEM RESET default_transaction_read_only"
    };
    session.batch_execute(statement).await.unwrap();
    session.batch_execute("SELECT pg_reload_conf()").await.unwrap();
    let expected = if on { "on" } else { "off" };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let row = admin(cluster).await.query_one("SHOW default_transaction_read_only", &[]).await.unwrap();
        if row.get::<_, String>(0) == expected {
            return;
        }
        assert!(Instant::now() < deadline, "the server never turned read-only {expected}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The backends of the pool's connections.
async fn pool_backends(admin: &tokio_postgres::Client) -> BTreeSet<i32> {
    let rows =
        admin.query("SELECT pid FROM pg_stat_activity WHERE application_name = $1", &[&POOL]).await.unwrap();
    rows.iter().map(|row| row.get(0)).collect()
}

/// Waits until none of `gone` is connected any more.
async fn until_closed(admin: &tokio_postgres::Client, gone: &BTreeSet<i32>) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left: Vec<i32> = pool_backends(admin).await.intersection(gone).copied().collect();
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "the connections of backends {left:?} were kept");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A mission write through the repository, as every write goes (in a transaction, with
/// its audit row).
async fn write(db: &Database) -> Result<(), RepoError> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let mission = mission(&format!("F{:03}", NEXT.fetch_add(1, Ordering::Relaxed)));
    MissionRepository::insert(db, &mission, &audited("mission", mission.id.0)).await
}

fn assert_refused_as_read_only(result: Result<(), RepoError>) {
    match result {
        Err(RepoError::Unavailable(message)) => {
            assert!(message.contains("read-only transaction"), "{message}");
        }
        other => panic!("a write on a read-only server must be Unavailable, not {other:?}"),
    }
}

#[tokio::test]
async fn a_server_that_stops_taking_writes_gets_503s_and_its_connections_are_replaced() {
    let cluster = cluster();
    let admin = admin(&cluster).await;
    let db = pool(&pool_url(&cluster, ""), 3);
    db.migrate().await.unwrap();
    // Three connections at once: the pool opens three.
    let (a, b, c) = tokio::join!(db.backend_pid(), db.backend_pid(), db.backend_pid());
    let opened: BTreeSet<i32> = [a, b, c].into_iter().map(|pid| pid.unwrap().unwrap()).collect();
    write(&db).await.unwrap();
    // The migrations' connection (same URL) closes on its own time.
    let deadline = Instant::now() + Duration::from_secs(10);
    while pool_backends(&admin).await != opened {
        assert!(Instant::now() < deadline, "the pool keeps its connections {opened:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    set_read_only(&cluster, true).await;
    // Reads still work on the old connections: nothing has said the server changed.
    let pid = db.backend_pid().await.unwrap().unwrap();
    assert!(opened.contains(&pid), "reused before any refusal");
    assert_refused_as_read_only(write(&db).await);
    // Every connection opened before the refusal goes, the idle ones with the one that
    // heard it, at the next checkout: a new one serves the next request.
    let next = db.backend_pid().await.unwrap().unwrap();
    assert!(!opened.contains(&next), "backend {next} was opened before the refusal");
    until_closed(&admin, &opened).await;
    // While the server stays read-only, each write is refused as Unavailable and its
    // connection replaced in turn; reads keep the connections they use.
    let mut seen = opened.clone();
    for _ in 0..3 {
        let before = db.backend_pid().await.unwrap().unwrap();
        assert_eq!(db.backend_pid().await.unwrap().unwrap(), before, "a read keeps its connection");
        seen.insert(before);
        assert_refused_as_read_only(write(&db).await);
        let after = db.backend_pid().await.unwrap().unwrap();
        assert!(!seen.contains(&after), "backend {after} saw a refusal and was kept");
        seen.insert(after);
    }
    let live = pool_backends(&admin).await;
    assert!(live.len() <= 3, "never more than the pool's size: {live:?}");

    set_read_only(&cluster, false).await;
    // At once: no write is refused once the server takes writes again.
    for _ in 0..5 {
        write(&db).await.unwrap();
    }
}

#[tokio::test]
async fn a_multi_host_url_with_target_session_attrs_reaches_the_server_that_takes_writes() {
    let (read_only, primary) = (cluster(), cluster());
    // Both migrated, as a demoted primary is; then one refuses writes.
    for cluster in [&read_only, &primary] {
        pool(&pool_url(cluster, ""), 1).migrate().await.unwrap();
    }
    set_read_only(&read_only, true).await;
    let down = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let hosts = format!("127.0.0.1:{down},127.0.0.1:{},127.0.0.1:{}", read_only.port(), primary.port());
    let url = |query: &str| {
        format!("postgres://postgres:{PASSWORD}@{hosts}/postgres?application_name={POOL}{query}")
    };
    let key_value = format!(
        "host=127.0.0.1,127.0.0.1,127.0.0.1 port={down},{},{} user=postgres password={PASSWORD} \
         dbname=postgres application_name={POOL} target_session_attrs=read-write",
        read_only.port(),
        primary.port()
    );
    let (read_only_admin, primary_admin) = (admin(&read_only).await, admin(&primary).await);

    for url in [url("&target_session_attrs=read-write"), key_value] {
        let db = pool(&url, 2);
        // The migrations' connection too.
        db.migrate().await.unwrap();
        let written = primary_admin.query_one("SELECT count(*) FROM missions", &[]).await.unwrap();
        for _ in 0..3 {
            write(&db).await.unwrap();
        }
        // On the primary: the only server that takes writes.
        let now = primary_admin.query_one("SELECT count(*) FROM missions", &[]).await.unwrap();
        assert_eq!(now.get::<_, i64>(0), written.get::<_, i64>(0) + 3, "{url}");
        assert!(!pool_backends(&primary_admin).await.is_empty(), "{url}");
        db.close();
        until_closed(&primary_admin, &pool_backends(&primary_admin).await).await;
    }

    // Without it, the first host that answers is taken, whether it takes writes or not:
    // why a failover setup needs `target_session_attrs=read-write`.
    let db = pool(&url(""), 2);
    assert_refused_as_read_only(write(&db).await);
    assert!(!pool_backends(&read_only_admin).await.is_empty());
}
