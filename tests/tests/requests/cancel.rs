//! Cancellation by citizens and staff.

use super::*;

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
