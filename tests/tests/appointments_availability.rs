//! Availability under a stampede (docs/appointments.md "Release morning", docs/api.md
//! "Conditional reads"), end to end on SQLite and PostgreSQL: a page's strong `ETag`,
//! `If-None-Match` answered 304 without a body, a booking, cancellation or submission on
//! a node seen by that node's next poll at once, a booking on another node seen within the
//! cache's time-to-live, and a page warmed by one mission's caller refused to another
//! mission's.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[allow(dead_code)]
mod requests_support;

use consular_tests::reqwest::{Method, Response, StatusCode};
use consular_tests::{Backend, TestApp, both, expect_problem, header, service_body};
use requests_support::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

struct World {
    admin: String,
    mission: String,
    service: String,
    alice: Person,
    bob: Person,
    /// A citizen of another mission.
    carol: Person,
}

async fn world(app: &TestApp) -> World {
    let admin = app.admin_token().await;
    let other = mission(app, &admin, "fr-lyon").await;
    let mission = mission(app, &admin, "fr-paris").await;
    let service = text(&created(app, SERVICES, &admin, &service_body("passport_renewal")).await, "id");
    let alice = citizen(app, &admin, &mission, "X0000A").await;
    let bob = citizen(app, &admin, &mission, "X0000B").await;
    let carol = citizen(app, &admin, &other, "X0000C").await;
    World { admin, mission, service, alice, bob, carol }
}

/// One slot of `capacity` ten days from now at 09:00, Paris time.
async fn open_slot(app: &TestApp, w: &World, capacity: u32) {
    let d = (time::OffsetDateTime::now_utc() + time::Duration::days(10)).date();
    let starts = format!("{:04}-{:02}-{:02}T09:00", d.year(), u8::from(d.month()), d.day());
    let body = json!({ "mission_id": w.mission, "slots": [
        { "starts_at": starts, "minutes": 60, "capacity": capacity, "service_type_ids": [w.service] }
    ] });
    expect(app.post_json(SLOTS, &w.admin, &body).await, StatusCode::OK, "POST slots").await;
}

fn availability(w: &World) -> String {
    with_query(SLOTS, &[("mission_id", &w.mission), ("service_type_id", &w.service)])
}

/// `GET` availability as `token`, with `If-None-Match: if_none_match` when given.
async fn poll(app: &TestApp, token: &str, w: &World, if_none_match: Option<&str>) -> Response {
    let mut request = app.authed(Method::GET, &availability(w), token);
    if let Some(tag) = if_none_match {
        request = request.header("if-none-match", tag);
    }
    request.send().await.expect("GET availability")
}

/// A 200 page: its `ETag` (checked to be strong, 32 hex digits, with the caching headers)
/// and its slots.
async fn page(response: Response) -> (String, Vec<Value>) {
    let etag = header(response.headers(), "etag");
    let hex = etag.strip_prefix('"').and_then(|t| t.strip_suffix('"')).unwrap_or("");
    assert!(hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()), "a strong content tag: {etag}");
    assert_eq!(header(response.headers(), "cache-control"), "private, no-cache");
    assert!(header(response.headers(), "vary").contains("Authorization"), "{:?}", response.headers());
    let body = expect(response, StatusCode::OK, "GET availability").await;
    (etag, body["items"].as_array().expect("items").clone())
}

/// The one slot's `remaining` seats and the page's `ETag`.
async fn remaining(app: &TestApp, token: &str, w: &World) -> (u64, String) {
    let (etag, slots) = page(poll(app, token, w, None).await).await;
    assert_eq!(slots.len(), 1, "{slots:?}");
    (slots[0]["remaining"].as_u64().expect("remaining"), etag)
}

async fn assert_not_modified(response: Response, etag: &str) {
    assert_eq!(response.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(header(response.headers(), "etag"), etag);
    assert_eq!(header(response.headers(), "cache-control"), "private, no-cache");
    assert!(header(response.headers(), "vary").contains("Authorization"));
    assert!(response.bytes().await.expect("a body").is_empty(), "a 304 has no body");
}

async fn book(app: &TestApp, w: &World, token: &str, slot: &str) -> Value {
    let body = json!({ "slot_id": slot, "service_type_id": w.service });
    expect(app.post_json(APPOINTMENTS, token, &body).await, StatusCode::CREATED, "booking").await
}

both!(a_poll_is_revalidated_and_a_change_on_the_node_is_seen_at_once);
async fn a_poll_is_revalidated_and_a_change_on_the_node_is_seen_at_once(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w = world(&app).await;
    open_slot(&app, &w, 3).await;

    let (etag, slots) = page(poll(&app, &w.alice.token, &w, None).await).await;
    assert_eq!(slots[0]["remaining"], 3);
    let slot = text(&slots[0], "id");
    assert_not_modified(poll(&app, &w.alice.token, &w, Some(&etag)).await, &etag).await;
    // Another caller of the mission polling the same question: the same page, the same tag.
    assert_not_modified(poll(&app, &w.bob.token, &w, Some(&etag)).await, &etag).await;
    // Weak comparison, a list, and `*`; a tag of another page is no match.
    assert_not_modified(poll(&app, &w.alice.token, &w, Some(&format!("W/{etag}"))).await, &etag).await;
    assert_not_modified(poll(&app, &w.alice.token, &w, Some(&format!("\"other\", {etag}"))).await, &etag)
        .await;
    assert_not_modified(poll(&app, &w.alice.token, &w, Some("*")).await, &etag).await;
    let (same, _) =
        page(poll(&app, &w.alice.token, &w, Some("\"0123456789abcdef0123456789abcdef\"")).await).await;
    assert_eq!(same, etag);

    // The booking on this node: the next poll is a new page with one seat fewer, at once.
    let booked = book(&app, &w, &w.alice.token, &slot).await;
    let (after, slots) = page(poll(&app, &w.alice.token, &w, Some(&etag)).await).await;
    assert_ne!(after, etag);
    assert_eq!(slots[0]["remaining"], 2);
    assert_not_modified(poll(&app, &w.bob.token, &w, Some(&after)).await, &after).await;

    // A cancellation frees the seat at once; the same content has the same tag again.
    let path = format!("{APPOINTMENTS}/{}", text(&booked, "id"));
    let cancelled = app.authed(Method::DELETE, &path, &w.alice.token).send().await.expect("DELETE");
    assert_eq!(cancelled.status(), StatusCode::NO_CONTENT);
    assert_eq!(remaining(&app, &w.alice.token, &w).await, (3, etag.clone()));

    // A submission lowering the capacity is seen at once too.
    open_slot(&app, &w, 1).await;
    let (seats, lowered) = remaining(&app, &w.bob.token, &w).await;
    assert_eq!(seats, 1);
    assert_ne!(lowered, etag);
}

both!(a_page_warmed_by_one_mission_is_refused_to_another);
async fn a_page_warmed_by_one_mission_is_refused_to_another(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w = world(&app).await;
    open_slot(&app, &w, 3).await;
    let (etag, _) = page(poll(&app, &w.alice.token, &w, None).await).await;
    // The page is in the node's memory now; a caller of another mission gets the 404 it
    // got without it, with or without the tag.
    expect_problem(poll(&app, &w.carol.token, &w, None).await, 404, "not_found").await;
    expect_problem(poll(&app, &w.carol.token, &w, Some(&etag)).await, 404, "not_found").await;
    expect_problem(poll(&app, &w.carol.token, &w, Some("*")).await, 404, "not_found").await;
    // A global admin may read any mission's availability.
    assert_not_modified(poll(&app, &w.admin, &w, Some(&etag)).await, &etag).await;
}

both!(a_booking_on_one_node_is_seen_on_another_within_the_time_to_live);
async fn a_booking_on_one_node_is_seen_on_another_within_the_time_to_live(backend: Backend) {
    let first = TestApp::spawn(backend).await;
    let second = first.spawn_node().await;
    let ttl = Duration::from_millis(first.settings.availability_cache_ms);
    assert_eq!(ttl, Duration::from_secs(1), "the default");
    let w = world(&first).await;
    open_slot(&first, &w, 3).await;
    // The second node holds the page with three seats.
    let (seats, before) = remaining(&second, &w.bob.token, &w).await;
    assert_eq!(seats, 3);
    let (_, slots) = page(poll(&first, &w.alice.token, &w, None).await).await;
    book(&first, &w, &w.alice.token, &text(&slots[0], "id")).await;
    let (seats, on_first) = remaining(&first, &w.alice.token, &w).await;
    assert_eq!(seats, 2, "at once on the node that booked");

    // The second node: within the TTL, not at once; polled until it shows, with a bound
    // that leaves room for a slow machine (this is not a measure of speed).
    let deadline = Instant::now() + ttl + Duration::from_secs(9);
    loop {
        let response = poll(&second, &w.bob.token, &w, Some(&before)).await;
        if response.status() == StatusCode::OK {
            let (etag, slots) = page(response).await;
            assert_eq!(slots[0]["remaining"], 2);
            assert_eq!(etag, on_first, "the same page has the same tag on every node");
            break;
        }
        assert_not_modified(response, &before).await;
        assert!(Instant::now() < deadline, "the second node still shows the page from before the booking");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
