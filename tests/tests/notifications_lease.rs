//! The email sender's lease against a slow SMTP server (docs/notifications.md "Senders"),
//! on both databases: two worker nodes share one database and a real SMTP server
//! (aiosmtpd) that takes a while over each message, longer in all than the lease. A
//! sender renews an email's lease right before sending it and sends only if the database
//! says it still holds it, and claims no more than it can start under the lease: every
//! email arrives once.
//!
//! The numbers, scaled down by 20 in time: a 3 s lease (60 s), a 1.2 s DATA (12
//! s), eight sends at once per node, and 40 emails due at once. Before the fix the first
//! sender claimed all 40 and sent them in five waves (0, 1.2, 2.4, 3.6 and 4.8 s): the
//! lease ran out at 3 s, during the third wave, the other node claimed the 24 emails not
//! yet recorded, and both sent them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[allow(dead_code)]
mod requests_support;

use consular_testkit::smtp::{SmtpServer, parse};
use consular_tests::reqwest::StatusCode;
use consular_tests::{Backend, TestApp, both, eventually, set_setting};
use requests_support::*;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// What the SMTP server takes over each message's DATA.
const DATA_DELAY: Duration = Duration::from_millis(1200);
/// Staff messages on the request: with the submission's email to the citizen and the
/// assignment's to the staff member, 40 emails.
const MESSAGES: usize = 38;
const EMAILS: usize = MESSAGES + 2;

/// How many times each Message-ID arrived at `smtp` so far.
fn arrivals(smtp: &SmtpServer) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for raw in smtp.messages() {
        let id = parse(&raw).message_id.expect("every email has a Message-ID");
        *counts.entry(id).or_insert(0) += 1;
    }
    counts
}

/// The request's notifications as staff see them, with their emails' delivery.
async fn deliveries(app: &TestApp, token: &str, id: &str) -> Vec<Value> {
    let body = expect(app.get(&at(id, "/notifications"), token).await, StatusCode::OK, "deliveries").await;
    body["items"].as_array().unwrap().clone()
}

both!(two_workers_and_a_slow_smtp_server_send_each_email_once);
async fn two_workers_and_a_slow_smtp_server_send_each_email_once(backend: Backend) {
    let smtp = Arc::new(tokio::task::spawn_blocking(|| SmtpServer::start_slow(DATA_DELAY)).await.unwrap());
    let url = smtp.url();
    // A node that only serves writes the events: nothing is delivered until the two
    // workers start, so the first sender to claim finds all 40 emails due at once.
    let api = TestApp::spawn_with(backend, |s| {
        set_setting(s, "smtp_url", json!(url));
        set_setting(s, "mail_from", json!("Consulat <no-reply@consulat.example>"));
        set_setting(s, "run_worker", json!(false));
        set_setting(s, "outbox_poll_ms", json!(50));
        set_setting(s, "outbox_lease_secs", json!(3));
        // A send may take 2 s; 1.2 s is what this server takes, well within.
        set_setting(s, "smtp_timeout_secs", json!(2));
        set_setting(s, "email_retry_base_secs", json!(1));
        set_setting(s, "email_retry_max_delay_secs", json!(2));
    })
    .await;
    let cast = cast(&api).await;
    let request = submit_own(&api, &cast.citizen, &cast.service).await;
    let id = text(&request, "id");
    for n in 0..MESSAGES {
        post(&api, &cast.staff.token, &id, "messages", &format!("message {n}")).await;
    }
    let mut worker = api.settings.clone();
    set_setting(&mut worker, "run_worker", json!(true));
    let _one = api.spawn_node_with(worker.clone()).await;
    let _two = api.spawn_node_with(worker).await;

    let waited = smtp.clone();
    tokio::task::spawn_blocking(move || waited.wait_for(EMAILS, Duration::from_secs(40))).await.unwrap();
    eventually(Duration::from_secs(20), "every email delivered", || async {
        let items = deliveries(&api, &cast.staff.token, &id).await;
        items.len() == EMAILS && items.iter().all(|n| n["email"]["status"] == "delivered")
    })
    .await;
    // Longer than a lease: a copy sent by a sender that lost its lease would be in by now.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let counts = arrivals(&smtp);
    let repeated: Vec<(&String, &usize)> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        repeated.is_empty(),
        "{} of {EMAILS} emails arrived more than once: {repeated:?}",
        repeated.len()
    );
    assert_eq!(counts.len(), EMAILS, "every email arrived: {counts:?}");
    let items = deliveries(&api, &cast.staff.token, &id).await;
    assert!(items.iter().all(|n| n["email"]["status"] == "delivered"), "{items:#?}");
    // Each email's Message-ID is its id: the ones that arrived are the request's.
    for n in &items {
        let email = text(&n["email"], "id");
        assert!(counts.keys().any(|m| m.starts_with(&email)), "{email} did not arrive: {counts:?}");
    }
}
