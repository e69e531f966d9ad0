//! The upload form's parts in any order (docs/api.md "Documents"), end to end on SQLite +
//! local files and on PostgreSQL + S3: a generated client writes `kind`, `file`, then the
//! optional parts; every order of the four parts stores the same document; the parts
//! after the file are refused as they are before it (unknown, repeated, too long, the
//! same problem as in the text-first order), and malware followed by text parts is
//! refused, each refusal leaving no row, no blob and no unfinished upload.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_tests::clamd::{Clamd, eicar_pdf};
use consular_tests::files::{DOCUMENTS, UPLOAD, file_part, pdf, sha256_hex};
use consular_tests::reqwest::multipart::Form;
use consular_tests::reqwest::{Method, Response, StatusCode};
use consular_tests::serde_json::{Value, json};
use consular_tests::{Stack, TestApp, error_codes, expect_problem, header, set_setting, stacks, text};

/// The kind every test uploads (the harness's service type requires it).
const KIND: &str = "passport_photo";

/// One part of the form, in the order the test sends it.
#[derive(Clone)]
enum P {
    Text(&'static str, String),
    File(Vec<u8>, &'static str),
}

fn t(name: &'static str, value: &str) -> P {
    P::Text(name, value.to_owned())
}

fn file(bytes: &[u8]) -> P {
    P::File(bytes.to_vec(), "scan.pdf")
}

fn form(parts: &[P]) -> Form {
    parts.iter().fold(Form::new(), |form, part| match part {
        P::Text(name, value) => form.text(*name, value.clone()),
        P::File(bytes, name) => form.part("file", file_part(bytes.clone(), name, "application/pdf")),
    })
}

async fn send(app: &TestApp, token: &str, parts: &[P], key: Option<&str>) -> Response {
    let mut request = app.authed(Method::POST, UPLOAD, token).multipart(form(parts));
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    request.send().await.expect("POST upload")
}

async fn created(response: Response) -> Value {
    let status = response.status();
    let body: Value = response.json().await.expect("a JSON body");
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body
}

/// The problem of `parts`, with the text parts moved before the file: `(status, code,
/// [(pointer, code)])`.
async fn problem_of(app: &TestApp, token: &str, parts: &[P]) -> (u16, String, Vec<(String, String)>) {
    let response = send(app, token, parts, None).await;
    let status = response.status().as_u16();
    let problem: Value = response.json().await.expect("a problem");
    assert_eq!(problem["status"], status, "{problem}");
    let errors = if problem["errors"].is_array() { error_codes(&problem) } else { Vec::new() };
    (status, problem["code"].as_str().unwrap_or_default().to_owned(), errors)
}

/// `parts` with the file moved last (the order every client used to send).
fn text_first(parts: &[P]) -> Vec<P> {
    let (files, texts): (Vec<P>, Vec<P>) = parts.iter().cloned().partition(|p| matches!(p, P::File(..)));
    texts.into_iter().chain(files).collect()
}

/// What a document says of its upload, without what differs between two uploads.
fn stored(document: &Value) -> Value {
    json!([
        document["kind"],
        document["citizen_id"],
        document["request_id"],
        document["file_name"],
        document["media_type"],
        document["size_bytes"],
        document["sha256"],
        document["status"],
    ])
}

/// Every permutation of `items`.
fn permutations<T: Clone>(items: &[T]) -> Vec<Vec<T>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut all = Vec::new();
    for i in 0..items.len() {
        let mut rest = items.to_vec();
        let first = rest.remove(i);
        for mut tail in permutations(&rest) {
            tail.insert(0, first.clone());
            all.push(tail);
        }
    }
    all
}

/// A request of citizen A's for the harness's service type. Its id.
async fn request_of(app: &TestApp, token: &str, service: &Value) -> String {
    text(&app.create_at("/api/v1/requests", token, &json!({ "service_type_id": service["id"] })).await, "id")
}

stacks!(generated_client_orders_are_accepted);
async fn generated_client_orders_are_accepted(stack: Stack) {
    let app = TestApp::spawn_stack(stack, |_| {}).await;
    let world = app.world().await;
    let citizen = &world.citizen_a;
    let request = request_of(&app, &citizen.token, &world.service).await;
    let bytes = pdf(200 * 1024, 3);

    // The file first, then `kind`.
    let first = created(send(&app, &citizen.token, &[file(&bytes), t("kind", KIND)], None).await).await;
    assert_eq!((first["kind"].as_str(), first["request_id"].is_null()), (Some(KIND), true), "{first}");
    assert_eq!(first["sha256"], sha256_hex(&bytes));
    assert_eq!(first["citizen_id"], citizen.id);
    // `kind`, the file, then `request_id` (openapi-python-client's order).
    let parts = [t("kind", KIND), file(&bytes), t("request_id", &request)];
    let attached = created(send(&app, &citizen.token, &parts, None).await).await;
    assert_eq!(attached["request_id"], request.as_str());
    assert_eq!(attached["size_bytes"], bytes.len());

    let mut ids = app.listed_ids(DOCUMENTS, &citizen.token).await;
    ids.sort();
    let mut expected = vec![text(&first, "id"), text(&attached, "id")];
    expected.sort();
    assert_eq!(ids, expected);
    let mut keys: Vec<String> = Vec::new();
    for id in &expected {
        keys.push(app.document_row(id).await.expect("the row").blob_key);
    }
    keys.sort();
    assert_eq!(app.blob_keys().await, keys, "one blob per document");
    assert!(app.upload_leftovers().await.is_empty(), "{:?}", app.upload_leftovers().await);
}

stacks!(every_order_of_the_four_parts_stores_the_same_document);
async fn every_order_of_the_four_parts_stores_the_same_document(stack: Stack) {
    let app = TestApp::spawn_stack(stack, |_| {}).await;
    let world = app.world().await;
    let citizen = &world.citizen_a;
    let staff = &world.staff_x.token;
    let request = request_of(&app, &citizen.token, &world.service).await;
    let bytes = pdf(64 * 1024, 5);
    let parts = [t("kind", KIND), t("request_id", &request), t("citizen_id", &citizen.id), file(&bytes)];
    let orders = permutations(&parts);
    assert_eq!(orders.len(), 24);
    let mut expected = None;
    for (n, order) in orders.iter().enumerate() {
        let document = created(send(&app, staff, order, None).await).await;
        let id = text(&document, "id");
        let row = app.document_row(&id).await.expect("the row");
        assert_eq!(app.blob_keys().await, [row.blob_key], "order {n}: its blob only");
        let got = stored(&document);
        assert_eq!(got, *expected.get_or_insert_with(|| got.clone()), "order {n}");
        // Deleted, so that the next order may upload the kind again.
        let response = app.authed(Method::DELETE, &format!("{DOCUMENTS}/{id}"), staff).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::NO_CONTENT, "order {n}");
    }
    let expected = expected.unwrap();
    assert_eq!(
        expected,
        json!([
            KIND,
            citizen.id,
            request,
            "scan.pdf",
            "application/pdf",
            bytes.len(),
            sha256_hex(&bytes),
            "uploaded"
        ])
    );
    app.assert_storage_empty("after deleting every order's document").await;
}

stacks!(parts_after_the_file_are_refused_as_before_it_and_keep_nothing);
async fn parts_after_the_file_are_refused_as_before_it_and_keep_nothing(stack: Stack) {
    let app = TestApp::spawn_stack(stack, |_| {}).await;
    let world = app.world().await;
    let token = &world.citizen_a.token;
    let bytes = pdf(300 * 1024, 9);
    let long = "x".repeat(1025);
    let cases: Vec<(Vec<P>, &str, &str)> = vec![
        (vec![t("kind", KIND), file(&bytes), t("colour", "blue")], "/colour", "unknown_field"),
        (vec![file(&bytes), t("kind", KIND), t("kind", KIND)], "/kind", "duplicate"),
        (
            vec![t("kind", KIND), file(&bytes), t("request_id", &uuid()), t("request_id", &uuid())],
            "/request_id",
            "duplicate",
        ),
        (vec![t("kind", KIND), file(&bytes), t("request_id", &long)], "/request_id", "too_long"),
        (vec![file(&bytes), t("kind", KIND), t("citizen_id", "x")], "/citizen_id", "invalid"),
        (vec![file(&bytes), t("kind", "tax_return")], "/kind", "unknown"),
        (vec![file(&bytes), t("kind", KIND), t("request_id", &uuid())], "/request_id", "unknown"),
        (vec![file(&bytes)], "/kind", "required"),
    ];
    for (parts, pointer, code) in &cases {
        let late = problem_of(&app, token, parts).await;
        assert_eq!(
            late,
            (422, "validation_failed".to_owned(), vec![(pointer.to_string(), code.to_string())])
        );
        let first = problem_of(&app, token, &text_first(parts)).await;
        assert_eq!(late, first, "the same problem with the text parts first");
        assert!(app.live_documents().await.is_empty(), "{pointer}: no row");
        app.assert_storage_empty(pointer).await;
    }
    // A second file part is repeated, after the first as before it.
    let (_, problem) = expect_problem(
        send(&app, token, &[t("kind", KIND), file(&bytes), file(&bytes)], None).await,
        422,
        "validation_failed",
    )
    .await;
    assert_eq!(error_codes(&problem), [("/file".to_owned(), "duplicate".to_owned())]);
    app.assert_storage_empty("a repeated file").await;

    // A replay whose fields follow the file: answered once the body is read, its blob
    // deleted; the first upload's blob is the only one.
    let parts = [file(&bytes), t("kind", KIND)];
    let first = created(send(&app, token, &parts, Some("late-1")).await).await;
    let replay = send(&app, token, &parts, Some("late-1")).await;
    assert_eq!(header(replay.headers(), "idempotent-replayed"), "true");
    assert_eq!(created(replay).await, first);
    // The same key and fields in the text-first order: the same request, replayed too.
    let replay = send(&app, token, &text_first(&parts), Some("late-1")).await;
    assert_eq!(created(replay).await, first);
    let row = app.document_row(&text(&first, "id")).await.expect("the row");
    assert_eq!(app.blob_keys().await, [row.blob_key]);
    assert!(app.upload_leftovers().await.is_empty(), "{:?}", app.upload_leftovers().await);
    assert_eq!(app.live_documents().await.len(), 1);
}

stacks!(malware_followed_by_text_parts_is_refused_and_nothing_is_kept);
async fn malware_followed_by_text_parts_is_refused_and_nothing_is_kept(stack: Stack) {
    let clamd = Clamd::start().await;
    let app =
        TestApp::spawn_stack(stack, |settings| set_setting(settings, "clamav_addr", json!(clamd.addr))).await;
    let world = app.world().await;
    let token = &world.citizen_a.token;
    let eicar = [P::File(eicar_pdf(), "eicar.pdf")];

    let parts = [eicar[0].clone(), t("kind", KIND)];
    expect_problem(send(&app, token, &parts, None).await, 422, "malware_detected").await;
    assert!(clamd.log().contains("FOUND"), "clamd saw it:\n{}", clamd.log());
    assert_eq!(
        problem_of(&app, token, &parts).await,
        problem_of(&app, token, &text_first(&parts)).await,
        "the same problem with the text parts first"
    );
    assert!(app.live_documents().await.is_empty(), "no row for malware");
    app.assert_storage_empty("malware, then kind").await;
    // A refused field after it answers first, as it would before the file.
    let parts = [t("kind", "tax_return"), eicar[0].clone()];
    let first = problem_of(&app, token, &parts).await;
    let late = problem_of(&app, token, &[eicar[0].clone(), t("kind", "tax_return")]).await;
    assert_eq!(late, first);
    assert_eq!(late.2, [("/kind".to_owned(), "unknown".to_owned())]);
    assert!(app.live_documents().await.is_empty());
    app.assert_storage_empty("malware, then a refused kind").await;
}

fn uuid() -> String {
    consular_tests::consular_domain::RequestId::new().as_uuid().to_string()
}
