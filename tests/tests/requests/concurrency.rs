//! `If-Match` concurrency, and the races that have no precondition.

use super::*;

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

// Races without a precondition.

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
