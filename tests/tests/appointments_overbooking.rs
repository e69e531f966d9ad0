//! No overbooking, ever (docs/appointments.md "The seat invariant"): two `consular serve`
//! processes on one PostgreSQL database (one process on SQLite) take 200 concurrent
//! booking attempts, concurrent reschedules into and cancellations out of one slot of
//! capacity 5. Exactly the free seats are taken, every other answer is 409, the seat
//! count never exceeds the capacity while it runs (sampled), and it equals the number of
//! active bookings afterwards.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[allow(dead_code)]
mod requests_support;

use consular_domain::{AppointmentStatus, MissionId, SlotId};
use consular_tests::consular_ports::{AppointmentFilter, AppointmentRepository, StartPageRequest};
use consular_tests::reqwest::{Method, StatusCode};
use consular_tests::{Stack, TestApp, service_body};
use futures_util::future::join_all;
use requests_support::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

const APPOINTMENTS: &str = "/api/v1/appointments";
const SLOTS: &str = "/api/v1/appointments/slots";
const CAPACITY: u32 = 5;
const ATTEMPTS: usize = 200;
const MOVES: usize = 20;
const HELD: usize = 3;
/// Attempts sent after the storm: a cancellation may land after every attempt of the
/// storm, so a last wave (more attempts than seats) takes whatever it freed.
const TAIL: usize = 20;

/// Sends the request again when the server answers 503 (a deadlock victim or a
/// saturated pool: retryable by contract); the final status.
async fn send(
    app: &TestApp,
    method: Method,
    path: &str,
    token: &str,
    body: Option<Value>,
    if_match: Option<&str>,
) -> StatusCode {
    loop {
        let mut request = app.authed(method.clone(), path, token);
        if let Some(body) = &body {
            request = request.json(body);
        }
        if let Some(tag) = if_match {
            request = request.header("if-match", tag);
        }
        let status = request.send().await.expect("a response").status();
        if status != StatusCode::SERVICE_UNAVAILABLE {
            return status;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

async fn active_in(app: &TestApp, slot: SlotId) -> usize {
    let filter = AppointmentFilter {
        slot_id: Some(slot),
        statuses: vec![AppointmentStatus::Booked],
        ..AppointmentFilter::default()
    };
    app.database().list(filter, StartPageRequest { limit: 100, after: None }).await.unwrap().items.len()
}

async fn storm(stack: Stack, two_nodes: bool) {
    let first = TestApp::spawn_process(stack, |_| {}).await;
    let second = if two_nodes { Some(first.spawn_node().await) } else { None };
    let nodes: Vec<&TestApp> = std::iter::once(&first).chain(second.as_ref()).collect();
    let app = &first;
    let admin = app.admin_token().await;
    let mission = mission(app, &admin, "fr-paris").await;
    let service = text(&created(app, SERVICES, &admin, &service_body("passport_renewal")).await, "id");
    let alice = citizen(app, &admin, &mission, "X0000A").await;
    let day = (OffsetDateTime::now_utc() + Duration::days(10)).date();
    let local =
        |hour: u8| format!("{:04}-{:02}-{:02}T{hour:02}:00", day.year(), u8::from(day.month()), day.day());
    let slot_body = |hour: u8, capacity: u32| json!({ "starts_at": local(hour), "minutes": 60, "capacity": capacity, "service_type_ids": [service] });
    let body = json!({ "mission_id": mission, "slots": [slot_body(9, CAPACITY), slot_body(11, 200)] });
    assert_eq!(app.post_json(SLOTS, &admin, &body).await.status(), StatusCode::OK);
    let mission_id = MissionId(Uuid::parse_str(&mission).unwrap());
    let slots = app
        .database()
        .slots_between(mission_id, OffsetDateTime::now_utc(), OffsetDateTime::now_utc() + Duration::days(11))
        .await
        .unwrap();
    let (hot, source) = (slots[0].clone(), slots[1].clone());
    let book_in = |slot: SlotId| json!({ "slot_id": slot.as_uuid(), "service_type_id": service, "citizen_id": alice.id });

    let mut held = Vec::new();
    for _ in 0..HELD {
        held.push(text(&created(app, APPOINTMENTS, &admin, &book_in(hot.id)).await, "id"));
    }
    let mut movers = Vec::new();
    for _ in 0..MOVES {
        movers.push(text(&created(app, APPOINTMENTS, &admin, &book_in(source.id)).await, "id"));
    }

    let done = Arc::new(AtomicBool::new(false));
    let samples = Arc::new(AtomicU32::new(0));
    let sampler = {
        let (done, samples, db, hot) = (done.clone(), samples.clone(), app.database(), hot.id);
        tokio::spawn(async move {
            while !done.load(Ordering::Relaxed) {
                let slot = db.get_slot(hot).await.unwrap().unwrap();
                assert!(slot.booked <= CAPACITY, "overbooked: {} seats of {CAPACITY}", slot.booked);
                samples.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(std::time::Duration::from_millis(2)).await;
            }
        })
    };

    let cancels = held.iter().enumerate().map(|(i, id)| {
        let node = nodes[i % nodes.len()];
        let path = format!("{APPOINTMENTS}/{id}");
        let admin = admin.clone();
        async move { send(node, Method::DELETE, &path, &admin, None, None).await }
    });
    let attempt = |i: usize| {
        let node = nodes[i % nodes.len()];
        let body = book_in(hot.id);
        let admin = admin.clone();
        async move { send(node, Method::POST, APPOINTMENTS, &admin, Some(body), None).await }
    };
    let bookings = (0..ATTEMPTS - TAIL).map(attempt);
    let moves = movers.iter().enumerate().map(|(i, id)| {
        let node = nodes[(i + 1) % nodes.len()];
        let path = format!("{APPOINTMENTS}/{id}");
        let body = json!({ "slot_id": hot.id.as_uuid() });
        let admin = admin.clone();
        async move { send(node, Method::PATCH, &path, &admin, Some(body), Some("\"1\"")).await }
    });
    let (cancelled, mut booked, moved) = tokio::join!(join_all(cancels), join_all(bookings), join_all(moves));
    let tail = (0..TAIL).map(attempt);
    booked.extend(join_all(tail).await);
    done.store(true, Ordering::Relaxed);
    sampler.await.unwrap();

    assert!(cancelled.iter().all(|s| *s == StatusCode::NO_CONTENT), "{cancelled:?}");
    let taken = booked.iter().chain(&moved).filter(|s| s.is_success()).count();
    let refused = booked.iter().chain(&moved).filter(|s| **s == StatusCode::CONFLICT).count();
    assert_eq!(taken + refused, ATTEMPTS + MOVES, "every other answer is 409: {booked:?} {moved:?}");
    // The held seats were released, so exactly the capacity is taken by newcomers.
    assert_eq!(taken, CAPACITY as usize, "bookings and moves that took a seat");
    let seats = app.database().get_slot(hot.id).await.unwrap().unwrap().booked;
    assert_eq!(seats, CAPACITY);
    assert_eq!(active_in(app, hot.id).await, CAPACITY as usize);
    let moved_ok = moved.iter().filter(|s| s.is_success()).count();
    let source_seats = app.database().get_slot(source.id).await.unwrap().unwrap().booked;
    assert_eq!(source_seats as usize, MOVES - moved_ok);
    assert_eq!(active_in(app, source.id).await, MOVES - moved_ok);
    assert!(samples.load(Ordering::Relaxed) > 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_nodes_on_postgres_never_overbook() {
    storm(Stack::POSTGRES_LOCAL, true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_node_on_sqlite_never_overbooks() {
    storm(Stack::SQLITE_LOCAL, false).await;
}
