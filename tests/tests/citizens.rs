//! `/api/v1/citizens` through the API: admins of the mission register citizens (with
//! their API client if asked), the citizen, their mission's staff and admins read them,
//! the citizen changes their contact details and admins change everything; lists are
//! for admins, a mission admin seeing only their mission.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_tests::{
    AUDIT_EVENTS, Backend, CITIZENS, Expect, SERVICES, STAFF, TestApp, both, citizen_body, error_codes,
    error_pointers, expect_problem, header, instant, text, token_claims, with_query,
};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::time::Duration;

const CLIENTS: &str = "/api/v1/auth/clients";

fn path_of(citizen: &Value) -> String {
    format!("{CITIZENS}/{}", text(citizen, "id"))
}

/// `body` without its `client` member (what a read of a registration answers).
fn without_client(body: &Value) -> Value {
    let mut body = body.clone();
    body.as_object_mut().unwrap().remove("client");
    body
}

/// A global admin token and the id of a new mission `fr-paris`.
async fn admin_and_mission(app: &TestApp) -> (String, String) {
    let admin = app.admin_token().await;
    let mission = app.create_mission(&admin, "fr-paris").await;
    (admin, text(&mission, "id"))
}

/// Query parameters.
type Query<'a> = Vec<(&'a str, &'a str)>;

fn sorted(mut values: Vec<String>) -> Vec<String> {
    values.sort();
    values
}

async fn an_admin_registers_a_citizen(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (admin, x) = admin_and_mission(&app).await;
    let mut body = citizen_body(&x, "19AB12345");
    body["address"] = json!({
        "line1": "1 Main Street", "line2": "Apt 4", "city": "Ottawa", "region": "Ontario",
        "postal_code": "K1A 0A1", "country": "CA",
    });
    body["emergency_contact"] =
        json!({ "name": "Paul Martin", "phone": "+33698765432", "relationship": "brother" });
    let response = app.post_json(CITIZENS, &admin, &body).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    assert_eq!(header(response.headers(), "etag"), "\"1\"");
    let location = header(response.headers(), "location");
    let created: Value = response.json().await.unwrap();
    let id = uuid::Uuid::parse_str(&text(&created, "id")).unwrap();
    assert_eq!(id.get_version_num(), 7);
    assert_eq!(location, format!("{CITIZENS}/{id}"));
    for (field, value) in body.as_object().unwrap() {
        assert_eq!(&created[field], value, "{field}");
    }
    assert!(created.get("client").is_none(), "no client unless asked: {created}");
    let registration = &created["registration"];
    assert_eq!(registration["status"], "pending", "pending by default");
    let registered_at = text(registration, "registered_at");
    instant(&registration["registered_at"]);
    assert!(registration["activated_at"].is_null() && registration["deregistered_at"].is_null());
    assert_eq!(created["created_at"], registered_at.as_str());

    let read = app.get(&location, &admin).await;
    assert_eq!(read.status(), StatusCode::OK);
    assert_eq!(header(read.headers(), "etag"), "\"1\"");
    assert_eq!(read.json::<Value>().await.unwrap(), created);

    // Optional members come back as null; a registration may start active.
    let mut active = citizen_body(&x, "19AB99999");
    active["registration_status"] = json!("active");
    let created = app.create_at(CITIZENS, &admin, &active).await;
    assert_eq!(
        created["address"],
        json!({ "line1": "1 Main Street", "line2": null, "city": "Ottawa", "region": null, "postal_code": null, "country": "CA" })
    );
    assert!(created["emergency_contact"].is_null());
    assert_eq!(created["registration"]["status"], "active");
    assert_eq!(created["registration"]["activated_at"], created["registration"]["registered_at"]);

    // A mission admin registers citizens of their own mission.
    let head = app.principal_by(&admin, &["admin"], Some(&x)).await;
    let created = app.create_at(CITIZENS, &head.token, &citizen_body(&x, "19AB00001")).await;
    assert_eq!(created["mission_id"], x.as_str());
}
both!(an_admin_registers_a_citizen);

/// `issue_client: true` creates the citizen's client in the same call; its token reads
/// the citizen's own profile and nothing else.
async fn registration_issues_the_citizens_own_client(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (admin, x) = admin_and_mission(&app).await;
    let head = app.principal_by(&admin, &["admin"], Some(&x)).await;
    let neighbour = app.create_at(CITIZENS, &admin, &citizen_body(&x, "19AB00002")).await;
    let staff = app.create_at(STAFF, &admin, &consular_tests::staff_body(&x, "Bob Lee")).await;

    let mut body = citizen_body(&x, "19AB12345");
    body["issue_client"] = json!(true);
    let created = app.create_at(CITIZENS, &head.token, &body).await;
    let client = &created["client"];
    let client_id = text(client, "client_id");
    assert_eq!(uuid::Uuid::parse_str(&client_id).unwrap().get_version_num(), 7);
    assert_eq!(text(client, "client_secret").len(), 43, "a 256-bit secret in base64url: {client}");
    assert_eq!(client["scopes"], json!(["citizen"]));
    assert!(created.get("issue_client").is_none());

    // The client is the citizen's: bound to them and their mission.
    let stored: Value = app.get(&format!("{CLIENTS}/{client_id}"), &admin).await.json().await.unwrap();
    assert_eq!(stored["principal_kind"], "citizen");
    assert_eq!(stored["principal_id"], created["id"]);
    assert_eq!(stored["mission_id"], x.as_str());
    assert_eq!(stored["scopes"], json!(["citizen"]));
    assert_eq!(stored["status"], "active");
    assert!(stored.get("client_secret").is_none());

    let issued = app.issued(created.clone()).await;
    let claims = token_claims(&issued.token);
    assert_eq!(claims["sub"], format!("citizen:{}", issued.id));
    assert_eq!(claims["mission"], x.as_str());
    assert_eq!(claims["scope"], "citizen");

    // Their own profile, and the public catalog and missions.
    let own = app.get(&path_of(&created), &issued.token).await;
    assert_eq!(own.status(), StatusCode::OK);
    assert_eq!(own.json::<Value>().await.unwrap(), without_client(&created));
    for open in [SERVICES, "/api/v1/missions"] {
        assert_eq!(app.get(open, &issued.token).await.status(), StatusCode::OK, "{open}");
    }
    // Nothing else.
    let token = &issued.token;
    let unknown = format!("{CITIZENS}/{}", uuid::Uuid::now_v7());
    for (what, response, expect) in [
        ("a neighbour", app.get(&path_of(&neighbour), token).await, Expect::NotFound),
        ("an unknown citizen", app.get(&unknown, token).await, Expect::NotFound),
        (
            "a staff member",
            app.get(&format!("{STAFF}/{}", text(&staff, "id")), token).await,
            Expect::NotFound,
        ),
        ("the citizen list", app.get(CITIZENS, token).await, Expect::Scope),
        ("the staff list", app.get(STAFF, token).await, Expect::Scope),
        ("the audit log", app.get(AUDIT_EVENTS, token).await, Expect::Scope),
        ("the client list", app.get(CLIENTS, token).await, Expect::Scope),
        ("inactive services", app.get(&format!("{SERVICES}?active=false"), token).await, Expect::Ok),
        (
            "a neighbour's update",
            app.patch_json(&path_of(&neighbour), token, Some("*"), &json!({ "phone": "+33611111111" })).await,
            Expect::NotFound,
        ),
        (
            "a registration",
            app.post_json(CITIZENS, token, &citizen_body(&x, "19AB77777")).await,
            Expect::Scope,
        ),
    ] {
        let body = expect.check(response, what).await;
        if what == "inactive services" {
            assert_eq!(body["items"], json!([]), "{body}");
        }
    }
}
both!(registration_issues_the_citizens_own_client);

async fn a_replayed_registration_has_the_client_without_its_secret(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (admin, x) = admin_and_mission(&app).await;
    let clients_before = app.list_all(CLIENTS, &admin).await.len();
    let mut body = citizen_body(&x, "19AB12345");
    body["issue_client"] = json!(true);
    let send = |body: Value| {
        let request = app
            .authed(Method::POST, CITIZENS, &admin)
            .header("idempotency-key", "register-alice")
            .json(&body);
        async move { request.send().await.unwrap() }
    };
    let first = send(body.clone()).await;
    assert_eq!(first.status(), StatusCode::CREATED);
    assert_eq!(header(first.headers(), "idempotent-replayed"), "");
    let location = header(first.headers(), "location");
    let first: Value = first.json().await.unwrap();
    let secret = text(&first["client"], "client_secret");

    let replay = send(body.clone()).await;
    assert_eq!(replay.status(), StatusCode::CREATED);
    assert_eq!(header(replay.headers(), "idempotent-replayed"), "true");
    assert_eq!(header(replay.headers(), "location"), location);
    assert_eq!(header(replay.headers(), "etag"), "\"1\"");
    let replay: Value = replay.json().await.unwrap();
    assert_eq!(replay["client"]["client_id"], first["client"]["client_id"]);
    assert_eq!(replay["client"]["scopes"], json!(["citizen"]));
    assert!(replay["client"].get("client_secret").is_none(), "the secret is never replayed: {replay}");
    let mut expected = first.clone();
    expected["client"].as_object_mut().unwrap().remove("client_secret");
    assert_eq!(replay, expected);

    // One citizen and one client were created; the first secret works.
    assert_eq!(app.listed_ids(CITIZENS, &admin).await, [text(&first, "id")]);
    assert_eq!(app.list_all(CLIENTS, &admin).await.len(), clients_before + 1);
    let token = app.token_for(&text(&first["client"], "client_id"), &secret, None).await.access_token;
    assert_eq!(app.get(&location, &token).await.status(), StatusCode::OK);

    // The same key with another body is refused.
    let mut other = body.clone();
    other["given_name"] = json!("Alicia");
    expect_problem(send(other).await, 422, "idempotency_key_reused").await;
    assert_eq!(app.listed_ids(CITIZENS, &admin).await.len(), 1);
}
both!(a_replayed_registration_has_the_client_without_its_secret);

async fn a_passport_is_registered_once_per_mission(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (admin, x) = admin_and_mission(&app).await;
    let y = text(&app.create_mission(&admin, "de-berlin").await, "id");
    app.create_at(CITIZENS, &admin, &citizen_body(&x, "19AB12345")).await;
    let clients_before = app.list_all(CLIENTS, &admin).await.len();

    let mut again = citizen_body(&x, "19AB12345");
    again["given_name"] = json!("Another");
    again["issue_client"] = json!(true);
    let (_, problem) =
        expect_problem(app.post_json(CITIZENS, &admin, &again).await, 409, "passport_already_registered")
            .await;
    let lower = problem.to_string().to_lowercase();
    for leak in ["unique", "constraint", "sqlite", "postgres", "duplicate key", "insert", "citizens_passport"]
    {
        assert!(!lower.contains(leak), "the problem leaks `{leak}`: {problem}");
    }
    assert_eq!(app.listed_ids(CITIZENS, &admin).await.len(), 1);
    assert_eq!(app.list_all(CLIENTS, &admin).await.len(), clients_before, "no client without its citizen");

    // Another mission may register the same passport.
    let elsewhere = app.create_at(CITIZENS, &admin, &citizen_body(&y, "19AB12345")).await;
    assert_eq!(elsewhere["mission_id"], y.as_str());

    // Changing a passport number to one the mission has is refused too.
    let other = app.create_at(CITIZENS, &admin, &citizen_body(&x, "19AB00002")).await;
    let change = json!({ "passport_number": "19AB12345" });
    let response = app.patch_json(&path_of(&other), &admin, Some("\"1\""), &change).await;
    expect_problem(response, 409, "passport_already_registered").await;
    let read = app.get(&path_of(&other), &admin).await;
    assert_eq!(header(read.headers(), "etag"), "\"1\"");
    assert_eq!(read.json::<Value>().await.unwrap()["passport_number"], "19AB00002");
}
both!(a_passport_is_registered_once_per_mission);

async fn registration_errors_list_every_failing_field(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (admin, x) = admin_and_mission(&app).await;
    let bad = json!({
        "mission_id": x,
        "given_name": " ",
        "family_name": "x".repeat(101),
        "date_of_birth": "2999-01-01",
        "place_of_birth": " Lyon",
        "nationality": "XX",
        "passport_number": "ab-12",
        "passport_expiry": "1980-01-01",
        "email": "not-an-email",
        "phone": "0612345678",
        "address": { "line1": " ", "city": "Ottawa", "country": "ca" },
        "emergency_contact": { "name": "Paul", "phone": "12", "relationship": " " },
        "preferred_language": "French",
    });
    let (_, problem) =
        expect_problem(app.post_json(CITIZENS, &admin, &bad).await, 422, "validation_failed").await;
    assert_eq!(
        error_pointers(&problem),
        [
            "/address/country",
            "/address/line1",
            "/date_of_birth",
            "/email",
            "/emergency_contact/phone",
            "/emergency_contact/relationship",
            "/family_name",
            "/given_name",
            "/nationality",
            "/passport_expiry",
            "/passport_number",
            "/phone",
            "/place_of_birth",
            "/preferred_language",
        ],
        "{problem}"
    );

    // Wrong shapes name the member.
    for (change, pointer, code) in [
        (json!({ "passport_number": null }), "/passport_number", "invalid"),
        (json!({ "date_of_birth": "12/04/1990" }), "/date_of_birth", "invalid"),
        (json!({ "address": { "city": "Ottawa", "country": "CA" } }), "/address/line1", "required"),
        (json!({ "registration_status": "archived" }), "/registration_status", "invalid"),
        (json!({ "issue_client": "yes" }), "/issue_client", "invalid"),
        (json!({ "mission_id": "paris" }), "/mission_id", "invalid"),
        (json!({ "notes": "vip" }), "/notes", "unknown_field"),
    ] {
        let mut wrong = citizen_body(&x, "19AB12345");
        for (key, value) in change.as_object().unwrap() {
            wrong[key] = value.clone();
        }
        let (_, problem) =
            expect_problem(app.post_json(CITIZENS, &admin, &wrong).await, 422, "validation_failed").await;
        assert_eq!(error_codes(&problem), [(pointer.to_owned(), code.to_owned())], "{change}: {problem}");
    }
    let mut missing = citizen_body(&x, "19AB12345");
    missing.as_object_mut().unwrap().remove("email");
    let (_, problem) =
        expect_problem(app.post_json(CITIZENS, &admin, &missing).await, 422, "validation_failed").await;
    assert_eq!(error_codes(&problem), [("/email".to_owned(), "required".to_owned())]);

    // A mission that does not exist.
    let nowhere = citizen_body(&uuid::Uuid::now_v7().to_string(), "19AB12345");
    let (_, problem) =
        expect_problem(app.post_json(CITIZENS, &admin, &nowhere).await, 422, "validation_failed").await;
    assert_eq!(error_codes(&problem), [("/mission_id".to_owned(), "unknown".to_owned())]);

    assert!(app.listed_ids(CITIZENS, &admin).await.is_empty(), "nothing was registered");
}
both!(registration_errors_list_every_failing_field);

/// "Every failing field is listed": a body with invalid fields and an unknown mission
/// should name all of them at once.
async fn registration_lists_an_unknown_mission_with_the_other_failures(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let mut bad = citizen_body(&uuid::Uuid::now_v7().to_string(), "19AB12345");
    bad["email"] = json!("not-an-email");
    let (_, problem) =
        expect_problem(app.post_json(CITIZENS, &admin, &bad).await, 422, "validation_failed").await;
    assert_eq!(error_pointers(&problem), ["/email", "/mission_id"], "{problem}");
}
both!(registration_lists_an_unknown_mission_with_the_other_failures);

async fn updates_need_a_current_if_match(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (admin, x) = admin_and_mission(&app).await;
    let citizen = app.citizen_with_client(&admin, citizen_body(&x, "19AB12345")).await;
    let path = path_of(&citizen.body);
    let change = json!({ "phone": "+33700000001" });
    for token in [&admin, &citizen.token] {
        expect_problem(app.patch_json(&path, token, None, &change).await, 428, "precondition_required").await;
        for stale in ["\"2\"", "\"0\"", "W/\"1\""] {
            let response = app.patch_json(&path, token, Some(stale), &change).await;
            expect_problem(response, 412, "precondition_failed").await;
        }
    }
    let read = app.get(&path, &admin).await;
    assert_eq!(header(read.headers(), "etag"), "\"1\"");
    assert_eq!(
        read.json::<Value>().await.unwrap()["phone"],
        "+33612345678",
        "a refused PATCH changes nothing"
    );

    let updated = app.patch_json(&path, &citizen.token, Some("\"1\""), &change).await;
    assert_eq!(updated.status(), StatusCode::OK);
    assert_eq!(header(updated.headers(), "etag"), "\"2\"");
    let updated: Value = updated.json().await.unwrap();
    assert_eq!(updated["phone"], "+33700000001");
    assert!(instant(&updated["updated_at"]) >= instant(&citizen.body["updated_at"]));
    assert_eq!(updated["created_at"], citizen.body["created_at"]);
    let stale = app.patch_json(&path, &admin, Some("\"1\""), &json!({ "phone": "+33700000002" })).await;
    expect_problem(stale, 412, "precondition_failed").await;
    let current = app.patch_json(&path, &admin, Some("\"2\""), &json!({ "phone": "+33700000002" })).await;
    assert_eq!(header(current.headers(), "etag"), "\"3\"");
    let any = app.patch_json(&path, &admin, Some("*"), &json!({ "phone": "+33700000003" })).await;
    assert_eq!(header(any.headers(), "etag"), "\"4\"");
    // Nothing really changes: the version stays.
    let same =
        app.patch_json(&path, &citizen.token, Some("\"4\""), &json!({ "phone": "+33700000003" })).await;
    assert_eq!(same.status(), StatusCode::OK);
    assert_eq!(header(same.headers(), "etag"), "\"4\"");
}
both!(updates_need_a_current_if_match);

async fn a_citizen_changes_only_their_contact_details(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (admin, x) = admin_and_mission(&app).await;
    let citizen = app.citizen_with_client(&admin, citizen_body(&x, "19AB12345")).await;
    let path = path_of(&citizen.body);
    let token = &citizen.token;

    let contact = json!({
        "email": "alice@new.example",
        "phone": "+14165550100",
        "address": { "line1": "2 Queen Street", "line2": "Unit 7", "city": "Toronto", "region": "Ontario", "postal_code": "M5H 2N2", "country": "CA" },
        "emergency_contact": { "name": "Paul Martin", "phone": "+33698765432", "relationship": "brother" },
        "preferred_language": "en-GB",
    });
    let response = app.patch_json(&path, token, Some("\"1\""), &contact).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(header(response.headers(), "etag"), "\"2\"");
    let updated: Value = response.json().await.unwrap();
    for (field, value) in contact.as_object().unwrap() {
        assert_eq!(&updated[field], value, "{field}");
    }
    // `null` removes the emergency contact.
    let removed = app.patch_json(&path, token, Some("\"2\""), &json!({ "emergency_contact": null })).await;
    assert_eq!(removed.status(), StatusCode::OK);
    assert_eq!(header(removed.headers(), "etag"), "\"3\"");
    let read: Value = app.get(&path, token).await.json().await.unwrap();
    assert!(read["emergency_contact"].is_null(), "{read}");
    assert_eq!(read["email"], "alice@new.example");

    // Every other field is refused, each one named, and nothing changes.
    let identity = [
        ("given_name", json!("Eve")),
        ("family_name", json!("Dupont")),
        ("date_of_birth", json!("1991-01-01")),
        ("place_of_birth", json!("Paris")),
        ("nationality", json!("BE")),
        ("passport_number", json!("19AB99999")),
        ("passport_expiry", json!("2035-01-01")),
        ("registration_status", json!("active")),
    ];
    for (field, value) in &identity {
        let response = app.patch_json(&path, token, Some("\"3\""), &json!({ *field: value })).await;
        let (_, problem) = expect_problem(response, 422, "validation_failed").await;
        assert_eq!(error_codes(&problem), [(format!("/{field}"), "not_editable".to_owned())], "{problem}");
    }
    let mut all = json!({ "email": "eve@evil.example" });
    for (field, value) in &identity {
        all[*field] = value.clone();
    }
    let (_, problem) =
        expect_problem(app.patch_json(&path, token, Some("\"3\""), &all).await, 422, "validation_failed")
            .await;
    let expected: Vec<String> = identity.iter().map(|(field, _)| format!("/{field}")).collect();
    assert_eq!(sorted(error_pointers(&problem)), sorted(expected), "{problem}");
    assert!(problem["errors"].as_array().unwrap().iter().all(|e| e["code"] == "not_editable"), "{problem}");
    // Even the current value of a field the citizen may not change is refused.
    let same = app.patch_json(&path, token, Some("\"3\""), &json!({ "given_name": "Alice" })).await;
    expect_problem(same, 422, "validation_failed").await;

    let after = app.get(&path, &admin).await;
    assert_eq!(header(after.headers(), "etag"), "\"3\"");
    assert_eq!(after.json::<Value>().await.unwrap(), read, "refused changes change nothing");

    // Contact fields are validated.
    let bad = json!({ "email": "nope", "phone": "555", "address": { "line1": "x", "city": " ", "country": "XX" }, "preferred_language": "EN" });
    let (_, problem) =
        expect_problem(app.patch_json(&path, token, Some("\"3\""), &bad).await, 422, "validation_failed")
            .await;
    assert_eq!(
        error_pointers(&problem),
        ["/address/city", "/address/country", "/email", "/phone", "/preferred_language"],
        "{problem}"
    );
}
both!(a_citizen_changes_only_their_contact_details);

/// "Every failing field is listed": a citizen's body with a field they may not change
/// and an invalid contact field should name both.
async fn a_citizens_refused_update_lists_every_failing_field(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (admin, x) = admin_and_mission(&app).await;
    let citizen = app.citizen_with_client(&admin, citizen_body(&x, "19AB12345")).await;
    let body = json!({ "given_name": "Eve", "email": "not-an-email" });
    let response = app.patch_json(&path_of(&citizen.body), &citizen.token, Some("\"1\""), &body).await;
    let (_, problem) = expect_problem(response, 422, "validation_failed").await;
    assert_eq!(
        error_codes(&problem),
        [("/email".to_owned(), "email".to_owned()), ("/given_name".to_owned(), "not_editable".to_owned())],
        "{problem}"
    );
}
both!(a_citizens_refused_update_lists_every_failing_field);

async fn admins_change_every_field(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (admin, x) = admin_and_mission(&app).await;
    let head = app.principal_by(&admin, &["admin"], Some(&x)).await;
    let citizen = app.create_at(CITIZENS, &admin, &citizen_body(&x, "19AB12345")).await;
    let path = path_of(&citizen);
    let identity = json!({
        "given_name": "Alicia",
        "family_name": "Martin-Dupont",
        "date_of_birth": "1990-04-13",
        "place_of_birth": "Lyon 3e",
        "nationality": "BE",
        "passport_number": "20CD67890",
        "passport_expiry": "2034-01-31",
    });
    let response = app.patch_json(&path, &head.token, Some("\"1\""), &identity).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(header(response.headers(), "etag"), "\"2\"");
    let updated: Value = response.json().await.unwrap();
    for (field, value) in identity.as_object().unwrap() {
        assert_eq!(&updated[field], value, "{field}");
    }
    let contact = json!({ "email": "alicia@example.org", "preferred_language": "nl-BE", "registration_status": "active" });
    let response = app.patch_json(&path, &admin, Some("\"2\""), &contact).await;
    assert_eq!(response.status(), StatusCode::OK);
    let updated: Value = response.json().await.unwrap();
    assert_eq!(updated["email"], "alicia@example.org");
    assert_eq!(updated["registration"]["status"], "active");

    // Every failing field is listed; dates are checked against the stored ones.
    let bad = json!({
        "email": "x",
        "address": { "line1": " ", "city": "Paris", "country": "XX" },
        "date_of_birth": "2999-01-01",
        "preferred_language": "FR",
        "nationality": "fr",
        "registration_status": "pending",
    });
    let (_, problem) =
        expect_problem(app.patch_json(&path, &admin, Some("\"3\""), &bad).await, 422, "validation_failed")
            .await;
    assert_eq!(
        error_pointers(&problem),
        [
            "/address/country",
            "/address/line1",
            "/date_of_birth",
            "/email",
            "/nationality",
            "/passport_expiry",
            "/preferred_language",
            "/registration_status",
        ],
        "{problem}"
    );
    let expiry = json!({ "passport_expiry": "1990-04-13" });
    let (_, problem) =
        expect_problem(app.patch_json(&path, &admin, Some("\"3\""), &expiry).await, 422, "validation_failed")
            .await;
    assert_eq!(error_codes(&problem), [("/passport_expiry".to_owned(), "before_birth".to_owned())]);
    // The mission and the registration dates are not fields of the body.
    for field in ["mission_id", "id", "registration", "registered_at"] {
        let body = json!({ field: "2026-01-01T00:00:00Z" });
        let (_, problem) = expect_problem(
            app.patch_json(&path, &admin, Some("\"3\""), &body).await,
            422,
            "validation_failed",
        )
        .await;
        assert_eq!(error_codes(&problem), [(format!("/{field}"), "unknown_field".to_owned())]);
    }
    let read = app.get(&path, &admin).await;
    assert_eq!(header(read.headers(), "etag"), "\"3\"", "invalid updates change nothing");
    assert_eq!(read.json::<Value>().await.unwrap(), updated);
}
both!(admins_change_every_field);

/// `pending → active | deregistered`, `active → deregistered`, `deregistered → active`;
/// anything else is 422 `invalid_transition` on `/registration_status`.
async fn the_registration_status_follows_its_transitions(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (admin, x) = admin_and_mission(&app).await;
    let table = [
        ("pending", "active", true),
        ("pending", "deregistered", true),
        ("pending", "pending", true),
        ("active", "deregistered", true),
        ("active", "pending", false),
        ("active", "active", true),
        ("deregistered", "active", true),
        ("deregistered", "pending", false),
        ("deregistered", "deregistered", true),
    ];
    for (n, (from, to, allowed)) in table.into_iter().enumerate() {
        let mut body = citizen_body(&x, &format!("19AB0000{n}"));
        body["registration_status"] = json!(from);
        let citizen = app.create_at(CITIZENS, &admin, &body).await;
        let before = citizen["registration"].clone();
        assert_eq!(before["status"], from);
        tokio::time::sleep(Duration::from_millis(2)).await;
        let path = path_of(&citizen);
        let response =
            app.patch_json(&path, &admin, Some("\"1\""), &json!({ "registration_status": to })).await;
        if !allowed {
            let (_, problem) = expect_problem(response, 422, "validation_failed").await;
            assert_eq!(
                error_codes(&problem),
                [("/registration_status".to_owned(), "invalid_transition".to_owned())],
                "{from} -> {to}"
            );
            let read: Value = app.get(&path, &admin).await.json().await.unwrap();
            assert_eq!(read["registration"], before, "{from} -> {to} changed nothing");
            continue;
        }
        assert_eq!(response.status(), StatusCode::OK, "{from} -> {to}");
        let etag = header(response.headers(), "etag");
        let after: Value = response.json().await.unwrap();
        let registration = &after["registration"];
        assert_eq!(registration["status"], to, "{from} -> {to}");
        assert_eq!(registration["registered_at"], before["registered_at"]);
        if from == to {
            assert_eq!(etag, "\"1\"", "{from} -> {to} is no change");
            assert_eq!(registration, &before);
            continue;
        }
        assert_eq!(etag, "\"2\"");
        let stamp = if to == "active" { "activated_at" } else { "deregistered_at" };
        let other = if to == "active" { "deregistered_at" } else { "activated_at" };
        assert_eq!(registration[stamp], after["updated_at"], "{from} -> {to} dates {stamp}");
        assert!(instant(&registration[stamp]) > instant(&before["registered_at"]));
        assert_eq!(registration[other], before[other], "{from} -> {to} keeps {other}");
        assert_eq!(app.get(&path, &admin).await.json::<Value>().await.unwrap(), after);
    }
}
both!(the_registration_status_follows_its_transitions);

/// Every caller against every citizen endpoint (docs/api.md "Who sees what"): objects the
/// caller may not see are 404, endpoints their scope does not reach are 403, and lists
/// hold only what they may see.
async fn the_citizen_isolation_matrix(backend: Backend) {
    use Expect::*;
    let app = TestApp::spawn(backend).await;
    let w = app.world().await;
    let (a, b, c) = (&w.citizen_a.id, &w.citizen_b.id, &w.citizen_c.id);
    let path_a = format!("{CITIZENS}/{a}");
    /// What a list answers: these citizens, or a refusal.
    enum Listed<'a> {
        Only(Vec<&'a String>),
        Refused(Expect),
    }
    use Listed::*;
    let table: [(&str, &str, Expect, Expect, Listed, Listed, Expect); 8] = [
        //                                       get A      patch A    list              list ?mission_id=X  register in X
        ("global admin", &w.admin, Ok, Ok, Only(vec![a, b, c]), Only(vec![a, b]), Created),
        ("admin of X", &w.admin_x.token, Ok, Ok, Only(vec![a, b]), Only(vec![a, b]), Created),
        ("admin of Y", &w.admin_y.token, NotFound, NotFound, Only(vec![c]), Only(vec![]), Forbidden),
        ("staff of X", &w.staff_x.token, Ok, Scope, Refused(Scope), Refused(Scope), Scope),
        ("staff of Y", &w.staff_y.token, NotFound, NotFound, Refused(Scope), Refused(Scope), Scope),
        ("citizen A of X", &w.citizen_a.token, Ok, Ok, Refused(Scope), Refused(Scope), Scope),
        ("citizen B of X", &w.citizen_b.token, NotFound, NotFound, Refused(Scope), Refused(Scope), Scope),
        ("citizen C of Y", &w.citizen_c.token, NotFound, NotFound, Refused(Scope), Refused(Scope), Scope),
    ];
    let mut phones = 0;
    for (who, token, get, patch, list, own_mission, _) in &table {
        let body = get.check(app.get(&path_a, token).await, &format!("{who}: GET A")).await;
        if *get == Ok {
            assert_eq!(&text(&body, "id"), a);
        }
        phones += 1;
        let change = json!({ "phone": format!("+3370000000{phones}") });
        patch
            .check(app.patch_json(&path_a, token, Some("*"), &change).await, &format!("{who}: PATCH A"))
            .await;
        for (query, expected) in [("", list), (&*format!("?mission_id={}", w.x), own_mission)] {
            let path = format!("{CITIZENS}{query}");
            match expected {
                Only(ids) => {
                    let listed = app.listed_ids(&path, token).await;
                    assert_eq!(listed.iter().collect::<Vec<_>>(), *ids, "{who}: GET {path}");
                }
                Refused(expect) => {
                    expect.check(app.get(&path, token).await, &format!("{who}: GET {path}")).await;
                }
            }
        }
        let unknown = format!("{CITIZENS}/{}", uuid::Uuid::now_v7());
        NotFound.check(app.get(&unknown, token).await, &format!("{who}: GET unknown")).await;
    }
    // Exactly the allowed updates happened: the global admin, the admin of X, A.
    let read = app.get(&path_a, &w.admin).await;
    assert_eq!(header(read.headers(), "etag"), "\"4\"");
    assert_eq!(read.json::<Value>().await.unwrap()["phone"], "+33700000006", "A's own change was the last");

    for (n, (who, token, .., register)) in table.iter().enumerate() {
        let body = citizen_body(&w.x, &format!("19XX0000{n}"));
        register.check(app.post_json(CITIZENS, token, &body).await, &format!("{who}: register in X")).await;
    }
    let registered = app.listed_ids(&format!("{CITIZENS}?mission_id={}", w.x), &w.admin).await;
    assert_eq!(registered.len(), 4, "A, B and two registrations: {registered:?}");
    // A mission admin registers in their own mission, not elsewhere.
    let own = citizen_body(&w.y, "19YY00001");
    Created.check(app.post_json(CITIZENS, &w.admin_y.token, &own).await, "admin of Y registers in Y").await;
    assert_eq!(app.listed_ids(CITIZENS, &w.admin_y.token).await.len(), 2);
}
both!(the_citizen_isolation_matrix);

/// Registers the filter test's citizens; returns their ids in registration order.
async fn register_population(app: &TestApp, admin: &str, x: &str, y: &str) -> Vec<Value> {
    let people = [
        (x, "Alice", "Martin", "FR", "pending", "alice.martin@example.org"),
        (x, "Bruno", "DUPONT", "BE", "active", "b.dupont@mail.example"),
        (x, "Camille", "Zidane", "FR", "deregistered", "camille_z@example.org"),
        (y, "Dana", "Martinez", "FR", "active", "dana@example.org"),
        (y, "Eve", "Smith", "US", "pending", "eve.smith@example.net"),
    ];
    let mut created = Vec::new();
    for (n, (mission, given, family, nationality, status, email)) in people.into_iter().enumerate() {
        let mut body = citizen_body(mission, &format!("19PP0000{n}"));
        body["given_name"] = json!(given);
        body["family_name"] = json!(family);
        body["nationality"] = json!(nationality);
        body["registration_status"] = json!(status);
        body["email"] = json!(email);
        created.push(app.create_at(CITIZENS, admin, &body).await);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    created
}

async fn citizen_lists_filter_on_every_field(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (admin, x) = admin_and_mission(&app).await;
    let y = text(&app.create_mission(&admin, "de-berlin").await, "id");
    let people = register_population(&app, &admin, &x, &y).await;
    let ids: Vec<String> = people.iter().map(|p| text(p, "id")).collect();
    let at = |n: usize| text(&people[n]["registration"], "registered_at");
    // The same instant as people[n]'s registration, written with a +02:00 offset.
    let shifted = |n: usize| {
        let instant =
            time::OffsetDateTime::parse(&at(n), &time::format_description::well_known::Rfc3339).unwrap();
        instant
            .to_offset(time::macros::offset!(+2))
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap()
    };
    let (at1, at3, shifted1, shifted3) = (at(1), at(3), shifted(1), shifted(3));
    let cases: Vec<(Query, Vec<usize>)> = vec![
        (vec![], vec![0, 1, 2, 3, 4]),
        (vec![("mission_id", &x)], vec![0, 1, 2]),
        (vec![("mission_id", &y)], vec![3, 4]),
        (vec![("registration_status", "pending")], vec![0, 4]),
        (vec![("registration_status", "active")], vec![1, 3]),
        (vec![("registration_status", "deregistered")], vec![2]),
        (vec![("nationality", "FR")], vec![0, 2, 3]),
        (vec![("nationality", "US")], vec![4]),
        (vec![("nationality", "DE")], vec![]),
        // q: the given name, family name or email, containing the text, ignoring ASCII case.
        (vec![("q", "martin")], vec![0, 3]),
        (vec![("q", "MARTIN")], vec![0, 3]),
        (vec![("q", "mArTiNeZ")], vec![3]),
        (vec![("q", "dupont")], vec![1]),
        (vec![("q", "Bruno")], vec![1]),
        (vec![("q", "EXAMPLE.ORG")], vec![0, 2, 3]),
        (vec![("q", "@mail.")], vec![1]),
        (vec![("q", "zz")], vec![]),
        // LIKE wildcards match only themselves.
        (vec![("q", "_")], vec![2]),
        (vec![("q", "%")], vec![]),
        (vec![("q", "e_s")], vec![]),
        (vec![("q", "\\")], vec![]),
        // registered_from is inclusive, registered_to exclusive; offsets are honoured.
        (vec![("registered_from", &at1)], vec![1, 2, 3, 4]),
        (vec![("registered_to", &at3)], vec![0, 1, 2]),
        (vec![("registered_from", &at1), ("registered_to", &at3)], vec![1, 2]),
        (vec![("registered_from", &shifted1), ("registered_to", &shifted3)], vec![1, 2]),
        (
            vec![("registered_from", "2000-01-01T00:00:00Z"), ("registered_to", "2000-01-02T00:00:00Z")],
            vec![],
        ),
        // Filters combine.
        (vec![("mission_id", &x), ("nationality", "FR"), ("registration_status", "pending")], vec![0]),
        (vec![("q", "martin"), ("mission_id", &y)], vec![3]),
        (vec![("q", "example"), ("registration_status", "active"), ("registered_from", &at1)], vec![1, 3]),
    ];
    for (query, expected) in &cases {
        let expected: Vec<&String> = expected.iter().map(|n| &ids[*n]).collect();
        for limit in ["1", "100"] {
            let mut query = query.clone();
            query.push(("limit", limit));
            // Following the Link header keeps the filters.
            let listed = app.listed_ids(&with_query(CITIZENS, &query), &admin).await;
            assert_eq!(listed.iter().collect::<Vec<_>>(), expected, "{query:?}");
        }
    }

    // A mission admin's filters apply within their mission.
    let head = app.principal_by(&admin, &["admin"], Some(&x)).await;
    for (query, expected) in [
        (vec![], vec![0, 1, 2]),
        (vec![("q", "martin")], vec![0]),
        (vec![("nationality", "FR")], vec![0, 2]),
        (vec![("mission_id", x.as_str())], vec![0, 1, 2]),
        (vec![("mission_id", y.as_str())], vec![]),
        (vec![("mission_id", y.as_str()), ("q", "dana")], vec![]),
    ] {
        let expected: Vec<&String> = expected.iter().map(|n| &ids[*n]).collect();
        let listed = app.listed_ids(&with_query(CITIZENS, &query), &head.token).await;
        assert_eq!(listed.iter().collect::<Vec<_>>(), expected, "mission admin {query:?}");
    }

    // Malformed filters are 400, naming the parameter.
    let long = "q".repeat(101);
    for (query, pointer) in [
        (vec![("nationality", "fr")], "/query/nationality"),
        (vec![("nationality", "FRA")], "/query/nationality"),
        (vec![("registration_status", "archived")], "/query/registration_status"),
        (vec![("q", "")], "/query/q"),
        (vec![("q", long.as_str())], "/query/q"),
        (vec![("registered_from", "2026-01-01")], "/query/registered_from"),
        (vec![("registered_to", "yesterday")], "/query/registered_to"),
        (vec![("mission_id", "fr-paris")], "/query/mission_id"),
        (vec![("status", "active")], "/query/status"),
    ] {
        let response = app.get(&with_query(CITIZENS, &query), &admin).await;
        let (_, problem) = expect_problem(response, 400, "invalid_query").await;
        assert_eq!(error_pointers(&problem), [pointer], "{query:?}: {problem}");
    }
}
both!(citizen_lists_filter_on_every_field);

async fn citizen_lists_are_paginated(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (admin, x) = admin_and_mission(&app).await;
    let mut expected = Vec::new();
    for n in 0..5 {
        expected.push(text(
            &app.create_at(CITIZENS, &admin, &citizen_body(&x, &format!("19AB0000{n}"))).await,
            "id",
        ));
    }
    for limit in [1, 2, 5, 100] {
        assert_eq!(
            app.listed_ids(&format!("{CITIZENS}?limit={limit}"), &admin).await,
            expected,
            "limit={limit}"
        );
    }
    let first = app.get(&format!("{CITIZENS}?limit=2&q=alice"), &admin).await;
    let link = header(first.headers(), "link");
    let page: Value = first.json().await.unwrap();
    assert_eq!(page["items"].as_array().unwrap().len(), 2);
    let cursor = text(&page, "next_cursor");
    assert_eq!(link, format!("<{CITIZENS}?limit=2&q=alice&cursor={cursor}>; rel=\"next\""));
    let last: Value = app.get(&format!("{CITIZENS}?limit=5"), &admin).await.json().await.unwrap();
    assert!(last["next_cursor"].is_null(), "an exact last page has no next page: {last}");
    for bad in ["limit=0", "limit=101", "cursor=abc"] {
        expect_problem(app.get(&format!("{CITIZENS}?{bad}"), &admin).await, 400, "invalid_query").await;
    }
}
both!(citizen_lists_are_paginated);

async fn unknown_citizens_are_404(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    for path in [format!("{CITIZENS}/{}", uuid::Uuid::now_v7()), format!("{CITIZENS}/alice")] {
        expect_problem(app.get(&path, &admin).await, 404, "not_found").await;
        let update = app.patch_json(&path, &admin, Some("*"), &json!({ "phone": "+33700000001" })).await;
        expect_problem(update, 404, "not_found").await;
    }
    let anonymous = app.request(Method::GET, CITIZENS).send().await.unwrap();
    expect_problem(anonymous, 401, "unauthorized").await;
}
both!(unknown_citizens_are_404);

/// A mission admin may create clients for their own mission, but a client naming
/// another mission's citizen as its principal must not open that citizen to them.
async fn a_minted_client_does_not_reach_another_missions_citizen(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w = app.world().await;
    let path_a = format!("{CITIZENS}/{}", w.citizen_a.id);
    let body =
        json!({ "name": "not A", "scopes": ["citizen"], "mission_id": w.y, "principal_id": w.citizen_a.id });
    // Refused outright since issue 23 (tests/tests/clients.rs has every combination).
    let minted = app.post_json(CLIENTS, &w.admin_y.token, &body).await;
    let (_, problem) = expect_problem(minted, 422, "validation_failed").await;
    assert_eq!(problem["errors"][0]["pointer"], "/principal_id", "{problem}");
    let email = app.get(&path_a, &w.admin).await.json::<Value>().await.unwrap()["email"].clone();
    assert_eq!(email, json!("alice.martin@example.org"));
}
both!(a_minted_client_does_not_reach_another_missions_citizen);

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
