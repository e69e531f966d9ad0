//! Read replicas with read-your-writes (issue 26, docs/operations.md "Read replicas"): a
//! primary and a synchronous standby (`consular_testkit::replication`), two `consular
//! serve` nodes with the pair's multi-host `database_url` and the standby as
//! `database_read_url`. Once the fixtures are on the standby, its replay of commits is
//! held back an hour (`recovery_min_apply_delay`): it confirms every commit but shows none
//! of them, as a replica lagging without end would.
//!
//! Checked: a staff member who changed a request's status on one node lists it changed on
//! the other at once (their reads go to the primary); the global admin, who wrote nothing
//! since, lists the request unchanged there, and the audit log and the analytics overview
//! without the change (served by the replica); so does a second staff member, also after
//! a write of theirs that failed; once the admin writes anything, every one of these reads
//! of theirs shows the change; once the replica has caught up, a mission admin who never
//! wrote sees it too.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[allow(dead_code)]
mod requests_support;

use consular_testkit::replication::{ReplicatedPair, Role};
use consular_tests::reqwest::StatusCode;
use consular_tests::{Stack, TestApp, set_setting};
use requests_support::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The API's database on the pair.
const DATABASE: &str = "consular";
/// Long enough that nothing held back is replayed during the test.
const HELD_BACK: Duration = Duration::from_secs(3600);
/// How long the standby may take to catch up once the delay is lifted.
const CATCH_UP: Duration = Duration::from_secs(20);
const AUDIT: &str = "/api/v1/audit-events";
const OVERVIEW: &str = "/api/v1/analytics/overview";

/// Runs `f` on the pair outside the runtime (each call runs psql).
async fn on_pair(
    pair: &Arc<ReplicatedPair>,
    f: impl FnOnce(&ReplicatedPair) -> Result<(), String> + Send + 'static,
) {
    let pair = Arc::clone(pair);
    tokio::task::spawn_blocking(move || f(&pair)).await.unwrap().unwrap();
}

/// The status of request `id` in the first page of `token`'s list of requests on `node`.
async fn listed_status(node: &TestApp, token: &str, id: &str) -> String {
    let path = with_query(REQUESTS, &[("limit", "100")]);
    let page = expect(node.get(&path, token).await, StatusCode::OK, "the requests list").await;
    let item = page["items"].as_array().unwrap().iter().find(|r| r["id"] == id);
    text(item.unwrap_or_else(|| panic!("{id} is not listed: {page}")), "status")
}

/// Whether the audit log, as `token` lists it on `node`, has an entry about request `id`
/// by `actor`.
async fn audited_by(node: &TestApp, token: &str, id: &str, actor: &str) -> bool {
    let path = with_query(AUDIT, &[("resource_id", id), ("limit", "100")]);
    let page = expect(node.get(&path, token).await, StatusCode::OK, "the audit log").await;
    page["items"].as_array().unwrap().iter().any(|entry| entry["actor"]["id"] == actor)
}

/// The overview's requests in review, as `token` reads it on `node`.
async fn in_review(node: &TestApp, token: &str) -> Value {
    let overview = expect(node.get(OVERVIEW, token).await, StatusCode::OK, "the overview").await;
    overview["totals"]["by_status"]["in_review"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_reads_its_writes_on_every_node_while_others_read_the_lagging_replica() {
    let started = Instant::now();
    let pair = Arc::new(tokio::task::spawn_blocking(ReplicatedPair::start).await.unwrap().unwrap());
    on_pair(&pair, |p| p.query(Role::Primary, "postgres", &format!("CREATE DATABASE {DATABASE}")).map(drop))
        .await;
    let (url, read_url) = (pair.url(DATABASE), pair.url_of(Role::Standby, DATABASE));
    let first = TestApp::spawn_process(Stack::POSTGRES_LOCAL, |s| {
        s.database_url = url.clone();
        set_setting(s, "database_read_url", json!(read_url));
    })
    .await;
    let second = first.spawn_node().await;
    let nodes = [&first, &second];

    let Cast { admin, mission, service, staff: writer, citizen } = cast(&first).await;
    let colleague = staff(&first, &admin, &mission, "Yvonne Staff", &[service.as_str()]).await;
    let mission_admin = first.principal_by(&admin, &["admin"], Some(&mission)).await.token;
    let id = text(&submit_own(&first, &citizen, &service).await, "id");
    let (etag, _) = read(&first, &writer.token, &id).await;
    on_pair(&pair, |p| p.wait_replayed(CATCH_UP)).await;
    // What the fixtures wrote, the replica shows.
    for node in nodes {
        assert_eq!(listed_status(node, &admin, &id).await, "submitted");
    }
    on_pair(&pair, |p| p.set_apply_delay(HELD_BACK)).await;

    // (a) The staff member changes the status on one node and lists it changed on both.
    let changed =
        patch(&first, &writer.token, &id, Some(&etag), &to("in_review", "Documents received")).await;
    expect(changed, StatusCode::OK, "the status change").await;
    for node in [&second, &first] {
        assert_eq!(listed_status(node, &writer.token, &id).await, "in_review", "the writer's own list");
    }

    // (b) The admin, who wrote nothing since the replica replayed their writes, reads the
    // replica on either node: the request unchanged, no entry of the change, no request
    // in review.
    for node in nodes {
        assert_eq!(listed_status(node, &admin, &id).await, "submitted", "the admin's list");
        assert!(!audited_by(node, &admin, &id, &writer.id).await, "the admin's audit log has the change");
        assert_eq!(in_review(node, &admin).await, 0, "the admin's overview");
    }
    // So does a colleague, also after a write of theirs that was refused (a stale
    // If-Match): only a write that succeeded sends its writer's reads to the primary.
    let refused =
        patch(&second, &colleague.token, &id, Some(&etag), &to("action_required", "Missing photo")).await;
    assert!(refused.status().is_client_error(), "{}", refused.status());
    assert_eq!(listed_status(&second, &colleague.token, &id).await, "submitted", "the colleague's list");

    // (c) Once the admin writes anything, their reads are the primary's: everything shows.
    first.create_mission(&admin, "de-berlin").await;
    for node in nodes {
        assert_eq!(listed_status(node, &admin, &id).await, "in_review", "the admin after a write");
        assert!(audited_by(node, &admin, &id, &writer.id).await, "the admin's audit log after a write");
        assert_eq!(in_review(node, &admin).await, 1, "the admin's overview after a write");
    }
    // The replica is still behind: the colleague still reads it.
    assert_eq!(listed_status(&first, &colleague.token, &id).await, "submitted", "the colleague's list");
    assert_eq!(in_review(&second, &mission_admin).await, 0, "the mission admin's overview");

    // (d) Caught up, the replica shows the change to those who never wrote.
    on_pair(&pair, |p| p.set_apply_delay(Duration::ZERO)).await;
    on_pair(&pair, |p| p.wait_replayed(CATCH_UP)).await;
    assert_eq!(listed_status(&second, &colleague.token, &id).await, "in_review", "the colleague's list");
    assert_eq!(in_review(&second, &mission_admin).await, 1, "the mission admin's overview");
    eprintln!("read replicas end to end: {:?}", started.elapsed());
}
