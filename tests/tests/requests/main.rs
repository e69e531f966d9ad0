//! `/api/v1/requests` end to end (docs/requests.md): the life of a service request with
//! the clients a portal would have (a citizen and a staff member, each with their own API
//! client), the status machine, `If-Match` concurrency, submission rules and automatic
//! assignment, lists, internal notes (never shown to citizens), the message thread, staff
//! queues, cancellation, isolation between principals, and the domain events of the
//! transactional outbox. One module per concern; the helpers they share are below and
//! in `requests_support` (shared with the documents, appointments, notifications and
//! analytics suites).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../requests_support/mod.rs"]
mod requests_support;

mod cancel;
mod concurrency;
mod conversation;
mod events;
mod isolation;
mod lifecycle;
mod lists;
mod query_strings;
mod queues;
mod submission;

use consular_tests::reqwest::{Method, StatusCode};
use consular_tests::{Backend, TestApp, both, expect_problem, header};
use requests_support::*;
use serde_json::{Value, json};

// ------------------------------------------------------------------------------ helpers

/// Query parameters of a list.
type Query<'a> = Vec<(&'a str, &'a str)>;

/// A stage history entry as the API shows it, without its `at`.
fn entry(
    actor: &Value,
    from_status: Option<&str>,
    to_status: &str,
    from_stage: Option<i64>,
    to_stage: i64,
    reason: Option<&str>,
) -> Value {
    json!({
        "actor": actor,
        "from_status": from_status,
        "to_status": to_status,
        "from_stage": from_stage,
        "to_stage": to_stage,
        "reason": reason,
    })
}

/// A timeline item of a status or stage change, without its `at`.
fn change_item(
    kind: &str,
    actor: &Value,
    from: Option<&str>,
    to: &str,
    stage: i64,
    reason: Option<&str>,
) -> Value {
    let mut item = json!({ "kind": kind, "actor": actor, "to_status": to, "to_stage": stage });
    if let Some(from) = from {
        item["from_status"] = json!(from);
    }
    if let Some(reason) = reason {
        item["text"] = json!(reason);
    }
    item
}

/// A timeline item of a message or note (`kind`), without its `at`.
fn post_item(kind: &str, post: &Value) -> Value {
    json!({ "kind": kind, "actor": post["author"], "text": post["body"], "item_id": post["id"] })
}

/// `items` without their `at`, after checking that each has one, in UTC, oldest first.
fn without_at(items: &Value) -> Vec<Value> {
    let items = items.as_array().unwrap_or_else(|| panic!("not a list: {items}"));
    let mut previous = None;
    items
        .iter()
        .map(|item| {
            let at = instant(&item["at"]);
            assert!(previous.is_none_or(|p| p <= at), "not oldest first: {items:?}");
            previous = Some(at);
            let mut item = item.clone();
            item.as_object_mut().unwrap().remove("at");
            item
        })
        .collect()
}

/// `allowed_actions` of a problem (absent reads as none).
fn allowed(problem: &Value) -> Vec<String> {
    problem["allowed_actions"]
        .as_array()
        .map(|a| a.iter().map(|s| s.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

/// Applies `body` with the current ETag and expects 409 `illegal_transition` naming
/// exactly `allowed_now`; the request is left unchanged.
async fn refused(app: &TestApp, token: &str, id: &str, body: &Value, allowed_now: &[&str]) {
    let (etag, before) = read(app, token, id).await;
    let response = patch(app, token, id, Some(&etag), body).await;
    let (_, problem) = expect_problem(response, 409, "illegal_transition").await;
    assert_eq!(allowed(&problem), allowed_now, "{body} from {}: {problem}", before["status"]);
    let (after_etag, after) = read(app, token, id).await;
    assert_eq!(after_etag, etag, "a refused change changes nothing");
    assert_eq!(after["stage_history"], before["stage_history"]);
}

/// Expects a 422 `validation_failed` whose errors point at `pointer`.
async fn invalid(response: reqwest::Response, pointer: &str) -> Value {
    let (_, problem) = expect_problem(response, 422, "validation_failed").await;
    let pointers: Vec<&str> =
        problem["errors"].as_array().into_iter().flatten().filter_map(|e| e["pointer"].as_str()).collect();
    assert_eq!(pointers, [pointer], "{problem}");
    problem
}

/// The number of events in the outbox.
async fn event_count(app: &TestApp) -> usize {
    outbox(app).await.len()
}
