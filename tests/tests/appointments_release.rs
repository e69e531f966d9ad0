//! A scheduled release end to end on SQLite and PostgreSQL (docs/appointments.md
//! "Scheduled release"): slots submitted with `release_at` a few seconds ahead are absent
//! from availability and refused `slot_not_released` to every caller before it, listed
//! and booked from it on (on a second node within the cache's time-to-live); a
//! re-submission moves the release or clears it and never touches a booking; a release
//! no citizen could use, or a malformed instant, is 422 at `/release_at` and changes
//! nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[allow(dead_code)]
mod requests_support;

use consular_tests::reqwest::{Response, StatusCode};
use consular_tests::{Backend, TestApp, both, error_codes, error_pointers, expect_problem, service_body};
use requests_support::*;
use serde_json::{Value, json};
use std::time::Duration;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

struct World {
    admin: String,
    mission: String,
    service: String,
    alice: Person,
    bob: Person,
}

async fn world(app: &TestApp) -> World {
    let admin = app.admin_token().await;
    let mission = mission(app, &admin, "fr-paris").await;
    let service = text(&created(app, SERVICES, &admin, &service_body("passport_renewal")).await, "id");
    let alice = citizen(app, &admin, &mission, "X0000A").await;
    let bob = citizen(app, &admin, &mission, "X0000B").await;
    World { admin, mission, service, alice, bob }
}

/// One slot of capacity 2 ten days from now at 09:00, Paris time, with `release_at`
/// (a JSON value: absent when null).
fn submission(w: &World, release_at: Value) -> Value {
    submission_at(w, 9, release_at)
}

/// The same at `hour` o'clock.
fn submission_at(w: &World, hour: u8, release_at: Value) -> Value {
    let d = (OffsetDateTime::now_utc() + time::Duration::days(10)).date();
    let starts = format!("{:04}-{:02}-{:02}T{hour:02}:00", d.year(), u8::from(d.month()), d.day());
    let mut body = json!({ "mission_id": w.mission, "slots": [
        { "starts_at": starts, "minutes": 60, "capacity": 2, "service_type_ids": [w.service] }
    ] });
    if !release_at.is_null() {
        body["release_at"] = release_at;
    }
    body
}

async fn submit(app: &TestApp, w: &World, release_at: Value) -> Value {
    expect(app.post_json(SLOTS, &w.admin, &submission(w, release_at)).await, StatusCode::OK, "POST slots")
        .await
}

/// `(created, updated, unchanged)` of a submission's report.
fn counts(report: &Value) -> (u64, u64, u64) {
    let n = |k: &str| report[k].as_u64().unwrap_or_else(|| panic!("no `{k}` in {report}"));
    (n("created"), n("updated"), n("unchanged"))
}

/// The slots availability lists to `token`.
async fn listed(app: &TestApp, w: &World, token: &str) -> Vec<Value> {
    let path = with_query(SLOTS, &[("mission_id", &w.mission), ("service_type_id", &w.service)]);
    let page = expect(app.get(&path, token).await, StatusCode::OK, "GET availability").await;
    page["items"].as_array().expect("items").clone()
}

async fn book(app: &TestApp, w: &World, token: &str, slot: &str, citizen: Option<&str>) -> Response {
    let mut body = json!({ "slot_id": slot, "service_type_id": w.service });
    if let Some(citizen) = citizen {
        body["citizen_id"] = json!(citizen);
    }
    app.post_json(APPOINTMENTS, token, &body).await
}

/// A booking refused 409 `slot_not_released` naming `release_at`.
async fn not_released(response: Response, release_at: OffsetDateTime) {
    let (_, problem) = expect_problem(response, 409, "slot_not_released").await;
    assert_eq!(instant(&problem["release_at"]), release_at, "{problem}");
}

fn rfc3339(at: OffsetDateTime) -> String {
    at.format(&Rfc3339).unwrap()
}

both!(slots_open_at_their_release_for_every_caller_and_node);
async fn slots_open_at_their_release_for_every_caller_and_node(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let second = app.spawn_node().await;
    let ttl = Duration::from_millis(app.settings.availability_cache_ms);
    let w = world(&app).await;

    // Released at once: listed, and its id known (as any slot listed before a release).
    let report = submit(&app, &w, Value::Null).await;
    assert_eq!((counts(&report), &report["release_at"]), ((1, 0, 0), &Value::Null));
    let slots = listed(&app, &w, &w.alice.token).await;
    assert_eq!(slots.len(), 1);
    assert_eq!(slots[0]["release_at"], Value::Null);
    let slot = text(&slots[0], "id");

    // Released again four seconds ahead, given with an offset: kept in UTC.
    let release = (OffsetDateTime::now_utc() + time::Duration::seconds(4)).replace_nanosecond(0).unwrap();
    let given = rfc3339(release.to_offset(time::macros::offset!(+05:30)));
    let report = submit(&app, &w, json!(given)).await;
    assert_eq!(counts(&report), (0, 1, 0));
    assert_eq!(instant(&report["release_at"]), release);
    // Both nodes hold a page from before the release.
    assert!(listed(&second, &w, &w.bob.token).await.is_empty(), "hidden on the second node");
    assert!(listed(&app, &w, &w.alice.token).await.is_empty(), "hidden at once on the node that submitted");
    assert!(listed(&app, &w, &w.admin).await.is_empty(), "hidden from the mission's admins too");
    not_released(book(&app, &w, &w.alice.token, &slot, None).await, release).await;
    not_released(book(&second, &w, &w.admin, &slot, Some(&w.bob.id)).await, release).await;
    // The same release again changes nothing.
    assert_eq!(counts(&submit(&app, &w, json!(given)).await), (0, 0, 1));
    assert!(OffsetDateTime::now_utc() < release, "the checks before the release ran before it");

    // From the release on: listed on every node within the cache's time-to-live (polled
    // with a bound that leaves room for a slow machine), never before it, and booked.
    for node in [&app, &second] {
        let deadline = release + ttl + Duration::from_secs(9);
        loop {
            let slots = listed(node, &w, &w.bob.token).await;
            if let Some(found) = slots.first() {
                assert!(OffsetDateTime::now_utc() >= release, "listed before its release");
                assert_eq!((text(found, "id"), instant(&found["release_at"])), (slot.clone(), release));
                break;
            }
            assert!(OffsetDateTime::now_utc() < deadline, "still hidden long after its release");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let booked =
        expect(book(&app, &w, &w.alice.token, &slot, None).await, StatusCode::CREATED, "booking").await;

    // Moved an hour later: hidden and refused again; the booking made stays.
    let later = release + time::Duration::hours(1);
    assert_eq!(counts(&submit(&app, &w, json!(rfc3339(later))).await), (0, 1, 0));
    assert!(listed(&app, &w, &w.alice.token).await.is_empty());
    not_released(book(&app, &w, &w.bob.token, &slot, None).await, later).await;
    let path = format!("{APPOINTMENTS}/{}", text(&booked, "id"));
    let kept = expect(app.get(&path, &w.alice.token).await, StatusCode::OK, "GET appointment").await;
    assert_eq!((kept["status"].as_str(), kept["version"].as_i64()), (Some("booked"), Some(1)));
    // A move into it is refused alike, and changes nothing.
    let eleven = submission_at(&w, 11, Value::Null);
    expect(app.post_json(SLOTS, &w.admin, &eleven).await, StatusCode::OK, "POST slots").await;
    let open = text(&listed(&app, &w, &w.bob.token).await[0], "id");
    let bobs = expect(book(&app, &w, &w.bob.token, &open, None).await, StatusCode::CREATED, "booking").await;
    let bobs = format!("{APPOINTMENTS}/{}", text(&bobs, "id"));
    let moved = app.patch_json(&bobs, &w.bob.token, Some("\"1\""), &json!({ "slot_id": slot })).await;
    not_released(moved, later).await;
    let stayed = expect(app.get(&bobs, &w.bob.token).await, StatusCode::OK, "GET appointment").await;
    assert_eq!((text(&stayed, "slot_id"), stayed["version"].as_i64()), (open.clone(), Some(1)));

    // Submitted without `release_at`: released at once, the seat still taken.
    let report = submit(&app, &w, Value::Null).await;
    assert_eq!((counts(&report), &report["release_at"]), ((0, 1, 0), &Value::Null));
    let slots = listed(&app, &w, &w.bob.token).await;
    assert_eq!(
        (slots.len(), text(&slots[0], "id"), slots[0]["remaining"].as_u64()),
        (2, slot.clone(), Some(1))
    );
    let moved = app.patch_json(&bobs, &w.bob.token, Some("\"1\""), &json!({ "slot_id": slot })).await;
    let moved = expect(moved, StatusCode::OK, "move").await;
    assert_eq!(text(&moved, "slot_id"), slot);
}

both!(a_release_no_citizen_could_use_or_a_malformed_one_is_refused_and_changes_nothing);
async fn a_release_no_citizen_could_use_or_a_malformed_one_is_refused_and_changes_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w = world(&app).await;
    let report = submit(&app, &w, Value::Null).await;
    assert_eq!(counts(&report), (1, 0, 0));
    let slots = listed(&app, &w, &w.alice.token).await;
    let starts_at = instant(&slots[0]["starts_at"]);
    let closes = starts_at - time::Duration::hours(1); // the default booking cut-off

    // At the booking close, or a year late: a release no citizen could use.
    for release_at in [closes, starts_at + time::Duration::days(365)] {
        let response = app.post_json(SLOTS, &w.admin, &submission(&w, json!(rfc3339(release_at)))).await;
        let (_, problem) = expect_problem(response, 422, "validation_failed").await;
        assert_eq!(error_codes(&problem), [("/release_at".to_owned(), "after_booking_close".to_owned())]);
    }
    // Not an RFC 3339 instant with an offset.
    for malformed in [json!("tomorrow"), json!("2026-12-01T09:00:00"), json!(17)] {
        let response = app.post_json(SLOTS, &w.admin, &submission(&w, malformed.clone())).await;
        let (_, problem) = expect_problem(response, 422, "validation_failed").await;
        assert_eq!(error_pointers(&problem), ["/release_at"], "{malformed}: {problem}");
    }
    // Nothing changed: still listed, and the same submission is unchanged.
    let after = listed(&app, &w, &w.alice.token).await;
    assert_eq!((after.len(), &after[0]["release_at"]), (1, &Value::Null));
    assert_eq!(counts(&submit(&app, &w, Value::Null).await), (0, 0, 1));
    // A release in the past is allowed: the slot stays open.
    let past = rfc3339(OffsetDateTime::now_utc().replace_nanosecond(0).unwrap() - time::Duration::days(1));
    assert_eq!(counts(&submit(&app, &w, json!(past)).await), (0, 1, 0));
    let slot = text(&listed(&app, &w, &w.alice.token).await[0], "id");
    expect(book(&app, &w, &w.alice.token, &slot, None).await, StatusCode::CREATED, "booking").await;
}
