//! Keyset pages in start order (slots, appointments): the cursor is `(starts_at, id)`,
//! 43 base64url characters, opaque to clients (docs/api.md "Pagination").

use crate::problem::ApiError;
use crate::respond;
use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use consular_domain::{StartCursor, ValidationErrors};
use consular_ports::{StartPage, StartPageRequest};
use serde::Serialize;
use time::{OffsetDateTime, PrimitiveDateTime};
use uuid::Uuid;

fn encode_cursor(c: StartCursor) -> String {
    let mut bytes = Vec::with_capacity(32);
    bytes.extend_from_slice(&c.starts_at.unix_timestamp_nanos().to_be_bytes());
    bytes.extend_from_slice(c.id.as_bytes());
    URL_SAFE_NO_PAD.encode(bytes)
}

fn query_error(name: &str, code: &str, message: &str) -> ApiError {
    ApiError::validation(
        StatusCode::BAD_REQUEST,
        "invalid_query",
        "the query string is invalid",
        ValidationErrors::single(&format!("/query/{name}"), code, message),
    )
}

/// Cursors are opaque: any 43-character base64url string names a position (an instant
/// outside the representable range is clamped to it).
const CURSOR_DECODER: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::RequireNone),
);

fn decode_cursor(cursor: &str) -> Result<StartCursor, ApiError> {
    let invalid = || query_error("cursor", "invalid_cursor", "not a cursor returned by this list");
    let bytes = CURSOR_DECODER.decode(cursor).map_err(|_| invalid())?;
    let (nanos, id) = bytes.split_at_checked(16).ok_or_else(invalid)?;
    let nanos = i128::from_be_bytes(nanos.try_into().map_err(|_| invalid())?);
    let (min, max) = (
        PrimitiveDateTime::MIN.assume_utc().unix_timestamp_nanos(),
        PrimitiveDateTime::MAX.assume_utc().unix_timestamp_nanos(),
    );
    let starts_at =
        OffsetDateTime::from_unix_timestamp_nanos(nanos.clamp(min, max)).map_err(|_| invalid())?;
    let id = Uuid::from_slice(id).map_err(|_| invalid())?;
    Ok(StartCursor { starts_at, id })
}

pub fn start_page(limit: Option<i64>, cursor: Option<&str>) -> Result<StartPageRequest, ApiError> {
    let limit = match limit {
        None => 20,
        Some(l) if (1..=100).contains(&l) => l as u16,
        Some(_) => return Err(query_error("limit", "out_of_range", "must be between 1 and 100")),
    };
    Ok(StartPageRequest { limit, after: cursor.map(decode_cursor).transpose()? })
}

/// A page in start order: `{items, next_cursor}` and a `Link` header to the next page.
pub fn start_list<T, D: Serialize>(
    req: &HttpRequest,
    page: StartPage<T>,
    to_dto: impl Fn(T) -> D,
) -> HttpResponse {
    let next_cursor = page.next_after.map(encode_cursor);
    let mut response = HttpResponse::Ok();
    if let Some(cursor) = &next_cursor {
        response.insert_header((header::LINK, respond::next_link(req, cursor)));
    }
    let items: Vec<D> = page.items.into_iter().map(to_dto).collect();
    response.json(serde_json::json!({ "items": items, "next_cursor": next_cursor }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_match_their_schema() {
        let cursor = StartCursor {
            starts_at: OffsetDateTime::UNIX_EPOCH + time::Duration::minutes(90),
            id: Uuid::now_v7(),
        };
        let text = encode_cursor(cursor);
        assert_eq!(text.len(), 43, "the schema says 43 characters");
        assert_eq!(decode_cursor(&text).ok(), Some(cursor));
        assert!(decode_cursor("short").is_err());
    }
}
