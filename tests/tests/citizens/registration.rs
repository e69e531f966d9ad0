//! Registration: the citizen with their API client if asked, a replay without the
//! client's secret, one passport per mission, and every failing field listed at once.

use super::*;

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
