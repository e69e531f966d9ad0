//! The domain events of the transactional outbox.

use super::*;

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
