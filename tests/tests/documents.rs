//! `/api/v1/documents` end to end on SQLite + local files and on PostgreSQL
//! (docs/documents.md, docs/api.md "Documents"): upload by a citizen and by staff, lists,
//! the metadata with its download URL and the 303 to it, the signed URL followed with a
//! plain HTTP client (bytes, headers, ranges; tampered and expired URLs), verification,
//! rejection and re-upload, deletion, the checklist and the approval gate in the request
//! workflow, idempotent uploads, isolation between citizens and missions, and every
//! refusal of an upload (413 mid-stream, 415 type spoofing, 422 empty, invalid parts)
//! leaving no blob behind.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[allow(dead_code)]
mod requests_support;

use consular_tests::reqwest::{Method, Response, StatusCode};
use consular_tests::{Backend, TestApp, both, expect_problem, header, http_client, service_body};
use requests_support::*;
use serde_json::{Value, json};
use std::path::PathBuf;

// ------------------------------------------------------------------------------ helpers

const DOCUMENTS: &str = "/api/v1/documents";
const BOUNDARY: &str = "consular-test-7d1f0a";

/// One part of a multipart form.
enum Part<'a> {
    Text(&'a str, &'a str),
    /// The `file` part: its file name, declared type and bytes.
    File(&'a str, Option<&'a str>, &'a [u8]),
}

fn form(parts: &[Part]) -> Vec<u8> {
    let mut body = Vec::new();
    for part in parts {
        body.extend_from_slice(format!("--{BOUNDARY}\r\n").as_bytes());
        match part {
            Part::Text(name, value) => {
                body.extend_from_slice(
                    format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes(),
                );
                body.extend_from_slice(value.as_bytes());
            }
            Part::File(file_name, content_type, bytes) => {
                body.extend_from_slice(
                    format!("Content-Disposition: form-data; name=\"file\"; filename=\"{file_name}\"\r\n")
                        .as_bytes(),
                );
                if let Some(content_type) = content_type {
                    body.extend_from_slice(format!("Content-Type: {content_type}\r\n").as_bytes());
                }
                body.extend_from_slice(b"\r\n");
                body.extend_from_slice(bytes);
            }
        }
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    body
}

async fn upload_with(app: &TestApp, token: &str, parts: &[Part<'_>], key: Option<&str>) -> Response {
    let mut request = app
        .authed(Method::POST, "/api/v1/documents/upload", token)
        .header("content-type", format!("multipart/form-data; boundary={BOUNDARY}"))
        .body(form(parts));
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    request.send().await.expect("upload")
}

/// A PDF of `len` bytes.
fn pdf(len: usize) -> Vec<u8> {
    let mut bytes = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n".to_vec();
    let mut n: u32 = 0;
    while bytes.len() < len {
        n = n.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        bytes.push((n >> 16) as u8);
    }
    bytes.truncate(len);
    bytes
}

const PNG: &[u8] =
    b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89\0\0\0\0IEND";

fn sha256_hex(bytes: &[u8]) -> String {
    let digest = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, bytes);
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Uploads `bytes` as `kind` (attached to `request` when given, for `citizen` when
/// given); panics unless 201 (checks `Location` and `ETag`). The document.
async fn upload(
    app: &TestApp,
    token: &str,
    kind: &str,
    request: Option<&str>,
    citizen: Option<&str>,
    file: Part<'_>,
) -> Value {
    let mut parts = vec![Part::Text("kind", kind)];
    if let Some(request) = request {
        parts.push(Part::Text("request_id", request));
    }
    if let Some(citizen) = citizen {
        parts.push(Part::Text("citizen_id", citizen));
    }
    parts.push(file);
    let response = upload_with(app, token, &parts, None).await;
    let (location, etag) = (header(response.headers(), "location"), header(response.headers(), "etag"));
    let document = expect(response, StatusCode::CREATED, "upload").await;
    assert_eq!(location, format!("{DOCUMENTS}/{}", text(&document, "id")));
    assert_eq!(etag, "\"1\"");
    document
}

/// The blobs stored under `documents/` in the test's blob directory.
fn stored_blobs(app: &TestApp) -> Vec<PathBuf> {
    let root = app.settings.storage_url.strip_prefix("file://").expect("a local store");
    match std::fs::read_dir(PathBuf::from(root).join("documents")) {
        Ok(entries) => entries.map(|e| e.expect("an entry").path()).collect(),
        Err(_) => Vec::new(),
    }
}

/// Mission X with a passport renewal type requiring two kinds, a staff member and two
/// citizens of X, a staff member of mission Y, and a request of Alice's.
struct World {
    admin: String,
    mission: String,
    staff: Person,
    alice: Person,
    bob: Person,
    foreign_staff: Person,
    request: String,
}

async fn world(app: &TestApp) -> World {
    let admin = app.admin_token().await;
    let other = requests_support::mission(app, &admin, "fr-lyon").await;
    let mission = mission(app, &admin, "fr-paris").await;
    let service = text(&created(app, SERVICES, &admin, &service_body("passport_renewal")).await, "id");
    let staff = staff(app, &admin, &mission, "Xavier Staff", &[service.as_str()]).await;
    let foreign_staff = requests_support::staff(app, &admin, &other, "Yvonne Staff", &[]).await;
    let alice = citizen(app, &admin, &mission, "X0000A").await;
    let bob = citizen(app, &admin, &mission, "X0000B").await;
    let request = text(&submit_own(app, &alice, &service).await, "id");
    World { admin, mission, staff, alice, bob, foreign_staff, request }
}

/// `GET /api/v1/documents/{id}` as JSON; panics unless 200. `(ETag, body)`.
async fn fetch(app: &TestApp, token: &str, id: &str) -> (String, Value) {
    let response = app.get(&format!("{DOCUMENTS}/{id}"), token).await;
    let etag = header(response.headers(), "etag");
    (etag, expect(response, StatusCode::OK, "GET document").await)
}

/// The absolute form of a download URL (relative ones are relative to the API).
fn absolute(app: &TestApp, url: &str) -> String {
    if url.starts_with('/') { app.url(url) } else { url.to_owned() }
}

async fn decide(app: &TestApp, token: &str, id: &str, etag: Option<&str>, body: &Value) -> Response {
    app.patch_json(&format!("{DOCUMENTS}/{id}/verify"), token, etag, body).await
}

/// The `{kind: state}` of a request's checklist, with reasons.
async fn checklist(app: &TestApp, token: &str, request: &str) -> Vec<Value> {
    let (_, details) = read(app, token, request).await;
    details["required_documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| json!([line["kind"], line["state"], line["reason"]]))
        .collect()
}

async fn delete(app: &TestApp, token: &str, id: &str) -> Response {
    app.authed(Method::DELETE, &format!("{DOCUMENTS}/{id}"), token).send().await.expect("DELETE")
}

// -------------------------------------------------------------------------------- tests

both!(upload_download_verify_and_approve);
async fn upload_download_verify_and_approve(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w = world(&app).await;
    let photo_bytes = pdf(70_000);
    let photo = upload(
        &app,
        &w.alice.token,
        "passport_photo",
        Some(&w.request),
        None,
        Part::File("photo.pdf", Some("application/pdf"), &photo_bytes),
    )
    .await;
    assert_eq!(photo["status"], "uploaded");
    assert_eq!(photo["scan"], "not_configured");
    assert_eq!(photo["media_type"], "application/pdf");
    assert_eq!(photo["size_bytes"], 70_000);
    assert_eq!(photo["sha256"], sha256_hex(&photo_bytes));
    assert_eq!(photo["uploaded_by"], w.alice.actor("citizen"));
    assert_eq!(
        (photo["request_id"].as_str(), photo["citizen_id"].as_str()),
        (Some(&*w.request), Some(&*w.alice.id))
    );
    // Staff upload for Alice; the other required kind, as a PNG.
    let old = upload(
        &app,
        &w.staff.token,
        "old_passport",
        Some(&w.request),
        Some(&w.alice.id),
        Part::File("old.png", None, PNG),
    )
    .await;
    assert_eq!(
        (old["media_type"].as_str(), old["uploaded_by"]["kind"].as_str()),
        (Some("image/png"), Some("staff"))
    );

    // Lists: the request's documents newest first; the citizen's own; staff filters.
    let of_request = list_all(&app, &w.alice.token, &format!("{REQUESTS}/{}/documents", w.request)).await;
    assert_eq!(ids(&of_request), [text(&old, "id"), text(&photo, "id")]);
    assert_eq!(list_all(&app, &w.alice.token, DOCUMENTS).await.len(), 2);
    let pending = list_all(
        &app,
        &w.staff.token,
        &with_query(DOCUMENTS, &[("kind", "old_passport"), ("status", "uploaded")]),
    )
    .await;
    assert_eq!(ids(&pending), [text(&old, "id")]);

    // The metadata with its URL, and the file through the URL with a plain client.
    let (etag, got) = fetch(&app, &w.alice.token, &text(&photo, "id")).await;
    assert_eq!(etag, "\"1\"");
    let url = absolute(&app, &text(&got, "download_url"));
    assert!(got["download_url_expires_at"].is_string());
    let plain = http_client();
    let response = plain.get(&url).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let h = response.headers().clone();
    assert_eq!(header(&h, "content-type"), "application/pdf");
    assert_eq!(
        header(&h, "content-disposition"),
        "attachment; filename=\"photo.pdf\"; filename*=UTF-8''photo.pdf"
    );
    assert_eq!(header(&h, "x-content-type-options"), "nosniff");
    assert_eq!(header(&h, "etag"), format!("\"{}\"", sha256_hex(&photo_bytes)));
    assert_eq!(
        (header(&h, "accept-ranges").as_str(), header(&h, "cache-control").as_str()),
        ("bytes", "no-store")
    );
    let bytes = response.bytes().await.unwrap();
    assert_eq!(sha256_hex(&bytes), sha256_hex(&photo_bytes));
    // One range; past the end.
    let partial = plain.get(&url).header("range", "bytes=10-19").send().await.unwrap();
    assert_eq!(partial.status(), StatusCode::PARTIAL_CONTENT);
    assert_eq!(header(partial.headers(), "content-range"), "bytes 10-19/70000");
    assert_eq!(&partial.bytes().await.unwrap()[..], &photo_bytes[10..20]);
    let past = plain.get(&url).header("range", "bytes=70000-").send().await.unwrap();
    let (h, _) = expect_problem(past, 416, "range_not_satisfiable").await;
    assert_eq!(header(&h, "content-range"), "bytes */70000");
    // A tampered URL is refused before anything is read.
    let tampered = url.replace("version=1", "version=2");
    expect_problem(plain.get(&tampered).send().await.unwrap(), 403, "invalid_download_url").await;
    let forged = format!("{}x", url);
    expect_problem(plain.get(&forged).send().await.unwrap(), 403, "invalid_download_url").await;
    // Asking for the file itself: 303 to a URL that works.
    let see_other = app
        .authed(Method::GET, &format!("{DOCUMENTS}/{}", text(&photo, "id")), &w.alice.token)
        .header("accept", "application/pdf")
        .send()
        .await
        .unwrap();
    assert_eq!(see_other.status(), StatusCode::SEE_OTHER);
    let location = absolute(&app, &header(see_other.headers(), "location"));
    assert_eq!(plain.get(&location).send().await.unwrap().bytes().await.unwrap().len(), 70_000);

    // The checklist, and the approval gate refusing while documents are not verified.
    assert_eq!(
        checklist(&app, &w.staff.token, &w.request).await,
        [json!(["passport_photo", "uploaded", null]), json!(["old_passport", "uploaded", null])]
    );
    change(&app, &w.staff.token, &w.request, &to("in_review", "documents in")).await;
    let (etag, _) = read(&app, &w.staff.token, &w.request).await;
    let refused = patch(&app, &w.staff.token, &w.request, Some(&etag), &to("approved", "ok")).await;
    let (_, problem) = expect_problem(refused, 409, "required_documents_missing").await;
    assert_eq!(
        consular_tests::error_pointers(&problem),
        ["/required_documents/passport_photo", "/required_documents/old_passport"]
    );

    // Verify one, reject the other; the citizen cannot decide; If-Match is required.
    let photo_id = text(&photo, "id");
    expect_problem(
        decide(&app, &w.alice.token, &photo_id, Some("\"1\""), &json!({"status": "verified"})).await,
        403,
        "insufficient_scope",
    )
    .await;
    expect_problem(
        decide(&app, &w.staff.token, &photo_id, None, &json!({"status": "verified"})).await,
        428,
        "precondition_required",
    )
    .await;
    let verified =
        decide(&app, &w.staff.token, &photo_id, Some("\"1\""), &json!({"status": "verified"})).await;
    assert_eq!(header(verified.headers(), "etag"), "\"2\"");
    assert_eq!(expect(verified, StatusCode::OK, "verify").await["status"], "verified");
    let again = decide(&app, &w.staff.token, &photo_id, Some("\"2\""), &json!({"status": "verified"})).await;
    expect_problem(again, 409, "illegal_transition").await;
    let old_id = text(&old, "id");
    let (_, problem) = expect_problem(
        decide(&app, &w.staff.token, &old_id, Some("\"1\""), &json!({"status": "rejected"})).await,
        422,
        "validation_failed",
    )
    .await;
    assert_eq!(consular_tests::error_pointers(&problem), ["/reason"]);
    let rejected = decide(
        &app,
        &w.staff.token,
        &old_id,
        Some("\"1\""),
        &json!({"status": "rejected", "reason": "Too blurred"}),
    )
    .await;
    let rejected = expect(rejected, StatusCode::OK, "reject").await;
    assert_eq!(
        (rejected["status"].as_str(), rejected["rejection_reason"].as_str()),
        (Some("rejected"), Some("Too blurred"))
    );
    assert_eq!(
        checklist(&app, &w.alice.token, &w.request).await,
        [json!(["passport_photo", "verified", null]), json!(["old_passport", "rejected", "Too blurred"])]
    );

    // Re-upload: a rejected kind may come again, a verified or pending one not.
    let again = upload_with(
        &app,
        &w.alice.token,
        &[
            Part::Text("kind", "passport_photo"),
            Part::Text("request_id", &w.request),
            Part::File("p.pdf", None, &pdf(100)),
        ],
        None,
    )
    .await;
    let (_, problem) = expect_problem(again, 409, "document_already_present").await;
    assert!(problem["detail"].as_str().unwrap().contains("verified"), "{problem}");
    let renewed = upload(
        &app,
        &w.alice.token,
        "old_passport",
        Some(&w.request),
        None,
        Part::File("old2.png", Some("image/png"), PNG),
    )
    .await;
    let pending = upload_with(
        &app,
        &w.alice.token,
        &[
            Part::Text("kind", "old_passport"),
            Part::Text("request_id", &w.request),
            Part::File("old3.png", None, PNG),
        ],
        None,
    )
    .await;
    let (_, problem) = expect_problem(pending, 409, "document_already_present").await;
    assert!(problem["detail"].as_str().unwrap().contains("uploaded"), "{problem}");
    let renewed_id = text(&renewed, "id");
    expect(
        decide(&app, &w.staff.token, &renewed_id, Some("\"1\""), &json!({"status": "verified"})).await,
        StatusCode::OK,
        "verify",
    )
    .await;

    // Every required kind verified: approval goes through.
    change(&app, &w.staff.token, &w.request, &to("approved", "all checks passed")).await;
    let (_, details) = read(&app, &w.alice.token, &w.request).await;
    let kinds: Vec<&str> = details["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["kind"].as_str())
        .filter(|k| k.starts_with("document_"))
        .collect();
    assert_eq!(kinds.iter().filter(|k| **k == "document_uploaded").count(), 3, "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "document_verified").count(), 2, "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "document_rejected").count(), 1, "{kinds:?}");

    // The outbox has the document events under the request; the audit log the URLs issued.
    let events = event_kinds(&app, &w.request).await;
    for kind in ["document.uploaded", "document.verified", "document.rejected"] {
        assert!(events.iter().any(|e| e == kind), "{kind} in {events:?}");
    }
    let audit = list_all(
        &app,
        &w.admin,
        &with_query("/api/v1/audit-events", &[("resource_type", "document"), ("resource_id", &photo_id)]),
    )
    .await;
    let actions: Vec<&str> = audit.iter().filter_map(|e| e["action"].as_str()).collect();
    assert_eq!(actions.iter().filter(|a| **a == "download_url_issued").count(), 2, "{actions:?}");
    assert!(actions.contains(&"created") && actions.contains(&"status_changed"), "{actions:?}");
}

both!(refused_uploads_keep_nothing);
async fn refused_uploads_keep_nothing(backend: Backend) {
    let app = TestApp::spawn_with(backend, |s| s.max_upload_bytes = 64 * 1024).await;
    let w = world(&app).await;
    let token = &w.alice.token;
    // 413: refused while streaming, long before the end of a 1 MiB body.
    let big: &'static [u8] = Box::leak(pdf(1024 * 1024).into_boxed_slice());
    let (_, problem) = expect_problem(
        upload_with(
            &app,
            token,
            &[Part::Text("kind", "passport_photo"), Part::File("big.pdf", None, big)],
            None,
        )
        .await,
        413,
        "payload_too_large",
    )
    .await;
    assert!(problem["detail"].as_str().unwrap().contains("65536"), "{problem}");
    // 415: a PNG named .pdf; HTML declared as a PNG; not a multipart body at all.
    let (_, problem) = expect_problem(
        upload_with(
            &app,
            token,
            &[Part::Text("kind", "passport_photo"), Part::File("scan.pdf", None, PNG)],
            None,
        )
        .await,
        415,
        "unsupported_media_type",
    )
    .await;
    assert!(problem["detail"].as_str().unwrap().contains("image/png"), "{problem}");
    let html: &'static [u8] = b"<!DOCTYPE html><html><body><script>alert(1)</script></body></html>";
    let (_, problem) = expect_problem(
        upload_with(
            &app,
            token,
            &[Part::Text("kind", "passport_photo"), Part::File("photo.png", Some("image/png"), html)],
            None,
        )
        .await,
        415,
        "unsupported_media_type",
    )
    .await;
    assert!(
        problem["detail"].as_str().unwrap().contains("application/pdf, image/jpeg, image/png"),
        "{problem}"
    );
    let json_body =
        app.post_json("/api/v1/documents/upload", token, &json!({ "kind": "passport_photo" })).await;
    expect_problem(json_body, 415, "unsupported_media_type").await;
    // The upload path is not a document id: other methods are 405, not 404.
    let (h, _) =
        expect_problem(app.get("/api/v1/documents/upload", token).await, 405, "method_not_allowed").await;
    assert_eq!(header(&h, "allow"), "POST");
    // 422: empty; the kind missing, unknown or not required by the request; an invalid
    // part after the file (documents_part_order.rs has the orders); no file.
    let (_, problem) = expect_problem(
        upload_with(
            &app,
            token,
            &[Part::Text("kind", "passport_photo"), Part::File("empty.pdf", None, b"")],
            None,
        )
        .await,
        422,
        "empty_file",
    )
    .await;
    assert_eq!(consular_tests::error_pointers(&problem), ["/file"]);
    let cases: Vec<(Vec<Part<'static>>, &str)> = vec![
        (vec![Part::File("a.pdf", None, PNG)], "/kind"),
        (vec![Part::Text("kind", "tax_return"), Part::File("a.png", None, PNG)], "/kind"),
        // Refused before the file, over the size limit: the form's refusal, not 413.
        (vec![Part::Text("kind", "tax_return"), Part::File("big.pdf", None, big)], "/kind"),
        (
            vec![
                Part::Text("kind", "passport_photo"),
                Part::File("a.png", None, PNG),
                Part::Text("citizen_id", "x"),
            ],
            "/citizen_id",
        ),
        (vec![Part::Text("kind", "passport_photo")], "/file"),
        (
            vec![
                Part::Text("kind", "passport_photo"),
                Part::Text("colour", "blue"),
                Part::File("a.png", None, PNG),
            ],
            "/colour",
        ),
    ];
    for (parts, pointer) in cases {
        let (_, problem) =
            expect_problem(upload_with(&app, token, &parts, None).await, 422, "validation_failed").await;
        assert_eq!(consular_tests::error_pointers(&problem), [pointer]);
    }
    // Nothing of any refusal is stored: no document, no blob.
    assert!(list_all(&app, token, DOCUMENTS).await.is_empty());
    assert!(stored_blobs(&app).is_empty(), "{:?}", stored_blobs(&app));

    // A traversal-looking name is kept as its last segment, as metadata only.
    let kept = upload(
        &app,
        token,
        "passport_photo",
        None,
        None,
        Part::File("../../etc/passwd.pdf", None, &pdf(2000)),
    )
    .await;
    assert_eq!(kept["file_name"], "passwd.pdf");
    let blobs = stored_blobs(&app);
    assert_eq!(blobs.len(), 1);
    assert!(!blobs[0].to_string_lossy().contains("passwd"), "{blobs:?}");
}

both!(path_like_file_names_are_judged_by_the_segment_kept);
async fn path_like_file_names_are_judged_by_the_segment_kept(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w = world(&app).await;
    let token = &w.alice.token;
    // Sent as the client wrote them (a backslash is escaped in the quoted filename); the
    // extension, if any, is read from the last segment, the one kept, never from a
    // directory: `x.y\scan` has none, `../../etc/passwd` neither.
    let cases = [
        ("../../etc/passwd", "passwd"),
        ("C:\\\\Users\\\\x.y\\\\scan", "scan"),
        ("C:\\\\Users\\\\x\\\\scan.pdf", "scan.pdf"),
        ("..\\\\backup.2024/passport", "passport"),
    ];
    for (sent, kept) in cases {
        let document =
            upload(&app, token, "passport_photo", None, None, Part::File(sent, None, &pdf(3000))).await;
        assert_eq!(document["file_name"], kept, "{sent}");
        assert_eq!(document["media_type"], "application/pdf", "{sent}");
        // Deleted, so that the kind may be uploaded again by the next case.
        let response = delete(&app, token, &text(&document, "id")).await;
        assert_eq!(response.status(), StatusCode::NO_CONTENT, "{sent}");
    }
    // The kept segment still has to agree with the bytes.
    let response = upload_with(
        &app,
        token,
        &[Part::Text("kind", "passport_photo"), Part::File("scans.pdf/photo.png", None, &pdf(3000))],
        None,
    )
    .await;
    expect_problem(response, 415, "unsupported_media_type").await;
    assert!(stored_blobs(&app).is_empty(), "{:?}", stored_blobs(&app));
}

both!(a_deleted_document_keeps_its_history_in_the_timeline);
async fn a_deleted_document_keeps_its_history_in_the_timeline(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w = world(&app).await;
    let bytes = pdf(5000);
    let file = || Part::File("photo.pdf", None, &bytes);
    // Alice uploads a photo, staff reject it, Alice deletes it; staff verify her old
    // passport, then delete it.
    let photo = upload(&app, &w.alice.token, "passport_photo", Some(&w.request), None, file()).await;
    let photo_id = text(&photo, "id");
    let rejected = json!({"status": "rejected", "reason": "The photo is blurred"});
    expect(decide(&app, &w.staff.token, &photo_id, Some("\"1\""), &rejected).await, StatusCode::OK, "reject")
        .await;
    assert_eq!(delete(&app, &w.alice.token, &photo_id).await.status(), StatusCode::NO_CONTENT);
    let old = upload(&app, &w.staff.token, "old_passport", Some(&w.request), Some(&w.alice.id), file()).await;
    let old_id = text(&old, "id");
    let verified = json!({"status": "verified"});
    expect(decide(&app, &w.staff.token, &old_id, Some("\"1\""), &verified).await, StatusCode::OK, "verify")
        .await;
    assert_eq!(delete(&app, &w.staff.token, &old_id).await.status(), StatusCode::NO_CONTENT);

    // The citizen's view: every item of both documents, oldest first, ending with their
    // deletion by whoever deleted them; the checklist no longer counts them.
    let (_, details) = read(&app, &w.alice.token, &w.request).await;
    let items: Vec<Value> = details["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["kind"].as_str().is_some_and(|k| k.starts_with("document_")))
        .map(|i| json!([i["kind"], i["item_id"], i["document_kind"], i["actor"]["id"], i["text"]]))
        .collect();
    let (alice, staff) = (w.alice.id.as_str(), w.staff.id.as_str());
    let expected = [
        json!(["document_uploaded", photo_id, "passport_photo", alice, null]),
        json!(["document_rejected", photo_id, "passport_photo", staff, "The photo is blurred"]),
        json!(["document_deleted", photo_id, "passport_photo", alice, null]),
        json!(["document_uploaded", old_id, "old_passport", staff, null]),
        json!(["document_verified", old_id, "old_passport", staff, null]),
        json!(["document_deleted", old_id, "old_passport", staff, null]),
    ];
    assert_eq!(items, expected, "{:#}", details["timeline"]);
    let instants: Vec<_> =
        details["timeline"].as_array().unwrap().iter().map(|i| consular_tests::instant(&i["at"])).collect();
    assert!(instants.windows(2).all(|w| w[0] <= w[1]), "oldest first: {instants:?}");
    assert_eq!(
        checklist(&app, &w.alice.token, &w.request).await,
        [json!(["passport_photo", "missing", null]), json!(["old_passport", "missing", null])]
    );
    // The documents themselves stay gone.
    expect_problem(app.get(&format!("{DOCUMENTS}/{photo_id}"), &w.alice.token).await, 404, "not_found").await;
    assert!(list_all(&app, &w.alice.token, DOCUMENTS).await.is_empty());
}

both!(other_citizens_and_missions_see_nothing);
async fn other_citizens_and_missions_see_nothing(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w = world(&app).await;
    let document = upload(
        &app,
        &w.alice.token,
        "passport_photo",
        Some(&w.request),
        None,
        Part::File("p.pdf", None, &pdf(500)),
    )
    .await;
    let id = text(&document, "id");
    for token in [&w.bob.token, &w.foreign_staff.token] {
        expect_problem(app.get(&format!("{DOCUMENTS}/{id}"), token).await, 404, "not_found").await;
        expect_problem(delete(&app, token, &id).await, 404, "not_found").await;
        expect_problem(
            app.get(&format!("{REQUESTS}/{}/documents", w.request), token).await,
            404,
            "not_found",
        )
        .await;
        assert!(list_all(&app, token, DOCUMENTS).await.is_empty());
    }
    // Another citizen's request and another mission's citizen are unknown, not forbidden.
    let parts = [
        Part::Text("kind", "passport_photo"),
        Part::Text("request_id", &w.request),
        Part::File("p.pdf", None, PNG),
    ];
    let (_, problem) =
        expect_problem(upload_with(&app, &w.bob.token, &parts, None).await, 422, "validation_failed").await;
    assert_eq!(consular_tests::error_pointers(&problem), ["/request_id"]);
    let parts = [
        Part::Text("kind", "passport_photo"),
        Part::Text("citizen_id", &w.alice.id),
        Part::File("p.png", None, PNG),
    ];
    let (_, problem) = expect_problem(
        upload_with(&app, &w.foreign_staff.token, &parts, None).await,
        422,
        "validation_failed",
    )
    .await;
    assert_eq!(consular_tests::error_pointers(&problem), ["/citizen_id"]);
    let parts = [Part::Text("kind", "passport_photo"), Part::File("p.png", None, PNG)];
    let (_, problem) =
        expect_problem(upload_with(&app, &w.staff.token, &parts, None).await, 422, "validation_failed").await;
    assert_eq!(consular_tests::error_pointers(&problem), ["/citizen_id"], "staff name the citizen");
    // Staff of another mission cannot verify either (the document is unknown to them).
    let verify =
        decide(&app, &w.foreign_staff.token, &id, Some("\"1\""), &json!({"status": "verified"})).await;
    expect_problem(verify, 404, "not_found").await;
    assert_eq!(
        list_all(&app, &w.staff.token, &with_query(DOCUMENTS, &[("citizen_id", &w.alice.id)])).await.len(),
        1
    );
    let _ = &w.mission;
}

both!(idempotent_upload_and_deletion);
async fn idempotent_upload_and_deletion(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let w = world(&app).await;
    let bytes = pdf(3000);
    let parts = [Part::Text("kind", "passport_photo"), Part::File("p.pdf", Some("application/pdf"), &bytes)];
    let first = upload_with(&app, &w.alice.token, &parts, Some("upload-1")).await;
    let first = expect(first, StatusCode::CREATED, "first").await;
    let replay = upload_with(&app, &w.alice.token, &parts, Some("upload-1")).await;
    assert_eq!(header(replay.headers(), "idempotent-replayed"), "true");
    assert_eq!(expect(replay, StatusCode::CREATED, "replay").await, first);
    assert_eq!(stored_blobs(&app).len(), 1, "a replay stores nothing");

    // The owner deletes while not verified: 404 afterwards, the URL refused, the blob gone.
    let id = text(&first, "id");
    let (_, got) = fetch(&app, &w.alice.token, &id).await;
    let url = absolute(&app, &text(&got, "download_url"));
    let stale = app
        .authed(Method::DELETE, &format!("{DOCUMENTS}/{id}"), &w.alice.token)
        .header("if-match", "\"7\"")
        .send()
        .await
        .unwrap();
    expect_problem(stale, 412, "precondition_failed").await;
    assert_eq!(delete(&app, &w.alice.token, &id).await.status(), StatusCode::NO_CONTENT);
    expect_problem(app.get(&format!("{DOCUMENTS}/{id}"), &w.alice.token).await, 404, "not_found").await;
    expect_problem(http_client().get(&url).send().await.unwrap(), 404, "not_found").await;
    assert!(list_all(&app, &w.alice.token, DOCUMENTS).await.is_empty());
    assert!(stored_blobs(&app).is_empty());
    expect_problem(delete(&app, &w.alice.token, &id).await, 404, "not_found").await;

    // A verified document: not by its owner (409 with what is allowed), by staff yes.
    let doc = upload(
        &app,
        &w.alice.token,
        "passport_photo",
        Some(&w.request),
        None,
        Part::File("p.pdf", None, &pdf(400)),
    )
    .await;
    let id = text(&doc, "id");
    expect(
        decide(&app, &w.staff.token, &id, Some("*"), &json!({"status": "verified"})).await,
        StatusCode::OK,
        "verify",
    )
    .await;
    let (_, problem) =
        expect_problem(delete(&app, &w.alice.token, &id).await, 409, "illegal_transition").await;
    assert_eq!(problem["allowed_actions"], json!([]));
    assert_eq!(delete(&app, &w.staff.token, &id).await.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        checklist(&app, &w.alice.token, &w.request).await,
        [json!(["passport_photo", "missing", null]), json!(["old_passport", "missing", null])]
    );
    assert!(event_kinds(&app, &w.request).await.contains(&"document.deleted".to_owned()));
}

both!(download_urls_expire);
async fn download_urls_expire(backend: Backend) {
    let app = TestApp::spawn_with(backend, |s| s.download_url_ttl_secs = 1).await;
    let w = world(&app).await;
    let doc =
        upload(&app, &w.alice.token, "passport_photo", None, None, Part::File("p.pdf", None, &pdf(400)))
            .await;
    let (_, got) = fetch(&app, &w.alice.token, &text(&doc, "id")).await;
    let url = absolute(&app, &text(&got, "download_url"));
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    let (_, problem) =
        expect_problem(http_client().get(&url).send().await.unwrap(), 403, "invalid_download_url").await;
    assert!(problem["detail"].as_str().unwrap().contains("expired"), "{problem}");
}
