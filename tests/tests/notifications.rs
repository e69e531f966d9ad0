//! Notifications end to end (docs/notifications.md): what the outbox worker makes of the
//! events of real requests, in-app and by email through a real SMTP server on loopback
//! (aiosmtpd), on both databases; delivery when SMTP is down and comes back, permanent
//! failures, two nodes sharing a thousand events, and a node killed mid-batch.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[allow(dead_code)]
mod requests_support;

use consular_testkit::smtp::{SmtpServer, parse};
use consular_tests::reqwest::StatusCode;
use consular_tests::{Backend, Stack, TestApp, both, eventually, set_setting};
use futures_util::StreamExt;
use requests_support::*;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

const NOTIFICATIONS: &str = "/api/v1/notifications";

/// Settings of a node that delivers notifications quickly to `smtp`: the worker polls
/// every 50 ms, temporary failures are retried after one second.
fn delivering(settings: &mut consular_app::Settings, smtp: &str) {
    set_setting(settings, "smtp_url", json!(smtp));
    set_setting(settings, "mail_from", json!("Consulat <no-reply@consulat.example>"));
    set_setting(settings, "run_worker", json!(true));
    set_setting(settings, "outbox_poll_ms", json!(50));
    set_setting(settings, "email_retry_base_secs", json!(1));
    set_setting(settings, "email_retry_max_delay_secs", json!(2));
}

/// A received email, its parts decoded (absent ones empty).
#[derive(Debug)]
struct ReceivedMail {
    /// The To addresses, joined.
    to: String,
    subject: String,
    message_id: String,
    /// `text/plain` then `text/html`, as `multipart/alternative`.
    part_types: Vec<String>,
    text: String,
    html: String,
}

/// The messages the server received so far (waiting for at least `at_least`), parsed.
async fn received(smtp: &Arc<SmtpServer>, at_least: usize) -> Vec<ReceivedMail> {
    let smtp = smtp.clone();
    tokio::task::spawn_blocking(move || smtp.wait_for(at_least, Duration::from_secs(60)))
        .await
        .expect("the wait thread")
        .iter()
        .map(|raw| {
            let mail = parse(raw);
            assert_eq!(mail.content_type.as_deref(), Some("multipart/alternative"), "{mail:#?}");
            ReceivedMail {
                to: mail.to.join(", "),
                subject: mail.subject.unwrap_or_default(),
                message_id: mail.message_id.unwrap_or_default(),
                part_types: mail.part_types,
                text: mail.text.unwrap_or_default(),
                html: mail.html.unwrap_or_default(),
            }
        })
        .collect()
}

/// The caller's notifications (first page of 100) and the unread count.
async fn inbox(app: &TestApp, token: &str, query: &str) -> (Vec<Value>, u64) {
    let body =
        expect(app.get(&format!("{NOTIFICATIONS}?limit=100{query}"), token).await, StatusCode::OK, "inbox")
            .await;
    (body["items"].as_array().unwrap().clone(), body["unread_count"].as_u64().unwrap())
}

fn kinds(items: &[Value]) -> Vec<String> {
    items.iter().map(|n| text(n, "kind")).collect()
}

both!(the_citizen_hears_in_their_language_in_app_and_by_email_and_never_a_note);
async fn the_citizen_hears_in_their_language_in_app_and_by_email_and_never_a_note(backend: Backend) {
    let smtp = Arc::new(tokio::task::spawn_blocking(SmtpServer::start).await.unwrap());
    let url = smtp.url();
    let app = TestApp::spawn_with(backend, |s| delivering(s, &url)).await;
    let cast = cast(&app).await;
    let request = submit_own(&app, &cast.citizen, &cast.service).await;
    let id = text(&request, "id");
    post(&app, &cast.staff.token, &id, "notes", "NOTE-SECRET-4711 the applicant seemed nervous").await;
    change(&app, &cast.staff.token, &id, &to("in_review", "Dossier complet")).await;
    post(&app, &cast.staff.token, &id, "messages", "MESSAGE-BODY-0815 please bring your old passport").await;
    post(&app, &cast.citizen.token, &id, "messages", "CITIZEN-BODY-2222 thank you").await;

    // The citizen: submission, status change, staff message (3); the staff member: the
    // assignment and the citizen's message (2).
    let mails = received(&smtp, 5).await;
    let to_citizen: Vec<&ReceivedMail> =
        mails.iter().filter(|m| m.to.contains("alice.martin@example.org")).collect();
    let to_staff: Vec<&ReceivedMail> =
        mails.iter().filter(|m| m.to.contains("officer@mission.example")).collect();
    assert_eq!((to_citizen.len(), to_staff.len()), (3, 2), "{mails:#?}");
    for mail in &mails {
        let all = format!("{} {} {}", mail.subject, mail.text, mail.html);
        for secret in ["NOTE-SECRET-4711", "MESSAGE-BODY-0815", "CITIZEN-BODY-2222", "nervous"] {
            assert!(!all.contains(secret), "an email shows `{secret}`: {mail:#?}");
        }
        assert_eq!(mail.part_types, ["text/plain", "text/html"], "both alternatives: {mail:#?}");
        assert!(!mail.text.trim().is_empty() && !mail.html.trim().is_empty(), "both alternatives: {mail:#?}");
        assert!(!mail.message_id.is_empty(), "{mail:#?}");
        assert!(!mail.html.contains("href") && !mail.text.contains("http"), "no links: {mail:#?}");
    }
    // French for the citizen (preferred_language fr), English for staff.
    let status = to_citizen.iter().find(|m| m.text.contains("Dossier complet")).expect("the status email");
    assert_eq!(status.subject, "Le statut de votre demande a changé", "French: {status:#?}");
    assert!(
        status.text.contains("en cours d'examen") && status.html.contains("en cours d&#x27;examen"),
        "{status:#?}"
    );
    let mut staff_subjects: Vec<&str> = to_staff.iter().map(|m| m.subject.as_str()).collect();
    staff_subjects.sort();
    assert_eq!(
        staff_subjects,
        ["A request was assigned to you", "New message from a citizen"],
        "English for staff"
    );
    let message_ids: HashSet<&str> = mails.iter().map(|m| m.message_id.as_str()).collect();
    assert_eq!(message_ids.len(), mails.len(), "one Message-ID each");

    // In-app: the citizen's own, newest first, all unread.
    let (items, unread) = inbox(&app, &cast.citizen.token, "").await;
    assert_eq!(kinds(&items), ["message_from_staff", "request_status_changed", "request_submitted"]);
    assert_eq!(unread, 3);
    assert_eq!(items[1]["details"]["status"], "in_review");
    assert_eq!(items[1]["details"]["reason"], "Dossier complet");
    assert_eq!(items[1]["request_id"], json!(id));
    let shown = serde_json::to_string(&items).unwrap();
    assert!(!shown.contains("NOTE-SECRET-4711") && !shown.contains("MESSAGE-BODY-0815"), "{shown}");
    let (staff_items, _) = inbox(&app, &cast.staff.token, "").await;
    assert_eq!(kinds(&staff_items), ["message_from_citizen", "request_assigned"]);

    // Marking read: idempotent, the first time kept; another principal's is 404.
    let first = text(&items[0], "id");
    let path = format!("{NOTIFICATIONS}/{first}/read");
    let read =
        expect(app.patch_json(&path, &cast.citizen.token, None, &json!({})).await, StatusCode::OK, "read")
            .await;
    assert_eq!(read["read"], true);
    let again =
        expect(app.patch_json(&path, &cast.citizen.token, None, &json!({})).await, StatusCode::OK, "again")
            .await;
    assert_eq!(again["read_at"], read["read_at"]);
    let foreign = app.patch_json(&path, &cast.staff.token, None, &json!({})).await;
    assert_eq!(foreign.status(), StatusCode::NOT_FOUND);
    let (unread_items, unread) = inbox(&app, &cast.citizen.token, "&unread=true").await;
    assert_eq!((unread_items.len(), unread), (2, 2));
    let all = expect(
        app.post_empty(&format!("{NOTIFICATIONS}/read-all"), &cast.citizen.token).await,
        StatusCode::OK,
        "read-all",
    )
    .await;
    assert_eq!(all["marked"], 2);
    assert_eq!(inbox(&app, &cast.citizen.token, "").await.1, 0);

    // Pagination: pages of one follow the cursor through all three.
    let paged = list_all(&app, &cast.citizen.token, &format!("{NOTIFICATIONS}?limit=1")).await;
    assert_eq!(ids(&paged), ids(&items));

    // Preferences: requests email off; the next status change is in-app only.
    let prefs = expect(
        app.get(&format!("{NOTIFICATIONS}/preferences"), &cast.citizen.token).await,
        StatusCode::OK,
        "prefs",
    )
    .await;
    assert_eq!(prefs["email"]["requests"], true);
    let off = json!({ "email": { "requests": false, "messages": true, "documents": true, "appointments": true, "assignments": true } });
    let response = app
        .authed(
            consular_tests::reqwest::Method::PUT,
            &format!("{NOTIFICATIONS}/preferences"),
            &cast.citizen.token,
        )
        .json(&off)
        .send()
        .await
        .unwrap();
    assert_eq!(expect(response, StatusCode::OK, "put prefs").await, off);
    change(&app, &cast.staff.token, &id, &to("action_required", "Photo manquante")).await;
    post(&app, &cast.staff.token, &id, "messages", "another message").await;
    let mails = received(&smtp, 6).await;
    assert_eq!(mails.len(), 6, "the message is emailed, the status change is not");
    assert!(mails.iter().all(|m| !m.text.contains("Photo manquante")));
    eventually(Duration::from_secs(10), "the status change in-app", || async {
        kinds(&inbox(&app, &cast.citizen.token, "").await.0).contains(&"request_status_changed".to_owned())
            && inbox(&app, &cast.citizen.token, "").await.1 == 2
    })
    .await;

    // Staff see every notification of the request and how its email fared; the citizen
    // may not.
    let path = at(&id, "/notifications");
    let deliveries = expect(app.get(&path, &cast.staff.token).await, StatusCode::OK, "deliveries").await;
    let items = deliveries["items"].as_array().unwrap();
    assert_eq!(items.len(), 7, "{deliveries}");
    let silent =
        items.iter().find(|n| n["details"]["reason"] == "Photo manquante").expect("the silent change");
    assert_eq!(silent["email"], Value::Null);
    assert!(
        items.iter().filter(|n| !n["email"].is_null()).all(|n| n["email"]["status"] == "delivered"),
        "{deliveries}"
    );
    assert_eq!(app.get(&path, &cast.citizen.token).await.status(), StatusCode::FORBIDDEN);
}

both!(smtp_down_then_back_delivers_every_email_exactly_once);
async fn smtp_down_then_back_delivers_every_email_exactly_once(backend: Backend) {
    let smtp = tokio::task::spawn_blocking(SmtpServer::start).await.unwrap();
    let (port, dir, url) = (smtp.port, smtp.dir.clone(), smtp.url());
    tokio::task::spawn_blocking(move || smtp.stop()).await.unwrap();
    let app = TestApp::spawn_with(backend, |s| delivering(s, &url)).await;
    let cast = cast(&app).await;
    let request = submit_own(&app, &cast.citizen, &cast.service).await;
    let id = text(&request, "id");
    for n in 0..10 {
        post(&app, &cast.staff.token, &id, "messages", &format!("message {n}")).await;
    }
    // 11 emails to the citizen (submission + 10 messages) and 1 to staff (assignment),
    // all failing while the server is down.
    let path = at(&id, "/notifications");
    eventually(Duration::from_secs(30), "every email failed at least once", || async {
        let body = expect(app.get(&path, &cast.staff.token).await, StatusCode::OK, "deliveries").await;
        let items = body["items"].as_array().unwrap().clone();
        items.len() == 12
            && items
                .iter()
                .all(|n| n["email"]["status"] == "temporary_failure" || n["email"]["status"] == "sending")
    })
    .await;
    let smtp = Arc::new(tokio::task::spawn_blocking(move || SmtpServer::start_on(port, &dir)).await.unwrap());
    let mails = received(&smtp, 12).await;
    eventually(Duration::from_secs(30), "every email delivered", || async {
        let body = expect(app.get(&path, &cast.staff.token).await, StatusCode::OK, "deliveries").await;
        body["items"].as_array().unwrap().iter().all(|n| n["email"]["status"] == "delivered")
    })
    .await;
    // Settled: still exactly twelve, one per Message-ID.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mails_after = received(&smtp, 12).await;
    assert_eq!(mails_after.len(), 12, "no duplicate after delivery: {mails:#?}");
    let ids: HashSet<String> = mails_after.iter().map(|m| m.message_id.clone()).collect();
    assert_eq!(ids.len(), 12);
    let body = expect(app.get(&path, &cast.staff.token).await, StatusCode::OK, "deliveries").await;
    for n in body["items"].as_array().unwrap() {
        assert!(n["email"]["attempts"].as_u64().unwrap() >= 2, "retried: {n}");
        assert!(n["email"]["last_error"].is_string(), "the refused connection is recorded: {n}");
    }
}

both!(an_smtp_550_is_a_permanent_failure_without_retry);
async fn an_smtp_550_is_a_permanent_failure_without_retry(backend: Backend) {
    let smtp = Arc::new(tokio::task::spawn_blocking(SmtpServer::start).await.unwrap());
    let url = smtp.url();
    let app = TestApp::spawn_with(backend, |s| delivering(s, &url)).await;
    let admin = app.admin_token().await;
    let mission = mission(&app, &admin, "fr-paris").await;
    let service = text(&service_type(&app, &admin, "visa", &STAGES, 21).await, "id");
    let staff = staff(&app, &admin, &mission, "Xavier Staff", &[service.as_str()]).await;
    let citizen = citizen_with(&app, &admin, &mission, "X0000B", "reject.me@example.org", "en").await;
    let request = submit_own(&app, &citizen, &service).await;
    let id = text(&request, "id");
    let path = at(&id, "/notifications");
    let find = || async {
        let body = expect(app.get(&path, &staff.token).await, StatusCode::OK, "deliveries").await;
        body["items"].as_array().unwrap().iter().find(|n| n["kind"] == "request_submitted").cloned()
    };
    eventually(Duration::from_secs(20), "the 550 recorded", || async {
        find().await.is_some_and(|n| n["email"]["status"] == "permanent_failure")
    })
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let email = find().await.unwrap()["email"].clone();
    assert_eq!(email["status"], "permanent_failure");
    assert_eq!(email["attempts"], 1, "no retry: {email}");
    assert!(text(&email, "last_error").contains("550"), "{email}");
    assert!(email["next_attempt_at"].is_null());
    // The staff member's assignment email went through; the rejected one never arrives.
    let mails = received(&smtp, 1).await;
    assert!(mails.iter().all(|m| !m.to.contains("reject.me")), "{mails:#?}");
}

/// `count` staff messages on one request, 16 at a time; the request id.
async fn messages(app: &TestApp, cast: &Cast, count: usize) -> String {
    let request = submit_own(app, &cast.citizen, &cast.service).await;
    let id = text(&request, "id");
    futures_util::stream::iter(0..count)
        .map(|n| {
            let id = id.clone();
            async move {
                let path = at(&id, "/messages");
                let response =
                    app.post_json(&path, &cast.staff.token, &json!({ "body": format!("m{n}") })).await;
                assert_eq!(response.status(), StatusCode::CREATED);
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<()>>()
        .await;
    id
}

/// The emails received, once the count has stayed at `expected` for two seconds; checks
/// that no Message-ID repeats.
async fn settled(smtp: &Arc<SmtpServer>, expected: usize) -> Vec<ReceivedMail> {
    let mails = received(smtp, expected).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = received(smtp, expected).await;
    assert_eq!(after.len(), mails.len(), "more emails arrived after {expected}");
    let ids: HashSet<&str> = after.iter().map(|m| m.message_id.as_str()).collect();
    assert_eq!(ids.len(), after.len(), "a Message-ID repeats");
    after
}

/// The nodes that marked events delivered, and how many each.
async fn handlers(app: &TestApp) -> Vec<(Option<String>, i64)> {
    let db = app.database();
    let counts = db.outbox_handlers().await.expect("the outbox");
    db.close();
    counts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_nodes_turn_a_thousand_events_into_exactly_a_thousand_emails() {
    let smtp = Arc::new(tokio::task::spawn_blocking(SmtpServer::start).await.unwrap());
    let url = smtp.url();
    // Small batches, so that both nodes take part while the events arrive.
    let one = TestApp::spawn_with(Backend::Postgres, |s| {
        delivering(s, &url);
        set_setting(s, "outbox_batch", json!(10));
    })
    .await;
    let two = one.spawn_node().await;
    let cast = cast(&one).await;
    let id = messages(&two, &cast, 1000).await;
    // 1,000 messages, the submission and the assignment.
    let mails = settled(&smtp, 1002).await;
    assert_eq!(mails.len(), 1002);
    let (_, unread) = inbox(&one, &cast.citizen.token, "").await;
    assert_eq!(unread, 1001);
    let handled = handlers(&one).await;
    let by_node: Vec<i64> = handled.iter().filter(|(node, _)| node.is_some()).map(|(_, n)| *n).collect();
    assert_eq!(by_node.len(), 2, "both nodes handled events: {handled:?}");
    assert!(by_node.iter().all(|n| *n > 0), "{handled:?}");
    assert_eq!(by_node.iter().sum::<i64>(), 1002, "{handled:?} ({id})");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_killed_mid_batch_loses_nothing() {
    let smtp = Arc::new(tokio::task::spawn_blocking(SmtpServer::start).await.unwrap());
    let url = smtp.url();
    // A node that only serves takes the writes; the worker node is killed mid-batch and
    // its leases (two seconds) expire for the node started after it.
    let api = TestApp::spawn_process(Stack::POSTGRES_LOCAL, |s| {
        delivering(s, &url);
        set_setting(s, "run_worker", json!(false));
        set_setting(s, "outbox_lease_secs", json!(2));
        // A lease must outlast a send by a second (the loopback server answers at once).
        set_setting(s, "smtp_timeout_secs", json!(1));
        set_setting(s, "outbox_batch", json!(50));
    })
    .await;
    let cast = cast(&api).await;
    let id = messages(&api, &cast, 500).await;
    let mut settings = api.settings.clone();
    set_setting(&mut settings, "run_worker", json!(true));
    let worker = api.spawn_node_with(settings.clone()).await;
    // Kill it as soon as it has delivered something: mid-way through the 502.
    received(&smtp, 1).await;
    worker.kill();
    let partial = smtp.messages().len();
    assert!(partial < 502, "the worker finished before it was killed ({partial})");
    let _restarted = api.spawn_node_with(settings).await;
    let mails = received(&smtp, 502).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mails_after = received(&smtp, 502).await;
    // In-app: exactly one notification per event, none lost or doubled.
    let (_, unread) = inbox(&api, &cast.citizen.token, "").await;
    assert_eq!(unread, 501, "{id}");
    // Email is at least once: an email accepted by SMTP just before the kill, and not yet
    // recorded, is sent again (with the same Message-ID); none is missing.
    let ids: HashSet<&str> = mails_after.iter().map(|m| m.message_id.as_str()).collect();
    assert_eq!(
        ids.len(),
        502,
        "every email arrived ({} messages, {} before)",
        mails_after.len(),
        mails.len()
    );
    assert!(mails_after.len() - 502 <= 50, "at most one batch resent: {}", mails_after.len());
}

both!(consular_worker_delivers_beside_a_node_that_only_serves_and_stops_on_sigterm);
async fn consular_worker_delivers_beside_a_node_that_only_serves_and_stops_on_sigterm(backend: Backend) {
    let smtp = Arc::new(tokio::task::spawn_blocking(SmtpServer::start).await.unwrap());
    let url = smtp.url();
    let app = TestApp::spawn_with(backend, |s| {
        delivering(s, &url);
        set_setting(s, "run_worker", json!(false));
        set_setting(s, "metrics_bind", json!("127.0.0.1:0"));
    })
    .await;
    let cast = cast(&app).await;
    submit_own(&app, &cast.citizen, &cast.service).await;
    // Nothing is delivered while no node runs the worker; the backlog shows in /metrics,
    // and the node stays ready.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(inbox(&app, &cast.citizen.token, "").await.0.len(), 0);
    let metrics = app.http.get(app.metrics_url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("consular_outbox_pending_events 2"), "{metrics}");
    assert!(metrics.contains("consular_outbox_oldest_pending_age_seconds"), "{metrics}");
    assert_eq!(app.http.get(app.url("/health/ready")).send().await.unwrap().status(), StatusCode::OK);

    let binary = tokio::task::spawn_blocking(consular_tests::child::server_binary).await.unwrap();
    let log = app.dir().join("worker.log");
    let out = std::fs::File::create(&log).unwrap();
    let mut worker = std::process::Command::new(binary)
        .arg("worker")
        .current_dir(app.dir())
        .env_clear()
        .envs(consular_tests::child::settings_env(&app.settings))
        // Its `worker stopped` line is at info level.
        .env("CONSULAR_LOG_LEVEL", "warn,consular=info")
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .unwrap();
    let mails = received(&smtp, 2).await;
    assert_eq!(mails.len(), 2, "the submission and the assignment");
    eventually(Duration::from_secs(10), "the citizen's notification", || async {
        kinds(&inbox(&app, &cast.citizen.token, "").await.0) == ["request_submitted"]
    })
    .await;
    let metrics = app.http.get(app.metrics_url("/metrics")).send().await.unwrap().text().await.unwrap();
    assert!(metrics.contains("consular_outbox_pending_events 0"), "{metrics}");
    let status =
        std::process::Command::new("kill").args(["-TERM", &worker.id().to_string()]).status().unwrap();
    assert!(status.success());
    let exit = tokio::task::spawn_blocking(move || worker.wait()).await.unwrap().unwrap();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(exit.success(), "{exit}: {text}");
    // Its loops ended by themselves, each after its pass (docs/operations.md "Shutdown").
    assert!(text.contains("worker stopped") && !text.contains("aborted"), "{text}");
}
