//! `/api/v1/auth/clients` through the API: global admins manage every client, a mission
//! admin only those of their mission (others are 404), staff and citizens none (403).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_tests::{Backend, TestApp, both, error_codes, expect_problem, header, staff_body, text};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::collections::HashSet;

const CLIENTS: &str = "/api/v1/auth/clients";

fn pointers(problem: &Value) -> Vec<&str> {
    problem["errors"].as_array().unwrap().iter().map(|e| e["pointer"].as_str().unwrap()).collect()
}

fn id_of(client: &Value) -> &str {
    client["client_id"].as_str().unwrap()
}

/// Every client id in a list, following every page.
async fn listed_ids(app: &TestApp, token: &str, limit: u32) -> Vec<String> {
    let mut ids = Vec::new();
    let mut path = format!("{CLIENTS}?limit={limit}");
    for _ in 0..50 {
        let response = app.get(&path, token).await;
        assert_eq!(response.status(), StatusCode::OK);
        let page: Value = response.json().await.unwrap();
        for item in page["items"].as_array().unwrap() {
            assert!(item.get("client_secret").is_none(), "a list never shows secrets: {item}");
            ids.push(id_of(item).to_owned());
        }
        match page["next_cursor"].as_str() {
            Some(cursor) => path = format!("{CLIENTS}?limit={limit}&cursor={cursor}"),
            None => return ids,
        }
    }
    panic!("the client list does not end");
}

async fn a_global_admin_creates_reads_and_lists_clients(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let mission = app.create_mission(&admin, "fr-paris").await;
    // A second client for a staff member: the principal must exist (issue 23).
    let member =
        app.create_at("/api/v1/staff", &admin, &staff_body(&text(&mission, "id"), "Paula Desk")).await;
    let principal = uuid::Uuid::parse_str(&text(&member, "id")).unwrap();
    let response = app
        .post_json(
            CLIENTS,
            &admin,
            &json!({
                "name": "Paris desk",
                "scopes": ["staff"],
                "mission_id": mission["id"],
                "principal_id": principal,
            }),
        )
        .await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let location = header(response.headers(), "location");
    assert_eq!(header(response.headers(), "etag"), "\"1\"");
    let created: Value = response.json().await.unwrap();
    let id = uuid::Uuid::parse_str(id_of(&created)).unwrap();
    assert_eq!(id.get_version_num(), 7);
    assert_eq!(location, format!("{CLIENTS}/{id}"));
    assert_eq!(created["name"], "Paris desk");
    assert_eq!(created["scopes"], json!(["staff"]));
    assert_eq!(created["principal_kind"], "staff");
    assert_eq!(created["principal_id"], principal.to_string());
    assert_eq!(created["mission_id"], mission["id"]);
    assert_eq!(created["status"], "active");
    let secret = created["client_secret"].as_str().unwrap();
    assert_eq!(secret.len(), 43, "a 256-bit secret in base64url");

    let read = app.get(&location, &admin).await;
    assert_eq!(read.status(), StatusCode::OK);
    assert_eq!(header(read.headers(), "etag"), "\"1\"");
    let read: Value = read.json().await.unwrap();
    let mut expected = created.clone();
    expected.as_object_mut().unwrap().remove("client_secret");
    assert_eq!(read, expected, "the secret is shown once");

    let ids = listed_ids(&app, &admin, 20).await;
    assert_eq!(ids, [app.admin_id.clone(), id.to_string()]);

    // The token of the new client names its principal and mission.
    let token = app.token_for(&id.to_string(), secret, None).await;
    let payload = token.access_token.split('.').nth(1).unwrap().to_owned();
    use base64::Engine;
    let claims: Value =
        serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).unwrap())
            .unwrap();
    assert_eq!(claims["sub"], format!("staff:{principal}"));
    assert_eq!(claims["mission"], mission["id"]);

    // A global admin client (no mission) and an admin + staff client.
    let global = app.create_client(&admin, &json!({ "name": "ops", "scopes": ["admin"] })).await;
    assert!(global["mission_id"].is_null());
    assert_eq!(global["principal_kind"], "admin");
    let both_scopes = app
        .create_client(
            &admin,
            &json!({ "name": "head", "scopes": ["staff", "admin"], "mission_id": mission["id"] }),
        )
        .await;
    let mut scopes: Vec<&str> =
        both_scopes["scopes"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    scopes.sort_unstable();
    assert_eq!(scopes, ["admin", "staff"]);
}
both!(a_global_admin_creates_reads_and_lists_clients);

async fn client_lists_are_paginated(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let mut expected = vec![app.admin_id.clone()];
    for n in 0..4 {
        let client =
            app.create_client(&admin, &json!({ "name": format!("client {n}"), "scopes": ["admin"] })).await;
        expected.push(id_of(&client).to_owned());
    }
    for limit in [1, 2, 5, 100] {
        assert_eq!(listed_ids(&app, &admin, limit).await, expected, "limit={limit}");
    }
    let first = app.get(&format!("{CLIENTS}?limit=2"), &admin).await;
    let link = header(first.headers(), "link");
    let page: Value = first.json().await.unwrap();
    assert_eq!(
        link,
        format!("<{CLIENTS}?limit=2&cursor={}>; rel=\"next\"", page["next_cursor"].as_str().unwrap())
    );
}
both!(client_lists_are_paginated);

async fn a_mission_admin_sees_only_their_missions_clients(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let paris = app.create_mission(&admin, "fr-paris").await;
    let berlin = app.create_mission(&admin, "de-berlin").await;
    let (paris_id, berlin_id) = (paris["id"].as_str(), berlin["id"].as_str());
    let head = app.principal_by(&admin, &["admin"], paris_id).await;
    let paris_staff = app.principal_by(&admin, &["staff"], paris_id).await;
    let paris_citizen = app.principal_by(&admin, &["citizen"], paris_id).await;
    let berlin_staff = app.principal_by(&admin, &["staff"], berlin_id).await;
    let berlin_head = app.principal_by(&admin, &["admin"], berlin_id).await;

    let visible: HashSet<String> = listed_ids(&app, &head.token, 1).await.into_iter().collect();
    let expected: HashSet<String> =
        [&head, &paris_staff, &paris_citizen].iter().map(|p| p.client_id.clone()).collect();
    assert_eq!(visible, expected, "a mission admin lists their mission's clients only");

    for foreign in [&berlin_staff.client_id, &berlin_head.client_id, &app.admin_id] {
        let path = format!("{CLIENTS}/{foreign}");
        expect_problem(app.get(&path, &head.token).await, 404, "not_found").await;
        expect_problem(app.post_empty(&format!("{path}/disable"), &head.token).await, 404, "not_found").await;
        expect_problem(app.post_empty(&format!("{path}/rotate-secret"), &head.token).await, 404, "not_found")
            .await;
    }
    // Those clients were not touched.
    assert_eq!(app.get(MISSIONS, &berlin_staff.token).await.status(), StatusCode::OK);
    let form = [("grant_type", "client_credentials")];
    let still = app
        .token_request("/api/v1/auth/token", Some((&berlin_staff.client_id, &berlin_staff.secret)), &form)
        .await;
    assert_eq!(still.status(), StatusCode::OK, "the foreign client's secret was not rotated");

    // Within their mission a mission admin manages clients.
    let own = app.get(&format!("{CLIENTS}/{}", paris_staff.client_id), &head.token).await;
    assert_eq!(own.status(), StatusCode::OK);
    let created = app
        .post_json(
            CLIENTS,
            &head.token,
            &json!({ "name": "new desk", "scopes": ["staff"], "mission_id": paris_id }),
        )
        .await;
    assert_eq!(created.status(), StatusCode::CREATED);
    let rotated =
        app.post_empty(&format!("{CLIENTS}/{}/rotate-secret", paris_citizen.client_id), &head.token).await;
    assert_eq!(rotated.status(), StatusCode::OK);
    let disabled = app.post_empty(&format!("{CLIENTS}/{}/disable", paris_staff.client_id), &head.token).await;
    assert_eq!(disabled.status(), StatusCode::OK);

    // But not elsewhere, nor global admins.
    let elsewhere = app
        .post_json(
            CLIENTS,
            &head.token,
            &json!({ "name": "spy", "scopes": ["staff"], "mission_id": berlin_id }),
        )
        .await;
    expect_problem(elsewhere, 403, "forbidden").await;
    let global = app.post_json(CLIENTS, &head.token, &json!({ "name": "root", "scopes": ["admin"] })).await;
    expect_problem(global, 403, "forbidden").await;
    let visible_after = listed_ids(&app, &head.token, 100).await;
    assert_eq!(visible_after.len(), 4, "{visible_after:?}");
    // The global admin still sees everything.
    assert_eq!(listed_ids(&app, &admin, 100).await.len(), 7);
}
both!(a_mission_admin_sees_only_their_missions_clients);

const MISSIONS: &str = "/api/v1/missions";

async fn staff_and_citizens_cannot_manage_clients(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let mission = app.create_mission(&admin, "fr-paris").await;
    let staff = app.principal_by(&admin, &["staff"], mission["id"].as_str()).await;
    let citizen = app.principal_by(&admin, &["citizen"], mission["id"].as_str()).await;
    let target = format!("{CLIENTS}/{}", staff.client_id);
    for token in [&staff.token, &citizen.token] {
        for response in [
            app.get(CLIENTS, token).await,
            app.get(&target, token).await,
            app.post_json(
                CLIENTS,
                token,
                &json!({ "name": "x", "scopes": ["citizen"], "mission_id": mission["id"] }),
            )
            .await,
            app.post_empty(&format!("{target}/disable"), token).await,
            app.post_empty(&format!("{target}/rotate-secret"), token).await,
        ] {
            let (headers, _) = expect_problem(response, 403, "insufficient_scope").await;
            assert!(header(&headers, "www-authenticate").contains("error=\"insufficient_scope\""));
        }
    }
    let read: Value = app.get(&target, &admin).await.json().await.unwrap();
    assert_eq!(read["status"], "active", "nothing happened to the client");
    assert_eq!(listed_ids(&app, &admin, 100).await.len(), 3);
}
both!(staff_and_citizens_cannot_manage_clients);

async fn client_validation_errors(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let mission = app.create_mission(&admin, "fr-paris").await;
    for (body, expected) in [
        (
            json!({ "name": "x", "scopes": ["citizen", "admin"], "mission_id": mission["id"] }),
            vec!["/scopes"],
        ),
        (json!({ "name": "x", "scopes": [], "mission_id": mission["id"] }), vec!["/scopes"]),
        (json!({ "name": "x", "scopes": ["staff"] }), vec!["/mission_id"]),
        (json!({ "name": "x", "scopes": ["citizen"], "mission_id": null }), vec!["/mission_id"]),
        (
            json!({ "name": "x", "scopes": ["staff"], "mission_id": uuid::Uuid::now_v7() }),
            vec!["/mission_id"],
        ),
        (json!({ "name": "", "scopes": ["admin"] }), vec!["/name"]),
        (json!({ "name": "x".repeat(101), "scopes": ["admin"] }), vec!["/name"]),
        (json!({ "name": " ", "scopes": ["citizen", "staff"] }), vec!["/name", "/scopes"]),
    ] {
        let response = app.post_json(CLIENTS, &admin, &body).await;
        let (_, problem) = expect_problem(response, 422, "validation_failed").await;
        assert_eq!(pointers(&problem), expected, "{body}: {problem}");
    }
    let wrong_type = app.post_json(CLIENTS, &admin, &json!({ "name": "x", "scopes": "admin" })).await;
    let (_, problem) = expect_problem(wrong_type, 422, "validation_failed").await;
    assert_eq!(pointers(&problem), ["/scopes"]);
    let bad_mission = app
        .post_json(CLIENTS, &admin, &json!({ "name": "x", "scopes": ["staff"], "mission_id": "paris" }))
        .await;
    let (_, problem) = expect_problem(bad_mission, 422, "validation_failed").await;
    assert_eq!(pointers(&problem), ["/mission_id"]);
    assert_eq!(listed_ids(&app, &admin, 100).await, vec![app.admin_id.clone()], "nothing was created");
}
both!(client_validation_errors);

async fn disabling_is_idempotent_and_final(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let client = app.create_client(&admin, &json!({ "name": "ops", "scopes": ["admin"] })).await;
    let path = format!("{CLIENTS}/{}", id_of(&client));
    let first = app.post_empty(&format!("{path}/disable"), &admin).await;
    assert_eq!(first.status(), StatusCode::OK);
    assert_eq!(header(first.headers(), "etag"), "\"2\"");
    let first: Value = first.json().await.unwrap();
    assert_eq!(first["status"], "disabled");
    let again = app.post_empty(&format!("{path}/disable"), &admin).await;
    assert_eq!(again.status(), StatusCode::OK);
    assert_eq!(header(again.headers(), "etag"), "\"2\"", "disabling a disabled client changes nothing");
    assert_eq!(again.json::<Value>().await.unwrap(), first);

    let rotate = app.post_empty(&format!("{path}/rotate-secret"), &admin).await;
    expect_problem(rotate, 409, "client_disabled").await;
    let read = app.get(&path, &admin).await;
    assert_eq!(header(read.headers(), "etag"), "\"2\"");
    assert_eq!(read.json::<Value>().await.unwrap()["status"], "disabled");
}
both!(disabling_is_idempotent_and_final);

async fn unknown_clients_are_404(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    for id in [uuid::Uuid::now_v7().to_string(), "not-a-uuid".to_owned()] {
        let path = format!("{CLIENTS}/{id}");
        expect_problem(app.get(&path, &admin).await, 404, "not_found").await;
        expect_problem(app.post_empty(&format!("{path}/disable"), &admin).await, 404, "not_found").await;
        expect_problem(app.post_empty(&format!("{path}/rotate-secret"), &admin).await, 404, "not_found")
            .await;
    }
    let wrong_method =
        app.authed(Method::DELETE, &format!("{CLIENTS}/{}", app.admin_id), &admin).send().await.unwrap();
    expect_problem(wrong_method, 405, "method_not_allowed").await;
}
both!(unknown_clients_are_404);

/// Issue 23 (high): an admin of mission Y bound clients of any scope to citizen A of X
/// (or to staff of X), and the tokens of those clients read, marked and silenced A's
/// notifications. A client's principal must exist, be of the kind its scopes name and
/// belong to its mission; a refusal never says whether the id exists elsewhere.
async fn a_client_names_an_existing_principal_of_its_kind_and_mission(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w = app.world().await;
    let before = listed_ids(&app, &w.admin, 100).await;
    let bind = |scopes: &[&str], mission: &str, principal: &str| json!({ "name": "bound", "scopes": scopes, "mission_id": mission, "principal_id": principal });
    let refused = |code: &'static str| vec![("/principal_id".to_owned(), code.to_owned())];
    let mut cases = Vec::new();
    for scopes in [&["admin"][..], &["staff"], &["citizen"], &["admin", "staff"]] {
        for principal in [&w.citizen_a.id, &w.staff_x.id] {
            // Y's admin and the global admin alike: the mission is the client's, not the caller's.
            cases.push((&w.admin_y.token, bind(scopes, &w.y, principal), refused("unknown")));
            cases.push((&w.admin, bind(scopes, &w.y, principal), refused("unknown")));
        }
    }
    let x = &w.x;
    cases.extend([
        (&w.admin_x.token, bind(&["admin"], x, &w.citizen_a.id), refused("kind_mismatch")),
        (&w.admin_x.token, bind(&["staff"], x, &w.citizen_a.id), refused("kind_mismatch")),
        (&w.admin_x.token, bind(&["citizen"], x, &w.staff_x.id), refused("kind_mismatch")),
        (&w.admin_x.token, bind(&["admin"], x, &w.staff_x.id), refused("kind_mismatch")),
        (&w.admin_x.token, bind(&["citizen"], x, &uuid::Uuid::now_v7().to_string()), refused("unknown")),
        (&w.admin_x.token, bind(&["admin"], x, &uuid::Uuid::now_v7().to_string()), refused("unknown")),
        // An admin principal of Y is unknown to X.
        (&w.admin_x.token, bind(&["admin"], x, &text(&w.admin_y.body, "principal_id")), refused("unknown")),
    ]);
    let global_admin = json!({ "name": "bound", "scopes": ["admin"], "principal_id": w.citizen_c.id });
    cases.push((&w.admin, global_admin, refused("unknown")));
    for (token, body, expected) in &cases {
        let response = app.post_json(CLIENTS, token, body).await;
        let (_, problem) = expect_problem(response, 422, "validation_failed").await;
        assert_eq!(&error_codes(&problem), expected, "{body}");
    }
    assert_eq!(listed_ids(&app, &w.admin, 100).await, before, "no refused client was created");

    // The right kind in the right mission: a second client for the same principal.
    for (scopes, principal) in [
        (&["citizen"][..], w.citizen_a.id.clone()),
        (&["staff"], w.staff_x.id.clone()),
        (&["admin"], text(&w.admin_x.body, "principal_id")),
    ] {
        let created = app.create_at(CLIENTS, &w.admin_x.token, &bind(scopes, x, &principal)).await;
        assert_eq!(created["principal_id"], json!(principal), "{scopes:?}");
        let token = app.token_for(id_of(&created), &text(&created, "client_secret"), None).await.access_token;
        let inbox = app.get("/api/v1/notifications", &token).await;
        assert_eq!(inbox.status(), StatusCode::OK, "{scopes:?}");
    }
}
both!(a_client_names_an_existing_principal_of_its_kind_and_mission);
