//! Concurrent registrations of one passport and concurrent updates of one version.

use super::*;

/// Concurrent registrations of one passport in one mission register it once; the others
/// are 409, never a 500 nor a second citizen.
async fn concurrent_registrations_of_one_passport_register_once(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (admin, x) = admin_and_mission(&app).await;
    let pending: Vec<_> = (0..8)
        .map(|n| {
            let mut body = citizen_body(&x, "19AB12345");
            body["given_name"] = json!(format!("Twin {n}"));
            body["issue_client"] = json!(true);
            tokio::spawn(app.authed(Method::POST, CITIZENS, &admin).json(&body).send())
        })
        .collect();
    let mut statuses = Vec::new();
    for task in pending {
        let response = task.await.unwrap().unwrap();
        let status = response.status().as_u16();
        if status == 409 {
            expect_problem(response, 409, "passport_already_registered").await;
        }
        statuses.push(status);
    }
    statuses.sort_unstable();
    assert_eq!(statuses, [201, 409, 409, 409, 409, 409, 409, 409]);
    assert_eq!(app.listed_ids(CITIZENS, &admin).await.len(), 1);
    let citizens = app.list_all(&format!("{AUDIT_EVENTS}?resource_type=citizen"), &admin).await;
    assert_eq!(citizens.len(), 1, "one audit row: {citizens:?}");
    let clients = app.list_all(&format!("{AUDIT_EVENTS}?resource_type=api_client"), &admin).await;
    assert_eq!(clients.len(), 2, "the bootstrap admin's and the one citizen's: {clients:?}");
}
both!(concurrent_registrations_of_one_passport_register_once);

/// Concurrent updates naming one ETag: exactly one applies, the others are 412.
async fn concurrent_updates_of_one_version_apply_once(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (admin, x) = admin_and_mission(&app).await;
    let citizen = app.create_at(CITIZENS, &admin, &citizen_body(&x, "19AB12345")).await;
    let path = path_of(&citizen);
    let pending: Vec<_> = (0..8)
        .map(|n| {
            let change = json!({ "phone": format!("+3370000000{n}") });
            tokio::spawn(
                app.authed(Method::PATCH, &path, &admin).header("if-match", "\"1\"").json(&change).send(),
            )
        })
        .collect();
    let mut statuses = Vec::new();
    for task in pending {
        statuses.push(task.await.unwrap().unwrap().status().as_u16());
    }
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 412, 412, 412, 412, 412, 412, 412]);
    let read = app.get(&path, &admin).await;
    assert_eq!(header(read.headers(), "etag"), "\"2\"");
    let events = app.list_all(&format!("{AUDIT_EVENTS}?resource_id={}", text(&citizen, "id")), &admin).await;
    assert_eq!(events.len(), 2, "the registration and one update: {events:?}");
}
both!(concurrent_updates_of_one_version_apply_once);
