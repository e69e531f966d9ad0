//! Graceful shutdown (docs/operations.md "Shutdown"): the real `consular serve` as a child
//! process, signalled in the middle of slow uploads (bodies the client streams a chunk
//! at a time).
//!
//! SIGTERM during a burst: every upload in flight completes with 201, a new connection
//! is refused once the node is signalled (on the API and on the metrics listener alike),
//! the background tasks end by themselves (none is aborted), and the process exits with
//! status 0 within the grace period, saying `stopped`. SIGINT with a short grace period:
//! an upload longer than the grace period has it, and no more.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_tests::files::{UPLOAD, form, pdf, slow_part};
use consular_tests::reqwest::{self, Method, StatusCode};
use consular_tests::{Backend, CITIZENS, Stack, TestApp, both, citizen_body, eventually, text};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

const KIND: &str = "passport_photo";
/// The burst: this many uploads at once, each a 1 KiB head, then `CHUNKS` chunks of
/// `CHUNK` bytes, one every `PAUSE` (about 2 s in all).
const UPLOADS: usize = 8;
const HEAD: usize = 1024;
const CHUNK: usize = 4 * 1024;
const CHUNKS: usize = 20;
const PAUSE: Duration = Duration::from_millis(100);

/// Sends `signal` (`TERM`, `INT`) to the node's process.
fn send(app: &TestApp, signal: &str) {
    let status = std::process::Command::new("kill")
        .args([format!("-{signal}"), app.server_pid().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{signal} failed");
}

/// Whether a request on a new connection to `url` fails (refused, reset or unanswered):
/// a fresh client, so no connection of an earlier request is reused.
async fn not_accepted(url: &str) -> bool {
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_millis(500))
        .build()
        .expect("a reqwest client");
    client.get(url).send().await.is_err()
}

both!(sigterm_lets_a_burst_of_slow_uploads_finish_and_exits_0);
async fn sigterm_lets_a_burst_of_slow_uploads_finish_and_exits_0(backend: Backend) {
    let grace = 10;
    let app = TestApp::spawn_process(Stack { backend, s3: false }, |s| {
        s.shutdown_grace_secs = grace;
        s.metrics_bind = Some(([127, 0, 0, 1], 0).into());
        // The notification loops too: they must stop by themselves like the others.
        s.run_worker = true;
    })
    .await;
    let world = app.world().await;
    let mut citizens = Vec::new();
    for k in 0..UPLOADS {
        let body = citizen_body(&world.x, &format!("S{k:05}"));
        citizens.push(text(&app.create_at(CITIZENS, &world.admin, &body).await, "id"));
    }
    assert!(!not_accepted(&app.metrics_url("/metrics")).await, "the metrics listener serves");

    let total = (HEAD + CHUNKS * CHUNK) as u64;
    let mut uploads = Vec::new();
    let mut sent = Vec::new();
    for (k, citizen) in citizens.iter().enumerate() {
        let (part, counter) = slow_part(pdf(HEAD, k as u32), CHUNK, PAUSE, Some(total as usize));
        let request = app
            .authed(Method::POST, UPLOAD, &world.staff_x.token)
            .multipart(form(&[("kind", KIND), ("citizen_id", citizen)], part));
        uploads.push(tokio::spawn(async move {
            let response = request.send().await?;
            let status = response.status();
            Ok::<_, reqwest::Error>((status, response.text().await?))
        }));
        sent.push(counter);
    }
    // Every upload is past its head and two chunks: the server has its connection and
    // is reading the body.
    eventually(Duration::from_secs(10), "every upload streams", || async {
        sent.iter().all(|s| s.load(Ordering::SeqCst) >= (HEAD + 2 * CHUNK) as u64)
    })
    .await;

    let live = app.url("/health/live");
    let signalled = Instant::now();
    send(&app, "TERM");
    eventually(Duration::from_secs(1), "a new connection is refused after SIGTERM", || not_accepted(&live))
        .await;
    assert!(not_accepted(&app.metrics_url("/metrics")).await, "the metrics listener closes with the API");
    assert!(
        sent.iter().any(|s| s.load(Ordering::SeqCst) < total),
        "the listeners closed while uploads were still streaming"
    );

    for (k, upload) in uploads.into_iter().enumerate() {
        let (status, body) = upload.await.expect("the client task").unwrap_or_else(|e| {
            panic!("upload {k}, in flight at SIGTERM, failed: {e}\n{}", app.server_log())
        });
        assert_eq!(status, StatusCode::CREATED, "upload {k}: {body}");
    }
    let status = app
        .wait_for_exit(Duration::from_secs(u64::from(grace)))
        .await
        .unwrap_or_else(|| panic!("still running {grace} s after SIGTERM:\n{}", app.server_log()));
    let took = signalled.elapsed();
    let log = app.server_log();
    assert!(status.success(), "{status}:\n{log}");
    assert!(took < Duration::from_secs(u64::from(grace)), "{took:?}:\n{log}");
    assert!(log.lines().any(|l| l.contains("shutting down") && l.contains("SIGTERM")), "{log}");
    assert!(log.lines().any(|l| l.trim_end().ends_with("stopped")), "{log}");
    assert!(!log.contains("aborted"), "every background task ended by itself:\n{log}");
}

both!(a_request_longer_than_a_short_grace_does_not_keep_the_node_alive);
async fn a_request_longer_than_a_short_grace_does_not_keep_the_node_alive(backend: Backend) {
    let app = TestApp::spawn_process(Stack { backend, s3: false }, |s| s.shutdown_grace_secs = 1).await;
    let world = app.world().await;
    // A body that never ends.
    let (part, sent) = slow_part(pdf(HEAD, 7), CHUNK, PAUSE, None);
    let request =
        app.authed(Method::POST, UPLOAD, &world.citizen_a.token).multipart(form(&[("kind", KIND)], part));
    let upload = tokio::spawn(async move { request.send().await });
    eventually(Duration::from_secs(10), "the upload streams", || async {
        sent.load(Ordering::SeqCst) >= (HEAD + 2 * CHUNK) as u64
    })
    .await;

    // SIGINT (Ctrl-C) is graceful too, where actix alone would stop at once.
    let signalled = Instant::now();
    send(&app, "INT");
    let status = app
        .wait_for_exit(Duration::from_secs(10))
        .await
        .unwrap_or_else(|| panic!("still running 10 s after SIGINT:\n{}", app.server_log()));
    let took = signalled.elapsed();
    let log = app.server_log();
    assert!(status.success(), "{status}:\n{log}");
    assert!(took >= Duration::from_millis(900), "the upload had the grace period (1 s): {took:?}\n{log}");
    // actix checks its workers once a second: the grace period and one check at most.
    assert!(
        took < Duration::from_secs(3),
        "the upload kept the node alive past the grace period: {took:?}\n{log}"
    );
    let outcome = upload.await.expect("the client task");
    assert!(outcome.is_err(), "the upload cut at the end of the grace period cannot succeed: {outcome:?}");
    assert!(log.lines().any(|l| l.contains("shutting down") && l.contains("SIGINT")), "{log}");
    assert!(log.lines().any(|l| l.trim_end().ends_with("stopped")), "{log}");
}
