//! Documents end to end against real storage and a real scanner (docs/documents.md):
//! upload, list, download through the signed URL with an ordinary HTTP client (on S3 the
//! S3 server's own presigned URL), verification and deletion down to the blob, rejection
//! and re-upload, malware
//! refused by a real clamd, a stopped clamd refusing uploads with 503, and 50 concurrent
//! uploads. Each test runs on SQLite + local files (server in this process) and on
//! PostgreSQL + S3 (moto; the server is the `consular` binary as a child process).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_tests::clamd::{Clamd, EICAR, eicar_pdf};
use consular_tests::files::{DOCUMENTS, MIB, file_part, form, pdf, sha256_hex};
use consular_tests::reqwest::{Method, StatusCode};
use consular_tests::serde_json::{Value, json};
use consular_tests::{Stack, TestApp, citizen_body, expect_problem, header, set_setting, stacks, text};

/// The kind every test uploads (the harness's service type requires it).
const KIND: &str = "passport_photo";

/// `GET /api/v1/documents/{id}` as JSON: the body (with `download_url`) and its headers.
async fn fetch(app: &TestApp, id: &str, token: &str) -> (Value, consular_tests::reqwest::header::HeaderMap) {
    let response = app.get(&format!("{DOCUMENTS}/{id}"), token).await;
    let status = response.status();
    let headers = response.headers().clone();
    let body: Value = response.json().await.expect("a JSON body");
    assert_eq!(status, StatusCode::OK, "GET document: {body}");
    (body, headers)
}

stacks!(upload_download_verify_delete);
async fn upload_download_verify_delete(stack: Stack) {
    let app = TestApp::spawn_stack(stack, |_| {}).await;
    let world = app.world().await;
    let citizen = &world.citizen_a;
    let bytes = pdf(300 * 1024, 1);
    let sha = sha256_hex(&bytes);

    let response = app
        .upload(
            &citizen.token,
            form(&[("kind", KIND)], file_part(bytes.clone(), "scan.pdf", "application/pdf")),
        )
        .await;
    let status = response.status();
    let headers = response.headers().clone();
    let created: Value = response.json().await.expect("a JSON body");
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = text(&created, "id");
    assert_eq!(header(&headers, "location"), format!("{DOCUMENTS}/{id}"));
    assert_eq!(header(&headers, "etag"), format!("\"{}\"", created["version"]));
    assert_eq!(created["sha256"], sha);
    assert_eq!(created["size_bytes"], bytes.len());
    assert_eq!(created["media_type"], "application/pdf");
    assert_eq!(created["file_name"], "scan.pdf");
    assert_eq!(created["status"], "uploaded");
    assert_eq!(created["scan"], "not_configured", "no clamav_addr: {created}");
    assert_eq!(created["citizen_id"], citizen.id);

    // The row and its blob: the stored bytes are the uploaded ones.
    let row = app.document_row(&id).await.expect("the row");
    assert!(app.blob_exists(&row.blob_key).await, "the blob of {id}");
    assert_eq!(app.blob_keys().await, std::slice::from_ref(&row.blob_key));
    assert!(app.upload_leftovers().await.is_empty(), "{:?}", app.upload_leftovers().await);

    assert_eq!(app.listed_ids(DOCUMENTS, &citizen.token).await, std::slice::from_ref(&id));
    assert_eq!(app.listed_ids(DOCUMENTS, &world.citizen_b.token).await, Vec::<String>::new());

    // The signed URL, followed by a client without any credentials.
    let (document, _) = fetch(&app, &id, &citizen.token).await;
    let url = text(&document, "download_url");
    if stack.s3 {
        let endpoint = match &app.storage {
            consular_tests::Storage::S3(bucket) => bucket.moto.endpoint.clone(),
            consular_tests::Storage::Local => unreachable!("an S3 stack"),
        };
        assert!(url.starts_with(&endpoint), "the S3 server's own presigned URL: {url}");
        assert!(url.contains("X-Amz-Signature="), "{url}");
    }
    consular_tests::instant(&document["download_url_expires_at"]);
    let download = app.follow(&url).await;
    assert_eq!(download.status(), StatusCode::OK, "{url}");
    let disposition = header(download.headers(), "content-disposition");
    assert!(disposition.starts_with("attachment"), "{disposition}");
    assert!(disposition.contains("scan.pdf"), "{disposition}");
    assert_eq!(header(download.headers(), "content-type"), "application/pdf");
    let served = download.bytes().await.expect("the bytes");
    assert_eq!(served.len(), bytes.len());
    assert_eq!(sha256_hex(&served), sha, "the URL serves the stored bytes");

    // Asking for the file itself: a redirect to a signed URL.
    let response = app
        .authed(Method::GET, &format!("{DOCUMENTS}/{id}"), &citizen.token)
        .header("accept", "application/pdf")
        .send()
        .await
        .expect("GET");
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let location = header(response.headers(), "location");
    assert_eq!(sha256_hex(&app.follow(&location).await.bytes().await.expect("the bytes")), sha);

    // Staff of the mission verify it (If-Match required).
    let verify = format!("{DOCUMENTS}/{id}/verify");
    let response = app
        .authed(Method::PATCH, &verify, &world.staff_x.token)
        .header("if-match", format!("\"{}\"", created["version"]))
        .json(&json!({ "status": "verified" }))
        .send()
        .await
        .expect("PATCH");
    let status = response.status();
    let verified: Value = response.json().await.expect("a JSON body");
    assert_eq!(status, StatusCode::OK, "{verified}");
    assert_eq!(verified["status"], "verified");

    // The owner cannot delete a verified document; staff can, and the blob goes.
    let path = format!("{DOCUMENTS}/{id}");
    let response = app.authed(Method::DELETE, &path, &citizen.token).send().await.expect("DELETE");
    expect_problem(response, 409, "illegal_transition").await;
    let response = app.authed(Method::DELETE, &path, &world.staff_x.token).send().await.expect("DELETE");
    assert_eq!(response.status(), StatusCode::NO_CONTENT, "{}", response.text().await.unwrap_or_default());
    assert!(!app.blob_exists(&row.blob_key).await, "the blob of a deleted document is removed");
    assert_eq!(app.blob_keys().await, Vec::<String>::new());
    let tombstone = app.document_row(&id).await.expect("the tombstone stays");
    assert_eq!(tombstone.status.to_string(), "deleted");
    assert_eq!(app.listed_ids(DOCUMENTS, &citizen.token).await, Vec::<String>::new());
    expect_problem(app.get(&path, &citizen.token).await, 404, "not_found").await;
    // The URL issued before the deletion no longer serves the bytes.
    let replay = app.follow(&url).await;
    assert!(matches!(replay.status().as_u16(), 403 | 404), "replayed after delete: {}", replay.status());

    // Rejected with a reason the citizen reads; the kind can then be uploaded again, but
    // not while another upload of it awaits review.
    let upload = |seed: u32| {
        let bytes = pdf(64 * 1024, seed);
        app.upload(&citizen.token, form(&[("kind", KIND)], file_part(bytes, "again.pdf", "application/pdf")))
    };
    let response = upload(2).await;
    assert_eq!(response.status(), StatusCode::CREATED);
    let second: Value = response.json().await.expect("a JSON body");
    expect_problem(upload(3).await, 409, "document_already_present").await;
    let response = app
        .authed(Method::PATCH, &format!("{DOCUMENTS}/{}/verify", text(&second, "id")), &world.staff_x.token)
        .header("if-match", format!("\"{}\"", second["version"]))
        .json(&json!({ "status": "rejected", "reason": "The photo is blurred" }))
        .send()
        .await
        .expect("PATCH");
    assert_eq!(response.status(), StatusCode::OK);
    let (rejected, _) = fetch(&app, &text(&second, "id"), &citizen.token).await;
    assert_eq!(rejected["status"], "rejected");
    assert_eq!(rejected["rejection_reason"], "The photo is blurred");
    let response = upload(4).await;
    assert_eq!(response.status(), StatusCode::CREATED, "a rejected kind can be uploaded again");
    let third: Value = response.json().await.expect("a JSON body");
    let listed = app.listed_ids(DOCUMENTS, &citizen.token).await;
    assert_eq!(listed.len(), 2, "the rejected and the new one: {listed:?}");
    assert!(listed.contains(&text(&third, "id")) && listed.contains(&text(&second, "id")), "{listed:?}");
    let blobs = app.blob_keys().await;
    assert_eq!(blobs.len(), 2, "one blob per live document: {blobs:?}");
}

/// A server scanning with `clamd`.
async fn scanning(stack: Stack, clamd: &Clamd) -> TestApp {
    TestApp::spawn_stack(stack, |settings| set_setting(settings, "clamav_addr", json!(clamd.addr))).await
}

stacks!(malware_is_refused_and_nothing_is_kept);
async fn malware_is_refused_and_nothing_is_kept(stack: Stack) {
    let clamd = Clamd::start().await;
    let app = scanning(stack, &clamd).await;
    let world = app.world().await;
    let token = &world.citizen_a.token;

    let response = app
        .upload(token, form(&[("kind", KIND)], file_part(eicar_pdf(), "eicar.pdf", "application/pdf")))
        .await;
    let (_, problem) = expect_problem(response, 422, "malware_detected").await;
    assert!(!problem["detail"].as_str().unwrap_or_default().is_empty(), "{problem}");
    assert!(clamd.log().contains("FOUND"), "clamd saw it:\n{}", clamd.log());
    assert_eq!(app.live_documents().await.len(), 0, "no row for malware");
    app.assert_storage_empty("after malware").await;

    // The bare EICAR file is refused too, by the type check or the scanner.
    let response = app
        .upload(token, form(&[("kind", KIND)], file_part(EICAR.to_vec(), "eicar.pdf", "application/pdf")))
        .await;
    assert!(matches!(response.status().as_u16(), 415 | 422), "bare EICAR: {}", response.status());
    assert_eq!(app.live_documents().await.len(), 0);
    app.assert_storage_empty("after bare EICAR").await;

    // A clean PDF goes through the scanner and says so.
    let clean =
        app.upload_ok(token, &[("kind", KIND)], pdf(2 * MIB, 7), "clean.pdf", "application/pdf").await;
    assert_eq!(clean["scan"], "clean", "{clean}");
    assert_eq!(app.live_documents().await.len(), 1);
    assert_eq!(app.blob_keys().await.len(), 1);
}

stacks!(a_stopped_scanner_refuses_uploads_with_503);
async fn a_stopped_scanner_refuses_uploads_with_503(stack: Stack) {
    let mut clamd = Clamd::start().await;
    let app = scanning(stack, &clamd).await;
    let world = app.world().await;
    clamd.stop();

    let response = app
        .upload(
            &world.citizen_a.token,
            form(&[("kind", KIND)], file_part(pdf(64 * 1024, 3), "a.pdf", "application/pdf")),
        )
        .await;
    let (headers, _) = expect_problem(response, 503, "scanner_unavailable").await;
    let retry = header(&headers, "retry-after");
    assert!(retry.parse::<u32>().is_ok_and(|s| s > 0), "Retry-After in seconds: {retry:?}");
    assert_eq!(app.live_documents().await.len(), 0, "never a silent pass");
    app.assert_storage_empty("scanner down").await;
}

stacks!(fifty_concurrent_uploads_all_succeed);
async fn fifty_concurrent_uploads_all_succeed(stack: Stack) {
    let app = TestApp::spawn_stack(stack, |_| {}).await;
    let world = app.world().await;
    // One citizen per upload (a kind is uploaded once per citizen), all of mission X,
    // uploaded by its staff.
    let mut citizens = Vec::new();
    for n in 0..50 {
        let body = app
            .create_at(consular_tests::CITIZENS, &world.admin, &citizen_body(&world.x, &format!("C{n:05}")))
            .await;
        citizens.push(text(&body, "id"));
    }
    // The files are made before any upload starts: made inside the uploads, the CPU work
    // of the later ones held back the requests of the connections already open, and on a
    // loaded machine the server's 5 s wait for a request head ran out on them (a 408 on a
    // connection the client had not written to yet).
    let files: Vec<(Vec<u8>, String)> = (0..50u32)
        .map(|n| {
            let bytes = pdf(MIB, n + 100);
            let sha = sha256_hex(&bytes);
            (bytes, sha)
        })
        .collect();
    let uploads = citizens.iter().zip(files).enumerate().map(|(n, (citizen, (bytes, sha)))| {
        let app = &app;
        let token = world.staff_x.token.clone();
        async move {
            let fields = [("kind", KIND), ("citizen_id", citizen.as_str())];
            let response = app
                .upload(&token, form(&fields, file_part(bytes, &format!("{n}.pdf"), "application/pdf")))
                .await;
            let status = response.status();
            let body: Value = response.json().await.unwrap_or(Value::Null);
            (status, body, sha)
        }
    });
    let results = futures_util::future::join_all(uploads).await;
    let failures: Vec<_> = results.iter().filter(|(status, ..)| *status != StatusCode::CREATED).collect();
    assert!(failures.is_empty(), "{} of 50 uploads failed: {failures:?}", failures.len());
    for (_, body, sha) in &results {
        assert_eq!(body["sha256"], *sha, "{body}");
        assert_eq!(body["size_bytes"], MIB);
    }
    let rows = app.live_documents().await;
    assert_eq!(rows.len(), 50);
    let mut keys: Vec<String> = rows.iter().map(|d| d.blob_key.clone()).collect();
    keys.sort();
    assert_eq!(app.blob_keys().await, keys, "one blob per row, nothing else");
    assert!(app.upload_leftovers().await.is_empty());
}

// Six uploads of one kind for one request at once (docs/documents.md "Re-upload"): they
// all pass the check made before streaming, and the database lets one row through. The
// others are 409 `document_already_present` naming that one, and nothing of them is kept:
// one row, one blob, no unfinished upload. Then once more without a request, which is
// one place too.
stacks!(six_uploads_of_one_kind_at_once_keep_one);
async fn six_uploads_of_one_kind_at_once_keep_one(stack: Stack) {
    let app = TestApp::spawn_stack(stack, |_| {}).await;
    let world = app.world().await;
    let citizen = &world.citizen_a;
    let request = app
        .create_at("/api/v1/requests", &citizen.token, &json!({ "service_type_id": world.service["id"] }))
        .await;
    let request_id = text(&request, "id");
    let mut kept = Vec::new();
    for (round, fields) in
        [vec![("kind", KIND), ("request_id", request_id.as_str())], vec![("kind", KIND)]].iter().enumerate()
    {
        let uploads = (0..6u32).map(|n| {
            let (app, token) = (&app, citizen.token.clone());
            async move {
                // Large enough that every upload is still streaming when the first ends.
                let bytes = pdf(2 * MIB, 10 * round as u32 + n);
                let response =
                    app.upload(&token, form(fields, file_part(bytes, "race.pdf", "application/pdf"))).await;
                let status = response.status();
                (status, response.json::<Value>().await.unwrap_or(Value::Null))
            }
        });
        let results = futures_util::future::join_all(uploads).await;
        let created: Vec<&Value> =
            results.iter().filter(|(s, _)| *s == StatusCode::CREATED).map(|(_, b)| b).collect();
        assert_eq!(created.len(), 1, "round {round}: exactly one upload is kept: {results:?}");
        let winner = text(created[0], "id");
        for (status, problem) in results.iter().filter(|(s, _)| *s != StatusCode::CREATED) {
            assert_eq!(status.as_u16(), 409, "round {round}: {problem}");
            assert_eq!(problem["code"], "document_already_present", "{problem}");
            assert_eq!(
                problem["existing_document_id"],
                winner.as_str(),
                "the loser names the winner: {problem}"
            );
        }
        kept.push(app.document_row(&winner).await.expect("the winner's row").blob_key);
        let live = app.live_documents().await;
        assert_eq!(live.len(), round + 1, "round {round}: one row per round: {live:?}");
        let mut expected = kept.clone();
        expected.sort();
        assert_eq!(app.blob_keys().await, expected, "round {round}: the losers' blobs are gone");
        consular_tests::eventually(
            std::time::Duration::from_secs(10),
            "no unfinished upload is left",
            || async { app.upload_leftovers().await.is_empty() },
        )
        .await;
    }
}

// HEAD on a download URL answers what GET does without the bytes: the real
// `Content-Length` (whole, and for a range), the same type, disposition and ETag. On
// the local stack the URL is the service's own; on S3 it is the store's presigned URL,
// which the store answers. HEAD on the API's own resources keeps their length too.
stacks!(head_on_a_download_url_answers_the_real_length);
async fn head_on_a_download_url_answers_the_real_length(stack: Stack) {
    let app = TestApp::spawn_stack(stack, |_| {}).await;
    let world = app.world().await;
    let citizen = &world.citizen_a;
    let bytes = pdf(300 * 1024 + 7, 5);
    let created =
        app.upload_ok(&citizen.token, &[("kind", KIND)], bytes.clone(), "scan.pdf", "application/pdf").await;
    let (document, _) = fetch(&app, &text(&created, "id"), &citizen.token).await;
    let url = text(&document, "download_url");
    let url = if url.starts_with('/') { app.url(&url) } else { url };
    let client = consular_tests::http_client();

    let get = client.get(&url).send().await.expect("GET");
    assert_eq!(get.status(), StatusCode::OK);
    let get_headers = get.headers().clone();
    assert_eq!(get.bytes().await.expect("the bytes").len(), bytes.len());
    let head = client.head(&url).send().await.expect("HEAD");
    assert_eq!(head.status(), StatusCode::OK, "{url}");
    assert_eq!(header(head.headers(), "content-length"), bytes.len().to_string(), "the real length");
    if !stack.s3 {
        // The service's own URL: every header GET has (S3 answers HEAD its own way).
        for name in ["content-type", "content-disposition", "x-content-type-options", "etag", "accept-ranges"]
        {
            assert_eq!(header(head.headers(), name), header(&get_headers, name), "{name}");
        }
        assert!(head.bytes().await.expect("no body").is_empty());
        let head =
            client.head(&url).header("range", "bytes=100-299").send().await.expect("HEAD with a range");
        assert_eq!(head.status(), StatusCode::PARTIAL_CONTENT);
        assert_eq!(header(head.headers(), "content-length"), "200");
        assert_eq!(header(head.headers(), "content-range"), format!("bytes 100-299/{}", bytes.len()));
    }

    // The API's own responses, a problem included.
    let path = format!("{DOCUMENTS}/{}", text(&created, "id"));
    let get = app.get(&path, &citizen.token).await;
    let length = get.bytes().await.expect("the body").len();
    let head = app.authed(Method::HEAD, &path, &citizen.token).send().await.expect("HEAD");
    assert_eq!(head.status(), StatusCode::OK);
    assert_eq!(header(head.headers(), "content-length"), length.to_string());
    let missing = format!("{DOCUMENTS}/{}", uuid_v7_like());
    let head = app.authed(Method::HEAD, &missing, &citizen.token).send().await.expect("HEAD");
    assert_eq!(head.status(), StatusCode::NOT_FOUND);
    assert_ne!(header(head.headers(), "content-length"), "0", "the problem's length");
}

/// An id no document has.
fn uuid_v7_like() -> String {
    "01900000-0000-7000-8000-000000000000".to_owned()
}
