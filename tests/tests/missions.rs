//! `/api/v1/missions` through the API: any bearer reads, only a global admin writes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_tests::{Backend, Principal, TestApp, both, expect_problem, header, mission_body};
use reqwest::StatusCode;
use serde_json::{Value, json};

const MISSIONS: &str = "/api/v1/missions";

/// A global admin token, a mission, and a mission admin, staff member and citizen of it.
struct Cast {
    admin: String,
    mission: Value,
    mission_admin: Principal,
    staff: Principal,
    citizen: Principal,
}

async fn cast(app: &TestApp) -> Cast {
    let admin = app.admin_token().await;
    let mission = app.create_mission(&admin, "fr-paris").await;
    let id = mission["id"].as_str();
    Cast {
        mission_admin: app.principal_by(&admin, &["admin"], id).await,
        staff: app.principal_by(&admin, &["staff"], id).await,
        citizen: app.principal_by(&admin, &["citizen"], id).await,
        admin,
        mission,
    }
}

fn pointers(problem: &Value) -> Vec<&str> {
    problem["errors"].as_array().unwrap().iter().map(|e| e["pointer"].as_str().unwrap()).collect()
}

fn path_of(mission: &Value) -> String {
    format!("{MISSIONS}/{}", mission["id"].as_str().unwrap())
}

async fn a_global_admin_creates_a_mission(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let response = app.post_json(MISSIONS, &admin, &mission_body("fr-paris")).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let location = header(response.headers(), "location");
    assert_eq!(header(response.headers(), "etag"), "\"1\"");
    let created: Value = response.json().await.unwrap();
    let id = uuid::Uuid::parse_str(created["id"].as_str().unwrap()).unwrap();
    assert_eq!(id.get_version_num(), 7, "ids are UUIDv7");
    assert_eq!(location, format!("{MISSIONS}/{id}"));
    assert_eq!(created["code"], "fr-paris");
    assert_eq!(created["name"], "Embassy fr-paris");
    assert_eq!(created["country"], "FR");
    assert_eq!(created["city"], "Paris");
    assert_eq!(created["timezone"], "Europe/Paris");
    for stamp in ["created_at", "updated_at"] {
        let text = created[stamp].as_str().unwrap();
        assert!(text.ends_with('Z'), "{stamp} in UTC: {text}");
        time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).unwrap();
    }

    let read = app.get(&location, &admin).await;
    assert_eq!(read.status(), StatusCode::OK);
    assert_eq!(header(read.headers(), "etag"), "\"1\"");
    assert_eq!(read.json::<Value>().await.unwrap(), created);
}
both!(a_global_admin_creates_a_mission);

async fn every_bearer_reads_missions(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let other = app.create_mission(&cast.admin, "de-berlin").await;
    for token in [&cast.admin, &cast.mission_admin.token, &cast.staff.token, &cast.citizen.token] {
        let list = app.get(MISSIONS, token).await;
        assert_eq!(list.status(), StatusCode::OK);
        let list: Value = list.json().await.unwrap();
        let codes: Vec<&str> =
            list["items"].as_array().unwrap().iter().map(|m| m["code"].as_str().unwrap()).collect();
        assert_eq!(codes, ["fr-paris", "de-berlin"], "missions are public to every bearer, oldest first");
        for mission in [&cast.mission, &other] {
            let read = app.get(&path_of(mission), token).await;
            assert_eq!(read.status(), StatusCode::OK);
            assert_eq!(read.json::<Value>().await.unwrap()["id"], mission["id"]);
        }
    }
    let anonymous = app.request(reqwest::Method::GET, MISSIONS).send().await.unwrap();
    expect_problem(anonymous, 401, "unauthorized").await;
}
both!(every_bearer_reads_missions);

async fn only_a_global_admin_creates_missions(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let body = mission_body("de-berlin");
    let (_, problem) =
        expect_problem(app.post_json(MISSIONS, &cast.mission_admin.token, &body).await, 403, "forbidden")
            .await;
    assert!(problem["detail"].as_str().unwrap().contains("global admin"), "{problem}");
    for token in [&cast.staff.token, &cast.citizen.token] {
        expect_problem(app.post_json(MISSIONS, token, &body).await, 403, "insufficient_scope").await;
    }
    let list: Value = app.get(MISSIONS, &cast.admin).await.json().await.unwrap();
    assert_eq!(list["items"].as_array().unwrap().len(), 1, "nothing was created: {list}");
    assert_eq!(app.post_json(MISSIONS, &cast.admin, &body).await.status(), StatusCode::CREATED);
}
both!(only_a_global_admin_creates_missions);

async fn only_a_global_admin_updates_missions(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let path = path_of(&cast.mission);
    let change = json!({ "name": "Embassy of France" });
    let refused = app.patch_json(&path, &cast.mission_admin.token, Some("\"1\""), &change).await;
    expect_problem(refused, 403, "forbidden").await;
    for token in [&cast.staff.token, &cast.citizen.token] {
        let refused = app.patch_json(&path, token, Some("\"1\""), &change).await;
        expect_problem(refused, 403, "insufficient_scope").await;
    }
    let unchanged = app.get(&path, &cast.admin).await;
    assert_eq!(header(unchanged.headers(), "etag"), "\"1\"");
    assert_eq!(unchanged.json::<Value>().await.unwrap()["name"], "Embassy fr-paris");

    let updated = app.patch_json(&path, &cast.admin, Some("\"1\""), &change).await;
    assert_eq!(updated.status(), StatusCode::OK);
    let body: Value = updated.json().await.unwrap();
    assert_eq!(body["name"], "Embassy of France");
}
both!(only_a_global_admin_updates_missions);

async fn an_update_changes_only_the_given_fields(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let mission = app.create_mission(&admin, "fr-paris").await;
    let path = path_of(&mission);
    let response = app
        .patch_json(&path, &admin, Some("\"1\""), &json!({ "city": "Lyon", "timezone": "Europe/Paris" }))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(header(response.headers(), "etag"), "\"2\"");
    let updated: Value = response.json().await.unwrap();
    assert_eq!(updated["city"], "Lyon");
    for same in ["id", "code", "name", "country", "timezone", "created_at"] {
        assert_eq!(updated[same], mission[same], "{same}");
    }
    assert!(updated["updated_at"].as_str().unwrap() >= mission["updated_at"].as_str().unwrap());

    // Nothing really changes: the version stays.
    let same = app.patch_json(&path, &admin, Some("\"2\""), &json!({ "city": "Lyon" })).await;
    assert_eq!(same.status(), StatusCode::OK);
    assert_eq!(header(same.headers(), "etag"), "\"2\"");
    let empty = app.patch_json(&path, &admin, Some("\"2\""), &json!({})).await;
    assert_eq!(empty.status(), StatusCode::OK);
    assert_eq!(header(empty.headers(), "etag"), "\"2\"");

    // The code never changes.
    let code = app.patch_json(&path, &admin, Some("\"2\""), &json!({ "code": "fr-lyon" })).await;
    expect_problem(code, 422, "validation_failed").await;
    let read: Value = app.get(&path, &admin).await.json().await.unwrap();
    assert_eq!(read["code"], "fr-paris");
    assert_eq!(read["city"], "Lyon");
}
both!(an_update_changes_only_the_given_fields);

async fn validation_errors_list_every_failing_field(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let bad = json!({
        "code": "Paris",
        "name": " ",
        "country": "XX",
        "city": "x".repeat(101),
        "timezone": "Europe/Parris",
    });
    let (_, problem) =
        expect_problem(app.post_json(MISSIONS, &admin, &bad).await, 422, "validation_failed").await;
    assert_eq!(pointers(&problem), ["/code", "/name", "/country", "/city", "/timezone"], "{problem}");
    for error in problem["errors"].as_array().unwrap() {
        assert!(error["code"].as_str().is_some_and(|c| !c.is_empty()), "{error}");
        assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()), "{error}");
    }
    for code in ["fr", "FR-paris", "fra-paris", "fr--paris", "fr-"] {
        let response = app.post_json(MISSIONS, &admin, &mission_body(code)).await;
        let (_, problem) = expect_problem(response, 422, "validation_failed").await;
        assert_eq!(pointers(&problem), ["/code"], "{code}");
    }
    let list: Value = app.get(MISSIONS, &admin).await.json().await.unwrap();
    assert_eq!(list["items"], json!([]), "nothing was created");

    let mission = app.create_mission(&admin, "fr-paris").await;
    let path = path_of(&mission);
    let bad_update = json!({ "name": "", "country": "fr", "city": "Lyon", "timezone": "Mars/Olympus" });
    let (_, problem) = expect_problem(
        app.patch_json(&path, &admin, Some("\"1\""), &bad_update).await,
        422,
        "validation_failed",
    )
    .await;
    assert_eq!(pointers(&problem), ["/name", "/country", "/timezone"], "{problem}");
    let read: Value = app.get(&path, &admin).await.json().await.unwrap();
    assert_eq!(read["city"], "Paris", "an invalid update changes nothing");
}
both!(validation_errors_list_every_failing_field);

async fn a_taken_code_is_a_conflict(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    app.create_mission(&admin, "fr-paris").await;
    let mut again = mission_body("fr-paris");
    again["city"] = json!("Lyon");
    let (_, problem) =
        expect_problem(app.post_json(MISSIONS, &admin, &again).await, 409, "mission_code_taken").await;
    let text = problem.to_string().to_lowercase();
    for leak in ["unique", "constraint", "sqlite", "postgres", "duplicate key", "insert"] {
        assert!(!text.contains(leak), "the problem leaks `{leak}`: {problem}");
    }
    let list: Value = app.get(MISSIONS, &admin).await.json().await.unwrap();
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
}
both!(a_taken_code_is_a_conflict);

async fn unknown_missions_are_404(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let path = format!("{MISSIONS}/{}", uuid::Uuid::now_v7());
    expect_problem(app.get(&path, &admin).await, 404, "not_found").await;
    let update = app.patch_json(&path, &admin, Some("\"1\""), &json!({ "city": "Lyon" })).await;
    expect_problem(update, 404, "not_found").await;
    let update =
        app.patch_json(&format!("{MISSIONS}/nope"), &admin, Some("\"1\""), &json!({ "city": "Lyon" })).await;
    expect_problem(update, 404, "not_found").await;
}
both!(unknown_missions_are_404);
