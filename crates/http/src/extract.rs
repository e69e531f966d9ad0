//! The request-side conventions every handler shares: the authenticated principal, JSON
//! bodies, query strings, pagination, `If-Match` and `Idempotency-Key`.

use crate::edge::{ClientAddress, ON_BEHALF_OF};
use crate::problem::ApiError;
use crate::state::AppState;
use actix_web::dev::Payload;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderMap};
use actix_web::{FromRequest, HttpMessage, HttpRequest, web};
use base64::Engine;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, URL_SAFE_NO_PAD};
use consular_application::IdempotencyRequest;
use consular_domain::page::{DEFAULT_LIMIT, MAX_LIMIT};
use consular_domain::validation::{
    CONTROL_CHARACTER, NO_CONTROL_IN_LINE, NO_CONTROL_IN_TEXT, refused_in_line, refused_in_text,
};
use consular_domain::{CitizenId, PageRequest, Principal, StartCursor, ValidationErrors};
use futures_util::StreamExt;
use futures_util::future::LocalBoxFuture;
use serde::Deserialize;
use serde::de::{DeserializeOwned, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use sha2::{Digest, Sha256};
use time::{OffsetDateTime, PrimitiveDateTime};
use utoipa::IntoParams;
use utoipa::openapi::path::ParameterIn;
use uuid::Uuid;

/// The largest JSON body accepted.
pub const JSON_LIMIT: usize = 64 * 1024;

/// The principal behind the request's bearer token. Every authenticated handler takes
/// this; scope and object checks happen in the use cases. A call naming a dependant in
/// [`ON_BEHALF_OF`] acts for them: the mandate is resolved here, at each call, by the
/// representation use case (docs/representation.md "Acting").
#[derive(Debug, Clone)]
pub struct Authenticated(pub Principal);

/// The dependant a request names in [`ON_BEHALF_OF`]: a citizen id, else 400.
pub fn on_behalf_of(headers: &HeaderMap) -> Result<Option<CitizenId>, ApiError> {
    let Some(value) = headers.get(ON_BEHALF_OF) else { return Ok(None) };
    value.to_str().ok().and_then(|v| Uuid::parse_str(v.trim()).ok()).map(|id| Some(CitizenId(id))).ok_or_else(
        || {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_on_behalf_of",
                "On-Behalf-Of must be a citizen id (a UUID)",
            )
        },
    )
}

fn unauthorized(detail: &'static str, error: Option<&'static str>) -> ApiError {
    let challenge = match error {
        Some(code) => format!("Bearer realm=\"consular\", error=\"{code}\", error_description=\"{detail}\""),
        None => "Bearer realm=\"consular\"".to_owned(),
    };
    ApiError::new(StatusCode::UNAUTHORIZED, error.unwrap_or("unauthorized"), detail)
        .with_header(header::WWW_AUTHENTICATE, challenge)
}

/// The token of an `Authorization: Bearer` header, refusing tokens in the query string.
pub fn bearer_token(req: &HttpRequest) -> Result<Option<String>, ApiError> {
    let in_query =
        url::form_urlencoded::parse(req.query_string().as_bytes()).any(|(k, _)| k == "access_token");
    if in_query {
        return Err(unauthorized(
            "access tokens are not accepted in the query string",
            Some("invalid_request"),
        ));
    }
    let Some(value) = req.headers().get(header::AUTHORIZATION) else { return Ok(None) };
    let value = value
        .to_str()
        .map_err(|_| unauthorized("malformed Authorization header", Some("invalid_request")))?;
    match value.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() => {
            Ok(Some(token.trim().to_owned()))
        }
        _ => Ok(None),
    }
}

impl FromRequest for Authenticated {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let token =
                bearer_token(&req)?.ok_or_else(|| unauthorized("a bearer token is required", None))?;
            let state = req.app_data::<web::Data<AppState>>().ok_or_else(ApiError::internal)?;
            let mut principal = state.tokens.authenticate_bearer(&token).await?;
            principal.address = req.extensions().get::<ClientAddress>().and_then(|a| a.0);
            if let Some(dependant) = on_behalf_of(req.headers())? {
                principal.acting_for = Some(state.representation.mandate(&principal, dependant).await?);
            }
            req.extensions_mut().insert(principal.clone());
            Ok(Authenticated(principal))
        })
    }
}

/// A JSON body: `application/json` only (415 otherwise), at most [`JSON_LIMIT`] bytes
/// (413), malformed JSON 400, a string (member value or name, anywhere in the document)
/// holding a control character other than tab and line breaks 422 `control_character`
/// with a pointer to each, a body of the wrong shape 422 with a pointer to the field.
/// The raw bytes are kept for the idempotency fingerprint.
#[derive(Debug)]
pub struct ApiJson<T> {
    pub value: T,
    pub raw: web::Bytes,
}

fn is_json(req: &HttpRequest) -> bool {
    req.mime_type().ok().flatten().is_some_and(|m| {
        m.type_() == "application" && (m.subtype() == "json" || m.suffix().is_some_and(|s| s == "json"))
    })
}

/// Turns a serde error at `path` into a field error with a JSON pointer.
fn field_error(path: &serde_path_to_error::Path, message: String) -> ValidationErrors {
    let mut pointer = String::new();
    for segment in path.iter() {
        use serde_path_to_error::Segment;
        match segment {
            Segment::Seq { index } => pointer.push_str(&format!("/{index}")),
            Segment::Map { key } | Segment::Enum { variant: key } => pointer.push_str(&format!("/{key}")),
            Segment::Unknown => {}
        }
    }
    let (code, field) = if let Some(rest) = message.strip_prefix("missing field `") {
        ("required", rest.split('`').next())
    } else if let Some(rest) = message.strip_prefix("unknown field `") {
        ("unknown_field", rest.split('`').next())
    } else {
        ("invalid", None)
    };
    // serde_path_to_error already ends the path with an unknown field's name, never with
    // a missing one's.
    if let Some(field) = field
        && !pointer.ends_with(&format!("/{field}"))
    {
        pointer.push('/');
        pointer.push_str(field);
    }
    let message = message.split(" at line ").next().unwrap_or(&message).to_owned();
    ValidationErrors::single(if pointer.is_empty() { "/" } else { &pointer }, code, message)
}

impl<T: DeserializeOwned + 'static> FromRequest for ApiJson<T> {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let json = is_json(req);
        let declared_too_large = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok())
            .is_some_and(|len| len > JSON_LIMIT);
        let mut payload = payload.take();
        Box::pin(async move {
            if !json {
                return Err(ApiError::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported_media_type",
                    "the body must be application/json",
                ));
            }
            let too_large = || {
                ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "payload_too_large",
                    format!("the body exceeds {JSON_LIMIT} bytes"),
                )
            };
            if declared_too_large {
                return Err(too_large());
            }
            let mut body = web::BytesMut::new();
            while let Some(chunk) = payload.next().await {
                let chunk = chunk.map_err(|_| {
                    ApiError::new(StatusCode::BAD_REQUEST, "bad_request", "the body could not be read")
                })?;
                if body.len() + chunk.len() > JSON_LIMIT {
                    return Err(too_large());
                }
                body.extend_from_slice(&chunk);
            }
            let raw = body.freeze();
            // Two passes: the first checks the syntax (a body that is not JSON at all is
            // 400 whatever else is wrong with it) and every string once unescaped, so
            // `"\u0000"` is caught as well as a raw byte; the second reads the shape.
            let control = controls_in_json(&raw).map_err(|e| {
                ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "malformed_json",
                    format!("the body is not valid JSON: {e}"),
                )
            })?;
            if !control.is_empty() {
                return Err(ApiError::validation(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "validation_failed",
                    "some fields contain control characters",
                    control,
                ));
            }
            serde_path_to_error::deserialize::<_, T>(&mut serde_json::Deserializer::from_slice(&raw))
                .map(|value| ApiJson { value, raw: raw.clone() })
                .map_err(|e| {
                    ApiError::validation(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "validation_failed",
                        "the body does not have the expected shape",
                        field_error(e.path(), e.inner().to_string()),
                    )
                })
        })
    }
}

/// A member name or query parameter name as a pointer segment (RFC 6901: `~` and `/`
/// escaped), its control characters shown as U+FFFD so that no error echoes them.
fn pointer_segment(name: &str) -> String {
    name.chars()
        .map(|c| if refused_in_line(c) { '\u{FFFD}' } else { c })
        .collect::<String>()
        .replace('~', "~0")
        .replace('/', "~1")
}

/// The strings of a JSON document (after unescaping) that hold a character no text may
/// hold ([`refused_in_text`]), each as a `control_character` error at its pointer (a
/// member name at the member's pointer); a syntax error if the bytes are not one JSON
/// document. This is the boundary check every JSON body passes, whatever its type.
pub fn controls_in_json(raw: &[u8]) -> Result<ValidationErrors, serde_json::Error> {
    let mut errors = ValidationErrors::new();
    let mut deserializer = serde_json::Deserializer::from_slice(raw);
    ControlScan { pointer: &mut String::new(), errors: &mut errors }.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(errors)
}

/// Walks one JSON value, recording its strings that hold a refused character.
struct ControlScan<'a> {
    pointer: &'a mut String,
    errors: &'a mut ValidationErrors,
}

impl ControlScan<'_> {
    fn check(&mut self, text: &str) {
        if text.chars().any(refused_in_text) {
            let pointer = if self.pointer.is_empty() { "/" } else { self.pointer.as_str() };
            self.errors.add(pointer, CONTROL_CHARACTER, NO_CONTROL_IN_TEXT);
        }
    }

    /// The scan of the member or element at `segment` below this one.
    fn below(&mut self, segment: &str) -> (ControlScan<'_>, usize) {
        let len = self.pointer.len();
        self.pointer.push('/');
        self.pointer.push_str(segment);
        (ControlScan { pointer: &mut *self.pointer, errors: &mut *self.errors }, len)
    }
}

impl<'de> DeserializeSeed<'de> for ControlScan<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ControlScan<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(mut self, text: &str) -> Result<(), E> {
        self.check(text);
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        for index in 0.. {
            let (element, len) = self.below(&index.to_string());
            let more = seq.next_element_seed(element)?.is_some();
            self.pointer.truncate(len);
            if !more {
                break;
            }
        }
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        while let Some(name) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            let (mut member, len) = self.below(&pointer_segment(&name));
            member.check(&name);
            map.next_value_seed(member)?;
            self.pointer.truncate(len);
        }
        Ok(())
    }
}

/// Query parameters; a malformed or unknown parameter is a 400 problem, and so is a
/// parameter whose name or value (once percent-decoded) holds a control character, tab
/// and line breaks included: `control_character` at `/query/<name>` for each. A list
/// parameter (declared `explode: true`) may be repeated, comma separated, or both
/// ([`join_exploded`]); any other parameter given twice is refused.
#[derive(Debug)]
pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned + IntoParams> FromRequest for ApiQuery<T> {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(query_params(req.query_string()).map(ApiQuery))
    }
}

/// A query string read as [`ApiQuery`] reads it.
fn query_params<T: DeserializeOwned + IntoParams>(query: &str) -> Result<T, ApiError> {
    // Decoded once for both the boundary check and the joining of repeated lists.
    let pairs = query_pairs(query);
    controls_in_query(&pairs)?;
    serde_urlencoded_from(&join_exploded::<T>(query, &pairs))
}

/// A query string's parameters, percent-decoded, in order.
type QueryPairs<'q> = Vec<(std::borrow::Cow<'q, str>, std::borrow::Cow<'q, str>)>;

fn query_pairs(query: &str) -> QueryPairs<'_> {
    url::form_urlencoded::parse(query.as_bytes()).collect()
}

/// The query string with the values of each list parameter of `T` that appears more than
/// once joined with commas into its first occurrence (docs/api.md "List filters"):
/// `status=a&status=b,c` reads as `status=a,b,c`, which the list's deserializer
/// (`comma_separated`) splits and checks value by value. A list parameter is one `T`
/// declares `explode: true` (OpenAPI `style: form`), as generated clients send arrays.
/// Other parameters are left as they are, so a single-valued one given twice stays a
/// `duplicate field` (400); a query string without a repeated name is returned unchanged.
/// `pairs` are `query`'s ([`query_pairs`]).
fn join_exploded<'q, T: IntoParams>(query: &'q str, pairs: &QueryPairs<'_>) -> std::borrow::Cow<'q, str> {
    let mut seen = std::collections::HashSet::new();
    let repeated: std::collections::HashSet<_> =
        pairs.iter().filter(|(name, _)| !seen.insert(name.as_ref())).map(|(name, _)| name.as_ref()).collect();
    if repeated.is_empty() {
        return query.into();
    }
    let lists: Vec<String> = T::into_params(|| Some(ParameterIn::Query))
        .into_iter()
        .filter(|p| p.explode == Some(true) && repeated.contains(p.name.as_str()))
        .map(|p| p.name)
        .collect();
    if lists.is_empty() {
        return query.into();
    }
    let mut joined: Vec<(&str, String)> = Vec::with_capacity(pairs.len());
    for (name, value) in pairs {
        if lists.iter().any(|list| list == name)
            && let Some((_, values)) = joined.iter_mut().find(|(first, _)| first == name)
        {
            values.push(',');
            values.push_str(value);
            continue;
        }
        joined.push((name.as_ref(), value.clone().into_owned()));
    }
    url::form_urlencoded::Serializer::new(String::new()).extend_pairs(joined).finish().into()
}

/// The boundary check of every query string: no parameter name or value with a control
/// character ([`refused_in_line`]).
fn controls_in_query(pairs: &QueryPairs<'_>) -> Result<(), ApiError> {
    let mut errors = ValidationErrors::new();
    for (name, value) in pairs {
        if name.chars().chain(value.chars()).any(refused_in_line) {
            errors.add(&format!("/query/{}", pointer_segment(name)), CONTROL_CHARACTER, NO_CONTROL_IN_LINE);
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::validation(
            StatusCode::BAD_REQUEST,
            "invalid_query",
            "the query string is invalid",
            errors,
        ))
    }
}

fn serde_urlencoded_from<T: DeserializeOwned>(query: &str) -> Result<T, ApiError> {
    let deserializer = serde_urlencoded::Deserializer::new(url::form_urlencoded::parse(query.as_bytes()));
    serde_path_to_error::deserialize(deserializer).map_err(|e| {
        let message = e.inner().to_string();
        let named = message.split('`').nth(1).filter(|_| message.starts_with("unknown field"));
        let field = match (e.path().to_string(), named) {
            (_, Some(name)) => format!("/query/{name}"),
            (path, None) if path != "." => format!("/query/{path}"),
            _ => "/query".to_owned(),
        };
        ApiError::validation(
            StatusCode::BAD_REQUEST,
            "invalid_query",
            "the query string is invalid",
            ValidationErrors::single(&field, "invalid", message),
        )
    })
}

/// `limit` and `cursor`, shared by every list.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PageParams {
    /// Page size, 1 to 100 (default 20). Out of range is an error, never silently capped.
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page.
    #[param(min_length = 22, max_length = 22, pattern = "^[A-Za-z0-9_-]{22}$")]
    pub cursor: Option<String>,
}

impl PageParams {
    pub fn to_request(&self) -> Result<PageRequest, ApiError> {
        page_request(self.limit, self.cursor.as_deref())
    }
}

/// The page a list's `limit` and `cursor` parameters ask for, continuing after a cursor
/// of type `C` (an id for lists in id order, `(starts_at, id)` for those in start order).
pub fn page_request<C: Cursor>(limit: Option<i64>, cursor: Option<&str>) -> Result<PageRequest<C>, ApiError> {
    let limit = match limit {
        None => DEFAULT_LIMIT,
        Some(l) if (1..=i64::from(MAX_LIMIT)).contains(&l) => l as u16,
        Some(_) => return Err(invalid_parameter("limit", "out_of_range", "must be between 1 and 100")),
    };
    let after = cursor
        .map(|text| {
            let bytes = CURSOR_DECODER.decode(text).ok();
            bytes.and_then(|b| C::from_bytes(&b)).ok_or_else(|| {
                invalid_parameter("cursor", "invalid_cursor", "not a cursor returned by this list")
            })
        })
        .transpose()?;
    Ok(PageRequest { limit, after })
}

fn invalid_parameter(name: &str, code: &str, message: &str) -> ApiError {
    ApiError::validation(
        StatusCode::BAD_REQUEST,
        "invalid_query",
        "the query string is invalid",
        ValidationErrors::single(&format!("/query/{name}"), code, message),
    )
}

/// A text filter of `min..=max` characters (as its schema says).
pub fn query_text(
    name: &str,
    value: Option<String>,
    min: usize,
    max: usize,
) -> Result<Option<String>, ApiError> {
    match value {
        Some(text) if !(min..=max).contains(&text.chars().count()) => {
            Err(invalid_parameter(name, "length", &format!("must be {min} to {max} characters")))
        }
        other => Ok(other),
    }
}

/// A country filter: two upper-case letters (ISO 3166-1 alpha-2).
pub fn query_country(name: &str, value: Option<String>) -> Result<Option<String>, ApiError> {
    match value {
        Some(code) if !(code.len() == 2 && code.bytes().all(|b| b.is_ascii_uppercase())) => {
            Err(invalid_parameter(name, "invalid_country", "must be two upper-case letters"))
        }
        other => Ok(other),
    }
}

/// A list's position, written into its opaque `cursor` (docs/api.md "Pagination"):
/// base64url of `to_bytes`, 22 characters for an id, 43 for a start time and an id.
pub trait Cursor: Sized {
    fn to_bytes(&self) -> Vec<u8>;
    /// `None` when the bytes are not a cursor of this kind.
    fn from_bytes(bytes: &[u8]) -> Option<Self>;

    fn encode(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.to_bytes())
    }
}

impl Cursor for Uuid {
    fn to_bytes(&self) -> Vec<u8> {
        self.as_bytes().to_vec()
    }

    fn from_bytes(bytes: &[u8]) -> Option<Self> {
        Uuid::from_slice(bytes).ok()
    }
}

impl Cursor for StartCursor {
    fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(32);
        bytes.extend_from_slice(&self.starts_at.unix_timestamp_nanos().to_be_bytes());
        bytes.extend_from_slice(self.id.as_bytes());
        bytes
    }

    /// An instant outside the representable range is clamped to it: any 43-character
    /// base64url string names a position.
    fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let (nanos, id) = bytes.split_at_checked(16)?;
        let nanos = i128::from_be_bytes(nanos.try_into().ok()?);
        let (min, max) = (
            PrimitiveDateTime::MIN.assume_utc().unix_timestamp_nanos(),
            PrimitiveDateTime::MAX.assume_utc().unix_timestamp_nanos(),
        );
        let starts_at = OffsetDateTime::from_unix_timestamp_nanos(nanos.clamp(min, max)).ok()?;
        Some(StartCursor { starts_at, id: Uuid::from_slice(id).ok()? })
    }
}

/// Cursors are opaque: any base64url string of the right length names a position.
const CURSOR_DECODER: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::RequireNone),
);

/// The versions named by `If-Match` (`None` for `*`). PATCH requires it: absent is 428.
/// Weak and foreign tags never match: a list of only those yields no version, and the
/// use case answers 412 once the request is otherwise valid.
pub fn if_match(headers: &HeaderMap) -> Result<Option<Vec<i64>>, ApiError> {
    let Some(value) = headers.get(header::IF_MATCH) else {
        return Err(ApiError::new(
            StatusCode::PRECONDITION_REQUIRED,
            "precondition_required",
            "send If-Match with the ETag of the resource you read",
        ));
    };
    let value = value.to_str().unwrap_or("").trim();
    if value == "*" {
        return Ok(None);
    }
    let versions = value
        .split(',')
        .filter_map(|tag| tag.trim().strip_prefix('"')?.strip_suffix('"')?.parse::<i64>().ok())
        .collect();
    Ok(Some(versions))
}

/// `If-Match` where it is optional (cancel, delete): absent means "judge the current
/// state"; present, it is read as [`if_match`] reads it.
pub fn optional_if_match(headers: &HeaderMap) -> Result<Option<Vec<i64>>, ApiError> {
    if headers.contains_key(header::IF_MATCH) { if_match(headers) } else { Ok(None) }
}

/// The `Idempotency-Key` of a creating request with the fingerprint of its method, path
/// and body; `None` when the client sent no key.
pub fn idempotency(req: &HttpRequest, body: &[u8]) -> Result<Option<IdempotencyRequest>, ApiError> {
    Ok(idempotency_key(req)?.map(|key| fingerprinted(req, key, body)))
}

/// The `Idempotency-Key` a request sent, checked (1 to 255 visible ASCII characters) but
/// not yet tied to a body, for a request whose body is known only later (the upload's
/// parts); `None` when the client sent no key. [`fingerprinted`] completes it.
pub fn idempotency_key(req: &HttpRequest) -> Result<Option<&str>, ApiError> {
    let Some(value) = req.headers().get("idempotency-key") else { return Ok(None) };
    let key = value
        .to_str()
        .ok()
        .filter(|k| (1..=255).contains(&k.len()) && k.bytes().all(|b| b.is_ascii_graphic()))
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_idempotency_key",
                "Idempotency-Key must be 1 to 255 visible ASCII characters",
            )
        })?;
    Ok(Some(key))
}

/// `key` (from [`idempotency_key`]) with the fingerprint of `req`'s method and path and
/// of `body`.
pub fn fingerprinted(req: &HttpRequest, key: &str, body: &[u8]) -> IdempotencyRequest {
    let mut hasher = Sha256::new();
    hasher.update(req.method().as_str());
    hasher.update([0]);
    hasher.update(req.path());
    hasher.update([0]);
    // Whom the call acts for is part of what it asks: the same key and body for another
    // dependant is another request, not a replay.
    // (A call without the header keeps the fingerprint it always had.)
    if let Some(dependant) = req.headers().get(ON_BEHALF_OF) {
        hasher.update(dependant.as_bytes());
        hasher.update([0]);
    }
    hasher.update(body);
    let fingerprint = URL_SAFE_NO_PAD.encode(hasher.finalize());
    IdempotencyRequest { key: key.to_owned(), fingerprint }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::appointments::AppointmentListParams;
    use crate::wire::common::RequestStatusName;
    use crate::wire::documents::DocumentListParams;
    use crate::wire::requests::RequestListParams;

    /// The status, code and field errors (pointer, code, message) of a refused query.
    fn refusal<T: DeserializeOwned + IntoParams>(
        query: &str,
    ) -> (u16, &'static str, Vec<(String, String, String)>) {
        let error = query_params::<T>(query).err().unwrap_or_else(|| panic!("{query} was accepted"));
        let errors = error.errors.into_iter().map(|e| (e.pointer, e.code, e.message)).collect();
        (error.status.as_u16(), error.code, errors)
    }

    fn request_statuses(query: &str) -> Option<Vec<RequestStatusName>> {
        query_params::<RequestListParams>(query).unwrap_or_else(|e| panic!("{query}: {e:?}")).status
    }

    #[test]
    fn a_list_filter_may_repeat_be_comma_separated_or_both() {
        let comma = request_statuses("status=submitted,in_review,approved");
        assert_eq!(comma.as_ref().map(Vec::len), Some(3));
        for query in [
            "status=submitted&status=in_review&status=approved",
            "status=submitted&status=in_review,approved",
            "status=submitted,in_review&limit=5&status=approved",
            "status=submitted&status=in%5Freview&status=approved&overdue=true",
        ] {
            assert_eq!(request_statuses(query), comma, "{query}");
        }
        let documents = query_params::<DocumentListParams>("status=uploaded&status=rejected&limit=2")
            .map(|p| (p.status.map(|s| s.len()), p.limit));
        assert_eq!(documents.ok(), Some((Some(2), Some(2))));
        let appointments = query_params::<AppointmentListParams>("status=booked&status=attended,no_show")
            .map(|p| p.status.map(|s| s.len()));
        assert_eq!(appointments.ok(), Some(Some(3)));
    }

    #[test]
    fn each_repeated_value_is_checked_as_in_a_comma_separated_list() {
        let unknown = (
            400,
            "invalid_query",
            vec![("/query/status".to_owned(), "invalid".to_owned(), "unknown value `bogus`".to_owned())],
        );
        assert_eq!(refusal::<RequestListParams>("status=submitted,bogus"), unknown);
        assert_eq!(refusal::<RequestListParams>("status=submitted&status=bogus"), unknown);
        assert_eq!(refusal::<RequestListParams>("status=bogus&limit=3&status=submitted"), unknown);
        assert_eq!(refusal::<RequestListParams>("status=submitted&status=in_review,bogus"), unknown);
        assert_eq!(refusal::<DocumentListParams>("status=uploaded&status=bogus"), unknown);
        assert_eq!(refusal::<AppointmentListParams>("status=bogus&status=booked"), unknown);
    }

    #[test]
    fn a_repeated_single_valued_parameter_is_refused_as_before() {
        let duplicate = |name: &str| {
            (
                400,
                "invalid_query",
                vec![("/query".to_owned(), "invalid".to_owned(), format!("duplicate field `{name}`"))],
            )
        };
        assert_eq!(refusal::<RequestListParams>("limit=1&limit=2"), duplicate("limit"));
        assert_eq!(
            refusal::<RequestListParams>("status=submitted&limit=1&status=in_review&limit=2"),
            duplicate("limit")
        );
        let cursor = "AAAAAAAAAAAAAAAAAAAAAA";
        assert_eq!(
            refusal::<RequestListParams>(&format!("cursor={cursor}&cursor={cursor}")),
            duplicate("cursor")
        );
        assert_eq!(refusal::<PageParams>("limit=1&limit=1"), duplicate("limit"));
        assert_eq!(refusal::<RequestListParams>("overdue=true&overdue=false"), duplicate("overdue"));
        // An unknown parameter, repeated or not, is refused by name, before the duplicate.
        let unknown = refusal::<RequestListParams>("foo=1&foo=2&limit=1&limit=2");
        assert_eq!(unknown.2.first().map(|e| e.0.as_str()), Some("/query/foo"));
    }

    #[test]
    fn a_query_without_a_repeated_list_is_read_unchanged() {
        for query in ["", "status=a%2Cb&limit=1", "limit=1&limit=2", "q=%26x+y&q=z"] {
            assert!(
                matches!(join_exploded::<RequestListParams>(query, &query_pairs(query)), std::borrow::Cow::Borrowed(q) if q == query),
                "{query}"
            );
        }
        assert_eq!(
            join_exploded::<RequestListParams>(
                "status=a&limit=1&status=b+c%26",
                &query_pairs("status=a&limit=1&status=b+c%26")
            ),
            "status=a%2Cb+c%26&limit=1"
        );
        assert!(
            refusal::<RequestListParams>("status=submitted&status=%00")
                .2
                .iter()
                .all(|e| e.1 == CONTROL_CHARACTER)
        );
    }

    #[test]
    fn the_list_filters_are_declared_as_generated_clients_send_arrays() {
        use utoipa::openapi::path::{Parameter, ParameterStyle};
        let status = |params: Vec<Parameter>| params.into_iter().find(|p| p.name == "status");
        for parameter in [
            status(RequestListParams::into_params(|| Some(ParameterIn::Query))),
            status(DocumentListParams::into_params(|| Some(ParameterIn::Query))),
            status(AppointmentListParams::into_params(|| Some(ParameterIn::Query))),
        ] {
            let parameter = parameter.unwrap_or_else(|| panic!("no status parameter"));
            assert_eq!(parameter.explode, Some(true));
            assert!(matches!(parameter.style, Some(ParameterStyle::Form)));
            let schema = serde_json::to_value(&parameter.schema).unwrap_or_default();
            assert_eq!(schema["type"], "array", "{schema}");
            assert!(schema["items"]["enum"].as_array().is_some_and(|values| values.len() > 1), "{schema}");
            assert!(parameter.description.is_some_and(|d| d.contains("comma")));
        }
    }

    #[test]
    fn cursors_round_trip_and_match_their_schema() {
        let cursor = StartCursor {
            starts_at: OffsetDateTime::UNIX_EPOCH + time::Duration::minutes(90),
            id: Uuid::now_v7(),
        };
        let text = cursor.encode();
        assert_eq!(text.len(), 43, "the schema says 43 characters");
        assert_eq!(page_request::<StartCursor>(None, Some(&text)).ok().and_then(|p| p.after), Some(cursor));
        assert!(page_request::<StartCursor>(None, Some("short")).is_err());
    }
}
