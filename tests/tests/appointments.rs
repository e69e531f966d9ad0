//! `/api/v1/appointments` end to end on SQLite and PostgreSQL (docs/appointments.md
//! "Endpoints and decisions", docs/api.md "Endpoints"): availability submitted in the
//! mission's local time and re-submitted unchanged, finding a slot, booking (idempotent),
//! the calendar file parsed by an independent iCalendar parser, rescheduling,
//! cancelling, the staff day list and attendance, every refusal, isolation between
//! citizens and missions, and a schedule over the Paris spring-forward week.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[allow(dead_code)]
mod requests_support;

use consular_domain::{Cutoffs, MissionId, ServiceTypeId, Slot, SlotId};
use consular_tests::consular_ports::{AppointmentRepository, SlotUpsert, WriteMeta};
use consular_tests::reqwest::{Method, Response, StatusCode};
use consular_tests::{Backend, TestApp, both, error_pointers, expect_problem, header, service_body};
use requests_support::*;
use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

struct World {
    admin: String,
    mission: String,
    service: String,
    other_service: String,
    staff: Person,
    alice: Person,
    bob: Person,
    carol: Person,
    foreign_staff: Person,
}

async fn world(app: &TestApp) -> World {
    let admin = app.admin_token().await;
    let other = mission(app, &admin, "fr-lyon").await;
    let mission = mission(app, &admin, "fr-paris").await;
    let service = text(&created(app, SERVICES, &admin, &service_body("passport_renewal")).await, "id");
    let other_service = text(&created(app, SERVICES, &admin, &service_body("visa")).await, "id");
    let staff = staff(app, &admin, &mission, "Xavier Staff", &[service.as_str()]).await;
    let foreign_staff = requests_support::staff(app, &admin, &other, "Yvonne Staff", &[]).await;
    let alice = citizen(app, &admin, &mission, "X0000A").await;
    let bob = citizen(app, &admin, &mission, "X0000B").await;
    let carol = citizen(app, &admin, &other, "X0000C").await;
    World { admin, mission, service, other_service, staff, alice, bob, carol, foreign_staff }
}

/// The local date `days` from today, `YYYY-MM-DD`.
fn day(days: i64) -> String {
    let d = (OffsetDateTime::now_utc() + Duration::days(days)).date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

/// Explicit slots (local `starts`, 60 minutes) of `capacity` serving `service`.
fn explicit(w: &World, starts: &[String], capacity: u32, extra: Value) -> Value {
    let slots: Vec<Value> = starts
        .iter()
        .map(|s| json!({ "starts_at": s, "minutes": 60, "capacity": capacity, "service_type_ids": [w.service] }))
        .collect();
    let mut body = json!({ "mission_id": w.mission, "slots": slots });
    if let (Some(body), Value::Object(extra)) = (body.as_object_mut(), extra) {
        body.extend(extra);
    }
    body
}

async fn submit_slots(app: &TestApp, token: &str, body: &Value) -> Value {
    expect(app.post_json(SLOTS, token, body).await, StatusCode::OK, "POST slots").await
}

/// The open slots of the world's mission for `service`, in start order.
async fn available(app: &TestApp, token: &str, w: &World, service: &str) -> Vec<Value> {
    list_all(app, token, &with_query(SLOTS, &[("mission_id", &w.mission), ("service_type_id", service)]))
        .await
}

async fn book(app: &TestApp, token: &str, body: &Value) -> Response {
    app.post_json(APPOINTMENTS, token, body).await
}

async fn booked(app: &TestApp, token: &str, body: &Value) -> Value {
    let response = book(app, token, body).await;
    let location = header(response.headers(), "location");
    let value = expect(response, StatusCode::CREATED, "booking").await;
    assert_eq!(location, format!("{APPOINTMENTS}/{}", text(&value, "id")));
    value
}

async fn fetch(app: &TestApp, token: &str, id: &str) -> (String, Value) {
    let response = app.get(&format!("{APPOINTMENTS}/{id}"), token).await;
    let etag = header(response.headers(), "etag");
    (etag, expect(response, StatusCode::OK, "GET appointment").await)
}

async fn cancel(app: &TestApp, token: &str, id: &str) -> Response {
    app.authed(Method::DELETE, &format!("{APPOINTMENTS}/{id}"), token).send().await.expect("DELETE")
}

async fn attend(app: &TestApp, token: &str, id: &str, status: &str) -> Response {
    app.post_json(&format!("{APPOINTMENTS}/{id}/attendance"), token, &json!({ "status": status })).await
}

/// `20260329T070000Z`.
fn ical_utc(at: OffsetDateTime) -> String {
    format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second()
    )
}

both!(find_book_calendar_reschedule_cancel);
async fn find_book_calendar_reschedule_cancel(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w = world(&app).await;
    let starts = [format!("{}T09:00", day(10)), format!("{}T10:00", day(10))];
    let body = explicit(&w, &starts, 2, json!({}));
    let report = submit_slots(&app, &w.admin, &body).await;
    assert_eq!(
        report,
        json!({ "created": 2, "updated": 0, "unchanged": 0, "cancelled_appointments": [], "release_at": null })
    );
    let again = submit_slots(&app, &w.admin, &body).await;
    assert_eq!(
        again,
        json!({ "created": 0, "updated": 0, "unchanged": 2, "cancelled_appointments": [], "release_at": null })
    );
    expect_problem(app.post_json(SLOTS, &w.staff.token, &body).await, 403, "insufficient_scope").await;

    let slots = available(&app, &w.alice.token, &w, &w.service).await;
    assert_eq!(slots.len(), 2, "{slots:?}");
    assert_eq!(slots[0]["remaining"], 2);
    assert_eq!(slots[0]["timezone"], "Europe/Paris");
    assert!(text(&slots[0], "local_starts_at").contains("T09:00:00+0"), "{}", slots[0]);
    assert!(text(&slots[0], "starts_at").ends_with('Z'));
    assert!(available(&app, &w.alice.token, &w, &w.other_service).await.is_empty());
    let (first, second) = (text(&slots[0], "id"), text(&slots[1], "id"));

    // Booked for one of Alice's requests: its timeline lists the booking's changes.
    let linked = text(&submit_own(&app, &w.alice, &w.service).await, "id");
    let request = json!({ "slot_id": first, "service_type_id": w.service, "request_id": linked });
    let keyed = |key: &str| {
        app.authed(Method::POST, APPOINTMENTS, &w.alice.token)
            .header("idempotency-key", key.to_owned())
            .json(&request)
    };
    let response = keyed("book-1").send().await.unwrap();
    assert_eq!(header(response.headers(), "etag"), "\"1\"");
    let appointment = expect(response, StatusCode::CREATED, "booking").await;
    let replay = keyed("book-1").send().await.unwrap();
    assert_eq!(header(replay.headers(), "idempotent-replayed"), "true");
    assert_eq!(expect(replay, StatusCode::CREATED, "replay").await["id"], appointment["id"]);
    let id = text(&appointment, "id");
    assert_eq!(appointment["status"], "booked");
    assert_eq!(appointment["citizen_id"], json!(w.alice.id));
    assert_eq!(available(&app, &w.alice.token, &w, &w.service).await[0]["remaining"], 1);

    // The calendar file, read by an independent parser.
    let response = app
        .authed(Method::GET, &format!("{APPOINTMENTS}/{id}"), &w.alice.token)
        .header("accept", "text/calendar")
        .send()
        .await
        .unwrap();
    assert!(header(response.headers(), "content-type").starts_with("text/calendar"));
    let ics = response.text().await.unwrap();
    let mut parser = ical::IcalParser::new(ics.as_bytes());
    let calendar = parser.next().expect("a calendar").expect("a valid calendar");
    assert_eq!(calendar.events.len(), 1, "{ics}");
    let property = |name: &str| {
        calendar.events[0]
            .properties
            .iter()
            .find(|p| p.name == name)
            .and_then(|p| p.value.clone())
            .unwrap_or_default()
    };
    assert_eq!(property("UID"), format!("{id}@consular"));
    assert_eq!(property("DTSTART"), ical_utc(instant(&appointment["starts_at"])));
    assert_eq!(property("DTEND"), ical_utc(instant(&appointment["ends_at"])));
    assert!(property("LOCATION").contains("Paris"), "{ics}");
    assert!(property("SUMMARY").contains("passport_renewal") || !property("SUMMARY").is_empty(), "{ics}");

    // Reschedule: If-Match required.
    let path = format!("{APPOINTMENTS}/{id}");
    let move_to = json!({ "slot_id": second });
    expect_problem(app.patch_json(&path, &w.alice.token, None, &move_to).await, 428, "precondition_required")
        .await;
    expect_problem(
        app.patch_json(&path, &w.alice.token, Some("\"7\""), &move_to).await,
        412,
        "precondition_failed",
    )
    .await;
    let moved =
        expect(app.patch_json(&path, &w.alice.token, Some("\"1\""), &move_to).await, StatusCode::OK, "move")
            .await;
    assert_eq!(moved["slot_id"], json!(second));
    assert_eq!(moved["version"], 2);
    let after = available(&app, &w.alice.token, &w, &w.service).await;
    assert_eq!((after[0]["remaining"].clone(), after[1]["remaining"].clone()), (json!(2), json!(1)));

    // Isolation: another citizen and another mission see nothing.
    expect_problem(app.get(&path, &w.bob.token).await, 404, "not_found").await;
    expect_problem(app.get(&path, &w.foreign_staff.token).await, 404, "not_found").await;
    expect_problem(cancel(&app, &w.bob.token, &id).await, 404, "not_found").await;
    let bobs = list_all(&app, &w.bob.token, APPOINTMENTS).await;
    assert!(bobs.is_empty(), "{bobs:?}");
    assert!(list_all(&app, &w.foreign_staff.token, APPOINTMENTS).await.is_empty());
    let query = with_query(SLOTS, &[("mission_id", &w.mission), ("service_type_id", &w.service)]);
    expect_problem(app.get(&query, &w.carol.token).await, 404, "not_found").await;
    assert_eq!(ids(&list_all(&app, &w.alice.token, APPOINTMENTS).await), vec![id.clone()]);

    // Cancel frees the seat.
    assert_eq!(cancel(&app, &w.alice.token, &id).await.status(), StatusCode::NO_CONTENT);
    let (_, cancelled) = fetch(&app, &w.alice.token, &id).await;
    assert_eq!(
        (cancelled["status"].clone(), cancelled["cancelled_by"].clone()),
        (json!("cancelled"), json!("citizen"))
    );
    assert_eq!(available(&app, &w.alice.token, &w, &w.service).await[1]["remaining"], 2);
    expect_problem(cancel(&app, &w.alice.token, &id).await, 409, "illegal_transition").await;

    // The linked request's timeline: booked, moved, cancelled, each with the times it left.
    let details = expect(
        app.get(&format!("/api/v1/requests/{linked}"), &w.alice.token).await,
        StatusCode::OK,
        "request",
    )
    .await;
    let bookings: Vec<&Value> = details["timeline"]
        .as_array()
        .expect("a timeline")
        .iter()
        .filter(|item| text(item, "kind").starts_with("appointment_"))
        .collect();
    let kinds: Vec<String> = bookings.iter().map(|item| text(item, "kind")).collect();
    assert_eq!(
        kinds,
        ["appointment_booked", "appointment_rescheduled", "appointment_cancelled"],
        "{details}"
    );
    assert!(bookings.iter().all(|item| item["item_id"] == json!(id)), "{details}");
    assert_eq!(bookings[0]["starts_at"], appointment["starts_at"]);
    assert_eq!(bookings[1]["starts_at"], moved["starts_at"]);
    assert_eq!(bookings[2]["actor"]["kind"], "citizen", "{details}");
}

both!(every_refusal);
async fn every_refusal(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w = world(&app).await;
    let start = format!("{}T09:00", day(12));
    submit_slots(&app, &w.admin, &explicit(&w, std::slice::from_ref(&start), 1, json!({}))).await;
    let slot = text(&available(&app, &w.alice.token, &w, &w.service).await[0], "id");
    let for_slot = |s: &str| json!({ "slot_id": s, "service_type_id": w.service });

    // Unknown slot, citizen, request; a service the slot does not serve.
    let (_, p) = expect_problem(
        book(&app, &w.alice.token, &for_slot(&Uuid::now_v7().to_string())).await,
        422,
        "validation_failed",
    )
    .await;
    assert_eq!(error_pointers(&p), ["/slot_id"]);
    let body = json!({ "slot_id": slot, "service_type_id": w.other_service });
    let (_, p) = expect_problem(book(&app, &w.alice.token, &body).await, 422, "validation_failed").await;
    assert_eq!(error_pointers(&p), ["/service_type_id"]);
    let body = json!({ "slot_id": slot, "service_type_id": w.service, "citizen_id": Uuid::now_v7() });
    expect_problem(book(&app, &w.staff.token, &body).await, 422, "validation_failed").await;
    let body = json!({ "slot_id": slot, "service_type_id": w.service, "citizen_id": w.carol.id });
    expect_problem(book(&app, &w.staff.token, &body).await, 422, "validation_failed").await;
    let body = json!({ "slot_id": slot, "service_type_id": w.service, "request_id": Uuid::now_v7() });
    expect_problem(book(&app, &w.alice.token, &body).await, 422, "validation_failed").await;
    expect_problem(book(&app, &w.carol.token, &for_slot(&slot)).await, 422, "validation_failed").await;

    // Full.
    let alices = booked(&app, &w.alice.token, &for_slot(&slot)).await;
    expect_problem(book(&app, &w.bob.token, &for_slot(&slot)).await, 409, "slot_full").await;
    let staff_for_bob = json!({ "slot_id": slot, "service_type_id": w.service, "citizen_id": w.bob.id });
    expect_problem(book(&app, &w.staff.token, &staff_for_bob).await, 409, "slot_full").await;

    // Reschedule into a full slot changes nothing.
    let start2 = format!("{}T11:00", day(12));
    submit_slots(&app, &w.admin, &explicit(&w, std::slice::from_ref(&start2), 1, json!({}))).await;
    let slots = available(&app, &w.alice.token, &w, &w.service).await;
    let other = text(&slots[0], "id");
    let bobs = booked(&app, &w.bob.token, &for_slot(&other)).await;
    let path = format!("{APPOINTMENTS}/{}", text(&alices, "id"));
    expect_problem(
        app.patch_json(&path, &w.alice.token, Some("\"1\""), &json!({ "slot_id": other })).await,
        409,
        "slot_full",
    )
    .await;
    assert_eq!(fetch(&app, &w.alice.token, &text(&alices, "id")).await.1["slot_id"], json!(slot));

    // One active booking per citizen and request.
    let request = text(&submit_own(&app, &w.bob, &w.service).await, "id");
    let start3 = [format!("{}T14:00", day(12)), format!("{}T15:00", day(12))];
    submit_slots(&app, &w.admin, &explicit(&w, &start3, 3, json!({}))).await;
    let open: Vec<String> =
        available(&app, &w.bob.token, &w, &w.service).await.iter().map(|s| text(s, "id")).collect();
    let with_request = |s: &str| json!({ "slot_id": s, "service_type_id": w.service, "request_id": request });
    let held = booked(&app, &w.bob.token, &with_request(&open[0])).await;
    let (_, p) =
        expect_problem(book(&app, &w.bob.token, &with_request(&open[1])).await, 409, "already_booked").await;
    assert_eq!(p["existing_appointment_id"], held["id"], "naming the booking held: {p}");

    // Booking cut-off; cancellation cut-off (staff may still cancel).
    let late = format!("{}T09:00", day(14));
    let cutoffs = json!({ "cutoffs": { "booking_minutes": 43200, "cancellation_minutes": 0 } });
    submit_slots(&app, &w.admin, &explicit(&w, std::slice::from_ref(&late), 2, cutoffs)).await;
    let closed = app
        .database()
        .slots_between(
            MissionId(Uuid::parse_str(&w.mission).unwrap()),
            OffsetDateTime::now_utc() + Duration::days(13),
            OffsetDateTime::now_utc() + Duration::days(15),
        )
        .await
        .unwrap();
    let closed = closed[0].id.as_uuid().to_string();
    expect_problem(book(&app, &w.alice.token, &for_slot(&closed)).await, 409, "booking_closed").await;
    let strict = format!("{}T09:00", day(16));
    let cutoffs = json!({ "cutoffs": { "booking_minutes": 60, "cancellation_minutes": 43200 } });
    submit_slots(&app, &w.admin, &explicit(&w, std::slice::from_ref(&strict), 2, cutoffs.clone())).await;
    let all = available(&app, &w.alice.token, &w, &w.service).await;
    let strict_slot = text(all.last().unwrap(), "id");
    let kept = booked(&app, &w.alice.token, &for_slot(&strict_slot)).await;
    let (_, p) =
        expect_problem(cancel(&app, &w.alice.token, &text(&kept, "id")).await, 409, "cancellation_closed")
            .await;
    assert!(text(&p, "detail").contains("cut-off"), "{p}");
    let second = booked(&app, &w.bob.token, &for_slot(&strict_slot)).await;
    assert_eq!(cancel(&app, &w.staff.token, &text(&second, "id")).await.status(), StatusCode::NO_CONTENT);

    // Closing a slot with bookings: 409 naming it, then cancelled by the mission.
    let mut close = explicit(&w, std::slice::from_ref(&strict), 2, cutoffs);
    close["slots"][0]["open"] = json!(false);
    let (_, p) = expect_problem(app.post_json(SLOTS, &w.admin, &close).await, 409, "slot_has_bookings").await;
    assert_eq!(error_pointers(&p), [format!("/slots/{strict_slot}")]);
    close["cancel_bookings"] = json!(true);
    let report = submit_slots(&app, &w.admin, &close).await;
    assert_eq!(report["cancelled_appointments"], json!([kept["id"]]));
    assert_eq!(report["updated"], 1);
    let (_, gone) = fetch(&app, &w.alice.token, &text(&kept, "id")).await;
    assert_eq!(
        (gone["status"].clone(), gone["cancelled_by"].clone()),
        (json!("cancelled"), json!("mission"))
    );

    // Attendance before the start, and by a citizen.
    expect_problem(attend(&app, &w.staff.token, &text(&bobs, "id"), "attended").await, 409, "not_started")
        .await;
    expect_problem(
        attend(&app, &w.bob.token, &text(&bobs, "id"), "attended").await,
        403,
        "insufficient_scope",
    )
    .await;
    // A schedule that is not one.
    let (_, p) = expect_problem(
        app.post_json(SLOTS, &w.admin, &json!({ "mission_id": w.mission })).await,
        422,
        "validation_failed",
    )
    .await;
    assert_eq!(error_pointers(&p), ["/"]);
}

both!(staff_day_list_and_attendance);
async fn staff_day_list_and_attendance(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w = world(&app).await;
    // A slot starting in a few seconds, stored directly: the API makes whole-minute slots.
    let now = OffsetDateTime::now_utc();
    let starts_at = now.replace_nanosecond(0).unwrap() + Duration::seconds(4);
    let slot = Slot {
        id: SlotId::new(),
        mission_id: MissionId(Uuid::parse_str(&w.mission).unwrap()),
        starts_at,
        ends_at: starts_at + Duration::minutes(30),
        capacity: 3,
        booked: 0,
        service_types: vec![ServiceTypeId(Uuid::parse_str(&w.service).unwrap())],
        open: true,
        cutoffs: Cutoffs { booking_minutes: 0, cancellation_minutes: 0 },
        release_at: None,
        version: 1,
        created_at: now,
        updated_at: now,
    };
    app.database()
        .upsert_slots(
            &SlotUpsert { slots: vec![(slot.clone(), None)], cancelled: vec![] },
            &WriteMeta::default(),
        )
        .await
        .unwrap();
    let body = json!({ "slot_id": slot.id.as_uuid(), "service_type_id": w.service });
    let alices = booked(&app, &w.alice.token, &body).await;
    let for_bob =
        json!({ "slot_id": slot.id.as_uuid(), "service_type_id": w.service, "citizen_id": w.bob.id });
    let bobs = booked(&app, &w.staff.token, &for_bob).await;
    expect_problem(attend(&app, &w.staff.token, &text(&alices, "id"), "attended").await, 409, "not_started")
        .await;

    let local_day = text(&alices, "local_starts_at")[..10].to_owned();
    let day_list = list_all(&app, &w.staff.token, &with_query(APPOINTMENTS, &[("date", &local_day)])).await;
    let mut listed = ids(&day_list);
    listed.sort();
    let mut want = vec![text(&alices, "id"), text(&bobs, "id")];
    want.sort();
    assert_eq!(listed, want);
    assert_eq!(day_list.len(), 2, "{day_list:?}");
    let other_day = with_query(APPOINTMENTS, &[("date", "2030-01-01")]);
    assert!(list_all(&app, &w.staff.token, &other_day).await.is_empty());
    assert!(
        list_all(&app, &w.foreign_staff.token, &with_query(APPOINTMENTS, &[("date", &local_day)]))
            .await
            .is_empty()
    );
    let by_slot =
        with_query(APPOINTMENTS, &[("slot_id", &slot.id.as_uuid().to_string()), ("status", "booked")]);
    assert_eq!(list_all(&app, &w.staff.token, &by_slot).await.len(), 2);

    tokio::time::sleep(
        (starts_at - OffsetDateTime::now_utc()).max(Duration::ZERO).unsigned_abs()
            + std::time::Duration::from_millis(300),
    )
    .await;
    let attended = expect(
        attend(&app, &w.staff.token, &text(&alices, "id"), "attended").await,
        StatusCode::OK,
        "attended",
    )
    .await;
    assert_eq!(attended["status"], "attended");
    let missed =
        expect(attend(&app, &w.staff.token, &text(&bobs, "id"), "no_show").await, StatusCode::OK, "no show")
            .await;
    assert_eq!(missed["status"], "no_show");
    expect_problem(
        attend(&app, &w.foreign_staff.token, &text(&bobs, "id"), "attended").await,
        404,
        "not_found",
    )
    .await;
    expect_problem(
        attend(&app, &w.staff.token, &text(&bobs, "id"), "attended").await,
        409,
        "illegal_transition",
    )
    .await;
    let attended_only = with_query(APPOINTMENTS, &[("status", "attended")]);
    assert_eq!(ids(&list_all(&app, &w.staff.token, &attended_only).await), vec![text(&alices, "id")]);
}

both!(a_schedule_over_the_paris_spring_forward_week);
async fn a_schedule_over_the_paris_spring_forward_week(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w = world(&app).await;
    // Clocks spring forward in Paris on Sunday 2027-03-28.
    let body = json!({
        "mission_id": w.mission,
        "schedule": {
            "from": "2027-03-22", "to": "2027-04-02", "weekdays": ["fri", "mon"],
            "hours": [{ "from": "09:00", "to": "10:00" }], "slot_minutes": 60, "capacity": 4,
            "service_type_ids": [w.service], "excluded_dates": ["2027-04-02"],
        },
    });
    let report = submit_slots(&app, &w.admin, &body).await;
    assert_eq!(report["created"], 3, "{report}");
    assert_eq!(submit_slots(&app, &w.admin, &body).await["unchanged"], 3);
    let query = with_query(
        SLOTS,
        &[
            ("mission_id", &w.mission),
            ("service_type_id", &w.service),
            ("from", "2027-03-01T00:00:00Z"),
            ("to", "2027-05-01T00:00:00Z"),
        ],
    );
    let slots = list_all(&app, &w.alice.token, &query).await;
    let utc: Vec<String> = slots.iter().map(|s| text(s, "starts_at")).collect();
    assert_eq!(utc, ["2027-03-22T08:00:00Z", "2027-03-26T08:00:00Z", "2027-03-29T07:00:00Z"]);
    let local: Vec<String> = slots.iter().map(|s| text(s, "local_starts_at")).collect();
    assert_eq!(
        local,
        ["2027-03-22T09:00:00+01:00", "2027-03-26T09:00:00+01:00", "2027-03-29T09:00:00+02:00"]
    );
}
