//! The response-side conventions every handler shares: ETags, created resources, stored
//! (idempotent) responses and list pages with their `Link` header.

use crate::extract::encode_cursor;
use crate::wire::ListBody;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse};
use consular_application::Written;
use consular_domain::Page;
use consular_ports::StoredResponse;
use serde::Serialize;

/// The strong ETag of a resource at `version`.
fn etag(version: i64) -> String {
    format!("\"{version}\"")
}

/// The `Link: <...>; rel="next"` value for the next page: the same query with the cursor
/// replaced.
fn next_link(req: &HttpRequest, cursor: &str) -> String {
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    for (key, value) in url::form_urlencoded::parse(req.query_string().as_bytes()) {
        if key != "cursor" {
            query.append_pair(&key, &value);
        }
    }
    query.append_pair("cursor", cursor);
    format!("<{}?{}>; rel=\"next\"", req.path(), query.finish())
}

/// A JSON response as it is sent and, for idempotent creations, stored.
pub fn stored_json<T: Serialize>(
    status: StatusCode,
    body: &T,
    headers: Vec<(String, String)>,
) -> StoredResponse {
    StoredResponse { status: status.as_u16(), headers, body: serde_json::to_string(body).unwrap_or_default() }
}

/// The headers of a created resource: where it lives and its ETag.
pub fn created_headers(location: String, version: i64) -> Vec<(String, String)> {
    vec![("location".to_owned(), location), ("etag".to_owned(), etag(version))]
}

/// Sends a written (fresh or replayed) response.
pub fn send(written: Written) -> HttpResponse {
    let status = StatusCode::from_u16(written.response.status).unwrap_or(StatusCode::OK);
    let mut response = HttpResponse::build(status);
    response.content_type("application/json");
    for (name, value) in &written.response.headers {
        if let Ok(value) = HeaderValue::from_str(value) {
            response.insert_header((name.as_str(), value));
        }
    }
    if written.replayed {
        response.insert_header(("idempotent-replayed", "true"));
    }
    response.body(written.response.body)
}

/// A JSON resource with its ETag.
pub fn with_etag<T: Serialize>(body: &T, version: i64) -> HttpResponse {
    HttpResponse::Ok().insert_header((header::ETAG, etag(version))).json(body)
}

/// A list page: `{items, next_cursor}` and a `Link` header to the next page.
pub fn list<T, D: Serialize>(req: &HttpRequest, page: Page<T>, to_dto: impl Fn(T) -> D) -> HttpResponse {
    let next_cursor = page.next_after.map(encode_cursor);
    let mut response = HttpResponse::Ok();
    if let Some(cursor) = &next_cursor {
        response.insert_header((header::LINK, next_link(req, cursor)));
    }
    response.json(ListBody { items: page.items.into_iter().map(to_dto).collect(), next_cursor })
}
