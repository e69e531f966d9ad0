//! The one middleware every response passes through: request id, the request's log span,
//! the body's read deadlines, metrics, security and maturity headers, and problem+json for
//! every error response, including those the framework produces by itself (404, 405, 413,
//! 415, ...).

use crate::body_timeout::{BodyKind, BodyTimeouts, Expired, TimedPayload};
use crate::edge::ClientAddress;
use crate::metrics::{LatencyLabels, RequestLabels};
use crate::problem::{ApiError, DocumentedBody, PROBLEM_JSON};
use crate::state::AppState;
use actix_web::body::{BodySize, BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::http::{ConnectionType, StatusCode};
use actix_web::middleware::Next;
use actix_web::{Error, HttpMessage, HttpRequest, ResponseError, web};
use consular_domain::Principal;
use std::time::Instant;
use tracing::Instrument;

pub const REQUEST_ID: &str = "x-request-id";

/// The id of the current request, as echoed in `X-Request-Id`.
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

/// A CORS preflight (`OPTIONS` with `Access-Control-Request-Method`).
fn is_preflight(req: &actix_web::HttpRequest) -> bool {
    req.method() == actix_web::http::Method::OPTIONS
        && req.headers().contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
}

fn request_id(req: &ServiceRequest) -> String {
    req.headers()
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| {
            (1..=128).contains(&v.len())
                && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
        })
        .map_or_else(|| uuid::Uuid::now_v7().to_string(), str::to_owned)
}

/// OAuth endpoints answer errors in RFC 6749's JSON, which is left as it is.
fn is_oauth_json(res: &ServiceResponse<BoxBody>) -> bool {
    res.request().path().starts_with("/api/v1/auth/")
        && res
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"application/json"))
}

fn set(res: &mut ServiceResponse<BoxBody>, name: HeaderName, value: &str) {
    if let Ok(value) = HeaderValue::from_str(value) {
        res.headers_mut().insert(name, value);
    }
}

fn set_default(res: &mut ServiceResponse<BoxBody>, name: HeaderName, value: &'static str) {
    if !res.headers().contains_key(&name) {
        res.headers_mut().insert(name, HeaderValue::from_static(value));
    }
}

/// Puts the request's body under the read deadlines (`body_timeout`): idle and total, or
/// idle only for an operation that streams its body.
fn time_body(req: &mut ServiceRequest, state: &AppState) -> Expired {
    let payload = req.take_payload();
    // The spec is looked up only for a request with a body.
    let streamed = !matches!(payload, actix_web::dev::Payload::None)
        && state.spec.streams_body(req.method().as_str(), req.path());
    let kind = if streamed { BodyKind::Streamed } else { BodyKind::Whole };
    let (payload, expired) = TimedPayload::wrap(payload, state.edge.body_timeouts, kind);
    req.set_payload(payload);
    expired
}

/// 408 for a request whose body ran out of time, on a connection that closes after it:
/// what is left of the body would otherwise be read as the next request.
fn body_timed_out(res: ServiceResponse<BoxBody>, timeouts: Option<BodyTimeouts>) -> ServiceResponse<BoxBody> {
    let detail = match timeouts {
        Some(t) => format!(
            "the body stopped arriving or took too long: at most {} s may pass between its bytes, and \
             {} s in all unless it is an upload",
            t.idle.as_secs(),
            t.total.as_secs()
        ),
        None => "the body stopped arriving or took too long".to_owned(),
    };
    let (request, _) = res.into_parts();
    let mut response = ApiError::new(StatusCode::REQUEST_TIMEOUT, "request_timeout", detail).error_response();
    response.head_mut().set_connection_type(ConnectionType::Close);
    ServiceResponse::new(request, response)
}

/// What a HEAD response sends in place of GET's body: no bytes, but GET's size, so that
/// `Content-Length` is the one GET would send (RFC 9110 9.3.2; a document's download
/// answers its real length). The server writes no body for a HEAD request; GET's body
/// is dropped unread (an opened blob read is closed, never streamed).
struct HeadBody(BodySize);

impl MessageBody for HeadBody {
    type Error = std::convert::Infallible;

    fn size(&self) -> BodySize {
        self.0
    }

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<actix_web::web::Bytes, Self::Error>>> {
        std::task::Poll::Ready(None)
    }
}

/// After a request that may have written (a method that is not safe, answered below 400)
/// by an authenticated principal, records it before the answer leaves, so that their
/// tolerant reads on every node see it (docs/operations.md "Read replicas"; a no-op without
/// a read replica). A failed mark is logged, not returned: the write itself stands.
async fn mark_write(state: &AppState, res: &ServiceResponse<BoxBody>) {
    if res.request().method().is_safe() || res.status().as_u16() >= 400 {
        return;
    }
    let Some(principal) = res.request().extensions().get::<Principal>().cloned() else {
        return;
    };
    if let Err(error) = state.services.reads.wrote(&principal).await {
        tracing::warn!(%error, "the write could not be marked: this principal's next tolerant reads may miss it");
    }
}

pub async fn conventions(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let started = Instant::now();
    // HEAD is answered wherever GET is (RFC 9110 9.1): routed as GET, sent without a body.
    let is_head = req.method() == actix_web::http::Method::HEAD;
    if is_head {
        req.head_mut().method = actix_web::http::Method::GET;
    }
    let id = request_id(&req);
    req.extensions_mut().insert(RequestId(id.clone()));
    let peer = req.peer_addr().map(|a| a.ip());
    // Looked up once: the edge policy now, the spec and the metrics on the way out.
    let state = req.app_data::<web::Data<AppState>>().cloned();
    let client = match &state {
        Some(state) => state.edge.client_address(peer, req.headers()),
        None => peer,
    };
    req.extensions_mut().insert(ClientAddress(client));
    let expired = match &state {
        Some(state) => time_body(&mut req, state),
        None => Expired::default(),
    };
    let span = tracing::info_span!(
        "request",
        request_id = %id,
        method = %req.method(),
        path = %req.path(),
        client = client.map(tracing::field::display),
    );
    // Handlers and extractors turn their errors into responses; an `Err` here comes only
    // from a failure below routing, which actix renders itself.
    let mut res = next.call(req).instrument(span.clone()).await?.map_into_boxed_body();
    if let Some(state) = &state {
        mark_write(state, &res).instrument(span.clone()).await;
    }
    if expired.is_set() {
        // Whatever read the body failed on it; a response that did not need it stands,
        // on a connection that closes all the same.
        if res.status().is_client_error() || res.status().is_server_error() {
            res = body_timed_out(res, state.as_ref().map(|s| s.edge.body_timeouts));
        } else {
            res.response_mut().head_mut().set_connection_type(ConnectionType::Close);
        }
    }
    let status = res.status();
    // An operation's own documented error body (the readiness report) stays as it is.
    let documented = res.response().extensions().get::<DocumentedBody>().is_some();

    if (status.is_client_error() || status.is_server_error()) && !is_oauth_json(&res) && !documented {
        let already_problem = res
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(PROBLEM_JSON.as_bytes()));
        let error = res.response().extensions().get::<ApiError>().cloned();
        let error = match error {
            Some(error) => Some(error),
            None if already_problem => None,
            None if status == StatusCode::BAD_REQUEST && is_preflight(res.request()) => Some(ApiError::new(
                status,
                "cors_refused",
                "this origin, method or header may not be used from a browser page of another origin (docs/api.md \"Browsers\")",
            )),
            None => Some(ApiError::from_status(status)),
        };
        if let Some(error) = error {
            let problem = error.to_problem(res.request().path(), &id);
            let body = serde_json::to_string(&problem).unwrap_or_default();
            res = res.map_body(|head, _| {
                head.headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
                head.headers.remove(header::CONTENT_LENGTH);
                BoxBody::new(body)
            });
        }
    }

    let route = res.request().match_pattern().unwrap_or_else(|| "unmatched".to_owned());
    let method = res.request().method().as_str().to_owned();
    set(&mut res, HeaderName::from_static(REQUEST_ID), &id);
    if let Some(label) = state.as_ref().and_then(|s| s.spec.maturity(&method, &route)) {
        set(&mut res, HeaderName::from_static("api-maturity"), label);
    }
    let is_docs = res.request().path().starts_with("/docs");
    set_default(&mut res, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set_default(&mut res, header::X_FRAME_OPTIONS, "DENY");
    set_default(&mut res, header::REFERRER_POLICY, "no-referrer");
    set_default(&mut res, header::STRICT_TRANSPORT_SECURITY, "max-age=63072000; includeSubDomains");
    set_default(&mut res, HeaderName::from_static("cross-origin-resource-policy"), "same-origin");
    if is_docs {
        set_default(
            &mut res,
            header::CONTENT_SECURITY_POLICY,
            "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
        );
    } else {
        set_default(&mut res, header::CONTENT_SECURITY_POLICY, "default-src 'none'; frame-ancestors 'none'");
        set_default(&mut res, header::CACHE_CONTROL, "no-store");
    }

    if is_head {
        res = res.map_body(|_, body| BoxBody::new(HeadBody(body.size())));
    }

    let elapsed = started.elapsed();
    if let Some(state) = &state {
        state
            .metrics
            .requests
            .get_or_create(&RequestLabels {
                method: method.clone(),
                route: route.clone(),
                status: status.as_u16(),
            })
            .inc();
        state.metrics.latency.get_or_create(&LatencyLabels { method, route }).observe(elapsed.as_secs_f64());
    }
    span.in_scope(|| {
        let latency_ms = elapsed.as_secs_f64() * 1000.0;
        if status.is_server_error() {
            tracing::error!(status = status.as_u16(), latency_ms, "request failed");
        } else {
            tracing::info!(status = status.as_u16(), latency_ms, "request completed");
        }
    });
    Ok(res)
}

/// Answers requests that matched no route: 405 with `Allow` when the path exists with
/// other methods, 404 otherwise.
pub async fn fallback(
    req: HttpRequest,
    state: web::Data<AppState>,
) -> Result<actix_web::HttpResponse, ApiError> {
    Err(match state.spec.allowed_methods(req.path()) {
        Some(methods) => method_not_allowed(&req, methods),
        None => ApiError::from_status(StatusCode::NOT_FOUND),
    })
}

/// 405 with `Allow`.
fn method_not_allowed(req: &HttpRequest, methods: &[String]) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!("{} is not allowed here; allowed: {}", req.method(), methods.join(", ")),
    )
    .with_header(header::ALLOW, methods.join(", "))
}

/// A path whose id is not a UUID: 404, unless the path is a literal route of its own
/// that does not take this method (`GET /api/v1/documents/upload`, which the template
/// `/api/v1/documents/{id}` also matches): 405 with `Allow`.
pub fn bad_path(req: &HttpRequest) -> ApiError {
    let allowed =
        req.app_data::<web::Data<AppState>>().and_then(|state| state.spec.allowed_methods(req.path()));
    match allowed {
        Some(methods) if !methods.iter().any(|m| m == req.method().as_str()) => {
            method_not_allowed(req, methods)
        }
        _ => ApiError::not_found(),
    }
}
