//! Control characters in text (docs/api.md "Text"): NUL and the other control characters
//! are refused in every text field (422 `control_character` at the field's pointer) and
//! every query parameter (400 `invalid_query` at `/query/<name>`), the same on SQLite and
//! PostgreSQL (which cannot store NUL at all: before this rule, a 500), and nothing is
//! written; tab and line breaks stay allowed in multi-line texts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[allow(dead_code)]
mod requests_support;

use consular_tests::files::{file_part, form, pdf};
use consular_tests::reqwest::{Method, StatusCode};
use consular_tests::{Backend, TestApp, both, expect_problem, header, service_body};
use requests_support::*;
use serde_json::{Value, json};

const DOCUMENTS: &str = "/api/v1/documents";
const AUDIT_EVENTS: &str = "/api/v1/audit-events";

/// Checks a 422 `validation_failed` whose only error is `control_character` at `pointer`.
async fn refused(response: consular_tests::reqwest::Response, pointer: &str) {
    let (_, problem) = expect_problem(response, 422, "validation_failed").await;
    let errors: Vec<(&str, &str)> = problem["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["pointer"].as_str().unwrap(), e["code"].as_str().unwrap()))
        .collect();
    assert_eq!(errors, [(pointer, "control_character")], "{problem}");
}

/// Checks a 400 `invalid_query` naming `/query/<name>` with `control_character`.
async fn refused_query(app: &TestApp, token: &str, path: &str, name: &str, value: &str) {
    let response = app.get(&with_query(path, &[(name, value)]), token).await;
    let (_, problem) = expect_problem(response, 400, "invalid_query").await;
    assert_eq!(problem["errors"][0]["pointer"], format!("/query/{name}"), "{problem}");
    assert_eq!(problem["errors"][0]["code"], "control_character", "{problem}");
}

async fn items(app: &TestApp, token: &str, path: &str) -> Vec<Value> {
    list_all(app, token, path).await
}

async fn nul_in_texts_is_refused_and_nothing_is_written(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let (admin, staff) = (&cast.admin, &cast.staff.token);
    let id = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
    let audit_before = items(&app, admin, &with_query(AUDIT_EVENTS, &[("limit", "100")])).await.len();

    // A message and a note: `\u0000` in the JSON, found once the string is unescaped.
    let messages = at(&id, "/messages");
    for body in ["Hello\u{0}world", "\u{0}", "bell\u{7}", "c1\u{85}", "del\u{7f}"] {
        refused(app.post_json(&messages, &cast.citizen.token, &json!({ "body": body })).await, "/body").await;
    }
    refused(app.post_json(&at(&id, "/notes"), staff, &json!({ "body": "note\u{0}" })).await, "/body").await;
    assert!(items(&app, staff, &messages).await.is_empty(), "no message was written");
    assert!(items(&app, staff, &at(&id, "/notes")).await.is_empty(), "no note was written");

    // A status change's reason (the rejection's too): the request does not change.
    let (etag, before) = read(&app, staff, &id).await;
    for (status, reason) in [("in_review", "Looks\u{0}fine"), ("rejected", "Rejected\u{0}")] {
        let body = json!({ "status": status, "reason": reason });
        refused(patch(&app, staff, &id, Some(&etag), &body).await, "/reason").await;
    }
    assert_eq!(read(&app, staff, &id).await, (etag, before), "the request is unchanged");

    // A service description, its stages' and a change of it: no service type is written.
    let mut service = service_body("visa_nul");
    service["description"] = json!("Visa\u{0}");
    refused(app.post_json(SERVICES, admin, &service).await, "/description").await;
    let mut service = service_body("visa_nul");
    service["stages"][1]["description"] = json!("Print\u{0}");
    refused(app.post_json(SERVICES, admin, &service).await, "/stages/1/description").await;
    let update = json!({ "description": "Renewal\u{0}" });
    let path = format!("{SERVICES}/{}", cast.service);
    refused(app.patch_json(&path, admin, Some("*"), &update).await, "/description").await;
    let services = items(&app, admin, SERVICES).await;
    assert_eq!(services.len(), 1, "{services:?}");
    assert_eq!(services[0]["description"], "A consular service");

    // A document's rejection reason: the document stays uploaded.
    // (A type of the catalog that requires the kind, so that it may be uploaded.)
    created(&app, SERVICES, admin, &service_body("photo_check")).await;
    let uploaded = app
        .upload_ok(
            &cast.citizen.token,
            &[("kind", "passport_photo")],
            pdf(4000, 1),
            "photo.pdf",
            "application/pdf",
        )
        .await;
    let document = format!("{DOCUMENTS}/{}", text(&uploaded, "id"));
    let reject = json!({ "status": "rejected", "reason": "Blurred\u{0}" });
    refused(app.patch_json(&format!("{document}/verify"), staff, Some("\"1\""), &reject).await, "/reason")
        .await;
    let (status, kept) = json_of(app.get(&document, staff).await).await;
    assert_eq!((status, &kept["status"], &kept["version"]), (StatusCode::OK, &json!("uploaded"), &json!(1)));

    // The upload form's text parts: nothing stored.
    let upload = form(&[("kind", "passport\u{0}photo")], file_part(pdf(4000, 2), "p.pdf", "application/pdf"));
    refused(app.upload(&cast.citizen.token, upload).await, "/kind").await;
    let documents = items(&app, staff, &with_query(DOCUMENTS, &[("citizen_id", &cast.citizen.id)])).await;
    assert_eq!(documents.len(), 1, "only the first upload is there: {documents:?}");

    // Nothing refused was audited, so nothing was written: newest first, the audit log
    // holds only what was accepted since the request was submitted.
    let audit_after = items(&app, admin, &with_query(AUDIT_EVENTS, &[("limit", "100")])).await;
    let since: Vec<(&str, &str)> = audit_after[..audit_after.len() - audit_before]
        .iter()
        .map(|e| (e["action"].as_str().unwrap(), e["resource_type"].as_str().unwrap()))
        .collect();
    assert_eq!(
        since,
        [("download_url_issued", "document"), ("created", "document"), ("created", "service_type")],
        "{audit_after:?}"
    );
}
both!(nul_in_texts_is_refused_and_nothing_is_written);

async fn nul_in_query_parameters_is_400_naming_them(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let admin = &cast.admin;
    // The filters that reached the database as text: a 500 on PostgreSQL, a silently
    // truncated `q` on SQLite.
    refused_query(&app, admin, CITIZENS, "q", "Ali\u{0}").await;
    refused_query(&app, admin, CITIZENS, "q", "\u{0}").await;
    refused_query(&app, admin, AUDIT_EVENTS, "resource_type", "mission\u{0}").await;
    refused_query(&app, admin, DOCUMENTS, "kind", "passport_photo\u{0}").await;
    // Every other control character as well, in any list's parameters.
    refused_query(&app, admin, CITIZENS, "q", "Ali\nce").await;
    refused_query(&app, admin, REQUESTS, "cursor", "\u{1b}").await;
    // The same filter without it works.
    let found = items(&app, admin, &with_query(CITIZENS, &[("q", "Ali")])).await;
    assert_eq!(found.len(), 1, "{found:?}");
}
both!(nul_in_query_parameters_is_400_naming_them);

async fn tabs_and_line_breaks_stay_allowed_in_multi_line_texts(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let cast = cast(&app).await;
    let id = text(&submit_own(&app, &cast.citizen, &cast.service).await, "id");
    let body = "Dear officer,\r\n\tmy passport photo is attached.\nRegards";
    let message = post(&app, &cast.citizen.token, &id, "messages", body).await;
    assert_eq!(message["body"], body);
    let listed = items(&app, &cast.staff.token, &at(&id, "/messages")).await;
    assert_eq!(listed, [message], "stored and read back as sent");
    let changed = change(&app, &cast.staff.token, &id, &to("in_review", "Checking:\n\t- the photo")).await;
    assert_eq!(changed["status"], "in_review");
    // A single-line field still refuses them (the domain's rule), with the same code.
    let response = app
        .patch_json(
            &format!("{SERVICES}/{}", cast.service),
            &cast.admin,
            Some("*"),
            &json!({ "name": "A\tB" }),
        )
        .await;
    refused(response, "/name").await;
}
both!(tabs_and_line_breaks_stay_allowed_in_multi_line_texts);

async fn oauth_form_values_with_control_characters_are_invalid_request(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let response = app
        .request(Method::POST, "/api/v1/auth/token")
        .basic_auth(&app.admin_id, Some(&app.admin_secret))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("grant_type=client_credentials&scope=admin%00")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    assert!(header(response.headers(), "content-type").starts_with("application/json"));
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"], "invalid_request", "{body}");
    assert!(body["error_description"].as_str().unwrap().contains("scope"), "{body}");
}
both!(oauth_form_values_with_control_characters_are_invalid_request);
