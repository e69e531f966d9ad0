//! Submission rules: who may submit for whom, automatic assignment, the SLA deadline, retries.

use super::*;

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
