//! A whole life from submission to completion, and the transitions the status machine refuses.

use super::*;

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
