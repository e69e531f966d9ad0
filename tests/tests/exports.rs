//! Exports of a citizen's data end to end on SQLite and on PostgreSQL
//! (docs/data-protection.md "Export", docs/api.md "Exports"): the citizen and an admin of
//! the mission start one, the worker builds it, and the archive downloaded through its
//! signed URL is read with a real zip reader: every part is there (the access log
//! included), the document's file byte for byte, and no internal note. One running export per citizen (409 naming it),
//! another mission's admin and another citizen get 404, staff 403, and the URL expires.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_tests::files::{file_part, form, pdf};
use consular_tests::reqwest::{Method, Response, StatusCode};
use consular_tests::{Backend, TestApp, both, eventually, expect_problem, http_client, text};
use serde_json::{Value, json};
use std::io::Read;
use std::time::Duration;

const MINE: &str = "/api/v1/citizens/me/export";
const NOTE: &str = "INTERNAL-NOTE-d41c7e: applicant seemed nervous";
const MESSAGE: &str = "MESSAGE-8b20f1: I can come on Tuesday";

async fn start(app: &TestApp, path: &str, token: &str) -> Response {
    app.authed(Method::POST, path, token).send().await.expect("POST export")
}

/// Follows the export at `location` until it is ready; returns it.
async fn ready(app: &TestApp, location: &str, token: &str) -> Value {
    let got = std::sync::Mutex::new(Value::Null);
    eventually(Duration::from_secs(20), "the export is ready", || async {
        let response = app.authed(Method::GET, location, token).send().await.expect("GET export");
        assert_eq!(response.status(), StatusCode::OK);
        let body: Value = response.json().await.expect("an export");
        assert_ne!(body["state"], "failed", "{body}");
        let done = body["state"] == "ready";
        *got.lock().unwrap() = body;
        done
    })
    .await;
    got.into_inner().unwrap()
}

fn absolute(app: &TestApp, url: &str) -> String {
    if url.starts_with('/') { app.url(url) } else { url.to_owned() }
}

/// Every entry of the zip archive, by name.
fn unzip(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a zip archive");
    (0..zip.len())
        .map(|i| {
            let mut file = zip.by_index(i).unwrap();
            let mut content = Vec::new();
            file.read_to_end(&mut content).unwrap();
            (file.name().unwrap().into_owned(), content)
        })
        .collect()
}

fn entry<'a>(entries: &'a [(String, Vec<u8>)], name: &str) -> &'a [u8] {
    &entries.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no {name} in the archive")).1
}

fn json_entry(entries: &[(String, Vec<u8>)], name: &str) -> Value {
    serde_json::from_slice(entry(entries, name)).unwrap()
}

both!(a_citizens_archive_holds_every_part_and_no_internal_note);
async fn a_citizens_archive_holds_every_part_and_no_internal_note(backend: Backend) {
    let app = TestApp::spawn_with(backend, |s| s.run_worker = true).await;
    let w = app.world().await;
    let alice = &w.citizen_a;
    let service = text(&w.service, "id");
    let request =
        app.create_at("/api/v1/requests", &alice.token, &json!({ "service_type_id": service })).await;
    let request = text(&request, "id");
    let thread = format!("/api/v1/requests/{request}/messages");
    app.create_at(&thread, &w.staff_x.token, &json!({ "body": MESSAGE })).await;
    app.create_at(&format!("/api/v1/requests/{request}/notes"), &w.staff_x.token, &json!({ "body": NOTE }))
        .await;
    let file = pdf(3000, 11);
    let fields = [("kind", "passport_photo"), ("request_id", request.as_str())];
    let uploaded = app
        .authed(Method::POST, "/api/v1/documents/upload", &alice.token)
        .multipart(form(&fields, file_part(file.clone(), "photo.pdf", "application/pdf")))
        .send()
        .await
        .unwrap();
    assert_eq!(uploaded.status(), StatusCode::CREATED);
    let document = text(&uploaded.json::<Value>().await.unwrap(), "id");

    // A read by staff: an entry of Alice's access log.
    let read = app.authed(Method::GET, &format!("/api/v1/requests/{request}"), &w.staff_x.token).send().await;
    assert_eq!(read.unwrap().status(), StatusCode::OK);

    let started = start(&app, MINE, &alice.token).await;
    assert_eq!(started.status(), StatusCode::ACCEPTED);
    let location = started.headers()["location"].to_str().unwrap().to_owned();
    let export: Value = started.json().await.unwrap();
    assert_eq!(
        (export["state"].as_str(), export["citizen_id"].as_str()),
        (Some("pending"), Some(&*alice.id))
    );
    assert_eq!(location, format!("/api/v1/citizens/me/exports/{}", text(&export, "id")));

    let done = ready(&app, &location, &alice.token).await;
    assert!(done["expires_at"].is_string() && done["size_bytes"].as_u64().unwrap() > 0, "{done}");
    let url = absolute(&app, &text(&done, "download_url"));
    // The URL is the credential: no bearer token.
    let response = http_client().get(&url).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/zip");
    let bytes = response.bytes().await.unwrap();
    assert_eq!(bytes.len() as u64, done["size_bytes"].as_u64().unwrap());

    let entries = unzip(&bytes);
    let names: Vec<&str> = entries.iter().map(|(n, _)| n.as_str()).collect();
    let file_entry = format!("documents/{document}/photo.pdf");
    for expected in [
        "README.txt",
        "profile.json",
        "requests.json",
        "documents.json",
        file_entry.as_str(),
        "appointments.json",
        "notifications.json",
        "access_log.json",
    ] {
        assert!(names.contains(&expected), "{expected} missing from {names:?}");
    }
    assert!(String::from_utf8_lossy(entry(&entries, "README.txt")).contains("internal notes are not part"));
    assert_eq!(json_entry(&entries, "profile.json")["id"], alice.id.as_str());
    let requests = json_entry(&entries, "requests.json");
    assert_eq!(requests[0]["id"], request.as_str());
    assert_eq!(requests[0]["messages"][0]["body"], MESSAGE);
    assert!(!requests[0]["history"].as_array().unwrap().is_empty());
    assert_eq!(json_entry(&entries, "documents.json")[0]["id"], document.as_str());
    assert_eq!(entry(&entries, &file_entry), file.as_slice());
    assert!(json_entry(&entries, "appointments.json").is_array());
    assert!(json_entry(&entries, "notifications.json").is_array());
    let log = json_entry(&entries, "access_log.json");
    let staff_read = log.as_array().unwrap().iter().find(|e| e["by"]["id"] == w.staff_x.id.as_str());
    let staff_read = staff_read.unwrap_or_else(|| panic!("the staff's read is not in {log}"));
    assert_eq!(
        (staff_read["what"].as_str(), staff_read["object_id"].as_str()),
        (Some("request"), Some(&*request))
    );
    // The note's text is nowhere: neither in an entry nor in the archive's bytes.
    for (name, content) in &entries {
        assert!(!String::from_utf8_lossy(content).contains("INTERNAL-NOTE-d41c7e"), "{name}");
    }
    assert!(!String::from_utf8_lossy(&bytes).contains("INTERNAL-NOTE-d41c7e"));

    // The mission's admin given the archive's URL has read Alice's whole record: an
    // `export` entry of her log, naming the export. Her own reads of it made none.
    let export_id = text(&export, "id");
    let theirs = format!("/api/v1/citizens/{}/exports/{export_id}", alice.id);
    let given = app.authed(Method::GET, &theirs, &w.admin_x.token).send().await.unwrap();
    assert_eq!(given.status(), StatusCode::OK);
    assert!(given.json::<Value>().await.unwrap()["download_url"].is_string());
    let log = app.list_all("/api/v1/citizens/me/access-log", &alice.token).await;
    let exported: Vec<&Value> = log.iter().filter(|e| e["what"] == "export").collect();
    assert_eq!(exported.len(), 1, "{log:?}");
    assert_eq!(
        (exported[0]["actor"]["id"].as_str(), exported[0]["object_id"].as_str()),
        (Some(&*text(&w.admin_x.body, "principal_id")), Some(&*export_id))
    );
    assert!(log.iter().all(|e| e["actor"]["id"] != alice.id.as_str()), "{log:?}");
}

both!(one_running_export_per_citizen_and_who_may_export);
async fn one_running_export_per_citizen_and_who_may_export(backend: Backend) {
    // No worker: the first export stays pending.
    let app = TestApp::spawn(backend).await;
    let w = app.world().await;
    let alice = &w.citizen_a;
    let theirs = format!("/api/v1/citizens/{}/export", alice.id);

    let first = start(&app, &theirs, &w.admin_x.token).await;
    assert_eq!(first.status(), StatusCode::ACCEPTED);
    let first: Value = first.json().await.unwrap();
    assert_eq!(first["requested_by"]["kind"], "admin");
    for (path, token) in [(MINE, &alice.token), (&theirs, &w.admin)] {
        let (_, problem) = expect_problem(start(&app, path, token).await, 409, "export_running").await;
        assert_eq!(problem["existing_export_id"], first["id"], "{problem}");
    }

    // Concurrent starts for another citizen: one wins, the others name it.
    let bob = &w.citizen_b;
    let mut starts = Vec::new();
    for _ in 0..6 {
        starts.push(start(&app, MINE, &bob.token));
    }
    let mut won = Vec::new();
    let mut named = Vec::new();
    for response in futures_util::future::join_all(starts).await {
        let status = response.status();
        let body: Value = response.json().await.unwrap();
        match status {
            StatusCode::ACCEPTED => won.push(text(&body, "id")),
            StatusCode::CONFLICT => named.push(text(&body, "existing_export_id")),
            other => panic!("{other}: {body}"),
        }
    }
    assert_eq!(won.len(), 1, "one of six concurrent exports starts");
    assert!(named.iter().all(|id| *id == won[0]), "{named:?} vs {won:?}");

    // Another mission's admin, another citizen and staff of another mission: 404; staff
    // of the mission: 403; and none of them sees the export.
    let read = format!("/api/v1/citizens/{}/exports/{}", alice.id, text(&first, "id"));
    let mine = format!("/api/v1/citizens/me/exports/{}", text(&first, "id"));
    for (path, token) in [(&theirs, &w.admin_y.token), (&theirs, &w.staff_y.token), (&theirs, &bob.token)] {
        expect_problem(start(&app, path, token).await, 404, "not_found").await;
    }
    expect_problem(start(&app, &theirs, &w.staff_x.token).await, 403, "insufficient_scope").await;
    expect_problem(start(&app, MINE, &w.staff_x.token).await, 403, "insufficient_scope").await;
    for (path, token) in [(&read, &w.admin_y.token), (&read, &bob.token), (&mine, &bob.token)] {
        let response = app.authed(Method::GET, path, token).send().await.unwrap();
        expect_problem(response, 404, "not_found").await;
    }
    // The citizen and the admins of the mission read it.
    for (path, token) in [(&mine, &alice.token), (&read, &w.admin_x.token), (&read, &w.admin)] {
        let response = app.authed(Method::GET, path, token).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let body: Value = response.json().await.unwrap();
        assert_eq!((body["state"].as_str(), body["download_url"].as_str()), (Some("pending"), None));
    }
}

both!(the_download_url_expires);
async fn the_download_url_expires(backend: Backend) {
    let app = TestApp::spawn_with(backend, |s| {
        s.run_worker = true;
        // Two seconds, not one: a URL's expiry is a whole second, so one second could leave
        // a busy machine no time to use it at all.
        s.download_url_ttl_secs = 2;
    })
    .await;
    let w = app.world().await;
    let started = start(&app, MINE, &w.citizen_a.token).await;
    assert_eq!(started.status(), StatusCode::ACCEPTED);
    let location = started.headers()["location"].to_str().unwrap().to_owned();
    let done = ready(&app, &location, &w.citizen_a.token).await;
    let url = absolute(&app, &text(&done, "download_url"));
    assert_eq!(http_client().get(&url).send().await.unwrap().status(), StatusCode::OK);
    // A tampered signature is refused at once.
    let tampered = format!("{}x", url);
    expect_problem(http_client().get(&tampered).send().await.unwrap(), 403, "invalid_download_url").await;
    let expires_at = time::OffsetDateTime::parse(
        done["download_url_expires_at"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    // Past its expiry (whole seconds, at most two from now), the URL is refused.
    eventually(Duration::from_secs(6), "the URL expires", || async {
        time::OffsetDateTime::now_utc() > expires_at + time::Duration::milliseconds(100)
    })
    .await;
    let (_, problem) =
        expect_problem(http_client().get(&url).send().await.unwrap(), 403, "invalid_download_url").await;
    assert!(problem["detail"].as_str().unwrap().contains("expired"), "{problem}");
    // Reading the export again gives a new URL, which works.
    let again = ready(&app, &location, &w.citizen_a.token).await;
    let url = absolute(&app, &text(&again, "download_url"));
    assert_eq!(http_client().get(&url).send().await.unwrap().status(), StatusCode::OK);
}
