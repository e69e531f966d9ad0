//! The response-side conventions every handler shares: ETags, created resources (fresh or
//! replayed for an `Idempotency-Key`) and list pages with their `Link` header.

use crate::extract::Cursor;
use crate::wire::common::{ListBody, NoExtra};
use actix_web::http::header::{self, EntityTag, Header, IfNoneMatch, TryIntoHeaderValue};
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder};
use consular_application::Created;
use consular_domain::Page;
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

/// Whether the client's `Accept` names `media_type` (a non-JSON representation it asks
/// for, such as a calendar file or CSV); JSON otherwise.
pub fn accepts(headers: &header::HeaderMap, media_type: &str) -> bool {
    headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|accept| {
        accept
            .split(',')
            .map(|range| range.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
            .any(|range| range == media_type)
    })
}

/// Where a created resource lives and its version, for `Location` and `ETag`.
pub struct Resource {
    pub location: String,
    pub version: i64,
}

/// `201 Created` with the representation of what a use case created, rendered the same
/// way whether it was created now or is the replay of an earlier request with the same
/// `Idempotency-Key` (then `Idempotent-Replayed: true`); `Location` and `ETag` when the
/// resource is addressable and versioned.
pub fn created<T, B: Serialize>(
    created: &Created<T>,
    resource: Option<Resource>,
    render: impl FnOnce(&T) -> B,
) -> HttpResponse {
    let mut response = HttpResponse::Created();
    if let Some(resource) = resource {
        response.insert_header((header::LOCATION, resource.location));
        response.insert_header((header::ETAG, etag(resource.version)));
    }
    if created.replayed {
        response.insert_header(("idempotent-replayed", "true"));
    }
    response.json(render(&created.value))
}

/// A JSON resource with its ETag.
pub fn with_etag<T: Serialize>(body: &T, version: i64) -> HttpResponse {
    HttpResponse::Ok().insert_header((header::ETAG, etag(version))).json(body)
}

/// How a read whose answer depends on the bearer token and changes from second to second
/// may be cached (docs/appointments.md "Release morning"): by the caller's own cache only
/// (`private`: no shared cache or CDN stores it), and never reused without asking
/// (`no-cache`), which costs a `304` when nothing changed.
pub const REVALIDATE_PRIVATE: &str = "private, no-cache";

/// A read that clients revalidate by its content (docs/api.md "Conditional reads"):
/// `304 Not Modified` without a body when the request's `If-None-Match` names the strong
/// ETag `"<fingerprint>"` (weak comparison, RFC 9110 13.1.2; `*` matches any), the
/// response `fresh` makes otherwise; either way with that `ETag`, `Cache-Control:`
/// [`REVALIDATE_PRIVATE`] and `Vary: Authorization`. The caller has passed the access
/// check before: a `304` is an answer like the `200`.
pub fn revalidated(
    req: &HttpRequest,
    fingerprint: &str,
    fresh: impl FnOnce() -> HttpResponse,
) -> HttpResponse {
    let tag = EntityTag::new_strong(fingerprint.to_owned());
    let unchanged = match IfNoneMatch::parse(req) {
        Ok(IfNoneMatch::Any) => true,
        Ok(IfNoneMatch::Items(tags)) => tags.iter().any(|t| t.weak_eq(&tag)),
        // Absent or malformed: no condition.
        Err(_) => false,
    };
    let mut response = if unchanged { HttpResponse::NotModified().finish() } else { fresh() };
    let headers = response.headers_mut();
    // A fingerprint is hex digits, always a valid header value.
    if let Ok(value) = header::ETag(tag).try_into_value() {
        headers.insert(header::ETAG, value);
    }
    headers.insert(header::CACHE_CONTROL, header::HeaderValue::from_static(REVALIDATE_PRIVATE));
    headers.insert(header::VARY, header::HeaderValue::from_static("Authorization"));
    response
}

/// A list page: `{items, next_cursor}` and a `Link` header to the next page.
pub fn list<T, C: Cursor, D: Serialize>(
    req: &HttpRequest,
    page: Page<T, C>,
    to_dto: impl Fn(T) -> D,
) -> HttpResponse {
    list_with(req, page, to_dto, NoExtra {})
}

/// [`list`] with fields of the list's own beside `items` and `next_cursor` (`extra`
/// serializes as a JSON object whose members are added to the body).
pub fn list_with<T, C: Cursor, D: Serialize, E: Serialize>(
    req: &HttpRequest,
    page: Page<T, C>,
    to_dto: impl Fn(T) -> D,
    extra: E,
) -> HttpResponse {
    let next_cursor = page.next_after.as_ref().map(Cursor::encode);
    let mut response = HttpResponse::Ok();
    if let Some(cursor) = &next_cursor {
        response.insert_header((header::LINK, next_link(req, cursor)));
    }
    let body = ListBody { items: page.items.into_iter().map(to_dto).collect(), next_cursor, extra };
    json_sized(response, &body, PAGE_ITEM_BYTES * (body.items.len() + 1))
}

/// What a list item's JSON takes, about: a service request is 670 bytes, most others
/// less. A page's buffer is allocated once at this size per item instead of doubling
/// from 128 bytes and copying itself at every step (docs/benchmarks.md "Connections kept
/// on their thread", rendering).
const PAGE_ITEM_BYTES: usize = 768;

/// `response` with `body` as JSON, serialized into a buffer of `capacity` bytes to begin
/// with; as [`HttpResponseBuilder::json`] otherwise (a body that cannot be serialized is
/// a 500).
fn json_sized<B: Serialize>(mut response: HttpResponseBuilder, body: &B, capacity: usize) -> HttpResponse {
    let mut buffer = Vec::with_capacity(capacity);
    match serde_json::to_writer(&mut buffer, body) {
        Ok(()) => response.insert_header(header::ContentType::json()).body(buffer),
        Err(e) => actix_web::Error::from(actix_web::error::JsonPayloadError::Serialize(e)).error_response(),
    }
}
