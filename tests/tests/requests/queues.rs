//! Staff queues.

use super::*;

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
