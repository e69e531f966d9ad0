//! Updates: `If-Match`, the contact details a citizen may change, every field an admin
//! may change, and the registration status's transitions.

use super::*;

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
