//! `/api/v1/requests` end to end (docs/requests.md): the life of a service request with
//! the clients a portal would have (a citizen and a staff member, each with their own API
//! client), the status machine, `If-Match` concurrency, submission rules and automatic
//! assignment, lists, internal notes (never shown to citizens), the message thread, staff
//! queues, cancellation, isolation between principals, and the domain events of the
//! transactional outbox.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod requests_support;

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

// ------------------------------------------------------------------------- 1. a whole life

async fn a_request_lives_from_submission_to_completion(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let (staff, citizen) = (&cast.staff, &cast.citizen);
    let (by_staff, by_citizen) = (staff.actor("staff"), citizen.actor("citizen"));

    let request = submit_own(&app, citizen, &cast.service).await;
    let id = text(&request, "id");
    assert_eq!(uuid::Uuid::parse_str(&id).unwrap().get_version_num(), 7, "ids are UUIDv7");
    assert_eq!(request["status"], "submitted");
    assert_eq!(request["citizen_id"], citizen.id.as_str());
    assert_eq!(request["mission_id"], cast.mission.as_str());
    assert_eq!(request["service_type_id"], cast.service.as_str());
    assert_eq!(request["assignee_id"], staff.id.as_str(), "auto-assigned to the member on the type");
    assert_eq!(request["current_stage"], json!({ "index": 0, "name": "Document check" }));
    let stage_names: Vec<&str> =
        request["stages"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(stage_names, STAGES);
    assert!(request["closed_at"].is_null(), "{request}");
    assert_eq!(request["overdue"], false);

    // If-Match is required to change anything.
    let review = to("in_review", "Documents received");
    expect_problem(patch(&app, &staff.token, &id, None, &review).await, 428, "precondition_required").await;
    let (first_etag, _) = read(&app, &staff.token, &id).await;
    let mut etags = vec![first_etag];

    let hello = post(&app, &citizen.token, &id, "messages", "Hello, my documents are attached.").await;
    let mut step = async |body: Value, status: &str, stage: i64| {
        let changed = change(&app, &staff.token, &id, &body).await;
        assert_eq!(changed["status"], status, "{body}: {changed}");
        assert_eq!(changed["current_stage"]["index"], stage, "{body}: {changed}");
        assert_eq!(changed["current_stage"]["name"], STAGES[stage as usize]);
        etags.push(read(&app, &citizen.token, &id).await.0);
    };
    step(review, "in_review", 0).await;
    step(json!({ "advance_stage": true, "reason": "Documents are valid" }), "in_review", 1).await;
    step(to("action_required", "The photo is too old"), "action_required", 1).await;
    let ask = post(&app, &staff.token, &id, "messages", "Please upload a recent photo.").await;
    let answer = post(&app, &citizen.token, &id, "messages", "Done, a new photo is uploaded.").await;
    step(to("in_review", "New photo received"), "in_review", 1).await;
    step(to("approved", "Interview passed"), "approved", 1).await;
    step(json!({ "advance_stage": true }), "approved", 2).await;
    step(to("completed", "Passport handed over"), "completed", 2).await;

    let mut distinct = etags.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 8, "one ETag per version: {etags:?}");

    let (_, details) = read(&app, &citizen.token, &id).await;
    assert_eq!(details["status"], "completed");
    assert!(instant(&details["closed_at"]) >= instant(&details["submitted_at"]));
    assert_eq!(details["overdue"], false, "a closed request is never overdue");
    assert_eq!(
        without_at(&details["stage_history"]),
        [
            entry(&by_citizen, None, "submitted", None, 0, None),
            entry(&by_staff, Some("submitted"), "in_review", Some(0), 0, Some("Documents received")),
            entry(&by_staff, Some("in_review"), "in_review", Some(0), 1, Some("Documents are valid")),
            entry(&by_staff, Some("in_review"), "action_required", Some(1), 1, Some("The photo is too old")),
            entry(&by_staff, Some("action_required"), "in_review", Some(1), 1, Some("New photo received")),
            entry(&by_staff, Some("in_review"), "approved", Some(1), 1, Some("Interview passed")),
            entry(&by_staff, Some("approved"), "approved", Some(1), 2, None),
            entry(&by_staff, Some("approved"), "completed", Some(2), 2, Some("Passport handed over")),
        ]
    );
    assert_eq!(instant(&details["stage_history"][0]["at"]), instant(&request["submitted_at"]));
    assert_eq!(hello["author"], by_citizen);
    assert_eq!(ask["author"], by_staff);
    assert_eq!(
        without_at(&details["timeline"]),
        [
            change_item("submitted", &by_citizen, None, "submitted", 0, None),
            post_item("message", &hello),
            change_item(
                "status_changed",
                &by_staff,
                Some("submitted"),
                "in_review",
                0,
                Some("Documents received")
            ),
            change_item(
                "stage_advanced",
                &by_staff,
                Some("in_review"),
                "in_review",
                1,
                Some("Documents are valid")
            ),
            change_item(
                "status_changed",
                &by_staff,
                Some("in_review"),
                "action_required",
                1,
                Some("The photo is too old"),
            ),
            post_item("message", &ask),
            post_item("message", &answer),
            change_item(
                "status_changed",
                &by_staff,
                Some("action_required"),
                "in_review",
                1,
                Some("New photo received"),
            ),
            change_item(
                "status_changed",
                &by_staff,
                Some("in_review"),
                "approved",
                1,
                Some("Interview passed")
            ),
            change_item("stage_advanced", &by_staff, Some("approved"), "approved", 2, None),
            change_item(
                "status_changed",
                &by_staff,
                Some("approved"),
                "completed",
                2,
                Some("Passport handed over")
            ),
        ]
    );
    // Without notes, staff and the citizen read the same request.
    assert_eq!(read(&app, &staff.token, &id).await.1, details);

    // A final request changes no more, whoever asks.
    refused(&app, &staff.token, &id, &to("cancelled", "too late"), &[]).await;
    refused(&app, &staff.token, &id, &json!({ "advance_stage": true }), &[]).await;
    let cancel = app.post_json(&at(&id, "/cancel"), &citizen.token, &json!({})).await;
    expect_problem(cancel, 409, "illegal_transition").await;
}
both!(a_request_lives_from_submission_to_completion);

// ---------------------------------------------------------------- 2. illegal transitions

async fn illegal_transitions_are_409_and_name_the_allowed_actions(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let staff = &cast.staff.token;
    let id = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
    let advance = json!({ "advance_stage": true });

    for body in [to("approved", "r"), to("completed", "r"), to("submitted", "r"), advance.clone()] {
        refused(&app, staff, &id, &body, &["in_review", "cancelled"]).await;
    }
    change(&app, staff, &id, &to("in_review", "r")).await;
    let in_review = ["action_required", "approved", "rejected", "cancelled", "advance_stage"];
    refused(&app, staff, &id, &to("completed", "r"), &in_review).await;
    refused(&app, staff, &id, &to("in_review", "r"), &in_review).await;

    change(&app, staff, &id, &to("action_required", "r")).await;
    for body in [advance.clone(), to("approved", "r")] {
        refused(&app, staff, &id, &body, &["in_review", "cancelled"]).await;
    }
    change(&app, staff, &id, &to("in_review", "r")).await;
    change(&app, staff, &id, &advance).await;
    change(&app, staff, &id, &advance).await;
    // At the last stage: no advance_stage any more.
    refused(&app, staff, &id, &advance, &["action_required", "approved", "rejected", "cancelled"]).await;
    change(&app, staff, &id, &to("approved", "r")).await;
    refused(&app, staff, &id, &advance, &["completed", "cancelled"]).await;
    refused(&app, staff, &id, &to("in_review", "r"), &["completed", "cancelled"]).await;

    let rejected = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
    change(&app, staff, &rejected, &to("in_review", "r")).await;
    change(&app, staff, &rejected, &to("rejected", "Not eligible")).await;
    for body in [to("in_review", "r"), to("cancelled", "r"), advance.clone()] {
        refused(&app, staff, &rejected, &body, &[]).await;
    }

    // A stage advance from approved stops at the last stage too.
    let fresh = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
    change(&app, staff, &fresh, &to("in_review", "r")).await;
    change(&app, staff, &fresh, &to("approved", "r")).await;
    change(&app, staff, &fresh, &advance).await;
    change(&app, staff, &fresh, &advance).await;
    refused(&app, staff, &fresh, &advance, &["completed", "cancelled"]).await;
}
both!(illegal_transitions_are_409_and_name_the_allowed_actions);

async fn a_status_change_needs_a_reason_and_comes_alone(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let staff = &cast.staff.token;
    let id = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
    let etag = Some("\"1\"");

    invalid(patch(&app, staff, &id, etag, &json!({ "status": "in_review" })).await, "/reason").await;
    invalid(
        patch(&app, staff, &id, etag, &json!({ "status": "in_review", "reason": " \n " })).await,
        "/reason",
    )
    .await;
    let long = "r".repeat(4001);
    invalid(
        patch(&app, staff, &id, etag, &json!({ "status": "in_review", "reason": long })).await,
        "/reason",
    )
    .await;
    let both_actions = json!({ "status": "in_review", "reason": "r", "advance_stage": true });
    invalid(patch(&app, staff, &id, etag, &both_actions).await, "/advance_stage").await;
    for body in [json!({}), json!({ "status": "archived", "reason": "r" }), json!({ "reason": "r", "x": 1 })]
    {
        let response = patch(&app, staff, &id, etag, &body).await;
        assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    }
    let (now, details) = read(&app, staff, &id).await;
    assert_eq!(now, "\"1\"", "nothing changed");
    assert_eq!(details["stage_history"].as_array().unwrap().len(), 1);
    // A reason of exactly 4000 characters is fine.
    let full = to("in_review", &"é".repeat(4000));
    assert_eq!(change(&app, staff, &id, &full).await["status"], "in_review");
}
both!(a_status_change_needs_a_reason_and_comes_alone);

// ------------------------------------------------------------------------ 3. concurrency

async fn two_changes_with_one_etag_one_wins_the_other_gets_412(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let admin_x = app.principal_by(&cast.admin, &["admin"], Some(&cast.mission)).await;
    for round in 0..3 {
        let id = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
        let events_before = event_kinds(&app, &id).await;
        let review = to("in_review", "taken by the officer");
        let cancel = to("cancelled", "cancelled by the admin");
        let (first, second) = tokio::join!(
            patch(&app, &cast.staff.token, &id, Some("\"1\""), &review),
            patch(&app, &admin_x.token, &id, Some("\"1\""), &cancel),
        );
        let (first, second) = (json_of(first).await, json_of(second).await);
        let mut statuses = [first.0.as_u16(), second.0.as_u16()];
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 412], "round {round}: {first:?} / {second:?}");
        let (winner, loser) =
            if first.0 == StatusCode::OK { (first.1, second.1) } else { (second.1, first.1) };
        assert_eq!(loser["code"], "precondition_failed", "{loser}");
        let (_, details) = read(&app, &cast.staff.token, &id).await;
        assert_eq!(details["status"], winner["status"]);
        assert_eq!(details["stage_history"].as_array().unwrap().len(), 2, "exactly one change: {details}");
        let mut expected = events_before;
        expected.push("request.status_changed".to_owned());
        assert_eq!(event_kinds(&app, &id).await, expected, "one event, for the change that committed");
    }
}
both!(two_changes_with_one_etag_one_wins_the_other_gets_412);

async fn a_stale_etag_is_412_and_a_list_of_etags_may_match(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let staff = &cast.staff.token;
    let id = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
    change(&app, staff, &id, &to("in_review", "r")).await;
    let (etag, _) = read(&app, staff, &id).await;
    let stale = patch(&app, staff, &id, Some("\"1\""), &to("approved", "r")).await;
    expect_problem(stale, 412, "precondition_failed").await;
    // A stale ETag is 412 even when the change would be illegal anyway.
    let stale_illegal = patch(&app, staff, &id, Some("\"1\""), &to("completed", "r")).await;
    expect_problem(stale_illegal, 412, "precondition_failed").await;
    assert_eq!(read(&app, staff, &id).await.0, etag);
    let either = format!("\"1\", {etag}");
    let response = patch(&app, staff, &id, Some(&either), &to("approved", "r")).await;
    assert_eq!(response.status(), StatusCode::OK);
}
both!(a_stale_etag_is_412_and_a_list_of_etags_may_match);

// --------------------------------------------------------------------- 4. submission rules

async fn an_inactive_unknown_or_deregistered_submission_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let old = text(&service_type(&app, &cast.admin, "old_visa", &["Check"], 10).await, "id");
    deactivate(&app, &cast.admin, &old).await;
    let events = event_count(&app).await;

    let inactive = app.post_json(REQUESTS, &cast.citizen.token, &json!({ "service_type_id": old })).await;
    expect_problem(inactive, 409, "service_inactive").await;
    let staff_for_citizen = json!({ "service_type_id": old, "citizen_id": cast.citizen.id });
    let inactive = app.post_json(REQUESTS, &cast.staff.token, &staff_for_citizen).await;
    expect_problem(inactive, 409, "service_inactive").await;
    let unknown = json!({ "service_type_id": uuid::Uuid::now_v7() });
    invalid(app.post_json(REQUESTS, &cast.citizen.token, &unknown).await, "/service_type_id").await;
    let no_type = app.post_json(REQUESTS, &cast.citizen.token, &json!({})).await;
    assert_eq!(no_type.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let extra = json!({ "service_type_id": cast.service, "priority": "high" });
    assert_eq!(app.post_json(REQUESTS, &cast.citizen.token, &extra).await.status(), 422);

    // A deregistered citizen cannot submit, by themself or through staff.
    let path = format!("{CITIZENS}/{}", cast.citizen.id);
    let deregister = json!({ "registration_status": "deregistered" });
    expect(app.patch_json(&path, &cast.admin, Some("*"), &deregister).await, StatusCode::OK, "deregister")
        .await;
    let own = json!({ "service_type_id": cast.service });
    expect_problem(app.post_json(REQUESTS, &cast.citizen.token, &own).await, 409, "citizen_deregistered")
        .await;
    let for_them = json!({ "service_type_id": cast.service, "citizen_id": cast.citizen.id });
    expect_problem(app.post_json(REQUESTS, &cast.staff.token, &for_them).await, 409, "citizen_deregistered")
        .await;

    assert!(listed(&app, &cast.admin, &[]).await.is_empty(), "nothing was submitted");
    assert_eq!(event_count(&app).await, events, "a refused submission writes no event");
}
both!(an_inactive_unknown_or_deregistered_submission_is_refused);

async fn staff_and_admins_submit_for_citizens_of_their_mission(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let y = mission(&app, &cast.admin, "de-berlin").await;
    let citizen_y = citizen(&app, &cast.admin, &y, "Y0000C").await;
    let admin_x = app.principal_by(&cast.admin, &["admin"], Some(&cast.mission)).await;
    let admin_y = app.principal_by(&cast.admin, &["admin"], Some(&y)).await;

    let for_a = json!({ "citizen_id": cast.citizen.id, "service_type_id": cast.service });
    let by_staff = submit(&app, &cast.staff.token, &for_a).await;
    assert_eq!(by_staff["citizen_id"], cast.citizen.id.as_str());
    assert_eq!(by_staff["mission_id"], cast.mission.as_str());
    let by_admin = submit(&app, &admin_x.token, &for_a).await;
    assert_eq!(by_admin["citizen_id"], cast.citizen.id.as_str());
    let by_global = submit(&app, &cast.admin, &for_a).await;
    assert_eq!(by_global["citizen_id"], cast.citizen.id.as_str());

    // The submission is recorded as made by the staff member, and the citizen sees it.
    let (_, details) = read(&app, &cast.citizen.token, &text(&by_staff, "id")).await;
    assert_eq!(details["stage_history"][0]["actor"], cast.staff.actor("staff"));
    let mine = listed(&app, &cast.citizen.token, &[]).await;
    assert_eq!(mine, ids(&[by_global, by_admin, by_staff]));

    // Staff must name the citizen, and only one of their mission.
    let nobody = json!({ "service_type_id": cast.service });
    invalid(app.post_json(REQUESTS, &cast.staff.token, &nobody).await, "/citizen_id").await;
    invalid(app.post_json(REQUESTS, &admin_x.token, &nobody).await, "/citizen_id").await;
    let for_c = json!({ "citizen_id": citizen_y.id, "service_type_id": cast.service });
    invalid(app.post_json(REQUESTS, &cast.staff.token, &for_c).await, "/citizen_id").await;
    invalid(app.post_json(REQUESTS, &admin_x.token, &for_c).await, "/citizen_id").await;
    invalid(app.post_json(REQUESTS, &admin_y.token, &for_a).await, "/citizen_id").await;
    let unknown = json!({ "citizen_id": uuid::Uuid::now_v7(), "service_type_id": cast.service });
    invalid(app.post_json(REQUESTS, &cast.staff.token, &unknown).await, "/citizen_id").await;
    assert!(listed(&app, &cast.admin, &[("citizen_id", &citizen_y.id)]).await.is_empty());
}
both!(staff_and_admins_submit_for_citizens_of_their_mission);

async fn a_citizen_submits_only_for_themself(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let bruno = citizen(&app, &cast.admin, &cast.mission, "X0000B").await;
    let for_bruno = json!({ "citizen_id": bruno.id, "service_type_id": cast.service });
    invalid(app.post_json(REQUESTS, &cast.citizen.token, &for_bruno).await, "/citizen_id").await;
    assert!(listed(&app, &bruno.token, &[]).await.is_empty(), "nothing was submitted for Bruno");
    let for_me = json!({ "citizen_id": cast.citizen.id, "service_type_id": cast.service });
    let mine = submit(&app, &cast.citizen.token, &for_me).await;
    assert_eq!(mine["citizen_id"], cast.citizen.id.as_str());
}
both!(a_citizen_submits_only_for_themself);

async fn the_least_loaded_member_gets_the_next_request(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let x = mission(&app, &admin, "fr-paris").await;
    let service = text(&service_type(&app, &admin, "passport_renewal", &STAGES, 21).await, "id");
    let first = staff(&app, &admin, &x, "First Officer", &[service.as_str()]).await;
    let second = staff(&app, &admin, &x, "Second Officer", &[service.as_str()]).await;
    // Ties go to the lowest id.
    let (low, high) = if first.id < second.id { (first, second) } else { (second, first) };
    let alice = citizen(&app, &admin, &x, "X0000A").await;
    let submit_next = async || submit_own(&app, &alice, &service).await;

    let r1 = submit_next().await;
    assert_eq!(r1["assignee_id"], low.id.as_str(), "0/0: the lowest id");
    let r2 = submit_next().await;
    assert_eq!(r2["assignee_id"], high.id.as_str(), "1/0: the other one");
    let r3 = submit_next().await;
    assert_eq!(r3["assignee_id"], low.id.as_str(), "1/1: the lowest id");
    let r4 = submit_next().await;
    assert_eq!(r4["assignee_id"], high.id.as_str(), "2/1: the one with fewer");

    // Closed requests do not count: `high` has no open request left.
    change(&app, &high.token, &text(&r2, "id"), &to("cancelled", "duplicate")).await;
    let cancel = app.post_json(&at(&text(&r4, "id"), "/cancel"), &alice.token, &json!({})).await;
    expect(cancel, StatusCode::OK, "cancel").await;
    let r5 = submit_next().await;
    assert_eq!(r5["assignee_id"], high.id.as_str(), "2/0");
    let r6 = submit_next().await;
    assert_eq!(r6["assignee_id"], high.id.as_str(), "2/1");
    let r7 = submit_next().await;
    assert_eq!(r7["assignee_id"], low.id.as_str(), "2/2: the lowest id");
    let (_, details) = read(&app, &alice.token, &text(&r7, "id")).await;
    assert_eq!(details["assignee_id"], low.id.as_str(), "stored as answered");
}
both!(the_least_loaded_member_gets_the_next_request);

async fn without_a_member_on_the_type_the_request_stays_unassigned(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let lonely = text(&service_type(&app, &cast.admin, "notary_act", &["Check"], 10).await, "id");
    // A member of another mission on that type is never picked.
    let y = mission(&app, &cast.admin, "de-berlin").await;
    staff(&app, &cast.admin, &y, "Yann Staff", &[lonely.as_str()]).await;
    let request = submit_own(&app, &cast.citizen, &lonely).await;
    let id = text(&request, "id");
    assert!(request["assignee_id"].is_null(), "{request}");
    assert!(read(&app, &cast.staff.token, &id).await.1["assignee_id"].is_null());
    assert_eq!(event_kinds(&app, &id).await, ["request.submitted"], "no assignment, no request.assigned");
}
both!(without_a_member_on_the_type_the_request_stays_unassigned);

async fn the_sla_deadline_is_the_submission_plus_the_sla_days(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let quick = text(&service_type(&app, &cast.admin, "quick_certificate", &["Check"], 3).await, "id");
    for (service, days) in [(&quick, 3), (&cast.service, 21)] {
        let request = submit_own(&app, &cast.citizen, service).await;
        let submitted = instant(&request["submitted_at"]);
        assert_eq!(instant(&request["sla_due_at"]) - submitted, time::Duration::days(days), "{request}");
        let now = time::OffsetDateTime::now_utc();
        assert!((now - submitted).abs() < time::Duration::minutes(1), "submitted now: {request}");
        let (_, details) = read(&app, &cast.citizen.token, &text(&request, "id")).await;
        assert_eq!(instant(&details["submitted_at"]), submitted);
        assert_eq!(instant(&details["sla_due_at"]), instant(&request["sla_due_at"]));
        assert_eq!(details["overdue"], false);
    }
}
both!(the_sla_deadline_is_the_submission_plus_the_sla_days);

async fn a_request_keeps_the_stages_and_sla_it_was_submitted_with(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let before = submit_own(&app, &cast.citizen, &cast.service).await;
    let edit = json!({ "sla_days": 5, "stages": [{ "name": "Single step", "description": "" }] });
    let path = format!("{SERVICES}/{}", cast.service);
    expect(app.patch_json(&path, &cast.admin, Some("*"), &edit).await, StatusCode::OK, "catalog edit").await;
    let (_, kept) = read(&app, &cast.staff.token, &text(&before, "id")).await;
    assert_eq!(kept["stages"], before["stages"], "the catalog edit does not rewrite a submitted request");
    assert_eq!(kept["sla_due_at"], before["sla_due_at"]);
    // Its stages are still the three it was submitted with.
    let id = text(&before, "id");
    change(&app, &cast.staff.token, &id, &to("in_review", "r")).await;
    change(&app, &cast.staff.token, &id, &json!({ "advance_stage": true })).await;
    let moved = change(&app, &cast.staff.token, &id, &json!({ "advance_stage": true })).await;
    assert_eq!(moved["current_stage"], json!({ "index": 2, "name": "Printing" }));

    let after = submit_own(&app, &cast.citizen, &cast.service).await;
    assert_eq!(after["stages"], json!([{ "name": "Single step", "description": "" }]));
    let days = instant(&after["sla_due_at"]) - instant(&after["submitted_at"]);
    assert_eq!(days, time::Duration::days(5));
}
both!(a_request_keeps_the_stages_and_sla_it_was_submitted_with);

async fn an_idempotency_key_replays_the_first_submission(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let body = json!({ "service_type_id": cast.service });
    let first = post_keyed(&app, REQUESTS, &cast.citizen.token, "submit-0001", &body).await;
    let (location, etag) = (header(first.headers(), "location"), header(first.headers(), "etag"));
    let first = expect(first, StatusCode::CREATED, "first submission").await;
    let id = text(&first, "id");
    let events = event_kinds(&app, &id).await;

    let replay = post_keyed(&app, REQUESTS, &cast.citizen.token, "submit-0001", &body).await;
    assert_eq!(header(replay.headers(), "location"), location);
    assert_eq!(header(replay.headers(), "etag"), etag);
    assert_eq!(expect(replay, StatusCode::CREATED, "replay").await, first, "the first response, replayed");
    assert_eq!(listed(&app, &cast.citizen.token, &[]).await, [id.as_str()], "one request");
    assert_eq!(event_kinds(&app, &id).await, events, "a replay writes no event");
    let submitted = outbox(&app).await.into_iter().filter(|e| e.kind == "request.submitted").count();
    assert_eq!(submitted, 1);

    let other = json!({ "service_type_id": cast.service, "citizen_id": cast.citizen.id });
    let reused = post_keyed(&app, REQUESTS, &cast.citizen.token, "submit-0001", &other).await;
    expect_problem(reused, 422, "idempotency_key_reused").await;
    let fresh = post_keyed(&app, REQUESTS, &cast.citizen.token, "submit-0002", &body).await;
    let fresh = expect(fresh, StatusCode::CREATED, "another key").await;
    assert_ne!(fresh["id"], first["id"]);
    assert_eq!(listed(&app, &cast.citizen.token, &[]).await.len(), 2);
}
both!(an_idempotency_key_replays_the_first_submission);

// ----------------------------------------------------------------------------- 5. lists

async fn lists_are_newest_first_and_filtered(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let x = mission(&app, &admin, "fr-paris").await;
    let service = text(&service_type(&app, &admin, "passport_renewal", &STAGES, 21).await, "id");
    let other = text(&service_type(&app, &admin, "notary_act", &["Check"], 10).await, "id");
    let first = staff(&app, &admin, &x, "First Officer", &[service.as_str()]).await;
    let second = staff(&app, &admin, &x, "Second Officer", &[service.as_str()]).await;
    let (low, high) = if first.id < second.id { (first, second) } else { (second, first) };
    let alice = citizen(&app, &admin, &x, "X0000A").await;
    let bruno = citizen(&app, &admin, &x, "X0000B").await;

    let r1 = submit_own(&app, &alice, &service).await; // low
    let r2 = submit_own(&app, &bruno, &service).await; // high
    let r3 = submit_own(&app, &alice, &other).await; // nobody
    let r4 = submit_own(&app, &alice, &service).await; // low
    let r5 = submit_own(&app, &bruno, &service).await; // high
    let [r1, r2, r3, r4, r5] = [&r1, &r2, &r3, &r4, &r5].map(|r| text(r, "id"));
    let [r1, r2, r3, r4, r5] = [r1.as_str(), r2.as_str(), r3.as_str(), r4.as_str(), r5.as_str()];
    let (other, service, low_id, high_id) =
        (other.as_str(), service.as_str(), low.id.as_str(), high.id.as_str());
    let (alice_id, bruno_id) = (alice.id.as_str(), bruno.id.as_str());
    change(&app, &low.token, r1, &to("in_review", "r")).await;
    let cancel = app.post_json(&at(r4, "/cancel"), &alice.token, &json!({})).await;
    expect(cancel, StatusCode::OK, "cancel").await;

    let all = list_all(&app, &low.token, REQUESTS).await;
    assert_eq!(ids(&all), [r5, r4, r3, r2, r1], "newest first");
    let times: Vec<_> = all.iter().map(|r| instant(&r["submitted_at"])).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
    let at_of = |id: &str| all.iter().find(|r| r["id"] == id).map(|r| text(r, "submitted_at")).unwrap();
    let (t2, t4) = (at_of(r2), at_of(r4));

    let (t2, t4) = (t2.as_str(), t4.as_str());
    let cases: Vec<(Query, Vec<&str>)> = vec![
        (vec![("status", "submitted")], vec![r5, r3, r2]),
        (vec![("status", "submitted,in_review")], vec![r5, r3, r2, r1]),
        (vec![("status", "in_review,cancelled")], vec![r4, r1]),
        (vec![("status", "cancelled")], vec![r4]),
        (vec![("status", "approved,completed")], vec![]),
        (vec![("service_type_id", other)], vec![r3]),
        (vec![("service_type_id", service)], vec![r5, r4, r2, r1]),
        (vec![("assignee_id", low_id)], vec![r4, r1]),
        (vec![("assignee_id", high_id)], vec![r5, r2]),
        (vec![("citizen_id", bruno_id)], vec![r5, r2]),
        (vec![("citizen_id", alice_id)], vec![r4, r3, r1]),
        (vec![("submitted_from", t2), ("submitted_to", t4)], vec![r3, r2]),
        (vec![("submitted_from", t4)], vec![r5, r4]),
        (vec![("submitted_to", t2)], vec![r1]),
        (vec![("overdue", "false")], vec![r5, r4, r3, r2, r1]),
        (vec![("overdue", "true")], vec![]),
        (vec![("status", "submitted"), ("citizen_id", alice_id)], vec![r3]),
        (vec![("status", "submitted"), ("assignee_id", high_id), ("overdue", "false")], vec![r5, r2]),
    ];
    for (query, expected) in cases {
        assert_eq!(listed(&app, &low.token, &query).await, expected, "{query:?}");
    }
    assert!(all.iter().all(|r| r["overdue"] == false), "fresh requests are not overdue");

    for query in [
        [("status", "archived")],
        [("status", "submitted,")],
        [("overdue", "maybe")],
        [("submitted_from", "yesterday")],
        [("assignee_id", "not-a-uuid")],
        [("color", "blue")],
    ] {
        let response = app.get(&with_query(REQUESTS, &query), &low.token).await;
        expect_problem(response, 400, "invalid_query").await;
    }
    // `status=` is the empty list (explode=false): no filter.
    let unfiltered = app.get(&with_query(REQUESTS, &[("status", "")]), &low.token).await;
    assert_eq!(unfiltered.status(), 200);
}
both!(lists_are_newest_first_and_filtered);

async fn lists_are_paginated_with_link(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let mut submitted = Vec::new();
    for _ in 0..5 {
        submitted.push(text(&submit_own(&app, &cast.citizen, &cast.service).await, "id"));
    }
    submitted.reverse();
    for token in [&cast.staff.token, &cast.citizen.token] {
        let first = app.get(&with_query(REQUESTS, &[("limit", "2"), ("status", "submitted")]), token).await;
        let link = next_link(&first).expect("a Link to the second page");
        let first = expect(first, StatusCode::OK, "first page").await;
        assert_eq!(ids(first["items"].as_array().unwrap()), submitted[..2]);
        assert!(link.starts_with(&format!("{REQUESTS}?")), "{link}");
        assert!(link.contains("limit=2") && link.contains("status=submitted"), "filters are kept: {link}");
        assert!(link.ends_with(&format!("cursor={}", text(&first, "next_cursor"))), "{link}");
        let paged = list_all(&app, token, &with_query(REQUESTS, &[("limit", "2")])).await;
        assert_eq!(ids(&paged), submitted);
        let exact = list_all(&app, token, &with_query(REQUESTS, &[("limit", "5")])).await;
        assert_eq!(ids(&exact), submitted);
    }
    for query in [[("limit", "0")], [("limit", "101")], [("cursor", "not-a-cursor")]] {
        let response = app.get(&with_query(REQUESTS, &query), &cast.staff.token).await;
        expect_problem(response, 400, "invalid_query").await;
    }
}
both!(lists_are_paginated_with_link);

async fn citizens_list_their_own_and_staff_their_missions(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let y = mission(&app, &cast.admin, "de-berlin").await;
    let staff_y = staff(&app, &cast.admin, &y, "Yann Staff", &[cast.service.as_str()]).await;
    let bruno = citizen(&app, &cast.admin, &cast.mission, "X0000B").await;
    let clara = citizen(&app, &cast.admin, &y, "Y0000C").await;
    let admin_x = app.principal_by(&cast.admin, &["admin"], Some(&cast.mission)).await;
    let admin_y = app.principal_by(&cast.admin, &["admin"], Some(&y)).await;
    let ra = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
    let rb = text(&submit_own(&app, &bruno, &cast.service).await, "id");
    let rc = text(&submit_own(&app, &clara, &cast.service).await, "id");
    let (ra, rb, rc) = (ra.as_str(), rb.as_str(), rc.as_str());
    let (alice, bruno, clara, staff_y) = (&cast.citizen, &bruno, &clara, &staff_y);

    let cases: Vec<(&str, &str, Query, Vec<&str>)> = vec![
        ("citizen A", &alice.token, vec![], vec![ra]),
        ("citizen A asking for B's", &alice.token, vec![("citizen_id", &bruno.id)], vec![]),
        ("citizen A asking for C's", &alice.token, vec![("citizen_id", &clara.id)], vec![]),
        ("citizen A asking for their own", &alice.token, vec![("citizen_id", &alice.id)], vec![ra]),
        ("citizen B", &bruno.token, vec![], vec![rb]),
        ("citizen C", &clara.token, vec![], vec![rc]),
        ("staff of X", &cast.staff.token, vec![], vec![rb, ra]),
        ("staff of X asking for C's", &cast.staff.token, vec![("citizen_id", &clara.id)], vec![]),
        ("staff of X asking for Y's staff", &cast.staff.token, vec![("assignee_id", &staff_y.id)], vec![]),
        ("staff of Y", &staff_y.token, vec![], vec![rc]),
        ("admin of X", &admin_x.token, vec![], vec![rb, ra]),
        ("admin of Y", &admin_y.token, vec![], vec![rc]),
        ("global admin", &cast.admin, vec![], vec![rc, rb, ra]),
    ];
    for (who, token, query, expected) in cases {
        assert_eq!(listed(&app, token, &query).await, expected, "{who}");
    }
}
both!(citizens_list_their_own_and_staff_their_missions);

// ----------------------------------------------------------------------------- 6. notes

async fn internal_notes_are_for_the_missions_staff_and_admins(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let admin_x = app.principal_by(&cast.admin, &["admin"], Some(&cast.mission)).await;
    let id = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");

    let first = post(&app, &cast.staff.token, &id, "notes", "Passport photo looks edited.").await;
    assert_eq!(first["request_id"], id.as_str());
    assert_eq!(first["author"], cast.staff.actor("staff"));
    assert_eq!(first["body"], "Passport photo looks edited.");
    instant(&first["created_at"]);
    let second = post(&app, &admin_x.token, &id, "notes", "Checked with the issuing office.").await;
    assert_eq!(second["author"]["kind"], "admin");
    let third = post(&app, &cast.admin, &id, "notes", "Global admin was here.").await;

    for token in [&cast.staff.token, &admin_x.token, &cast.admin] {
        let notes = list_all(&app, token, &with_query(&at(&id, "/notes"), &[("limit", "2")])).await;
        assert_eq!(notes, [first.clone(), second.clone(), third.clone()], "oldest first, every page");
        let (_, details) = read(&app, token, &id).await;
        let in_timeline: Vec<&Value> =
            details["timeline"].as_array().unwrap().iter().filter(|i| i["kind"] == "note").collect();
        let expected: Vec<Value> =
            [&first, &second, &third].into_iter().map(|n| post_item("note", n)).collect();
        let in_timeline: Vec<Value> = in_timeline
            .into_iter()
            .map(|i| {
                let mut i = i.clone();
                i.as_object_mut().unwrap().remove("at");
                i
            })
            .collect();
        assert_eq!(in_timeline, expected, "staff and admins see the notes in the timeline");
    }

    // The citizen owner may neither write nor read them.
    let path = at(&id, "/notes");
    let note = json!({ "body": "I am not staff" });
    expect_problem(app.post_json(&path, &cast.citizen.token, &note).await, 403, "insufficient_scope").await;
    expect_problem(app.get(&path, &cast.citizen.token).await, 403, "insufficient_scope").await;
    let (_, theirs) = read(&app, &cast.citizen.token, &id).await;
    assert!(theirs["timeline"].as_array().unwrap().iter().all(|i| i["kind"] != "note"), "{theirs}");

    // Body limits, and a retried note is written once.
    invalid(app.post_json(&path, &cast.staff.token, &json!({ "body": "" })).await, "/body").await;
    invalid(app.post_json(&path, &cast.staff.token, &json!({ "body": "a".repeat(4001) })).await, "/body")
        .await;
    let keyed = json!({ "body": "Retried note" });
    let once = expect(
        post_keyed(&app, &path, &cast.staff.token, "note-1", &keyed).await,
        StatusCode::CREATED,
        "note",
    )
    .await;
    let again = expect(
        post_keyed(&app, &path, &cast.staff.token, "note-1", &keyed).await,
        StatusCode::CREATED,
        "replay",
    )
    .await;
    assert_eq!(once, again);
    assert_eq!(list_all(&app, &cast.staff.token, &path).await.len(), 4);
}
both!(internal_notes_are_for_the_missions_staff_and_admins);

/// Every response a citizen can receive, as raw text (status, headers and body).
struct Seen(Vec<String>);

impl Seen {
    async fn record(&mut self, what: &str, response: reqwest::Response) -> Value {
        let status = response.status();
        let headers = format!("{:?}", response.headers());
        let raw = response.text().await.expect("a body");
        self.0.push(format!("{what} -> {status}\n{headers}\n{raw}"));
        serde_json::from_str(&raw).unwrap_or(Value::Null)
    }
}

async fn no_response_a_citizen_receives_contains_a_note(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let (staff, citizen) = (&cast.staff, &cast.citizen);
    let secret = format!("SECRET-NOTE-{}", uuid::Uuid::now_v7().simple());
    let first = text(&submit_own(&app, citizen, &cast.service).await, "id");
    let second = text(&submit_own(&app, citizen, &cast.service).await, "id");

    // Notes on both requests, around every kind of change and message.
    let mut note_ids = Vec::new();
    let mut note = async |id: &str, n: usize| {
        let body = json!({ "body": format!("{secret} #{n}: suspected fraud, do not tell the applicant") });
        let keyed =
            post_keyed(&app, &at(id, "/notes"), &staff.token, &format!("shared-key-{n}"), &body).await;
        note_ids.push(text(&expect(keyed, StatusCode::CREATED, "note").await, "id"));
    };
    note(&first, 1).await;
    post(&app, &citizen.token, &first, "messages", "When will it be ready?").await;
    note(&first, 2).await;
    change(&app, &staff.token, &first, &to("in_review", "We are checking your file")).await;
    post(&app, &staff.token, &first, "messages", "We are on it.").await;
    note(&first, 3).await;
    change(&app, &staff.token, &first, &json!({ "advance_stage": true })).await;
    note(&second, 4).await;

    // The notes exist and staff read them.
    let (_, staff_view) = read(&app, &staff.token, &first).await;
    assert!(staff_view.to_string().contains(&secret), "staff see the notes in the timeline");
    let raw_notes = app.get(&at(&first, "/notes"), &staff.token).await.text().await.unwrap();
    assert!(raw_notes.contains(&secret));

    let mut seen = Seen(Vec::new());
    let token = &citizen.token;
    seen.record("list", app.get(REQUESTS, token).await).await;
    seen.record(
        "list by status",
        app.get(&with_query(REQUESTS, &[("status", "submitted,in_review")]), token).await,
    )
    .await;
    let page =
        seen.record("list page 1", app.get(&with_query(REQUESTS, &[("limit", "1")]), token).await).await;
    let cursor = text(&page, "next_cursor");
    let next = with_query(REQUESTS, &[("limit", "1"), ("cursor", &cursor)]);
    seen.record("list page 2", app.get(&next, token).await).await;
    for id in [&first, &second] {
        seen.record("details", app.get(&at(id, ""), token).await).await;
        seen.record("messages", app.get(&at(id, "/messages"), token).await).await;
        seen.record(
            "messages page",
            app.get(&with_query(&at(id, "/messages"), &[("limit", "1")]), token).await,
        )
        .await;
        seen.record("notes list", app.get(&at(id, "/notes"), token).await).await;
        seen.record(
            "notes list, bad page",
            app.get(&with_query(&at(id, "/notes"), &[("limit", "0")]), token).await,
        )
        .await;
        seen.record("note post", app.post_json(&at(id, "/notes"), token, &json!({ "body": "hi" })).await)
            .await;
        seen.record(
            "note post, empty",
            app.post_json(&at(id, "/notes"), token, &json!({ "body": "" })).await,
        )
        .await;
        for n in 0..note_ids.len() {
            // The same Idempotency-Key as staff used for a note, on the citizen's own thread.
            let path = at(id, "/messages");
            let body = json!({ "body": format!("Question {n}") });
            seen.record(
                "keyed message",
                post_keyed(&app, &path, token, &format!("shared-key-{}", n + 1), &body).await,
            )
            .await;
            seen.record(
                "keyed note",
                post_keyed(&app, &at(id, "/notes"), token, &format!("shared-key-{}", n + 1), &body).await,
            )
            .await;
        }
        seen.record(
            "message",
            app.post_json(&at(id, "/messages"), token, &json!({ "body": "Thanks" })).await,
        )
        .await;
        seen.record("status change", patch(&app, token, id, Some("*"), &to("cancelled", "no")).await).await;
        seen.record("status change, no If-Match", patch(&app, token, id, None, &to("cancelled", "no")).await)
            .await;
    }
    seen.record(
        "cancel",
        app.post_json(&at(&second, "/cancel"), token, &json!({ "reason": "Not needed" })).await,
    )
    .await;
    seen.record("details after cancel", app.get(&at(&second, ""), token).await).await;
    seen.record("cancel again", app.post_json(&at(&second, "/cancel"), token, &json!({})).await).await;
    seen.record("submit", app.post_json(REQUESTS, token, &json!({ "service_type_id": cast.service })).await)
        .await;
    seen.record("profile", app.get(&format!("{CITIZENS}/{}", citizen.id), token).await).await;
    seen.record("citizens", app.get(CITIZENS, token).await).await;
    seen.record("queue", app.get(&format!("{STAFF}/{}/queue", staff.id), token).await).await;
    seen.record("staff", app.get(STAFF, token).await).await;
    seen.record("services", app.get(SERVICES, token).await).await;
    seen.record("audit", app.get("/api/v1/audit-events", token).await).await;
    seen.record(
        "audit of the request",
        app.get(&with_query("/api/v1/audit-events", &[("resource_id", &first)]), token).await,
    )
    .await;
    seen.record("unknown request", app.get(&at(&uuid::Uuid::now_v7().to_string(), ""), token).await).await;

    assert!(seen.0.len() > 40, "{} responses", seen.0.len());
    for response in &seen.0 {
        assert!(!response.contains(&secret), "a note reached the citizen:\n{response}");
        for id in &note_ids {
            assert!(!response.contains(id.as_str()), "a note id reached the citizen:\n{response}");
        }
    }
    // Nor does any domain event (what notifications to the citizen are made of).
    for event in outbox(&app).await {
        assert!(!event.payload.to_string().contains(&secret), "{event:?}");
        assert!(!event.kind.contains("note"), "{event:?}");
    }
}
both!(no_response_a_citizen_receives_contains_a_note);

// -------------------------------------------------------------------------- 7. messages

async fn both_sides_write_on_the_thread_oldest_first(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let admin_x = app.principal_by(&cast.admin, &["admin"], Some(&cast.mission)).await;
    let id = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
    let path = at(&id, "/messages");
    let writers = [
        (&cast.citizen.token, "Hello, is my file complete?"),
        (&cast.staff.token, "One photo is missing."),
        (&cast.citizen.token, "Here it is."),
        (&admin_x.token, "Thank you, we have it."),
        (&cast.staff.token, "Your passport is being printed."),
    ];
    let mut posted = Vec::new();
    for (token, body) in writers {
        let message = post(&app, token, &id, "messages", body).await;
        assert_eq!(message["request_id"], id.as_str());
        assert_eq!(message["body"], body);
        instant(&message["created_at"]);
        posted.push(message);
    }
    let kinds: Vec<&str> = posted.iter().map(|m| m["author"]["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["citizen", "staff", "citizen", "admin", "staff"]);
    assert_eq!(posted[0]["author"], cast.citizen.actor("citizen"));
    assert_eq!(posted[1]["author"], cast.staff.actor("staff"));

    for token in [&cast.citizen.token, &cast.staff.token, &admin_x.token, &cast.admin] {
        let first = app.get(&with_query(&path, &[("limit", "2")]), token).await;
        assert!(next_link(&first).is_some(), "a Link to the next page");
        let thread = list_all(&app, token, &with_query(&path, &[("limit", "2")])).await;
        assert_eq!(thread, posted, "oldest first, every page");
        assert_eq!(list_all(&app, token, &path).await, posted);
    }
    let (_, details) = read(&app, &cast.citizen.token, &id).await;
    let in_timeline: Vec<&Value> =
        details["timeline"].as_array().unwrap().iter().filter(|i| i["kind"] == "message").collect();
    assert_eq!(in_timeline.len(), 5, "{details}");
    for (item, message) in in_timeline.iter().zip(&posted) {
        assert_eq!(item["item_id"], message["id"]);
        assert_eq!(item["text"], message["body"]);
    }
}
both!(both_sides_write_on_the_thread_oldest_first);

async fn message_bodies_are_checked_and_retries_are_replayed(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let bruno = citizen(&app, &cast.admin, &cast.mission, "X0000B").await;
    let id = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
    let path = at(&id, "/messages");
    let events = event_count(&app).await;
    for token in [&cast.citizen.token, &cast.staff.token] {
        invalid(app.post_json(&path, token, &json!({ "body": "" })).await, "/body").await;
        invalid(app.post_json(&path, token, &json!({ "body": " \n\t " })).await, "/body").await;
        invalid(app.post_json(&path, token, &json!({ "body": "a".repeat(4001) })).await, "/body").await;
        for body in [json!({}), json!({ "body": 42 }), json!({ "body": "hi", "subject": "x" })] {
            let response = app.post_json(&path, token, &body).await;
            assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        }
    }
    assert_eq!(event_count(&app).await, events, "a refused message writes no event");
    // 4000 characters (not bytes) is the limit.
    let longest = post(&app, &cast.citizen.token, &id, "messages", &"é".repeat(4000)).await;
    assert_eq!(longest["body"].as_str().unwrap().chars().count(), 4000);

    let body = json!({ "body": "Sent twice over a bad network" });
    let first = post_keyed(&app, &path, &cast.citizen.token, "msg-0001", &body).await;
    let first = expect(first, StatusCode::CREATED, "keyed message").await;
    let events = event_count(&app).await;
    let again = post_keyed(&app, &path, &cast.citizen.token, "msg-0001", &body).await;
    assert_eq!(expect(again, StatusCode::CREATED, "replay").await, first);
    assert_eq!(event_count(&app).await, events, "a replay writes no event");
    let other = json!({ "body": "Something else" });
    let reused = post_keyed(&app, &path, &cast.citizen.token, "msg-0001", &other).await;
    expect_problem(reused, 422, "idempotency_key_reused").await;
    let thread = list_all(&app, &cast.citizen.token, &path).await;
    assert_eq!(ids(&thread), [text(&longest, "id"), text(&first, "id")], "one message per key");

    // Another citizen has no such thread.
    expect_problem(app.get(&path, &bruno.token).await, 404, "not_found").await;
    let intrusion = app.post_json(&path, &bruno.token, &json!({ "body": "Hi, I am Bruno" })).await;
    expect_problem(intrusion, 404, "not_found").await;
    assert_eq!(list_all(&app, &cast.citizen.token, &path).await.len(), 2);
}
both!(message_bodies_are_checked_and_retries_are_replayed);

// ----------------------------------------------------------------------------- 8. queues

async fn a_staff_queue_groups_open_requests_by_service_type(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let x = mission(&app, &admin, "fr-paris").await;
    let passports = text(&service_type(&app, &admin, "passport_renewal", &STAGES, 21).await, "id");
    let visas = text(&service_type(&app, &admin, "visa", &["Check", "Decision"], 10).await, "id");
    let officer = staff(&app, &admin, &x, "Xavier Staff", &[passports.as_str(), visas.as_str()]).await;
    let alice = citizen(&app, &admin, &x, "X0000A").await;
    let bruno = citizen(&app, &admin, &x, "X0000B").await;

    let r1 = submit_own(&app, &alice, &passports).await;
    let r2 = submit_own(&app, &bruno, &passports).await;
    let r3 = submit_own(&app, &alice, &visas).await;
    let r4 = submit_own(&app, &alice, &passports).await;
    let r5 = submit_own(&app, &bruno, &visas).await;
    for r in [&r1, &r2, &r3, &r4, &r5] {
        assert_eq!(r["assignee_id"], officer.id.as_str());
    }
    change(&app, &officer.token, &text(&r2, "id"), &to("in_review", "r")).await;
    // Closed requests leave the queue.
    let cancel = app.post_json(&at(&text(&r4, "id"), "/cancel"), &alice.token, &json!({})).await;
    expect(cancel, StatusCode::OK, "cancel").await;
    change(&app, &officer.token, &text(&r5, "id"), &to("in_review", "r")).await;
    change(&app, &officer.token, &text(&r5, "id"), &to("rejected", "Not eligible")).await;

    let path = format!("{STAFF}/{}/queue", officer.id);
    let queue = expect(app.get(&path, &officer.token).await, StatusCode::OK, "own queue").await;
    assert_eq!(queue["staff_id"], officer.id.as_str());
    assert_eq!(queue["total"], 3, "{queue}");
    let groups = queue["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2, "{queue}");
    let group = |service: &str| groups.iter().find(|g| g["service_type_id"] == service).unwrap().clone();
    let (p, v) = (group(&passports), group(&visas));
    assert_eq!((p["count"].as_i64(), p["overdue"].as_i64()), (Some(2), Some(0)), "{p}");
    assert_eq!(instant(&p["oldest_submitted_at"]), instant(&r1["submitted_at"]));
    assert_eq!((v["count"].as_i64(), v["overdue"].as_i64()), (Some(1), Some(0)), "{v}");
    assert_eq!(instant(&v["oldest_submitted_at"]), instant(&r3["submitted_at"]));

    // Once the oldest is closed, the next one is the oldest.
    change(&app, &officer.token, &text(&r1, "id"), &to("cancelled", "duplicate")).await;
    let queue = expect(app.get(&path, &officer.token).await, StatusCode::OK, "own queue").await;
    assert_eq!(queue["total"], 2, "{queue}");
    let p = queue["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["service_type_id"] == passports.as_str())
        .unwrap()
        .clone();
    assert_eq!(p["count"], 1);
    assert_eq!(instant(&p["oldest_submitted_at"]), instant(&r2["submitted_at"]));
}
both!(a_staff_queue_groups_open_requests_by_service_type);

async fn a_queue_is_for_the_member_and_the_admins_of_their_mission(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let colleague = staff(&app, &cast.admin, &cast.mission, "Colleague", &[]).await;
    let y = mission(&app, &cast.admin, "de-berlin").await;
    let staff_y = staff(&app, &cast.admin, &y, "Yann Staff", &[]).await;
    let admin_x = app.principal_by(&cast.admin, &["admin"], Some(&cast.mission)).await;
    let admin_y = app.principal_by(&cast.admin, &["admin"], Some(&y)).await;
    submit_own(&app, &cast.citizen, &cast.service).await;
    let path = format!("{STAFF}/{}/queue", cast.staff.id);

    let own = expect(app.get(&path, &cast.staff.token).await, StatusCode::OK, "own queue").await;
    assert_eq!(own["total"], 1);
    for (who, token) in [("admin of X", &admin_x.token), ("global admin", &cast.admin)] {
        assert_eq!(expect(app.get(&path, token).await, StatusCode::OK, who).await, own, "{who}");
    }
    for (who, token) in
        [("colleague", &colleague.token), ("staff of Y", &staff_y.token), ("admin of Y", &admin_y.token)]
    {
        let (_, problem) = expect_problem(app.get(&path, token).await, 404, "not_found").await;
        assert!(problem.get("total").is_none(), "{who}: {problem}");
    }
    expect_problem(app.get(&path, &cast.citizen.token).await, 403, "insufficient_scope").await;
    let unknown = format!("{STAFF}/{}/queue", uuid::Uuid::now_v7());
    expect_problem(app.get(&unknown, &cast.admin).await, 404, "not_found").await;
    // An empty queue.
    let empty = format!("{STAFF}/{}/queue", colleague.id);
    let empty = expect(app.get(&empty, &colleague.token).await, StatusCode::OK, "empty queue").await;
    assert_eq!(empty, json!({ "staff_id": colleague.id, "total": 0, "groups": [] }));
}
both!(a_queue_is_for_the_member_and_the_admins_of_their_mission);

// ----------------------------------------------------------------------------- 9. cancel

async fn citizens_cancel_before_a_decision_and_staff_until_final(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let (staff, citizen) = (&cast.staff, &cast.citizen);

    let submitted = text(&submit_own(&app, citizen, &cast.service).await, "id");
    let response = app
        .post_json(&at(&submitted, "/cancel"), &citizen.token, &json!({ "reason": "Changed my mind" }))
        .await;
    let etag = header(response.headers(), "etag");
    let cancelled = expect(response, StatusCode::OK, "citizen cancels a submitted request").await;
    assert_eq!(cancelled["status"], "cancelled");
    assert!(cancelled["closed_at"].is_string(), "{cancelled}");
    let (now, details) = read(&app, &staff.token, &submitted).await;
    assert_eq!(now, etag);
    let last = without_at(&details["stage_history"]).pop().unwrap();
    assert_eq!(
        last,
        entry(&citizen.actor("citizen"), Some("submitted"), "cancelled", Some(0), 0, Some("Changed my mind"))
    );

    // In review and action required are still before a decision.
    for steps in [vec![to("in_review", "r")], vec![to("in_review", "r"), to("action_required", "r")]] {
        let id = text(&submit_own(&app, citizen, &cast.service).await, "id");
        for step in &steps {
            change(&app, &staff.token, &id, step).await;
        }
        let response = app.post_json(&at(&id, "/cancel"), &citizen.token, &json!({})).await;
        assert_eq!(expect(response, StatusCode::OK, "cancel").await["status"], "cancelled");
    }

    // After approval only staff can.
    let approved = text(&submit_own(&app, citizen, &cast.service).await, "id");
    change(&app, &staff.token, &approved, &to("in_review", "r")).await;
    change(&app, &staff.token, &approved, &to("approved", "r")).await;
    let (etag, _) = read(&app, &citizen.token, &approved).await;
    let refused =
        app.post_json(&at(&approved, "/cancel"), &citizen.token, &json!({ "reason": "Too slow" })).await;
    expect_problem(refused, 409, "illegal_transition").await;
    assert_eq!(read(&app, &citizen.token, &approved).await.0, etag, "still approved");
    // With If-Match: a stale one is 412, the current one works.
    let stale = app
        .authed(Method::POST, &at(&approved, "/cancel"), &staff.token)
        .header("if-match", "\"1\"")
        .json(&json!({ "reason": "Applicant withdrew" }))
        .send()
        .await
        .unwrap();
    expect_problem(stale, 412, "precondition_failed").await;
    let by_staff = app
        .authed(Method::POST, &at(&approved, "/cancel"), &staff.token)
        .header("if-match", &etag)
        .json(&json!({ "reason": "Applicant withdrew" }))
        .send()
        .await
        .unwrap();
    assert_eq!(
        expect(by_staff, StatusCode::OK, "staff cancel an approved request").await["status"],
        "cancelled"
    );
    let (_, details) = read(&app, &citizen.token, &approved).await;
    let last = without_at(&details["stage_history"]).pop().unwrap();
    assert_eq!(
        last,
        entry(&staff.actor("staff"), Some("approved"), "cancelled", Some(0), 0, Some("Applicant withdrew"))
    );

    // A cancelled request stays cancelled.
    for token in [&citizen.token, &staff.token] {
        let again = app.post_json(&at(&approved, "/cancel"), token, &json!({})).await;
        expect_problem(again, 409, "illegal_transition").await;
    }
}
both!(citizens_cancel_before_a_decision_and_staff_until_final);

async fn a_cancel_reason_is_checked_like_any_reason(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let id = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
    let path = at(&id, "/cancel");
    let long = json!({ "reason": "r".repeat(4001) });
    for token in [&cast.citizen.token, &cast.staff.token] {
        invalid(app.post_json(&path, token, &long).await, "/reason").await;
    }
    let (etag, details) = read(&app, &cast.citizen.token, &id).await;
    assert_eq!((etag.as_str(), &details["status"]), ("\"1\"", &json!("submitted")), "{details}");
    // 4000 characters are fine.
    let longest = json!({ "reason": "é".repeat(4000) });
    expect(app.post_json(&path, &cast.citizen.token, &longest).await, StatusCode::OK, "cancel").await;
}
both!(a_cancel_reason_is_checked_like_any_reason);

// ------------------------------------------------------------------------- 10. isolation

async fn citizens_never_reach_each_others_requests(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let bruno = citizen(&app, &cast.admin, &cast.mission, "X0000B").await;
    let alices = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
    post(&app, &cast.citizen.token, &alices, "messages", "Private question").await;
    let brunos = text(&submit_own(&app, &bruno, &cast.service).await, "id");
    let (etag, before) = read(&app, &cast.citizen.token, &alices).await;

    let (_, unknown) = expect_problem(
        app.get(&at(&uuid::Uuid::now_v7().to_string(), ""), &bruno.token).await,
        404,
        "not_found",
    )
    .await;
    let attempts = [
        ("get", app.get(&at(&alices, ""), &bruno.token).await),
        ("messages", app.get(&at(&alices, "/messages"), &bruno.token).await),
        (
            "post message",
            app.post_json(&at(&alices, "/messages"), &bruno.token, &json!({ "body": "hi" })).await,
        ),
        ("cancel", app.post_json(&at(&alices, "/cancel"), &bruno.token, &json!({})).await),
    ];
    for (what, response) in attempts {
        let (_, problem) = expect_problem(response, 404, "not_found").await;
        for member in ["type", "title", "detail", "code"] {
            assert_eq!(problem[member], unknown[member], "{what}: like an unknown id");
        }
    }
    assert_eq!(listed(&app, &bruno.token, &[]).await, [brunos.as_str()]);
    assert!(listed(&app, &bruno.token, &[("citizen_id", &cast.citizen.id)]).await.is_empty());
    assert_eq!(listed(&app, &cast.citizen.token, &[]).await, [alices.as_str()]);
    let (after_etag, after) = read(&app, &cast.citizen.token, &alices).await;
    assert_eq!((after_etag, after), (etag, before), "untouched");
    assert_eq!(list_all(&app, &cast.citizen.token, &at(&alices, "/messages")).await.len(), 1);
}
both!(citizens_never_reach_each_others_requests);

async fn staff_never_reach_another_missions_requests(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let y = mission(&app, &cast.admin, "de-berlin").await;
    let staff_y = staff(&app, &cast.admin, &y, "Yann Staff", &[cast.service.as_str()]).await;
    let clara = citizen(&app, &cast.admin, &y, "Y0000C").await;
    let admin_x = app.principal_by(&cast.admin, &["admin"], Some(&cast.mission)).await;
    let ours = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
    let theirs = submit_own(&app, &clara, &cast.service).await;
    assert_eq!(theirs["assignee_id"], staff_y.id.as_str());
    let theirs = text(&theirs, "id");
    let (etag, before) = read(&app, &staff_y.token, &theirs).await;
    let events = event_count(&app).await;

    for (who, token) in [("staff of X", &cast.staff.token), ("admin of X", &admin_x.token)] {
        let attempts = [
            ("get", app.get(&at(&theirs, ""), token).await),
            ("patch", patch(&app, token, &theirs, Some(&etag), &to("in_review", "mine now")).await),
            (
                "reassign",
                patch(&app, token, &theirs, Some(&etag), &json!({ "assignee_id": cast.staff.id })).await,
            ),
            ("notes", app.get(&at(&theirs, "/notes"), token).await),
            ("post note", app.post_json(&at(&theirs, "/notes"), token, &json!({ "body": "n" })).await),
            ("messages", app.get(&at(&theirs, "/messages"), token).await),
            ("post message", app.post_json(&at(&theirs, "/messages"), token, &json!({ "body": "m" })).await),
            ("cancel", app.post_json(&at(&theirs, "/cancel"), token, &json!({})).await),
            ("queue", app.get(&format!("{STAFF}/{}/queue", staff_y.id), token).await),
        ];
        for (what, response) in attempts {
            let status = response.status();
            let body = response.text().await.unwrap();
            assert_eq!(status, StatusCode::NOT_FOUND, "{who} {what}: {body}");
        }
        assert_eq!(listed(&app, token, &[]).await, [ours.as_str()], "{who}");
        assert!(listed(&app, token, &[("citizen_id", &clara.id)]).await.is_empty(), "{who}");
        assert!(listed(&app, token, &[("assignee_id", &staff_y.id)]).await.is_empty(), "{who}");
    }
    // Staff of X cannot hand a request of X to a member of Y either.
    let (our_etag, _) = read(&app, &cast.staff.token, &ours).await;
    let response =
        patch(&app, &cast.staff.token, &ours, Some(&our_etag), &json!({ "assignee_id": staff_y.id })).await;
    invalid(response, "/assignee_id").await;

    assert_eq!(read(&app, &staff_y.token, &theirs).await, (etag, before), "untouched");
    assert!(list_all(&app, &staff_y.token, &at(&theirs, "/notes")).await.is_empty());
    assert!(list_all(&app, &staff_y.token, &at(&theirs, "/messages")).await.is_empty());
    assert_eq!(event_count(&app).await, events, "nothing was written");
}
both!(staff_never_reach_another_missions_requests);

async fn citizen_tokens_are_refused_on_staff_endpoints(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let id = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
    let token = &cast.citizen.token;
    let attempts = [
        ("cancel through PATCH", patch(&app, token, &id, Some("\"1\""), &to("cancelled", "r")).await),
        ("review", patch(&app, token, &id, Some("\"1\""), &to("in_review", "r")).await),
        ("advance", patch(&app, token, &id, Some("\"1\""), &json!({ "advance_stage": true })).await),
        ("reassign", patch(&app, token, &id, Some("\"1\""), &json!({ "assignee_id": null })).await),
        ("post note", app.post_json(&at(&id, "/notes"), token, &json!({ "body": "n" })).await),
        ("notes", app.get(&at(&id, "/notes"), token).await),
        ("queue", app.get(&format!("{STAFF}/{}/queue", cast.staff.id), token).await),
    ];
    for (what, response) in attempts {
        let (headers, _) = expect_problem(response, 403, "insufficient_scope").await;
        let challenge = header(&headers, "www-authenticate");
        assert!(challenge.contains("error=\"insufficient_scope\""), "{what}: {challenge}");
    }
    let (etag, details) = read(&app, token, &id).await;
    assert_eq!(etag, "\"1\"");
    assert_eq!(details["assignee_id"], cast.staff.id.as_str());
}
both!(citizen_tokens_are_refused_on_staff_endpoints);

// --------------------------------------------------------------------------- 11. events

async fn every_change_writes_its_domain_event(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let other = staff(&app, &cast.admin, &cast.mission, "Other Officer", &[]).await;
    let request = submit_own(&app, &cast.citizen, &cast.service).await;
    let id = text(&request, "id");
    let mine = async || -> Vec<consular_ports::OutboxEvent> {
        outbox(&app).await.into_iter().filter(|e| e.aggregate_id.to_string() == id).collect()
    };

    let events = mine().await;
    let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds, ["request.submitted", "request.assigned"]);
    assert_eq!(events[0].payload["citizen_id"], cast.citizen.id.as_str());
    assert_eq!(events[0].payload["service_type_id"], cast.service.as_str());
    assert_eq!(events[0].payload["mission_id"], cast.mission.as_str());
    assert_eq!(events[1].payload["assignee_id"], cast.staff.id.as_str());
    assert!(events[1].payload["previous_assignee_id"].is_null());
    for event in &events {
        assert!(time::OffsetDateTime::now_utc() - event.created_at < time::Duration::minutes(1), "{event:?}");
    }

    let mut seen = events.len();
    let mut next = async |kind: &str| -> Value {
        let events = mine().await;
        assert_eq!(events.len(), seen + 1, "one more event: {events:?}");
        seen = events.len();
        let last = events.last().unwrap();
        assert_eq!(last.kind, kind, "{events:?}");
        last.payload.clone()
    };
    change(&app, &cast.staff.token, &id, &to("in_review", "Looks complete")).await;
    assert_eq!(
        next("request.status_changed").await,
        json!({ "from": "submitted", "to": "in_review", "reason": "Looks complete" })
    );
    change(&app, &cast.staff.token, &id, &json!({ "advance_stage": true })).await;
    let advanced = next("request.stage_advanced").await;
    assert_eq!((&advanced["from_stage"], &advanced["to_stage"]), (&json!(0), &json!(1)), "{advanced}");
    assert_eq!(advanced["stage"], "Interview");
    let message = post(&app, &cast.citizen.token, &id, "messages", "Any news?").await;
    let posted = next("message.posted").await;
    assert_eq!(posted["message_id"], message["id"]);
    assert_eq!(posted["author_kind"], "citizen");
    let reply = post(&app, &cast.staff.token, &id, "messages", "Soon.").await;
    let posted = next("message.posted").await;
    assert_eq!((&posted["message_id"], &posted["author_kind"]), (&reply["id"], &json!("staff")));
    change(&app, &cast.staff.token, &id, &json!({ "assignee_id": other.id })).await;
    assert_eq!(
        next("request.assigned").await,
        json!({ "assignee_id": other.id, "previous_assignee_id": cast.staff.id })
    );
    let cancel =
        app.post_json(&at(&id, "/cancel"), &cast.citizen.token, &json!({ "reason": "Moved abroad" })).await;
    expect(cancel, StatusCode::OK, "cancel").await;
    assert_eq!(next("request.status_changed").await["to"], "cancelled");

    // A note is no event (nothing for the citizen to be notified of).
    post(&app, &cast.staff.token, &id, "notes", "Internal only").await;
    assert_eq!(mine().await.len(), seen);
}
both!(every_change_writes_its_domain_event);

async fn a_refused_change_writes_no_event(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let admin_x = app.principal_by(&cast.admin, &["admin"], Some(&cast.mission)).await;
    let y = mission(&app, &cast.admin, "de-berlin").await;
    let staff_y = staff(&app, &cast.admin, &y, "Yann Staff", &[]).await;
    let id = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
    change(&app, &cast.staff.token, &id, &to("in_review", "r")).await;
    let (etag, _) = read(&app, &cast.staff.token, &id).await;
    let before = outbox(&app).await;

    let stale = patch(&app, &cast.staff.token, &id, Some("\"1\""), &to("approved", "r")).await;
    expect_problem(stale, 412, "precondition_failed").await;
    let stale_stage =
        patch(&app, &cast.staff.token, &id, Some("\"1\""), &json!({ "advance_stage": true })).await;
    expect_problem(stale_stage, 412, "precondition_failed").await;
    let illegal = patch(&app, &cast.staff.token, &id, Some(&etag), &to("completed", "r")).await;
    expect_problem(illegal, 409, "illegal_transition").await;
    let no_reason = patch(&app, &cast.staff.token, &id, Some(&etag), &json!({ "status": "approved" })).await;
    expect_problem(no_reason, 422, "validation_failed").await;
    let citizen = patch(&app, &cast.citizen.token, &id, Some(&etag), &to("approved", "r")).await;
    expect_problem(citizen, 403, "insufficient_scope").await;
    let foreign = patch(&app, &staff_y.token, &id, Some(&etag), &to("approved", "r")).await;
    expect_problem(foreign, 404, "not_found").await;
    let bad_assignee =
        patch(&app, &cast.staff.token, &id, Some(&etag), &json!({ "assignee_id": staff_y.id })).await;
    expect_problem(bad_assignee, 422, "validation_failed").await;
    let empty = app.post_json(&at(&id, "/messages"), &cast.citizen.token, &json!({ "body": "" })).await;
    expect_problem(empty, 422, "validation_failed").await;
    // The concurrent loser.
    let (approve, reject) = (to("approved", "r"), to("rejected", "r"));
    let (a, b) = tokio::join!(
        patch(&app, &cast.staff.token, &id, Some(&etag), &approve),
        patch(&app, &admin_x.token, &id, Some(&etag), &reject),
    );
    let mut statuses = [a.status().as_u16(), b.status().as_u16()];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 412]);

    let after = outbox(&app).await;
    let added: Vec<&str> = after[before.len()..].iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(added, ["request.status_changed"], "only the change that committed");
    assert_eq!(
        after[..before.len()].iter().map(|e| e.id).collect::<Vec<_>>(),
        before.iter().map(|e| e.id).collect::<Vec<_>>()
    );
}
both!(a_refused_change_writes_no_event);

// ------------------------------------------------------------- races without a precondition

async fn a_retried_submission_racing_itself_creates_one_request(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let body = json!({ "service_type_id": cast.service });
    for round in 0..3 {
        let key = format!("double-click-{round}");
        let (a, b) = tokio::join!(
            post_keyed(&app, REQUESTS, &cast.citizen.token, &key, &body),
            post_keyed(&app, REQUESTS, &cast.citizen.token, &key, &body),
        );
        let (a, b) = (json_of(a).await, json_of(b).await);
        let created: Vec<&Value> =
            [&a, &b].into_iter().filter(|r| r.0 == StatusCode::CREATED).map(|r| &r.1).collect();
        assert!(!created.is_empty(), "round {round}: {a:?} / {b:?}");
        for (status, body) in [&a, &b] {
            match status.as_u16() {
                201 => assert_eq!(body["id"], created[0]["id"], "one request: {a:?} / {b:?}"),
                409 => assert_eq!(body["code"], "idempotency_key_in_use", "{body}"),
                other => panic!("round {round}: {other} {body}"),
            }
        }
        assert_eq!(listed(&app, &cast.citizen.token, &[]).await.len(), round + 1, "round {round}");
    }
}
both!(a_retried_submission_racing_itself_creates_one_request);

/// A cancel sent without `If-Match` is unconditional: racing another change, it is
/// judged on the state it meets (200 or 409), never 412 (RFC 9110 §13.1.1: 412 answers a
/// precondition, and none was sent).
async fn a_cancel_without_if_match_is_never_412(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    for _ in 0..20 {
        let id = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
        let (review, why, path) =
            (to("in_review", "r"), json!({ "reason": "Changed my mind" }), at(&id, "/cancel"));
        let (cancel, _) = tokio::join!(
            app.post_json(&path, &cast.citizen.token, &why),
            patch(&app, &cast.staff.token, &id, Some("\"1\""), &review),
        );
        let (status, body) = json_of(cancel).await;
        assert!(matches!(status.as_u16(), 200 | 409), "a cancel without If-Match answered {status}: {body}");
        // The same citizen clicking twice.
        let id = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
        let (path, nothing) = (at(&id, "/cancel"), json!({}));
        let (first, second) = tokio::join!(
            app.post_json(&path, &cast.citizen.token, &nothing),
            app.post_json(&path, &cast.citizen.token, &nothing),
        );
        let mut statuses = [first.status().as_u16(), second.status().as_u16()];
        statuses.sort_unstable();
        assert_eq!(statuses, [200, 409], "a double cancel: one cancels, the other finds it cancelled");
    }
}
both!(a_cancel_without_if_match_is_never_412);

/// `If-Match: *` holds whenever the request exists (RFC 9110 §13.1.1): two such changes
/// racing are each judged on the state they meet (200 or 409), never 412.
async fn if_match_star_is_never_412(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let admin_x = app.principal_by(&cast.admin, &["admin"], Some(&cast.mission)).await;
    for _ in 0..20 {
        let id = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
        let (review, cancel) = (to("in_review", "r"), to("cancelled", "r"));
        let (a, b) = tokio::join!(
            patch(&app, &cast.staff.token, &id, Some("*"), &review),
            patch(&app, &admin_x.token, &id, Some("*"), &cancel),
        );
        for response in [a, b] {
            let (status, body) = json_of(response).await;
            assert!(matches!(status.as_u16(), 200 | 409), "If-Match: * answered {status}: {body}");
        }
    }
}
both!(if_match_star_is_never_412);
