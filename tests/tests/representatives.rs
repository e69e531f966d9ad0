//! Representations end to end on SQLite and on PostgreSQL (docs/representation.md):
//! staff of the mission make a citizen a minor's parent on the evidence of the minor's
//! birth certificate, the dependant and the mission read it, the representative sees the
//! dependants they act for now (not an ended nor a future-dated one), and it is ended
//! once. Citizens' tokens are refused the scope, another mission sees nothing, every
//! refused field is a 422 at its pointer, and a second open one with the same
//! representative and kind is 409 naming the first, also when eight arrive at once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_tests::reqwest::{Response, StatusCode};
use consular_tests::{
    Backend, Issued, TestApp, World, both, citizen_body, error_codes, expect_problem, text,
};
use serde_json::{Value, json};
use time::{Duration, OffsetDateTime};

/// The date `days` from today (UTC), `YYYY-MM-DD`: a day either side of today stays on
/// the same side in the mission's zone.
fn day(days: i64) -> String {
    let d = (OffsetDateTime::now_utc() + Duration::days(days)).date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

fn representatives(citizen: &str) -> String {
    format!("/api/v1/citizens/{citizen}/representatives")
}

/// Mia, a ten-year-old citizen of mission X with her client, and her birth certificate.
async fn minor_with_certificate(app: &TestApp, w: &World) -> (Issued, String) {
    let mut body = citizen_body(&w.x, "X0000M");
    body["given_name"] = json!("Mia");
    body["date_of_birth"] = json!(day(-10 * 365));
    let mia = app.citizen_with_client(&w.admin, body).await;
    // Under a kind the world's catalog requires (uploads of other kinds are refused); by
    // the mission's staff, since a minor acts only through a parent or guardian.
    let certificate = upload(app, &w.staff_x.token, &mia.id, "old_passport").await;
    (mia, certificate)
}

async fn upload(app: &TestApp, token: &str, citizen: &str, kind: &str) -> String {
    let fields = [("kind", kind), ("citizen_id", citizen)];
    let pdf = consular_tests::files::pdf(500, 3);
    text(&app.upload_ok(token, &fields, pdf, "scan.pdf", "application/pdf").await, "id")
}

fn parent(representative: &str, evidence: &str) -> Value {
    json!({
        "representative_id": representative,
        "kind": "parent",
        "valid_from": day(-1),
        "evidence_document_id": evidence,
    })
}

async fn json_of(response: Response, status: StatusCode) -> Value {
    let got = response.status();
    let body: Value = response.json().await.expect("a JSON body");
    assert_eq!(got, status, "{body}");
    body
}

both!(staff_make_a_parent_who_sees_the_child_until_it_is_ended);
async fn staff_make_a_parent_who_sees_the_child_until_it_is_ended(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w = app.world().await;
    let (mia, certificate) = minor_with_certificate(&app, &w).await;
    let bruno = &w.citizen_b;
    let path = representatives(&mia.id);

    // Nobody makes themself anyone's representative; another mission sees nothing.
    for token in [&bruno.token, &mia.token] {
        let refused = app.post_json(&path, token, &parent(&bruno.id, &certificate)).await;
        expect_problem(refused, 403, "insufficient_scope").await;
    }
    for token in [&w.staff_y.token, &w.admin_y.token] {
        expect_problem(app.post_json(&path, token, &parent(&bruno.id, &certificate)).await, 404, "not_found")
            .await;
        expect_problem(app.get(&path, token).await, 404, "not_found").await;
    }

    let response = app.post_json(&path, &w.staff_x.token, &parent(&bruno.id, &certificate)).await;
    let location = response.headers()["location"].to_str().unwrap().to_owned();
    let created = json_of(response, StatusCode::CREATED).await;
    let id = text(&created, "id");
    assert_eq!(location, format!("{path}/{id}"));
    assert_eq!(
        (created["dependant_id"].as_str(), created["representative_id"].as_str()),
        (Some(&*mia.id), Some(&*bruno.id))
    );
    assert_eq!(
        (created["kind"].as_str(), created["in_force"].as_bool()),
        (Some("parent"), Some(true)),
        "{created}"
    );
    assert!(created["service_type_ids"].is_null() && created["ended_at"].is_null(), "{created}");
    assert_eq!(created["created_by"], json!({ "kind": "staff", "id": w.staff_x.id }));

    // The mission and the dependant read it; the representative does not through Mia's routes.
    assert_eq!(
        json_of(app.get(&location, &w.admin_x.token).await, StatusCode::OK).await["id"],
        created["id"]
    );
    assert_eq!(json_of(app.get(&location, &mia.token).await, StatusCode::OK).await["id"], created["id"]);
    expect_problem(app.get(&location, &bruno.token).await, 404, "not_found").await;
    let mine =
        json_of(app.get("/api/v1/citizens/me/representatives", &mia.token).await, StatusCode::OK).await;
    assert_eq!(mine["items"].as_array().map(Vec::len), Some(1), "{mine}");

    // The same representative and kind again: 409 naming the open one.
    let again = app.post_json(&path, &w.admin_x.token, &parent(&bruno.id, &certificate)).await;
    let (_, problem) = expect_problem(again, 409, "representation_exists").await;
    assert_eq!(problem["existing_representation_id"].as_str(), Some(&*id), "{problem}");

    // Bruno acts for Mia now; a guardianship starting next month is not in force yet.
    let future = json!({
        "representative_id": bruno.id,
        "kind": "guardian",
        "service_type_ids": [text(&w.service, "id")],
        "valid_from": day(30),
        "evidence_document_id": certificate,
    });
    let future = json_of(app.post_json(&path, &w.staff_x.token, &future).await, StatusCode::CREATED).await;
    assert_eq!(future["in_force"], false, "{future}");
    assert_eq!(future["service_type_ids"], json!([text(&w.service, "id")]));
    let dependants =
        json_of(app.get("/api/v1/citizens/me/dependants", &bruno.token).await, StatusCode::OK).await;
    let items = dependants["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{dependants}");
    assert_eq!(
        (items[0]["citizen_id"].as_str(), items[0]["given_name"].as_str()),
        (Some(&*mia.id), Some("Mia"))
    );
    assert_eq!(items[0]["representation"]["id"], created["id"]);
    expect_problem(
        app.get("/api/v1/citizens/me/dependants", &w.staff_x.token).await,
        403,
        "insufficient_scope",
    )
    .await;
    // Bruno read Mia's names: an entry of her access log.
    let log = json_of(app.get("/api/v1/citizens/me/access-log", &mia.token).await, StatusCode::OK).await;
    let by_bruno: Vec<_> =
        log["items"].as_array().unwrap().iter().filter(|e| e["actor"]["id"] == json!(bruno.id)).collect();
    assert_eq!(by_bruno.len(), 1, "{log}");
    assert_eq!(
        (by_bruno[0]["what"].as_str(), by_bruno[0]["actor_role"].as_str()),
        (Some("profile"), Some("citizen"))
    );

    // Ended once, with its reason; then 409, and Bruno acts for nobody.
    let end = format!("{location}/end");
    expect_problem(
        app.post_json(&end, &bruno.token, &json!({ "reason": "x" })).await,
        403,
        "insufficient_scope",
    )
    .await;
    let ended = app.post_json(&end, &w.staff_x.token, &json!({ "reason": "Custody changed" })).await;
    let ended = json_of(ended, StatusCode::OK).await;
    assert_eq!(
        (ended["end_reason"].as_str(), ended["in_force"].as_bool()),
        (Some("Custody changed"), Some(false))
    );
    assert!(ended["ended_at"].is_string(), "{ended}");
    assert_eq!(ended["ended_by"], json!({ "kind": "staff", "id": w.staff_x.id }));
    let twice = app.post_json(&end, &w.admin_x.token, &json!({ "reason": "Again" })).await;
    expect_problem(twice, 409, "representation_ended").await;
    let dependants =
        json_of(app.get("/api/v1/citizens/me/dependants", &bruno.token).await, StatusCode::OK).await;
    assert_eq!(dependants["items"], json!([]), "{dependants}");
    // Ended, it no longer blocks a new one.
    app.create_at(&path, &w.staff_x.token, &parent(&bruno.id, &certificate)).await;
}

both!(every_refused_field_is_a_422_at_its_pointer);
async fn every_refused_field_is_a_422_at_its_pointer(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w = app.world().await;
    let (mia, certificate) = minor_with_certificate(&app, &w).await;
    let alice = &w.citizen_a;
    let alices = upload(&app, &alice.token, &alice.id, "passport_photo").await;
    let codes = |problem: &Value| error_codes(problem);
    let refused = |dependant: &str, body: Value| {
        let (app, path) = (&app, representatives(dependant));
        let token = w.staff_x.token.clone();
        async move { expect_problem(app.post_json(&path, &token, &body).await, 422, "validation_failed").await.1 }
    };
    let pair = |p: &str, c: &str| (p.to_owned(), c.to_owned());

    // Alice's document is no evidence about Mia; Clara is of another mission.
    let problem = refused(&mia.id, parent(&w.citizen_c.id, &alices)).await;
    assert_eq!(
        codes(&problem),
        [pair("/evidence_document_id", "unknown"), pair("/representative_id", "unknown")],
        "{problem}"
    );
    // Alice is an adult: no parent of hers is in force.
    let problem = refused(&alice.id, parent(&w.citizen_b.id, &alices)).await;
    assert_eq!(codes(&problem), [pair("/kind", "age_mismatch")], "{problem}");
    // Mia is a minor: no power of attorney; and the dates are in the wrong order.
    let mut body = parent(&w.citizen_b.id, &certificate);
    body["kind"] = json!("authorised_representative");
    body["valid_until"] = json!(day(-2));
    let problem = refused(&mia.id, body).await;
    assert_eq!(
        codes(&problem),
        [pair("/kind", "age_mismatch"), pair("/valid_until", "before_valid_from")],
        "{problem}"
    );
    // Herself, and an unknown service type among repeated ones.
    let mut body = parent(&mia.id, &certificate);
    let service = text(&w.service, "id");
    body["service_type_ids"] = json!([service, uuid::Uuid::now_v7()]);
    let problem = refused(&mia.id, body).await;
    assert_eq!(
        codes(&problem),
        [pair("/representative_id", "same_as_dependant"), pair("/service_type_ids/1", "unknown")],
        "{problem}"
    );
    let mut body = parent(&w.citizen_b.id, &certificate);
    body["service_type_ids"] = json!([service, service]);
    let problem = refused(&mia.id, body).await;
    assert_eq!(codes(&problem), [pair("/service_type_ids", "duplicate")], "{problem}");
    // A reason is needed to end one.
    let created = app
        .create_at(&representatives(&mia.id), &w.staff_x.token, &parent(&w.citizen_b.id, &certificate))
        .await;
    let end = format!("{}/{}/end", representatives(&mia.id), text(&created, "id"));
    let blank = app.post_json(&end, &w.staff_x.token, &json!({ "reason": "  " })).await;
    let (_, problem) = expect_problem(blank, 422, "validation_failed").await;
    assert_eq!(codes(&problem), [pair("/reason", "required")], "{problem}");
}

both!(eight_identical_creations_at_once_make_one);
async fn eight_identical_creations_at_once_make_one(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w = app.world().await;
    let (mia, certificate) = minor_with_certificate(&app, &w).await;
    let (path, body) = (representatives(&mia.id), parent(&w.citizen_b.id, &certificate));
    let answers = futures_util::future::join_all((0..8).map(|_| async {
        let response = app.post_json(&path, &w.staff_x.token, &body).await;
        let status = response.status();
        (status, response.json::<Value>().await.expect("a JSON body"))
    }))
    .await;
    let created: Vec<_> = answers.iter().filter(|(s, _)| *s == StatusCode::CREATED).collect();
    assert_eq!(created.len(), 1, "{answers:?}");
    let id = text(&created[0].1, "id");
    for (status, body) in answers.iter().filter(|(s, _)| *s != StatusCode::CREATED) {
        assert_eq!(
            (*status, body["code"].as_str()),
            (StatusCode::CONFLICT, Some("representation_exists")),
            "{body}"
        );
        assert_eq!(body["existing_representation_id"].as_str(), Some(&*id), "{body}");
    }
    assert_eq!(app.listed_ids(&path, &mia.token).await, [id]);
}
