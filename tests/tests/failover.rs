//! No acknowledged write lost when the PostgreSQL primary dies (issue 26, docs/operations.md
//! "High availability"): a primary with a synchronous streaming standby
//! (`consular_testkit::replication`), two `consular serve` nodes on the multi-host URL
//! (`target_session_attrs=read-write`), each running the outbox worker, and a steady load
//! of writers (submissions, bookings into small slots, uploads, status changes, each
//! retried on 503 with its `Idempotency-Key` or `If-Match`) and readers. Mid-load the
//! primary is stopped hard (`pg_ctl stop -m immediate`) and the standby promoted.
//!
//! Checked: every answer is a 2xx, an expected 4xx (409 `slot_full`; 412 for a status
//! change whose first try got a 503 and committed all the same) or a 503 with
//! `Retry-After`, never another 5xx; a write succeeds within 10 s of the promotion; every
//! acknowledged write (its row and its outbox event) is on the new primary, and the rows
//! are exactly the acknowledged ones (no retry ran a write twice); no slot holds
//! more seats than its capacity, and its seat count is its active bookings; every event is
//! delivered, each producing its notification exactly once; a submission acknowledged
//! before the stop, sent again with its key, is replayed by the new primary.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[allow(dead_code)]
mod requests_support;

use consular_testkit::replication::{ReplicatedPair, Role};
use consular_tests::files::{file_part, form, pdf};
use consular_tests::reqwest::{Method, RequestBuilder, StatusCode};
use consular_tests::{Stack, TestApp, eventually, header, set_setting};
use requests_support::*;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The API's database on the pair.
const DATABASE: &str = "consular";
/// Concurrent writers, each a citizen of its own.
const WRITERS: usize = 4;
/// Concurrent readers.
const READERS: usize = 2;
/// Load before the primary is stopped, between the stop and the promotion, and after it.
const BEFORE_STOP: Duration = Duration::from_secs(4);
const OUTAGE: Duration = Duration::from_secs(1);
const AFTER_PROMOTION: Duration = Duration::from_secs(5);
/// The bound of the issue: the API writes again this soon after the promotion.
const BACK_WITHIN: Duration = Duration::from_secs(10);
/// How long one write may keep getting 503s before the test gives up on it.
const RETRY_FOR: Duration = Duration::from_secs(30);
/// Small slots, so that some bookings find them full, and a large one that takes bookings
/// all along.
const SMALL_SLOTS: usize = 3;
const SMALL: usize = 4;
const LARGE: usize = 1000;
const KIND: &str = "passport_photo";
const UPLOAD: &str = "/api/v1/documents/upload";

/// One HTTP answer.
#[derive(Debug)]
struct Answer {
    what: &'static str,
    status: u16,
    at: Instant,
    retry_after: bool,
    body: String,
}

/// What the server acknowledged (2xx).
#[derive(Debug, Default)]
struct Acked {
    requests: Vec<String>,
    /// Each acknowledged submission's `(token, Idempotency-Key)`, in `requests`' order.
    submission_keys: Vec<(String, String)>,
    /// `(appointment, slot)`.
    bookings: Vec<(String, String)>,
    documents: Vec<String>,
    /// `(request, status)`.
    changes: Vec<(String, String)>,
}

/// Everything the clients saw, shared by the tasks.
#[derive(Default)]
struct Log {
    answers: Mutex<Vec<Answer>>,
    acked: Mutex<Acked>,
    slot_full: AtomicUsize,
    /// Status changes whose retry found them done (412 after a 503): not acknowledged.
    unacknowledged_changes: AtomicUsize,
    /// Retries answered from the first try's idempotency record (`Idempotent-Replayed`).
    replayed: AtomicUsize,
}

/// What the writers share.
struct Load {
    nodes: Vec<TestApp>,
    admin: String,
    service: String,
    /// The small slots, then the large one (by start time).
    slots: Vec<String>,
    log: Log,
    stop: AtomicBool,
    turn: AtomicUsize,
}

impl Load {
    /// The nodes in turn.
    fn node(&self) -> &TestApp {
        &self.nodes[self.turn.fetch_add(1, Ordering::Relaxed) % self.nodes.len()]
    }

    /// Sends `request()` until the answer is neither a 503 nor a 409
    /// `idempotency_key_in_use` (each try on the next node, as a load balancer would),
    /// logging every answer: the final status and body.
    async fn send(&self, what: &'static str, request: impl Fn(&TestApp) -> RequestBuilder) -> (u16, Value) {
        let started = Instant::now();
        loop {
            let response =
                request(self.node()).send().await.unwrap_or_else(|e| panic!("{what}: no answer: {e}"));
            let status = response.status().as_u16();
            let retry_after = !header(response.headers(), "retry-after").is_empty();
            let etag = header(response.headers(), "etag");
            if header(response.headers(), "idempotent-replayed") == "true" {
                self.log.replayed.fetch_add(1, Ordering::Relaxed);
            }
            let text = response.text().await.unwrap_or_default();
            self.log.answers.lock().unwrap().push(Answer {
                what,
                status,
                at: Instant::now(),
                retry_after,
                body: text.clone(),
            });
            let in_use = status == 409 && text.contains("\"idempotency_key_in_use\"");
            if status != 503 && !in_use {
                let mut body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                if !etag.is_empty() && body.is_object() {
                    body["etag"] = json!(etag);
                }
                return (status, body);
            }
            assert!(started.elapsed() < RETRY_FOR, "{what}: still 503 after {RETRY_FOR:?}: {text}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// One writer: a citizen submits a request, an admin books it a seat, the citizen
    /// uploads its document, the admin moves it to review and asks for action; again until
    /// told to stop.
    async fn write(&self, citizen: Person) {
        for round in 0.. {
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            let key = uuid::Uuid::now_v7().to_string();
            let body = json!({ "service_type_id": self.service });
            let (status, request) = self
                .send("submission", |node| {
                    node.authed(Method::POST, REQUESTS, &citizen.token)
                        .header("idempotency-key", &key)
                        .json(&body)
                })
                .await;
            if status != 201 {
                continue;
            }
            let id = text(&request, "id");
            {
                let mut acked = self.log.acked.lock().unwrap();
                acked.requests.push(id.clone());
                acked.submission_keys.push((citizen.token.clone(), key.clone()));
            }

            // Every other booking into the large slot, the others into the small ones in turn.
            let slot = if round % 2 == 1 { SMALL_SLOTS } else { (round / 2) % SMALL_SLOTS };
            let slot = self.slots[slot].clone();
            let key = uuid::Uuid::now_v7().to_string();
            let body = json!({
                "slot_id": slot, "service_type_id": self.service, "citizen_id": citizen.id, "request_id": id,
            });
            let (status, booking) = self
                .send("booking", |node| {
                    node.authed(Method::POST, APPOINTMENTS, &self.admin)
                        .header("idempotency-key", &key)
                        .json(&body)
                })
                .await;
            match status {
                201 => self.log.acked.lock().unwrap().bookings.push((text(&booking, "id"), slot)),
                409 if booking["code"] == "slot_full" => {
                    self.log.slot_full.fetch_add(1, Ordering::Relaxed);
                }
                _ => {}
            }

            let key = uuid::Uuid::now_v7().to_string();
            let (status, document) = self
                .send("upload", |node| {
                    let file = file_part(pdf(2048, 7), "photo.pdf", "application/pdf");
                    node.authed(Method::POST, UPLOAD, &citizen.token)
                        .header("idempotency-key", &key)
                        .multipart(form(&[("kind", KIND), ("request_id", &id)], file))
                })
                .await;
            if status == 201 {
                self.log.acked.lock().unwrap().documents.push(text(&document, "id"));
            }

            let mut etag = text(&request, "etag");
            for to in ["in_review", "action_required"] {
                let body = json!({ "status": to, "reason": "failover load" });
                let path = at(&id, "/status");
                let (status, changed) = self
                    .send("status change", |node| {
                        node.authed(Method::PATCH, &path, &self.admin).header("if-match", &etag).json(&body)
                    })
                    .await;
                match status {
                    200 => {
                        etag = text(&changed, "etag");
                        self.log.acked.lock().unwrap().changes.push((id.clone(), to.to_owned()));
                    }
                    // A first try answered 503 had committed: the request is already there.
                    412 => {
                        let (status, current) = self
                            .send("read", |node| node.authed(Method::GET, &at(&id, ""), &self.admin))
                            .await;
                        if status != 200 || current["status"] != to {
                            self.log.answers.lock().unwrap().push(Answer {
                                what: "status change (412 without the change done)",
                                status: 412,
                                at: Instant::now(),
                                retry_after: false,
                                body: current.to_string(),
                            });
                            break;
                        }
                        self.log.unacknowledged_changes.fetch_add(1, Ordering::Relaxed);
                        etag = text(&current, "etag");
                    }
                    _ => break,
                }
            }
        }
    }

    /// One reader: lists of requests and the availability, in turn.
    async fn read(&self, mission: &str) {
        let availability = with_query(SLOTS, &[("mission_id", mission), ("service_type_id", &self.service)]);
        while !self.stop.load(Ordering::Relaxed) {
            self.send("request list", |node| {
                node.authed(Method::GET, &format!("{REQUESTS}?limit=20"), &self.admin)
            })
            .await;
            self.send("availability", |node| node.authed(Method::GET, &availability, &self.admin)).await;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// `sql` on the new primary (the promoted standby): its rows, columns split at `|`.
async fn rows(pair: &Arc<ReplicatedPair>, sql: &str) -> Vec<Vec<String>> {
    rows_of(pair, Role::Standby, sql).await
}

/// `sql` on `role`'s server.
async fn rows_of(pair: &Arc<ReplicatedPair>, role: Role, sql: &str) -> Vec<Vec<String>> {
    let (pair, sql) = (pair.clone(), sql.to_owned());
    let output = tokio::task::spawn_blocking(move || pair.query(role, DATABASE, &sql))
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("{role:?}: {e}"));
    output
        .lines()
        .filter(|line| !line.is_empty())
        .map(|line| line.split('|').map(str::to_owned).collect())
        .collect()
}

/// The first column of `sql`'s rows.
async fn column(pair: &Arc<ReplicatedPair>, sql: &str) -> HashSet<String> {
    rows(pair, sql).await.into_iter().map(|mut row| row.swap_remove(0)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_acknowledged_write_is_lost_when_the_primary_dies_and_the_standby_is_promoted() {
    let pair = Arc::new(tokio::task::spawn_blocking(ReplicatedPair::start).await.unwrap().unwrap());
    {
        let pair = pair.clone();
        tokio::task::spawn_blocking(move || {
            pair.query(Role::Primary, "postgres", &format!("CREATE DATABASE {DATABASE}"))
        })
        .await
        .unwrap()
        .unwrap();
    }
    let url = pair.url(DATABASE);
    let first = TestApp::spawn_process(Stack::POSTGRES_LOCAL, |s| {
        s.database_url = url.clone();
        set_setting(s, "run_worker", json!(true));
        set_setting(s, "outbox_poll_ms", json!(50));
        // A lease taken on the old primary and replicated is free again this soon.
        set_setting(s, "outbox_lease_secs", json!(2));
    })
    .await;
    let second = first.spawn_node().await;

    let admin = first.admin_token().await;
    let mission = mission(&first, &admin, "fr-paris").await;
    let service = json!({
        "code": "passport_renewal",
        "name": "Passport renewal",
        "description": "Renew an expiring passport",
        "fee": { "amount_minor": 8600, "currency": "EUR" },
        "sla_days": 21,
        "required_documents": [KIND],
        "stages": [{ "name": "Document check", "description": "" }],
    });
    let service = text(&created(&first, SERVICES, &admin, &service).await, "id");
    staff(&first, &admin, &mission, "Xavier Staff", &[service.as_str()]).await;
    let mut citizens = Vec::new();
    for i in 0..WRITERS {
        citizens.push(citizen(&first, &admin, &mission, &format!("X{i:05}")).await);
    }
    let day = (time::OffsetDateTime::now_utc() + time::Duration::days(10)).date();
    let slots: Vec<Value> = (0..=SMALL_SLOTS)
        .map(|i| {
            let capacity = if i < SMALL_SLOTS { SMALL } else { LARGE };
            let starts =
                format!("{:04}-{:02}-{:02}T{:02}:00", day.year(), u8::from(day.month()), day.day(), 9 + i);
            json!({ "starts_at": starts, "minutes": 60, "capacity": capacity, "service_type_ids": [service] })
        })
        .collect();
    expect(
        first.post_json(SLOTS, &admin, &json!({ "mission_id": mission, "slots": slots })).await,
        StatusCode::OK,
        "slots",
    )
    .await;
    let slots: Vec<String> = rows_of(&pair, Role::Primary, "SELECT id FROM slots ORDER BY starts_at")
        .await
        .into_iter()
        .map(|mut r| r.swap_remove(0))
        .collect();
    assert_eq!(slots.len(), SMALL_SLOTS + 1);

    let load = Arc::new(Load {
        nodes: vec![first, second],
        admin,
        service,
        slots,
        log: Log::default(),
        stop: AtomicBool::new(false),
        turn: AtomicUsize::new(0),
    });
    let mut tasks = Vec::new();
    for citizen in citizens {
        let load = load.clone();
        tasks.push(tokio::spawn(async move { load.write(citizen).await }));
    }
    for _ in 0..READERS {
        let (load, mission) = (load.clone(), mission.clone());
        tasks.push(tokio::spawn(async move { load.read(&mission).await }));
    }

    tokio::time::sleep(BEFORE_STOP).await;
    let (acked_before, booked_before) = {
        let acked = load.log.acked.lock().unwrap();
        (acked.requests.len(), acked.bookings.len())
    };
    let stopped_at = Instant::now();
    {
        let pair = pair.clone();
        tokio::task::spawn_blocking(move || pair.stop_primary_immediately()).await.unwrap().unwrap();
    }
    tokio::time::sleep(OUTAGE).await;
    {
        let pair = pair.clone();
        tokio::task::spawn_blocking(move || pair.promote()).await.unwrap().unwrap();
    }
    let promoted_at = Instant::now();
    // The new primary's clock at the promotion, to tell the deliveries made after it.
    let promoted_sql = rows(&pair, "SELECT now()").await[0][0].clone();
    tokio::time::sleep(AFTER_PROMOTION).await;
    load.stop.store(true, Ordering::Relaxed);
    for task in tasks {
        task.await.unwrap();
    }

    // Every answer: a 2xx, an expected 4xx, or a 503 with Retry-After.
    let answers = std::mem::take(&mut *load.log.answers.lock().unwrap());
    let unexpected: Vec<&Answer> = answers
        .iter()
        .filter(|a| match a.status {
            200..=299 => false,
            409 => !a.body.contains("\"slot_full\"") && !a.body.contains("\"idempotency_key_in_use\""),
            412 => a.what != "status change",
            503 => !a.retry_after,
            _ => true,
        })
        .collect();
    assert!(unexpected.is_empty(), "unexpected answers: {unexpected:#?}");
    let unavailable = answers.iter().filter(|a| a.status == 503).count();
    assert!(unavailable > 0, "no request met the switch: the test proves nothing");
    let is_write = |a: &&Answer| !matches!(a.what, "request list" | "availability" | "read");
    let back = answers
        .iter()
        .filter(is_write)
        .filter(|a| (200..300).contains(&a.status) && a.at > promoted_at)
        .map(|a| a.at - promoted_at)
        .min()
        .expect("no write succeeded after the promotion");
    assert!(back < BACK_WITHIN, "the first write after the promotion took {back:?}");
    let during = |a: &Answer| a.at.saturating_duration_since(stopped_at);
    let first_503 = answers.iter().filter(|a| a.status == 503).map(during).min().unwrap();
    let last_503 = answers.iter().filter(|a| a.status == 503).map(during).max().unwrap();
    let early: Vec<&Answer> = answers.iter().filter(|a| a.status == 503 && a.at < stopped_at).collect();
    assert!(early.is_empty(), "503s before the primary stopped: {early:#?}");
    let acked = std::mem::take(&mut *load.log.acked.lock().unwrap());
    assert!(acked.requests.len() > acked_before, "no submission acknowledged after the switch");
    eprintln!(
        "{} answers; {unavailable} × 503 from {first_503:?} to {last_503:?} after the stop, the promotion {:?} \
         after it; the first write {back:?} after the promotion; acknowledged: {} submissions ({acked_before} \
         before the stop), {} bookings ({booked_before} before the stop, {} slot_full), {} uploads, {} status \
         changes ({} more done without an acknowledgement), {} retries replayed",
        answers.len(),
        promoted_at - stopped_at,
        acked.requests.len(),
        acked.bookings.len(),
        load.log.slot_full.load(Ordering::Relaxed),
        acked.documents.len(),
        acked.changes.len(),
        load.log.unacknowledged_changes.load(Ordering::Relaxed),
        load.log.replayed.load(Ordering::Relaxed),
    );

    // A client that never got the answer of a submission acknowledged before the stop gets
    // it replayed by the new primary: the idempotency records came through too.
    for (i, (token, key)) in acked.submission_keys.iter().take(acked_before.min(20)).enumerate() {
        let node = &load.nodes[i % load.nodes.len()];
        let response = node
            .authed(Method::POST, REQUESTS, token)
            .header("idempotency-key", key)
            .json(&json!({ "service_type_id": load.service }))
            .send()
            .await
            .unwrap();
        assert_eq!(header(response.headers(), "idempotent-replayed"), "true", "{key}");
        let replay = expect(response, StatusCode::CREATED, "a replayed submission").await;
        assert_eq!(text(&replay, "id"), acked.requests[i], "the replay of {key}");
    }

    // Every acknowledged write is on the new primary, with its outbox event, and none is
    // there twice: every write was retried until answered, so the rows are exactly the
    // acknowledged ones.
    let stored = column(&pair, "SELECT id FROM service_requests").await;
    let acked_set: HashSet<&String> = acked.requests.iter().collect();
    let extra: Vec<&String> = stored.iter().filter(|id| !acked_set.contains(id)).collect();
    if !extra.is_empty() {
        let list = extra.iter().map(|id| format!("'{id}'")).collect::<Vec<_>>().join(",");
        let details = rows(
            &pair,
            &format!(
                "SELECT r.id, r.citizen_id, r.submitted_at, r.status, r.version, \
                 (SELECT string_agg(k.key || ' ' || k.created_at, ';') FROM idempotency_keys k \
                 WHERE k::text LIKE '%' || r.id || '%') FROM service_requests r WHERE r.id IN ({list})"
            ),
        )
        .await;
        let submissions: Vec<String> = answers
            .iter()
            .filter(|a| a.what == "submission")
            .map(|a| {
                format!(
                    "{:?} {} {}",
                    a.at.saturating_duration_since(stopped_at),
                    a.status,
                    a.body.chars().take(60).collect::<String>()
                )
            })
            .collect();
        panic!("stored, never acknowledged: {details:#?}\nsubmission answers: {submissions:#?}");
    }
    assert_eq!(stored.len(), acked.requests.len(), "submissions stored against acknowledged");
    let missing: Vec<&String> = acked.requests.iter().filter(|id| !stored.contains(*id)).collect();
    assert!(missing.is_empty(), "acknowledged submissions lost: {missing:?}");
    let booked = column(&pair, "SELECT id FROM appointments WHERE status = 'booked'").await;
    let missing: Vec<_> = acked.bookings.iter().filter(|(id, _)| !booked.contains(id)).collect();
    assert!(missing.is_empty(), "acknowledged bookings lost: {missing:?}");
    let documents = column(&pair, "SELECT id FROM documents").await;
    assert_eq!(documents.len(), acked.documents.len(), "uploads stored against acknowledged");
    assert_eq!(booked.len(), acked.bookings.len(), "bookings stored against acknowledged");
    let missing: Vec<&String> = acked.documents.iter().filter(|id| !documents.contains(*id)).collect();
    assert!(missing.is_empty(), "acknowledged uploads lost: {missing:?}");
    let statuses: BTreeMap<String, String> = rows(&pair, "SELECT id, status FROM service_requests")
        .await
        .into_iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect();
    let submitted =
        column(&pair, "SELECT aggregate_id FROM outbox_events WHERE kind = 'request.submitted'").await;
    let booked_events = column(
        &pair,
        "SELECT payload->>'appointment_id' FROM outbox_events WHERE kind = 'appointment.booked'",
    )
    .await;
    let uploaded =
        column(&pair, "SELECT payload->>'document_id' FROM outbox_events WHERE kind = 'document.uploaded'")
            .await;
    let changed =
        column(&pair, "SELECT aggregate_id || ' ' || (payload->>'to') FROM outbox_events WHERE kind = 'request.status_changed'")
            .await;
    for id in &acked.requests {
        assert!(submitted.contains(id), "the submission event of {id} is lost");
    }
    for (id, _) in &acked.bookings {
        assert!(booked_events.contains(id), "the booking event of {id} is lost");
    }
    for id in &acked.documents {
        assert!(uploaded.contains(id), "the upload event of {id} is lost");
    }
    for (id, to) in &acked.changes {
        assert!(changed.contains(&format!("{id} {to}")), "the change of {id} to {to} is lost");
        assert_ne!(statuses[id], "submitted", "{id} went back to submitted");
    }

    // No slot overbooked: its seats are its active bookings, never more than its capacity.
    let seats = rows(
        &pair,
        "SELECT s.id, s.booked, s.capacity, (SELECT count(*) FROM appointments a \
         WHERE a.slot_id = s.id AND a.status = 'booked') FROM slots s",
    )
    .await;
    for row in &seats {
        assert_eq!(row[1], row[3], "slot {}: {} seats taken, {} active bookings", row[0], row[1], row[3]);
        assert!(
            row[1].parse::<usize>().unwrap() <= row[2].parse::<usize>().unwrap(),
            "slot {} overbooked: {row:?}",
            row[0]
        );
    }
    for (id, slot) in &acked.bookings {
        assert!(seats.iter().any(|row| &row[0] == slot), "booking {id} in an unknown slot {slot}");
    }
    assert!(acked.bookings.len() > booked_before, "no booking acknowledged after the switch: {seats:?}");

    // The outbox delivers every event, and each produces its notification exactly once.
    eventually(Duration::from_secs(20), "every event is delivered on the new primary", || async {
        rows(&pair, "SELECT count(*) FROM outbox_events WHERE delivered_at IS NULL").await[0][0] == "0"
    })
    .await;
    let wrong = rows(
        &pair,
        "SELECT e.kind, e.id, count(n.id) FROM outbox_events e LEFT JOIN notifications n ON n.event_id = e.id \
         GROUP BY e.kind, e.id \
         HAVING count(n.id) <> CASE WHEN e.kind IN ('request.submitted', 'request.status_changed', \
         'appointment.booked', 'request.assigned') THEN 1 ELSE 0 END",
    )
    .await;
    assert!(wrong.is_empty(), "events without exactly their one notification: {wrong:?}");
    let delivered = rows(
        &pair,
        &format!(
            "SELECT count(*) FILTER (WHERE created_at < '{promoted_sql}'), count(*) FROM outbox_events \
             WHERE delivered_at >= '{promoted_sql}'"
        ),
    )
    .await;
    eprintln!(
        "events delivered after the promotion: {} ({} of them written before it)",
        delivered[0][1], delivered[0][0]
    );
    assert_ne!(delivered[0][1], "0", "no event delivered after the switch");
}
