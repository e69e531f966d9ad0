//! Caps on booking attempts, counted across nodes in the database (docs/appointments.md
//! "Attempt caps"), end to end on SQLite and PostgreSQL with two server nodes on one
//! database: a citizen's 11th attempt of a minute, whichever node it reaches, is 429
//! `too_many_requests` with `Retry-After` and books nothing (refused and replayed attempts
//! counted too); staff booking for citizens are not capped per citizen but their client
//! is; a reschedule counts; a node with the caps at 0 counts and refuses nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[allow(dead_code)]
mod requests_support;

use consular_tests::reqwest::{Method, StatusCode};
use consular_tests::{Backend, TestApp, both, header, service_body};
use requests_support::*;
use serde_json::{Value, json};
use time::OffsetDateTime;
use uuid::Uuid;

const PER_CITIZEN: u32 = 10;
const PER_CLIENT: u32 = 30;

/// Waits for the next clock minute unless `seconds` are left in this one: the attempts
/// of one step must fall in one window (the caps count per clock minute).
async fn room_in_this_minute(seconds: u8) {
    let now = OffsetDateTime::now_utc();
    if now.second() >= 60 - seconds {
        let left = 60.0 - f64::from(now.second()) - f64::from(now.nanosecond()) / 1e9;
        tokio::time::sleep(std::time::Duration::from_secs_f64(left + 0.05)).await;
    }
}

/// `POST /api/v1/appointments` as `token` on `node` with `key` as `Idempotency-Key`.
async fn book(node: &TestApp, token: &str, body: &Value, key: &str) -> (StatusCode, Value, String) {
    let response = node
        .authed(Method::POST, APPOINTMENTS, token)
        .header("idempotency-key", key)
        .json(body)
        .send()
        .await
        .expect("a response");
    let retry_after = header(response.headers(), "retry-after");
    let (status, body) = json_of(response).await;
    (status, body, retry_after)
}

/// Checks a 429 of the caps: the problem, its `Retry-After` (the rest of the minute) and
/// the cap its detail names.
fn assert_capped(answer: &(StatusCode, Value, String), cap: &str) {
    let (status, body, retry_after) = answer;
    assert_eq!(*status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["code"], "too_many_requests", "{body}");
    assert_eq!(body["status"], 429, "{body}");
    let seconds: u64 = retry_after.parse().unwrap_or_else(|_| panic!("Retry-After {retry_after:?}"));
    assert!((1..=60).contains(&seconds), "Retry-After {seconds}");
    assert!(text(body, "detail").contains(cap), "{body}");
}

async fn own_appointments(node: &TestApp, citizen: &Person) -> Vec<Value> {
    node.list_all(APPOINTMENTS, &citizen.token).await
}

async fn caps_count_every_attempt_across_nodes(backend: Backend) {
    let first = TestApp::spawn_with(backend, |settings| {
        settings.booking_attempts_per_citizen_per_minute = PER_CITIZEN;
        settings.booking_attempts_per_client_per_minute = PER_CLIENT;
    })
    .await;
    let second = first.spawn_node().await;
    let nodes = [&first, &second];
    let app = &first;
    let admin = app.admin_token().await;
    let mission = mission(app, &admin, "fr-paris").await;
    let service = text(&created(app, SERVICES, &admin, &service_body("passport_renewal")).await, "id");
    let alice = citizen(app, &admin, &mission, "X0000A").await;
    let bob = citizen(app, &admin, &mission, "X0000B").await;
    let day = (OffsetDateTime::now_utc() + time::Duration::days(10)).date();
    let local =
        |hour: u8| format!("{:04}-{:02}-{:02}T{hour:02}:00", day.year(), u8::from(day.month()), day.day());
    let slots: Vec<Value> = (8..14)
        .map(|hour| json!({ "starts_at": local(hour), "minutes": 60, "capacity": 50, "service_type_ids": [service] }))
        .collect();
    let body = json!({ "mission_id": mission, "slots": slots });
    expect(app.post_json(SLOTS, &admin, &body).await, StatusCode::OK, "POST slots").await;
    let availability = with_query(SLOTS, &[("mission_id", &mission), ("service_type_id", &service)]);
    let open = app.list_all(&availability, &alice.token).await;
    assert_eq!(open.len(), 6);
    let slot = |i: usize| text(&open[i], "id");
    let own = |i: usize| json!({ "slot_id": slot(i), "service_type_id": service });

    // A citizen's attempts, alternating nodes: a booking, its replay, refusals (the place
    // is theirs already): ten attempts, all answered as without the cap.
    room_in_this_minute(20).await;
    let key = Uuid::now_v7().to_string();
    let booked = book(nodes[0], &alice.token, &own(0), &key).await;
    assert_eq!(booked.0, StatusCode::CREATED, "{}", booked.1);
    let replayed = book(nodes[1], &alice.token, &own(0), &key).await;
    assert_eq!(replayed.0, StatusCode::CREATED, "{}", replayed.1);
    for i in 2..PER_CITIZEN as usize {
        let refused = book(nodes[i % 2], &alice.token, &own(0), &Uuid::now_v7().to_string()).await;
        assert_eq!(refused.0, StatusCode::CONFLICT, "attempt {}: {}", i + 1, refused.1);
        assert_eq!(refused.1["code"], "already_booked");
    }
    // The 11th, a booking that would succeed, on either node: 429, and nothing booked.
    for node in nodes {
        let capped = book(node, &alice.token, &own(1), &Uuid::now_v7().to_string()).await;
        assert_capped(&capped, "booking attempts a minute per citizen");
    }
    let held = own_appointments(app, &alice).await;
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(text(&held[0], "slot_id"), slot(0));

    // A node with both caps at 0 counts nothing and refuses nothing.
    let mut uncapped = first.settings.clone();
    uncapped.booking_attempts_per_citizen_per_minute = 0;
    uncapped.booking_attempts_per_client_per_minute = 0;
    let third = first.spawn_node_with(uncapped).await;
    let free = book(&third, &alice.token, &own(1), &Uuid::now_v7().to_string()).await;
    assert_eq!(free.0, StatusCode::CREATED, "{}", free.1);
    assert_eq!(own_appointments(app, &alice).await.len(), 2);
    third.stop().await;

    // A reschedule counts: Bob books once, moves nine times, and the 11th attempt (a
    // move) is refused and leaves the booking where it was.
    room_in_this_minute(20).await;
    let booked = book(nodes[0], &bob.token, &own(2), &Uuid::now_v7().to_string()).await;
    assert_eq!(booked.0, StatusCode::CREATED, "{}", booked.1);
    let path = format!("{APPOINTMENTS}/{}", text(&booked.1, "id"));
    let mut version = booked.1["version"].as_i64().unwrap();
    let mut at = 2;
    for i in 1..PER_CITIZEN as usize {
        at = if at == 2 { 3 } else { 2 };
        let response = nodes[i % 2]
            .patch_json(&path, &bob.token, Some(&format!("\"{version}\"")), &json!({ "slot_id": slot(at) }))
            .await;
        let moved = expect(response, StatusCode::OK, &format!("move {i}")).await;
        version = moved["version"].as_i64().unwrap();
    }
    let response = nodes[0]
        .patch_json(&path, &bob.token, Some(&format!("\"{version}\"")), &json!({ "slot_id": slot(4) }))
        .await;
    let retry_after = header(response.headers(), "retry-after");
    let (status, body) = json_of(response).await;
    assert_capped(&(status, body, retry_after), "booking attempts a minute per citizen");
    let (status, unchanged) = json_of(app.get(&path, &bob.token).await).await;
    assert_eq!(status, StatusCode::OK, "{unchanged}");
    assert_eq!((text(&unchanged, "slot_id"), unchanged["version"].as_i64().unwrap()), (slot(at), version));

    // Staff booking for citizens are not capped per citizen: 12 attempts for one citizen
    // (one booked, the others refused as already booked), then more for others, up to
    // their client's cap; the next attempt through that client is 429 per client.
    room_in_this_minute(30).await;
    let staff = app.staff_with_client(&admin, consular_tests::staff_body(&mission, "Xavier Staff")).await;
    let for_citizen = |citizen: &str, i: usize| json!({ "slot_id": slot(i), "service_type_id": service, "citizen_id": citizen });
    let carol = citizen(app, &admin, &mission, "X0000C").await;
    for i in 0..PER_CLIENT as usize {
        let answer =
            book(nodes[i % 2], &staff.token, &for_citizen(&carol.id, 5), &Uuid::now_v7().to_string()).await;
        let expected = if i == 0 { StatusCode::CREATED } else { StatusCode::CONFLICT };
        assert_eq!(answer.0, expected, "staff attempt {}: {}", i + 1, answer.1);
    }
    let capped = book(nodes[1], &staff.token, &for_citizen(&bob.id, 5), &Uuid::now_v7().to_string()).await;
    assert_capped(&capped, "booking attempts a minute per client");
    assert_eq!(
        own_appointments(app, &bob).await.iter().filter(|a| text(a, "slot_id") == slot(5)).count(),
        0,
        "the capped staff attempt booked nothing"
    );
    second.stop().await;
}

both!(caps_count_every_attempt_across_nodes);
