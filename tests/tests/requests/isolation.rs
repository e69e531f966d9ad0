//! Isolation between principals: another citizen's or mission's request is a 404.

use super::*;

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
