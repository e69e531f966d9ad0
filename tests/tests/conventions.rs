//! The HTTP conventions every endpoint shares (docs/api.md "Basics"): problem
//! details, 404/405/413/415/400/422, cursor pagination, `Idempotency-Key`, `If-Match`,
//! `X-Request-Id`, security and maturity headers, and the operations endpoints.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_tests::{Backend, TestApp, both, expect_problem, header, mission_body};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::collections::HashSet;

const MISSIONS: &str = "/api/v1/missions";
const CLIENTS: &str = "/api/v1/auth/clients";

fn pointers(problem: &Value) -> Vec<String> {
    problem["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("no errors[] in {problem}"))
        .iter()
        .map(|e| {
            assert!(e["code"].is_string() && e["message"].is_string(), "{e}");
            e["pointer"].as_str().unwrap().to_owned()
        })
        .collect()
}

// ------------------------------------------------------------ error statuses

async fn unknown_routes_are_404_problems(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let response = app.request(Method::GET, "/api/v1/nowhere").send().await.unwrap();
    let (_, problem) = expect_problem(response, 404, "not_found").await;
    assert_eq!(problem["instance"], "/api/v1/nowhere");
    assert_eq!(problem["title"].as_str().map(str::is_empty), Some(false));

    let token = app.admin_token().await;
    let not_an_id = app.get(&format!("{MISSIONS}/not-a-uuid"), &token).await;
    expect_problem(not_an_id, 404, "not_found").await;
    let absent = app.get(&format!("{MISSIONS}/{}", uuid::Uuid::now_v7()), &token).await;
    expect_problem(absent, 404, "not_found").await;
}
both!(unknown_routes_are_404_problems);

async fn wrong_methods_are_405_with_allow(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let id = uuid::Uuid::now_v7();
    for (method, path, allowed) in [
        (Method::DELETE, MISSIONS.to_owned(), vec!["GET", "HEAD", "POST"]),
        (Method::PUT, format!("{MISSIONS}/{id}"), vec!["GET", "HEAD", "PATCH"]),
        (Method::GET, "/api/v1/auth/revoke".to_owned(), vec!["POST"]),
        (Method::DELETE, format!("{CLIENTS}/{id}/disable"), vec!["POST"]),
        (Method::POST, "/health/live".to_owned(), vec!["GET", "HEAD"]),
    ] {
        let response = app.request(method.clone(), &path).send().await.unwrap();
        let (headers, problem) = expect_problem(response, 405, "method_not_allowed").await;
        let mut allow: Vec<String> =
            header(&headers, "allow").split(',').map(|m| m.trim().to_owned()).collect();
        allow.sort();
        assert_eq!(allow, allowed, "{method} {path}: {problem}");
    }
}
both!(wrong_methods_are_405_with_allow);

async fn oversized_bodies_are_413(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let mut body = mission_body("fr-paris");
    body["name"] = json!("x".repeat(65 * 1024));
    let response = app.post_json(MISSIONS, &token, &body).await;
    expect_problem(response, 413, "payload_too_large").await;
    // Just under the limit is read, and then judged on its content.
    body["name"] = json!("x".repeat(60 * 1024));
    let response = app.post_json(MISSIONS, &token, &body).await;
    let (_, problem) = expect_problem(response, 422, "validation_failed").await;
    assert_eq!(pointers(&problem), ["/name"]);
}
both!(oversized_bodies_are_413);

/// A body without Content-Length (chunked) is cut off at the limit as well.
async fn an_oversized_chunked_body_is_413(backend: Backend) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", app.port)).await.unwrap();
    let head = format!(
        "POST {MISSIONS} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let chunk = format!("{:x}\r\n{}\r\n", 8192, "x".repeat(8192));
    for _ in 0..9 {
        if stream.write_all(chunk.as_bytes()).await.is_err() {
            break; // the server may stop reading once it has answered
        }
    }
    let _ = stream.write_all(b"0\r\n\r\n").await;
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response).await;
    let response = String::from_utf8_lossy(&response);
    assert!(response.starts_with("HTTP/1.1 413"), "{response}");
    assert!(response.to_lowercase().contains("content-type: application/problem+json"), "{response}");
    assert!(response.contains("\"payload_too_large\""), "{response}");
}
both!(an_oversized_chunked_body_is_413);

async fn other_media_types_are_415(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let text = mission_body("fr-paris").to_string();
    for content_type in [Some("text/plain"), Some("application/x-www-form-urlencoded"), None] {
        let mut request = app.authed(Method::POST, MISSIONS, &token).body(text.clone());
        if let Some(content_type) = content_type {
            request = request.header("content-type", content_type);
        }
        let response = request.send().await.unwrap();
        expect_problem(response, 415, "unsupported_media_type").await;
    }
    let with_charset = app
        .authed(Method::POST, MISSIONS, &token)
        .header("content-type", "application/json; charset=utf-8")
        .body(text)
        .send()
        .await
        .unwrap();
    assert_eq!(with_charset.status(), StatusCode::CREATED);
}
both!(other_media_types_are_415);

async fn malformed_json_is_400(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let trailing = format!("{} trailing", mission_body("fr-paris"));
    for body in ["{\"code\": ", "not json", "", "{\"code\": \"fr-paris\",}", trailing.as_str()] {
        let response = app
            .authed(Method::POST, MISSIONS, &token)
            .header("content-type", "application/json")
            .body(body.to_owned())
            .send()
            .await
            .unwrap();
        let (_, problem) = expect_problem(response, 400, "malformed_json").await;
        assert!(!problem["detail"].as_str().unwrap().contains("serde"), "{problem}");
    }
    let list: Value = app.get(MISSIONS, &token).await.json().await.unwrap();
    assert_eq!(list["items"], json!([]));
}
both!(malformed_json_is_400);

/// Text that is not JSON is 400 whatever fields it holds; here the shape check runs first
/// and answers 422 "missing field" for a body that is not even JSON.
async fn malformed_json_is_400_even_with_missing_fields(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let response = app
        .authed(Method::POST, MISSIONS, &token)
        .header("content-type", "application/json")
        .body("{\"code\": \"fr-paris\"} trailing")
        .send()
        .await
        .unwrap();
    expect_problem(response, 400, "malformed_json").await;
}
both!(malformed_json_is_400_even_with_missing_fields);

async fn wrong_shapes_are_422_with_pointers(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;

    let mut unknown = mission_body("fr-paris");
    unknown["capital"] = json!(true);
    let (_, problem) =
        expect_problem(app.post_json(MISSIONS, &token, &unknown).await, 422, "validation_failed").await;
    assert_eq!(problem["errors"][0]["code"], "unknown_field", "{problem}");

    let mut wrong_type = mission_body("fr-paris");
    wrong_type["code"] = json!(5);
    let (_, problem) =
        expect_problem(app.post_json(MISSIONS, &token, &wrong_type).await, 422, "validation_failed").await;
    assert_eq!(pointers(&problem), ["/code"], "{problem}");

    let mut missing = mission_body("fr-paris");
    missing.as_object_mut().unwrap().remove("name");
    let (_, problem) =
        expect_problem(app.post_json(MISSIONS, &token, &missing).await, 422, "validation_failed").await;
    assert_eq!(pointers(&problem), ["/name"], "{problem}");
    assert_eq!(problem["errors"][0]["code"], "required");

    let not_an_object = app.post_json(MISSIONS, &token, &json!(["fr-paris"])).await;
    expect_problem(not_an_object, 422, "validation_failed").await;

    let nested = json!({ "name": "portal", "scopes": ["staff", "root"], "mission_id": null });
    let (_, problem) =
        expect_problem(app.post_json(CLIENTS, &token, &nested).await, 422, "validation_failed").await;
    assert_eq!(pointers(&problem), ["/scopes/1"], "{problem}");

    // Nothing was created by any of these.
    let list: Value = app.get(MISSIONS, &token).await.json().await.unwrap();
    assert_eq!(list["items"], json!([]));
}
both!(wrong_shapes_are_422_with_pointers);

/// RFC 6901: the pointer of an unknown member `capital` is `/capital`.
async fn an_unknown_field_is_pointed_at(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let mut unknown = mission_body("fr-paris");
    unknown["capital"] = json!(true);
    let (_, problem) =
        expect_problem(app.post_json(MISSIONS, &token, &unknown).await, 422, "validation_failed").await;
    assert_eq!(pointers(&problem), ["/capital"], "{problem}");
    let unknown_client = json!({ "name": "portal", "scopes": ["admin"], "secret": "mine" });
    let (_, problem) =
        expect_problem(app.post_json(CLIENTS, &token, &unknown_client).await, 422, "validation_failed").await;
    assert_eq!(pointers(&problem), ["/secret"], "{problem}");
}
both!(an_unknown_field_is_pointed_at);

async fn bad_page_parameters_are_400(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    for (query, pointer) in [
        ("limit=0", "/query/limit"),
        ("limit=101", "/query/limit"),
        ("limit=-1", "/query/limit"),
        ("cursor=abc", "/query/cursor"),
        ("cursor=!!!!!!!!!!!!!!!!!!!!!!", "/query/cursor"),
        ("cursor=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "/query/cursor"),
    ] {
        for path in [MISSIONS, CLIENTS] {
            let response = app.get(&format!("{path}?{query}"), &token).await;
            let (_, problem) = expect_problem(response, 400, "invalid_query").await;
            assert_eq!(pointers(&problem), [pointer], "{path}?{query}: {problem}");
        }
    }
    let unknown = app.get(&format!("{MISSIONS}?colour=blue"), &token).await;
    expect_problem(unknown, 400, "invalid_query").await;
    for ok in ["limit=1", "limit=100"] {
        assert_eq!(app.get(&format!("{MISSIONS}?{ok}"), &token).await.status(), StatusCode::OK, "{ok}");
    }
}
both!(bad_page_parameters_are_400);

/// A query value of the wrong type names its parameter (`/query/<name>`, as `problem.rs`
/// documents), like an out-of-range one does.
async fn a_mistyped_query_parameter_is_named(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let response = app.get(&format!("{MISSIONS}?limit=ten"), &token).await;
    let (_, problem) = expect_problem(response, 400, "invalid_query").await;
    assert_eq!(pointers(&problem), ["/query/limit"], "{problem}");
}
both!(a_mistyped_query_parameter_is_named);

// ------------------------------------------------------------ pagination

async fn cursor_pagination_walks_every_page(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let mut created = Vec::new();
    for code in ["fr-paris", "de-berlin", "it-rome", "es-madrid", "pt-lisbon"] {
        created.push(app.create_mission(&token, code).await["id"].as_str().unwrap().to_owned());
    }

    let mut seen = Vec::new();
    let mut path = format!("{MISSIONS}?limit=2");
    let mut pages = 0;
    loop {
        pages += 1;
        assert!(pages <= 5, "pagination does not end");
        let response = app.get(&path, &token).await;
        assert_eq!(response.status(), StatusCode::OK);
        let link = header(response.headers(), "link");
        let page: Value = response.json().await.unwrap();
        let items = page["items"].as_array().unwrap();
        assert!(items.len() <= 2);
        seen.extend(items.iter().map(|m| m["id"].as_str().unwrap().to_owned()));
        match page["next_cursor"].as_str() {
            Some(cursor) => {
                assert_eq!(items.len(), 2, "a page before the last is full");
                assert_eq!(cursor.len(), 22, "{cursor}");
                assert_eq!(link, format!("<{MISSIONS}?limit=2&cursor={cursor}>; rel=\"next\""));
                path = link.trim_start_matches('<').split('>').next().unwrap().to_owned();
            }
            None => {
                assert!(page["next_cursor"].is_null(), "{page}");
                assert_eq!(link, "", "no Link on the last page");
                break;
            }
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(seen, created, "every mission once, oldest first");
    let unique: HashSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), 5);

    // The default page holds them all; limit=5 exactly fits, with no next page.
    let all: Value = app.get(MISSIONS, &token).await.json().await.unwrap();
    assert_eq!(all["items"].as_array().unwrap().len(), 5);
    assert!(all["next_cursor"].is_null());
    let exact = app.get(&format!("{MISSIONS}?limit=5"), &token).await;
    assert_eq!(header(exact.headers(), "link"), "");
    let exact: Value = exact.json().await.unwrap();
    assert!(exact["next_cursor"].is_null(), "{exact}");
}
both!(cursor_pagination_walks_every_page);

// ------------------------------------------------------------ Idempotency-Key

async fn an_idempotency_key_replays_the_first_response(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let body = mission_body("fr-paris");
    let send = |body: Value, key: &'static str| {
        let request = app.authed(Method::POST, MISSIONS, &token).header("idempotency-key", key).json(&body);
        async move { request.send().await.unwrap() }
    };

    let first = send(body.clone(), "create-paris-1").await;
    assert_eq!(first.status(), StatusCode::CREATED);
    assert_eq!(header(first.headers(), "idempotent-replayed"), "");
    let (location, etag) = (header(first.headers(), "location"), header(first.headers(), "etag"));
    let first: Value = first.json().await.unwrap();

    let again = send(body.clone(), "create-paris-1").await;
    assert_eq!(again.status(), StatusCode::CREATED);
    assert_eq!(header(again.headers(), "idempotent-replayed"), "true");
    assert_eq!(header(again.headers(), "location"), location);
    assert_eq!(header(again.headers(), "etag"), etag);
    assert!(header(again.headers(), "content-type").starts_with("application/json"));
    let again: Value = again.json().await.unwrap();
    assert_eq!(again, first);

    let mut other = body.clone();
    other["city"] = json!("Lyon");
    let (_, problem) =
        expect_problem(send(other, "create-paris-1").await, 422, "idempotency_key_reused").await;
    assert!(problem["detail"].is_string());

    // Without the key (or with another one) the same body is a second creation attempt.
    let (_, problem) = expect_problem(send(body, "create-paris-2").await, 409, "mission_code_taken").await;
    assert!(problem["detail"].as_str().unwrap().contains("fr-paris"), "{problem}");
    let list: Value = app.get(MISSIONS, &token).await.json().await.unwrap();
    assert_eq!(list["items"].as_array().unwrap().len(), 1, "{list}");
}
both!(an_idempotency_key_replays_the_first_response);

async fn a_replayed_client_creation_omits_the_secret(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let body = json!({ "name": "second admin", "scopes": ["admin"] });
    let create = || async {
        app.authed(Method::POST, CLIENTS, &token)
            .header("idempotency-key", "client-1")
            .json(&body)
            .send()
            .await
            .unwrap()
    };
    let first = create().await;
    assert_eq!(first.status(), StatusCode::CREATED);
    let first: Value = first.json().await.unwrap();
    let secret = first["client_secret"].as_str().expect("the secret, in the first response").to_owned();

    let replay = create().await;
    assert_eq!(replay.status(), StatusCode::CREATED);
    assert_eq!(header(replay.headers(), "idempotent-replayed"), "true");
    let replay: Value = replay.json().await.unwrap();
    assert_eq!(replay["client_id"], first["client_id"]);
    assert!(replay.get("client_secret").is_none(), "the secret is never stored nor replayed: {replay}");
    let mut expected = first.clone();
    expected.as_object_mut().unwrap().remove("client_secret");
    assert_eq!(replay, expected);

    let list: Value = app.get(CLIENTS, &token).await.json().await.unwrap();
    assert_eq!(list["items"].as_array().unwrap().len(), 2, "the bootstrap admin and one new client: {list}");
    let id = first["client_id"].as_str().unwrap();
    assert!(!app.token_for(id, &secret, None).await.access_token.is_empty());
}
both!(a_replayed_client_creation_omits_the_secret);

async fn idempotency_keys_belong_to_their_client(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let other = app.principal_by(&token, &["admin"], None).await;
    let body = json!({ "name": "portal", "scopes": ["admin"] });
    let mut ids = Vec::new();
    for token in [&token, &other.token] {
        let response = app
            .authed(Method::POST, CLIENTS, token)
            .header("idempotency-key", "shared-key")
            .json(&body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::CREATED);
        assert_eq!(header(response.headers(), "idempotent-replayed"), "");
        ids.push(response.json::<Value>().await.unwrap()["client_id"].clone());
    }
    assert_ne!(ids[0], ids[1], "another client's key is not replayed");
}
both!(idempotency_keys_belong_to_their_client);

async fn a_failed_request_does_not_burn_its_key(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let mut bad = mission_body("fr-paris");
    bad["country"] = json!("XX");
    let send = |body: Value| {
        let request =
            app.authed(Method::POST, MISSIONS, &token).header("idempotency-key", "retry-me").json(&body);
        async move { request.send().await.unwrap() }
    };
    expect_problem(send(bad).await, 422, "validation_failed").await;
    let fixed = send(mission_body("fr-paris")).await;
    assert_eq!(fixed.status(), StatusCode::CREATED);
    assert_eq!(header(fixed.headers(), "idempotent-replayed"), "");
}
both!(a_failed_request_does_not_burn_its_key);

/// Concurrent requests with one key create one resource: the others replay it or get
/// 409 `idempotency_key_in_use`, never a second creation.
async fn concurrent_uses_of_a_key_create_once(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let body = json!({ "name": "raced", "scopes": ["admin"] });
    let requests = (0..6).map(|_| {
        app.authed(Method::POST, CLIENTS, &token).header("idempotency-key", "raced-key").json(&body).send()
    });
    let mut created = HashSet::new();
    let mut secrets = 0;
    for response in futures_join(requests).await {
        let response = response.unwrap();
        match response.status().as_u16() {
            201 => {
                let body: Value = response.json().await.unwrap();
                created.insert(body["client_id"].as_str().unwrap().to_owned());
                secrets += usize::from(body.get("client_secret").is_some());
            }
            409 => {
                expect_problem(response, 409, "idempotency_key_in_use").await;
            }
            other => panic!("unexpected {other}: {:?}", response.text().await),
        }
    }
    assert_eq!(created.len(), 1, "{created:?}");
    assert_eq!(secrets, 1, "the secret is shown to one caller only");
    let list: Value = app.get(CLIENTS, &token).await.json().await.unwrap();
    assert_eq!(list["items"].as_array().unwrap().len(), 2, "{list}");

    // The same key on another endpoint is another request: refused, not replayed.
    let elsewhere = app
        .authed(Method::POST, MISSIONS, &token)
        .header("idempotency-key", "raced-key")
        .json(&mission_body("fr-paris"))
        .send()
        .await
        .unwrap();
    expect_problem(elsewhere, 422, "idempotency_key_reused").await;
}
both!(concurrent_uses_of_a_key_create_once);

async fn concurrent_creations_of_one_code_create_once(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let body = mission_body("fr-paris");
    let requests = (0..6).map(|_| app.authed(Method::POST, MISSIONS, &token).json(&body).send());
    let mut statuses = Vec::new();
    for response in futures_join(requests).await {
        let response = response.unwrap();
        let status = response.status().as_u16();
        if status != 201 {
            expect_problem(response, 409, "mission_code_taken").await;
        }
        statuses.push(status);
    }
    assert_eq!(statuses.iter().filter(|s| **s == 201).count(), 1, "{statuses:?}");
}
both!(concurrent_creations_of_one_code_create_once);

/// Runs the futures concurrently (each on its own task) and returns their outputs in order.
async fn futures_join<F>(futures: impl Iterator<Item = F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut outputs = Vec::new();
    for handle in handles {
        outputs.push(handle.await.unwrap());
    }
    outputs
}

async fn malformed_idempotency_keys_are_400(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    for key in ["has space".to_owned(), "k".repeat(256), String::new()] {
        let response = app
            .authed(Method::POST, MISSIONS, &token)
            .header("idempotency-key", key.as_str())
            .json(&mission_body("fr-paris"))
            .send()
            .await
            .unwrap();
        expect_problem(response, 400, "invalid_idempotency_key").await;
    }
    let list: Value = app.get(MISSIONS, &token).await.json().await.unwrap();
    assert_eq!(list["items"], json!([]));
}
both!(malformed_idempotency_keys_are_400);

// ------------------------------------------------------------ If-Match

async fn if_match_is_required_and_checked(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let mission = app.create_mission(&token, "fr-paris").await;
    let path = format!("{MISSIONS}/{}", mission["id"].as_str().unwrap());
    let read = app.get(&path, &token).await;
    assert_eq!(header(read.headers(), "etag"), "\"1\"");

    let change = json!({ "city": "Lyon" });
    expect_problem(app.patch_json(&path, &token, None, &change).await, 428, "precondition_required").await;
    for stale in ["\"2\"", "\"0\"", "W/\"1\"", "\"abc\""] {
        let response = app.patch_json(&path, &token, Some(stale), &change).await;
        expect_problem(response, 412, "precondition_failed").await;
    }
    let unchanged: Value = app.get(&path, &token).await.json().await.unwrap();
    assert_eq!(unchanged["city"], "Paris", "a refused PATCH changes nothing");

    let updated = app.patch_json(&path, &token, Some("\"1\""), &change).await;
    assert_eq!(updated.status(), StatusCode::OK);
    assert_eq!(header(updated.headers(), "etag"), "\"2\"");
    let body: Value = updated.json().await.unwrap();
    assert_eq!(body["city"], "Lyon");
    assert_eq!(header(app.get(&path, &token).await.headers(), "etag"), "\"2\"");

    // The old tag is stale now; a list naming the current one matches; `*` matches any.
    let stale = app.patch_json(&path, &token, Some("\"1\""), &json!({ "city": "Nice" })).await;
    expect_problem(stale, 412, "precondition_failed").await;
    let listed = app.patch_json(&path, &token, Some("\"7\", \"2\""), &json!({ "city": "Nice" })).await;
    assert_eq!(listed.status(), StatusCode::OK);
    assert_eq!(header(listed.headers(), "etag"), "\"3\"");
    let any = app.patch_json(&path, &token, Some("*"), &json!({ "city": "Lille" })).await;
    assert_eq!(any.status(), StatusCode::OK);
    assert_eq!(header(any.headers(), "etag"), "\"4\"");
}
both!(if_match_is_required_and_checked);

// ------------------------------------------------------------ headers

async fn request_ids_are_echoed_or_generated(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let sent = app
        .request(Method::GET, "/health/live")
        .header("x-request-id", "trace-42.a_b:c")
        .send()
        .await
        .unwrap();
    assert_eq!(header(sent.headers(), "x-request-id"), "trace-42.a_b:c");

    let problem =
        app.request(Method::GET, "/api/v1/nowhere").header("x-request-id", "abc-123").send().await.unwrap();
    let (headers, body) = expect_problem(problem, 404, "not_found").await;
    assert_eq!(header(&headers, "x-request-id"), "abc-123");
    assert_eq!(body["request_id"], "abc-123");

    let generated = app.request(Method::GET, "/health/live").send().await.unwrap();
    let id = header(generated.headers(), "x-request-id");
    assert!(uuid::Uuid::parse_str(&id).is_ok(), "{id}");
    let other =
        header(app.request(Method::GET, "/health/live").send().await.unwrap().headers(), "x-request-id");
    assert_ne!(id, other);

    // An id that is not a safe token is replaced, not echoed into logs and headers.
    for unsafe_id in ["has space", "x".repeat(200).as_str(), "a\"b"] {
        let response =
            app.request(Method::GET, "/health/live").header("x-request-id", unsafe_id).send().await.unwrap();
        let echoed = header(response.headers(), "x-request-id");
        assert_ne!(echoed, unsafe_id);
        assert!(uuid::Uuid::parse_str(&echoed).is_ok(), "{echoed}");
    }

    // Every error response carries the id of its request, including 401s.
    let unauthorized = app.request(Method::GET, MISSIONS).send().await.unwrap();
    let (headers, body) = expect_problem(unauthorized, 401, "unauthorized").await;
    assert_eq!(body["request_id"].as_str(), Some(header(&headers, "x-request-id").as_str()));
}
both!(request_ids_are_echoed_or_generated);

async fn security_headers_are_on_every_response(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let form = [("grant_type", "client_credentials")];
    let responses = vec![
        app.get(MISSIONS, &token).await,
        app.request(Method::GET, "/api/v1/nowhere").send().await.unwrap(),
        app.request(Method::GET, MISSIONS).send().await.unwrap(),
        app.token_request("/api/v1/auth/token", Some((&app.admin_id, &app.admin_secret)), &form).await,
        app.token_request("/api/v1/auth/token", Some((&app.admin_id, "wrong")), &form).await,
        app.request(Method::GET, "/health/ready").send().await.unwrap(),
    ];
    for response in responses {
        let headers = response.headers();
        let what = format!("{} {}", response.status(), response.url().path());
        assert_eq!(header(headers, "x-content-type-options"), "nosniff", "{what}");
        assert_eq!(header(headers, "x-frame-options"), "DENY", "{what}");
        assert_eq!(header(headers, "referrer-policy"), "no-referrer", "{what}");
        assert!(header(headers, "strict-transport-security").starts_with("max-age="), "{what}");
        assert_eq!(header(headers, "cross-origin-resource-policy"), "same-origin", "{what}");
        assert!(header(headers, "content-security-policy").contains("default-src 'none'"), "{what}");
        assert!(header(headers, "content-security-policy").contains("frame-ancestors 'none'"), "{what}");
        assert_eq!(header(headers, "cache-control"), "no-store", "{what}");
        assert!(header(headers, "server").is_empty(), "{what}: no server banner");
    }
}
both!(security_headers_are_on_every_response);

async fn maturity_labels_are_sent(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let form = [("grant_type", "client_credentials")];
    let token_response =
        app.token_request("/api/v1/auth/token", Some((&app.admin_id, &app.admin_secret)), &form).await;
    assert_eq!(header(token_response.headers(), "api-maturity"), "Available");
    let refused = app.token_request("/api/v1/auth/token", Some((&app.admin_id, "wrong")), &form).await;
    assert_eq!(header(refused.headers(), "api-maturity"), "Available", "errors carry the label too");
    assert_eq!(header(app.get(MISSIONS, &token).await.headers(), "api-maturity"), "Beta");
    let id = uuid::Uuid::now_v7();
    assert_eq!(header(app.get(&format!("{MISSIONS}/{id}"), &token).await.headers(), "api-maturity"), "Beta");
    assert_eq!(header(app.get(CLIENTS, &token).await.headers(), "api-maturity"), "Beta");
    let live = app.request(Method::GET, "/health/live").send().await.unwrap();
    assert_eq!(header(live.headers(), "api-maturity"), "Available");
    let jwks = app.request(Method::GET, "/.well-known/jwks.json").send().await.unwrap();
    assert_eq!(header(jwks.headers(), "api-maturity"), "Available");
    let unknown = app.request(Method::GET, "/api/v1/nowhere").send().await.unwrap();
    assert_eq!(header(unknown.headers(), "api-maturity"), "", "no label for a route that does not exist");
}
both!(maturity_labels_are_sent);

// ------------------------------------------------------------ operations endpoints

async fn health_endpoints(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let live = app.request(Method::GET, "/health/live").send().await.unwrap();
    assert_eq!(live.status(), StatusCode::OK);
    assert_eq!(live.json::<Value>().await.unwrap()["status"], "ok");
    let ready = app.request(Method::GET, "/health/ready").send().await.unwrap();
    assert_eq!(ready.status(), StatusCode::OK);
    let body: Value = ready.json().await.unwrap();
    assert_eq!(body["status"], "ready", "{body}");
    assert_eq!(body["checks"]["database"], "ok", "{body}");
    assert_eq!(body["checks"]["storage"], "ok", "{body}");
}
both!(health_endpoints);

/// `/metrics` is served on the metrics listener (`metrics_bind`) only, with the health
/// probes; the public listener answers 404 for it (docs/operations.md "Metrics").
async fn metrics_are_prometheus_text_on_the_metrics_listener_only(backend: Backend) {
    let app = TestApp::spawn_with(backend, |s| s.metrics_bind = Some(([127, 0, 0, 1], 0).into())).await;
    let metrics_port = app.metrics_port.expect("metrics_bind starts a metrics listener");
    assert_ne!(metrics_port, app.port);
    let token = app.admin_token().await;
    let id = uuid::Uuid::now_v7();
    app.get(MISSIONS, &token).await;
    app.get(&format!("{MISSIONS}/{id}"), &token).await;
    expect_problem(app.request(Method::GET, "/metrics").send().await.unwrap(), 404, "not_found").await;
    for path in ["/health/live", "/health/ready"] {
        let response = app.http.get(app.metrics_url(path)).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path} on the metrics listener");
    }
    // Nothing of the API: not even as a 405 for one of its paths.
    expect_problem(app.http.get(app.metrics_url(MISSIONS)).send().await.unwrap(), 404, "not_found").await;
    let response = app.http.get(app.metrics_url("/metrics")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(header(response.headers(), "content-type").starts_with("text/plain"), "{:?}", response.headers());
    let text = response.text().await.unwrap();
    assert!(text.contains("consular_http_requests"), "{text}");
    assert!(text.contains("consular_http_request_duration_seconds"), "{text}");
    assert!(text.contains("route=\"/api/v1/missions/{id}\""), "routes are labelled by template: {text}");
    assert!(text.contains("status=\"404\""), "{text}");
    assert!(!text.contains(&id.to_string()), "no ids in labels: {text}");
    assert!(text.trim_end().ends_with("# EOF") || text.contains("# TYPE"), "{text}");
}
both!(metrics_are_prometheus_text_on_the_metrics_listener_only);

/// Without `metrics_bind` (the default) there is no metrics listener, and `/metrics` is
/// nowhere.
async fn no_metrics_listener_by_default(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    assert_eq!(app.metrics_port, None);
    expect_problem(app.request(Method::GET, "/metrics").send().await.unwrap(), 404, "not_found").await;
}
both!(no_metrics_listener_by_default);

async fn the_openapi_document_lists_every_route(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let response = app.request(Method::GET, "/api/v1/openapi.json").send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(header(response.headers(), "content-type").starts_with("application/json"));
    let doc: Value = response.json().await.unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"), "{}", doc["openapi"]);
    let paths = doc["paths"].as_object().unwrap();
    for (path, methods) in [
        ("/api/v1/auth/token", &["post"][..]),
        ("/api/v1/auth/refresh", &["post"]),
        ("/api/v1/auth/revoke", &["post"]),
        ("/.well-known/jwks.json", &["get"]),
        ("/api/v1/auth/clients", &["get", "post"]),
        ("/api/v1/auth/clients/{id}", &["get"]),
        ("/api/v1/auth/clients/{id}/disable", &["post"]),
        ("/api/v1/auth/clients/{id}/rotate-secret", &["post"]),
        ("/api/v1/missions", &["get", "post"]),
        ("/api/v1/missions/{id}", &["get", "patch"]),
        ("/health/live", &["get"]),
        ("/health/ready", &["get"]),
        ("/api/v1/openapi.json", &["get"]),
    ] {
        let item = paths.get(path).unwrap_or_else(|| panic!("{path} is missing from {:?}", paths.keys()));
        for method in methods {
            let op = item.get(*method).unwrap_or_else(|| panic!("{method} {path} is missing"));
            let label =
                op["x-maturity"].as_str().unwrap_or_else(|| panic!("{method} {path} has no x-maturity"));
            assert!(["Available", "Beta", "Coming Soon"].contains(&label), "{method} {path}: {label}");
        }
    }
    assert!(paths.get("/metrics").is_none(), "/metrics is not part of the public API");
    assert!(doc["components"]["schemas"]["Problem"].is_object());
    // No public address configured: the server is the one the document came from.
    assert_eq!(doc["servers"][0]["url"], "/", "{}", doc["servers"]);
    // The label in the document is the one in the header.
    let token = app.admin_token().await;
    let sent = header(app.get(MISSIONS, &token).await.headers(), "api-maturity");
    assert_eq!(doc["paths"]["/api/v1/missions"]["get"]["x-maturity"], sent.as_str());
}
both!(the_openapi_document_lists_every_route);

/// With `public_base_url`, the document served names that address as its server
/// (docs/api.md "Basics"), as the download URLs do.
async fn the_openapi_document_names_the_configured_public_address(backend: Backend) {
    let app =
        TestApp::spawn_with(backend, |s| s.public_base_url = Some("https://consular.example.org/".into()))
            .await;
    let response = app.request(Method::GET, "/api/v1/openapi.json").send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let doc: Value = response.json().await.unwrap();
    assert_eq!(doc["servers"].as_array().map(Vec::len), Some(1), "{}", doc["servers"]);
    assert_eq!(doc["servers"][0]["url"], "https://consular.example.org");
}
both!(the_openapi_document_names_the_configured_public_address);

async fn the_docs_are_served(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let response = app.request(Method::GET, "/docs/").send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(header(response.headers(), "content-type").starts_with("text/html"), "{:?}", response.headers());
    let html = response.text().await.unwrap();
    assert!(html.to_lowercase().contains("swagger"), "{html}");
    let bare = app.request(Method::GET, "/docs").send().await.unwrap();
    assert!(bare.status().is_redirection(), "{}", bare.status());
    assert_eq!(header(bare.headers(), "location"), "/docs/");
}
both!(the_docs_are_served);

/// RFC 9110 section 9.1: a general-purpose server supports HEAD wherever it supports GET
/// (same status and headers, no body).
async fn head_is_answered_like_get(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    for path in ["/health/live", MISSIONS] {
        let response = app.authed(Method::HEAD, path, &token).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "HEAD {path}: {:?}", response.headers().get("allow"));
        assert_eq!(response.bytes().await.unwrap().len(), 0);
    }
}
both!(head_is_answered_like_get);
