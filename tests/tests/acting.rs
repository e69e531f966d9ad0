//! Acting for someone else end to end on SQLite and on PostgreSQL
//! (docs/representation.md "Acting"): a parent, made so by the mission's staff for the
//! passport service only, names their ten-year-old in `On-Behalf-Of` and submits her
//! passport request, uploads her photo and books her appointment, which are hers; they
//! hear of it in their own inbox, marked as about her; she reads her own but may not act
//! alone. Outside the mandate's services, without the header, or once the representation
//! is ended, the parent reaches nothing of hers; an ending stops the very next call on
//! every node.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_tests::files::{file_part, form, pdf};
use consular_tests::reqwest::{Method, RequestBuilder, Response, StatusCode};
use consular_tests::{
    Backend, Issued, SERVICES, TestApp, World, both, citizen_body, eventually, expect_problem, service_body,
    set_setting, text,
};
use serde_json::{Value, json};
use std::time::Duration;
use time::OffsetDateTime;

/// The date `days` from today (UTC), `YYYY-MM-DD`.
fn day(days: i64) -> String {
    let d = (OffsetDateTime::now_utc() + time::Duration::days(days)).date();
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

/// `request` naming `dependant` in `On-Behalf-Of`.
fn acting(request: RequestBuilder, dependant: &str) -> RequestBuilder {
    request.header("on-behalf-of", dependant)
}

async fn json_of(response: Response, status: StatusCode) -> Value {
    let got = response.status();
    let body: Value = response.json().await.expect("a JSON body");
    assert_eq!(got, status, "{body}");
    body
}

/// Mia, a ten-year-old citizen of mission X with her client, and her birth certificate
/// (uploaded by the mission's staff: she does not act alone).
async fn minor_with_certificate(app: &TestApp, w: &World) -> (Issued, String) {
    let mut body = citizen_body(&w.x, "X0000M");
    body["given_name"] = json!("Mia");
    body["date_of_birth"] = json!(day(-10 * 365));
    let mia = app.citizen_with_client(&w.admin, body).await;
    let fields = [("kind", "old_passport"), ("citizen_id", mia.id.as_str())];
    let certificate =
        app.upload_ok(&w.staff_x.token, &fields, pdf(500, 3), "birth.pdf", "application/pdf").await;
    (mia, text(&certificate, "id"))
}

/// Makes `representative` a representative of `dependant` (`kind`, over `services` or
/// every service) as staff member x; the representation's id.
async fn represent(
    app: &TestApp,
    w: &World,
    dependant: &str,
    representative: &str,
    kind: &str,
    services: Option<&[&str]>,
    evidence: &str,
) -> String {
    let mut body = json!({
        "representative_id": representative,
        "kind": kind,
        "valid_from": day(-1),
        "evidence_document_id": evidence,
    });
    if let Some(services) = services {
        body["service_type_ids"] = json!(services);
    }
    let path = format!("/api/v1/citizens/{dependant}/representatives");
    text(&app.create_at(&path, &w.staff_x.token, &body).await, "id")
}

/// The ids of the first page of `path`, read as `token` (acting for `dependant` if given).
async fn listed(app: &TestApp, path: &str, token: &str, dependant: Option<&str>) -> Vec<String> {
    let mut request = app.authed(Method::GET, path, token);
    if let Some(dependant) = dependant {
        request = acting(request, dependant);
    }
    let page = json_of(request.send().await.expect("GET"), StatusCode::OK).await;
    page["items"].as_array().into_iter().flatten().map(|item| text(item, "id")).collect()
}

/// Whether `token`'s own access log holds a read of `what` (`object`) by citizen
/// `reader`, in the role of a citizen.
async fn logged(app: &TestApp, token: &str, reader: &str, what: &str, object: &str) -> bool {
    let log = json_of(app.get("/api/v1/citizens/me/access-log", token).await, StatusCode::OK).await;
    log["items"].as_array().into_iter().flatten().any(|e| {
        e["actor"]["id"] == reader
            && e["actor_role"] == "citizen"
            && e["what"] == what
            && e["object_id"] == object
    })
}

/// The notifications of `token`'s own inbox.
async fn inbox(app: &TestApp, token: &str) -> Vec<Value> {
    let page = json_of(app.get("/api/v1/notifications?limit=100", token).await, StatusCode::OK).await;
    page["items"].as_array().cloned().unwrap_or_default()
}

both!(a_parent_submits_uploads_and_books_for_their_child_and_hears_of_it);
async fn a_parent_submits_uploads_and_books_for_their_child_and_hears_of_it(backend: Backend) {
    let app = TestApp::spawn_with(backend, |s| {
        set_setting(s, "run_worker", json!(true));
        set_setting(s, "outbox_poll_ms", json!(50));
    })
    .await;
    let w = app.world().await;
    let (mia, certificate) = minor_with_certificate(&app, &w).await;
    let bruno = &w.citizen_b;
    let passport = text(&w.service, "id");
    let visa = text(&app.create_at(SERVICES, &w.admin, &service_body("visa_acting")).await, "id");
    let parenthood =
        represent(&app, &w, &mia.id, &bruno.id, "parent", Some(&[passport.as_str()]), &certificate).await;

    // Mia reads her own record but does not act alone: she is a minor.
    json_of(app.get(&format!("/api/v1/citizens/{}", mia.id), &mia.token).await, StatusCode::OK).await;
    let alone = app.post_json("/api/v1/requests", &mia.token, &json!({ "service_type_id": passport })).await;
    expect_problem(alone, 403, "forbidden").await;

    // Bruno, naming her, submits her passport request: it is hers.
    let submit = |service: &str| {
        let body = json!({ "service_type_id": service });
        acting(app.authed(Method::POST, "/api/v1/requests", &bruno.token), &mia.id).json(&body).send()
    };
    let request = json_of(submit(&passport).await.expect("POST"), StatusCode::CREATED).await;
    let request_id = text(&request, "id");
    assert_eq!(request["citizen_id"].as_str(), Some(mia.id.as_str()), "{request}");
    let mias = format!("/api/v1/requests/{request_id}");
    json_of(app.get(&mias, &mia.token).await, StatusCode::OK).await;
    // Outside the mandate's services she is a citizen Bruno cannot act for.
    let visa_request = submit(&visa).await.expect("POST");
    let (_, problem) = expect_problem(visa_request, 422, "validation_failed").await;
    assert_eq!(problem["errors"][0]["pointer"], "/citizen_id", "{problem}");

    // Her photo, for the request.
    let fields = [("kind", "passport_photo"), ("request_id", request_id.as_str())];
    let photo = acting(app.authed(Method::POST, "/api/v1/documents/upload", &bruno.token), &mia.id)
        .multipart(form(&fields, file_part(pdf(700, 5), "mia.pdf", "application/pdf")))
        .send()
        .await
        .expect("upload");
    let photo = json_of(photo, StatusCode::CREATED).await;
    assert_eq!(photo["citizen_id"].as_str(), Some(mia.id.as_str()), "{photo}");
    let photo_id = text(&photo, "id");

    // Her appointment, in a slot the mission opened for passports.
    let slots = json!({
        "mission_id": w.x,
        "slots": [{ "starts_at": format!("{}T09:00", day(12)), "minutes": 30, "capacity": 3,
                    "service_type_ids": [passport] }],
    });
    json_of(app.post_json("/api/v1/appointments/slots", &w.admin, &slots).await, StatusCode::OK).await;
    let open = format!("/api/v1/appointments/slots?mission_id={}&service_type_id={passport}", w.x);
    let slot = listed(&app, &open, &bruno.token, None).await.remove(0);
    let booking = json!({ "slot_id": slot, "service_type_id": passport, "request_id": request_id });
    let booked = acting(app.authed(Method::POST, "/api/v1/appointments", &bruno.token), &mia.id)
        .json(&booking)
        .send()
        .await
        .expect("POST");
    let booked = json_of(booked, StatusCode::CREATED).await;
    assert_eq!(booked["citizen_id"].as_str(), Some(mia.id.as_str()), "{booked}");
    let appointment_id = text(&booked, "id");

    // Naming her, Bruno's lists are hers; without, his own, which hold nothing of hers.
    for (path, id) in [
        ("/api/v1/requests", &request_id),
        ("/api/v1/documents", &photo_id),
        ("/api/v1/appointments", &appointment_id),
    ] {
        assert!(listed(&app, path, &bruno.token, Some(&mia.id)).await.contains(id), "{path} for Mia");
        assert!(!listed(&app, path, &bruno.token, None).await.contains(id), "{path} as Bruno");
        assert!(listed(&app, path, &mia.token, None).await.contains(id), "{path} as Mia");
    }
    expect_problem(app.get(&mias, &bruno.token).await, 404, "not_found").await;
    let read = acting(app.authed(Method::GET, &mias, &bruno.token), &mia.id).send().await.expect("GET");
    json_of(read, StatusCode::OK).await;
    // Every trace names both: Bruno acted, for Mia (docs/representation.md
    // "Traceability").
    let details = json_of(app.get(&mias, &w.staff_x.token).await, StatusCode::OK).await;
    let by_bruno_for_mia =
        |item: &Value| item["actor"]["id"] == json!(bruno.id) && item["on_behalf_of"] == json!(mia.id);
    assert!(by_bruno_for_mia(&details["stage_history"][0]), "{details}");
    for kind in ["submitted", "document_uploaded", "appointment_booked"] {
        let traced = details["timeline"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|i| i["kind"] == kind && by_bruno_for_mia(i));
        assert!(traced, "{kind} by Bruno for Mia in {details}");
    }
    let audit = format!("/api/v1/audit-events?resource_id={request_id}");
    let audit = json_of(app.get(&audit, &w.admin).await, StatusCode::OK).await;
    assert!(by_bruno_for_mia(&audit["items"][0]), "{audit}");

    // That read is someone else's read of her data: an entry of her access log, in the
    // role of a citizen (docs/data-protection.md "Access log").
    eventually(Duration::from_secs(5), "the read in Mia's access log", || {
        logged(&app, &mia.token, &bruno.id, "request", &request_id)
    })
    .await;

    // He hears of what happened to her, in his own inbox, marked as about her; she, a
    // minor with a parent who hears it, does not.
    let heard = |kind: &'static str| {
        let (app, token, mia) = (&app, bruno.token.clone(), mia.id.clone());
        async move {
            inbox(app, &token).await.iter().any(|n| n["kind"] == kind && n["on_behalf_of"] == json!(mia))
        }
    };
    for kind in ["request_submitted", "appointment_booked"] {
        eventually(Duration::from_secs(20), kind, || heard(kind)).await;
    }
    assert!(inbox(&app, &mia.token).await.is_empty(), "a minor's news goes to her parent");

    // Once the parenthood is ended he reaches nothing of hers, not even her name.
    let end = format!("/api/v1/citizens/{}/representatives/{parenthood}/end", mia.id);
    let ended = app.post_json(&end, &w.staff_x.token, &json!({ "reason": "Custody changed" })).await;
    json_of(ended, StatusCode::OK).await;
    for path in [mias.clone(), format!("/api/v1/citizens/{}", mia.id), "/api/v1/requests".to_owned()] {
        let refused =
            acting(app.authed(Method::GET, &path, &bruno.token), &mia.id).send().await.expect("GET");
        expect_problem(refused, 404, "not_found").await;
    }
}

both!(an_ending_stops_the_representative_on_every_node_at_the_next_call);
async fn an_ending_stops_the_representative_on_every_node_at_the_next_call(backend: Backend) {
    let first = TestApp::spawn(backend).await;
    let second = first.spawn_node().await;
    let w = first.world().await;
    let (alice, bruno) = (&w.citizen_a, &w.citizen_b);
    let fields = [("kind", "old_passport")];
    let evidence = first.upload_ok(&alice.token, &fields, pdf(500, 9), "proxy.pdf", "application/pdf").await;
    let evidence = text(&evidence, "id");
    let proxy =
        represent(&first, &w, &alice.id, &bruno.id, "authorised_representative", None, &evidence).await;
    let profile = format!("/api/v1/citizens/{}", alice.id);
    let read = |node: &TestApp| acting(node.authed(Method::GET, &profile, &bruno.token), &alice.id).send();
    for node in [&first, &second] {
        let body = json_of(read(node).await.expect("GET"), StatusCode::OK).await;
        assert_eq!(body["id"].as_str(), Some(alice.id.as_str()));
    }

    // Ended through the second node; the next call on either node is refused: the
    // mandate is read from the database at each call, nothing of it is kept.
    let end = format!("/api/v1/citizens/{}/representatives/{proxy}/end", alice.id);
    let ended = second.post_json(&end, &w.staff_x.token, &json!({ "reason": "Revoked by Alice" })).await;
    json_of(ended, StatusCode::OK).await;
    for node in [&first, &second] {
        expect_problem(read(node).await.expect("GET"), 404, "not_found").await;
    }
}
