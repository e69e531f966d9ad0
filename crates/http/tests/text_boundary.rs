//! The boundary rule on control characters (docs/api.md "Text"): every string of a JSON
//! body, every query parameter, and the OpenAPI document saying so; and a guard that the
//! routes read requests only through the extractors that apply it, so that no new field
//! or parameter can skip it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use actix_web::body::MessageBody;
use actix_web::http::StatusCode;
use actix_web::{App, HttpResponse, test as actix, web};
use consular_http::extract::{ApiJson, ApiQuery, controls_in_json};
use consular_http::problem::ApiError;
use serde_json::{Value, json};
use std::collections::BTreeMap;

async fn echo_json(body: ApiJson<Value>) -> HttpResponse {
    HttpResponse::Ok().json(body.value)
}

/// Any parameters, none of them a list: what every query string goes through.
#[derive(serde::Deserialize)]
#[serde(transparent)]
struct AnyQuery(BTreeMap<String, String>);

impl utoipa::IntoParams for AnyQuery {
    fn into_params(
        _: impl Fn() -> Option<utoipa::openapi::path::ParameterIn>,
    ) -> Vec<utoipa::openapi::path::Parameter> {
        Vec::new()
    }
}

async fn echo_query(query: ApiQuery<AnyQuery>) -> HttpResponse {
    HttpResponse::Ok().json(query.0.0)
}

/// Status and `(pointer, code)` of each field error of an `ApiError` response.
async fn call(request: actix::TestRequest) -> (StatusCode, Vec<(String, String)>, Value) {
    let app = actix::init_service(
        App::new().route("/json", web::post().to(echo_json)).route("/query", web::get().to(echo_query)),
    )
    .await;
    let response = actix::call_service(&app, request.to_request()).await;
    let status = response.status();
    let errors = response
        .response()
        .extensions()
        .get::<ApiError>()
        .map(|e| e.errors.iter().map(|f| (f.pointer.clone(), f.code.clone())).collect())
        .unwrap_or_default();
    let body = response.into_body().try_into_bytes().unwrap_or_default();
    (status, errors, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

fn json_request(body: &str) -> actix::TestRequest {
    actix::TestRequest::post()
        .uri("/json")
        .insert_header(("content-type", "application/json"))
        .set_payload(body.to_owned())
}

fn control(pointers: &[&str]) -> Vec<(String, String)> {
    pointers.iter().map(|p| ((*p).to_owned(), "control_character".to_owned())).collect()
}

#[actix_web::test]
async fn json_strings_with_control_characters_are_422_at_their_pointers() {
    // Escaped (`\u0000`, found once parsed) and raw (C1 `U+0085` as UTF-8) alike.
    let body =
        r#"{"body":"a\u0000b","list":["ok","\u0007"],"nested":{"k\u0001":"v","del":"\u007f"},"c1":"x"}"#
            .replace("\"x\"", "\"\u{85}\"");
    let (status, errors, _) = call(json_request(&body)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    // In document order; a member name's control characters are not echoed.
    assert_eq!(errors, control(&["/body", "/list/1", "/nested/k\u{fffd}", "/nested/del", "/c1"]));
    // A bare string document points at the root.
    let (status, errors, _) = call(json_request(r#""\u0000""#)).await;
    assert_eq!((status, errors), (StatusCode::UNPROCESSABLE_ENTITY, control(&["/"])));
}

#[actix_web::test]
async fn tabs_and_line_breaks_pass_the_boundary() {
    let body = json!({ "body": "line one\r\n\tline two\n", "a/b~c": ["\t"] });
    let (status, errors, echoed) = call(json_request(&body.to_string())).await;
    assert_eq!((status, errors), (StatusCode::OK, vec![]));
    assert_eq!(echoed, body);
}

#[actix_web::test]
async fn malformed_json_is_still_400_whatever_its_strings_hold() {
    let (status, _, _) = call(json_request(r#"{"body":"\u0000""#)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    // A raw NUL byte inside a string is a JSON syntax error (RFC 8259 section 7).
    let (status, _, _) = call(json_request("{\"body\":\"a\u{0}b\"}")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(controls_in_json(b"{} {}").is_err(), "trailing data is not one document");
}

#[actix_web::test]
async fn query_parameters_with_control_characters_are_400_naming_them() {
    for (query, pointer) in [
        ("q=a%00b", "/query/q"),
        ("kind=passport%0A", "/query/kind"),
        ("resource_type=%09mission", "/query/resource_type"),
        ("q=%C2%85", "/query/q"),
        ("a%01b=1", "/query/a\u{fffd}b"),
        ("x=%7F", "/query/x"),
    ] {
        let (status, errors, _) = call(actix::TestRequest::get().uri(&format!("/query?{query}"))).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}");
        assert_eq!(errors, control(&[pointer]), "{query}");
    }
    let (status, _, echoed) = call(actix::TestRequest::get().uri("/query?q=a%20b&kind=%C3%A9")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(echoed, json!({ "q": "a b", "kind": "é" }));
}

// ------------------------------------------------------------ the document

const LINE: &str = r"^[^\x00-\x1f\x7f-\x9f]*$";
const TEXT: &str = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]*$";

fn operation<'a>(document: &'a Value, id: &str) -> &'a Value {
    document["paths"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|item| item.as_object().unwrap().values())
        .find(|op| op["operationId"] == id)
        .unwrap_or_else(|| panic!("no operation {id}"))
}

fn query_parameter<'a>(document: &'a Value, id: &str, name: &str) -> &'a Value {
    operation(document, id)["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name && p["in"] == "query")
        .unwrap_or_else(|| panic!("no parameter {name} of {id}"))
}

/// The string branch of a (possibly nullable) property.
fn string_schema(property: &Value) -> &Value {
    match property.get("oneOf").and_then(Value::as_array) {
        Some(branches) => branches.iter().find(|b| b["type"] == "string").unwrap(),
        None => property,
    }
}

#[test]
fn the_document_declares_the_characters_refused() {
    let spec = consular_http::api_spec();
    let document = spec.document();
    for (id, name) in
        [("list_citizens", "q"), ("list_audit_events", "resource_type"), ("list_documents", "kind")]
    {
        assert_eq!(query_parameter(document, id, name)["schema"]["pattern"], LINE, "{id} {name}");
    }
    let schemas = &document["components"]["schemas"];
    for (schema, property) in [
        ("ChangeStatus", "reason"),
        ("CreateServiceType", "description"),
        ("UpdateServiceType", "description"),
        ("StageBody", "description"),
        ("CancelRequest", "reason"),
        ("VerifyDocument", "reason"),
    ] {
        let found = string_schema(&schemas[schema]["properties"][property]);
        assert_eq!(found["pattern"], TEXT, "{schema}.{property}: {found}");
    }
    // Hand-written patterns are kept; the message body's also refuses control characters.
    assert!(schemas["NewPost"]["properties"]["body"]["pattern"].as_str().unwrap().contains(r"\x0e-\x1f"));
    // Form fields: no control character at all.
    let scope = string_schema(&schemas["ClientCredentialsForm"]["properties"]["scope"]);
    assert_eq!(scope["pattern"], LINE, "{scope}");
    // Responses are what they are: only request schemas get a pattern.
    assert!(schemas["Problem"]["properties"]["detail"].get("pattern").is_none());
}

/// Every free string a request can carry has a pattern (or an enum, const or format).
#[test]
fn no_request_string_is_left_without_a_rule() {
    fn check(schema: &Value, schemas: &Value, at: &str, seen: &mut Vec<String>) {
        let Some(object) = schema.as_object() else { return };
        if let Some(name) = object.get("$ref").and_then(Value::as_str) {
            let name = name.trim_start_matches("#/components/schemas/");
            if !seen.iter().any(|s| s == name) {
                seen.push(name.to_owned());
                check(&schemas[name], schemas, name, seen);
            }
            return;
        }
        let is_string = object
            .get("type")
            .is_some_and(|t| t == "string" || t.as_array().is_some_and(|a| a.iter().any(|k| k == "string")));
        if is_string {
            assert!(
                ["pattern", "enum", "const", "format"].iter().any(|k| object.contains_key(*k)),
                "{at}: a free string without a pattern: {schema}"
            );
        }
        for (key, inner) in object {
            match inner {
                Value::Object(_) if key == "properties" => {
                    for (name, property) in inner.as_object().unwrap() {
                        check(property, schemas, &format!("{at}.{name}"), seen);
                    }
                }
                Value::Object(_) => check(inner, schemas, at, seen),
                Value::Array(items) => items.iter().for_each(|i| check(i, schemas, at, seen)),
                _ => {}
            }
        }
    }
    let spec = consular_http::api_spec();
    let document = spec.document();
    let schemas = &document["components"]["schemas"];
    let mut seen = Vec::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let at = format!("{method} {path}");
            for param in op["parameters"].as_array().into_iter().flatten().filter(|p| p["in"] == "query") {
                check(&param["schema"], schemas, &format!("{at} ?{}", param["name"]), &mut seen);
            }
            for body in op["requestBody"]["content"].as_object().into_iter().flat_map(|c| c.values()) {
                check(&body["schema"], schemas, &at, &mut seen);
            }
        }
    }
    assert!(seen.len() > 10, "the request schemas were not found: {seen:?}");
}

// ------------------------------------------------------------ the guard

/// The routes read bodies and query strings only through `ApiJson` and `ApiQuery` (the
/// OAuth forms and the upload's multipart form through their one reader each), and path
/// segments only as UUIDs: nothing reaches a use case without the boundary check.
#[test]
fn routes_read_requests_only_through_the_checked_extractors() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/routes");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let source = std::fs::read_to_string(&path).unwrap();
        for forbidden in ["web::Json", "web::Query", "web::Form", "query_string()", "match_info()"] {
            assert!(!source.contains(forbidden), "{name} uses {forbidden}: read it through crate::extract");
        }
        if name != "auth.rs" {
            assert!(!source.contains("web::Bytes"), "{name} reads a raw body: use ApiJson");
        }
        if name != "documents.rs" {
            assert!(!source.contains("Multipart"), "{name} reads a multipart body");
        }
        for (at, _) in source.match_indices("web::Path<") {
            let uuids = ["web::Path<Uuid>", "web::Path<(Uuid, Uuid)>"];
            assert!(
                uuids.iter().any(|p| source[at..].starts_with(p)),
                "{name}: a path segment that is not a UUID"
            );
        }
        checked += 1;
    }
    assert!(checked > 10);
}
