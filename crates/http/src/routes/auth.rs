//! `/api/v1/auth/token`, `/refresh`, `/revoke` (RFC 6749, RFC 7009) and
//! `/.well-known/jwks.json`. These answer errors in RFC 6749's JSON, not problems. The
//! bodies are in `crate::wire::auth`.

use crate::edge::ClientAddress;
use crate::extract::bearer_token;
use crate::problem::{ApiError, Problem};
use crate::state::AppState;
use crate::wire::auth::{
    FormTooLarge, JsonWebKeySet, OAuthErrorCode, OAuthErrorResponse, RateLimited, RefreshForm, RevokeForm,
    RevokeRateLimited, TokenForm, TokenResponse,
};
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderMap};
use actix_web::{HttpMessage, HttpRequest, HttpResponse, get, post, web};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use consular_application::auth::{ClientCredentials, IssuedTokens, OAuthError};
use consular_domain::validation::refused_in_line;
use governor::clock::{Clock, DefaultClock};
use std::collections::HashMap;
use utoipa_actix_web::service_config::ServiceConfig;

/// Registers this area's operations, in the order actix tries them (`super::register`).
pub fn register(cfg: &mut ServiceConfig) {
    cfg.service(create_token).service(refresh_token).service(revoke_token).service(jwks);
}

/// The largest form body accepted by the OAuth endpoints.
const FORM_LIMIT: usize = 8 * 1024;

/// An OAuth error reply, or a problem for the statuses OAuth does not define.
enum Reply {
    OAuth(OAuthError),
    Problem(ApiError),
}

impl From<OAuthError> for Reply {
    fn from(e: OAuthError) -> Self {
        match e {
            OAuthError::Unavailable(why) => {
                tracing::warn!(error = %why, "token endpoint: dependency unavailable");
                Reply::Problem(ApiError::unavailable("the service is temporarily unavailable"))
            }
            OAuthError::Internal(why) => {
                tracing::error!(error = %why, "token endpoint failed");
                Reply::Problem(ApiError::internal())
            }
            other => Reply::OAuth(other),
        }
    }
}

impl From<ApiError> for Reply {
    fn from(e: ApiError) -> Self {
        Reply::Problem(e)
    }
}

impl Reply {
    fn into_response(self) -> HttpResponse {
        let error = match self {
            Reply::Problem(problem) => return actix_web::ResponseError::error_response(&problem),
            Reply::OAuth(error) => error,
        };
        let (status, code) = match &error {
            OAuthError::InvalidClient => (StatusCode::UNAUTHORIZED, OAuthErrorCode::InvalidClient),
            OAuthError::InvalidRequest(_) => (StatusCode::BAD_REQUEST, OAuthErrorCode::InvalidRequest),
            OAuthError::InvalidScope(_) => (StatusCode::BAD_REQUEST, OAuthErrorCode::InvalidScope),
            OAuthError::InvalidGrant(_) => (StatusCode::BAD_REQUEST, OAuthErrorCode::InvalidGrant),
            OAuthError::UnsupportedGrantType => {
                (StatusCode::BAD_REQUEST, OAuthErrorCode::UnsupportedGrantType)
            }
            OAuthError::Unavailable(_) | OAuthError::Internal(_) => {
                (StatusCode::INTERNAL_SERVER_ERROR, OAuthErrorCode::ServerError)
            }
        };
        let mut response = HttpResponse::build(status);
        response
            .insert_header((header::CACHE_CONTROL, "no-store"))
            .insert_header((header::PRAGMA, "no-cache"));
        if status == StatusCode::UNAUTHORIZED {
            response.insert_header((header::WWW_AUTHENTICATE, "Basic realm=\"consular\", charset=\"UTF-8\""));
        }
        response.json(OAuthErrorResponse { error: code, error_description: error.to_string() })
    }
}

fn invalid_request(message: &str) -> Reply {
    Reply::OAuth(OAuthError::InvalidRequest(message.to_owned()))
}

/// The parameters the OAuth endpoints read; others are ignored (RFC 6749 section 3.1).
const KNOWN_PARAMETERS: [&str; 7] =
    ["grant_type", "scope", "client_id", "client_secret", "refresh_token", "token", "token_type_hint"];

/// Parses a form body, refusing other media types, repeated parameters (RFC 6749 3.1)
/// and a control character in a parameter it reads.
fn parse_form(req: &HttpRequest, body: &[u8]) -> Result<HashMap<String, String>, Reply> {
    if req.mime_type().ok().flatten().is_none_or(|m| m.essence_str() != "application/x-www-form-urlencoded") {
        return Err(invalid_request("the body must be application/x-www-form-urlencoded"));
    }
    if body.len() > FORM_LIMIT {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            "the form is too large",
        )
        .into());
    }
    if body.split(|b| *b == b'&').any(|pair| !pair.is_empty() && !pair.contains(&b'=')) {
        return Err(invalid_request("the body is not a form: every parameter needs `name=value`"));
    }
    let mut form = HashMap::new();
    for (key, value) in url::form_urlencoded::parse(body) {
        // Unknown parameters are ignored, and so are empty ones: "parameters sent without
        // a value MUST be treated as if they were omitted" (RFC 6749 section 3.1).
        if !KNOWN_PARAMETERS.contains(&key.as_ref()) || value.is_empty() {
            continue;
        }
        if value.chars().any(refused_in_line) {
            return Err(invalid_request(&format!("the parameter `{key}` contains a control character")));
        }
        if form.insert(key.clone().into_owned(), value.into_owned()).is_some() {
            return Err(invalid_request(&format!("the parameter `{key}` is repeated")));
        }
    }
    Ok(form)
}

fn form_decode(part: &str) -> Option<String> {
    percent_encoding::percent_decode_str(&part.replace('+', " ")).decode_utf8().ok().map(|s| s.into_owned())
}

/// Client authentication: HTTP Basic (`client_secret_basic`, with id and secret
/// form-decoded after base64) or form fields (`client_secret_post`), never both.
fn client_credentials(
    headers: &HeaderMap,
    form: &HashMap<String, String>,
) -> Result<Option<ClientCredentials>, Reply> {
    let basic = match headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()) {
        Some(value) if value.len() > 6 && value[..6].eq_ignore_ascii_case("basic ") => {
            let decoded = STANDARD
                .decode(value[6..].trim())
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .ok_or(Reply::OAuth(OAuthError::InvalidClient))?;
            let (id, secret) = decoded.split_once(':').ok_or(Reply::OAuth(OAuthError::InvalidClient))?;
            Some(ClientCredentials {
                client_id: form_decode(id).ok_or(Reply::OAuth(OAuthError::InvalidClient))?,
                client_secret: form_decode(secret).ok_or(Reply::OAuth(OAuthError::InvalidClient))?,
            })
        }
        _ => None,
    };
    let posted = match (form.get("client_id"), form.get("client_secret")) {
        (Some(id), Some(secret)) => {
            Some(ClientCredentials { client_id: id.clone(), client_secret: secret.clone() })
        }
        (None, None) => None,
        // Half a credential is a failed client authentication (RFC 6749 section 5.2).
        _ => return Err(Reply::OAuth(OAuthError::InvalidClient)),
    };
    match (basic, posted) {
        // "utilizes more than one mechanism for authenticating the client" (RFC 6749 5.2).
        (Some(_), Some(_)) => Err(invalid_request("use one client authentication method, not two")),
        (basic, posted) => Ok(basic.or(posted)),
    }
}

fn too_many(wait: std::time::Duration) -> Reply {
    let seconds = wait.as_secs().max(1);
    ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "too_many_requests",
        "too many requests to the token endpoints; retry later",
    )
    .with_header(header::RETRY_AFTER, seconds.to_string())
    .into()
}

/// Applies the per-address and per-client limits of the endpoints that check a client
/// secret (`/auth/token`, `/auth/refresh`, and `/auth/revoke` with client credentials).
fn rate_limit(req: &HttpRequest, state: &AppState, client_id: &str) -> Result<(), Reply> {
    let now = DefaultClock::default().now();
    // The client's address behind the trusted proxies: without them, every client behind
    // one load balancer would share its limit (docs/operations.md "Proxies").
    if let Some(addr) = req.extensions().get::<ClientAddress>().and_then(|a| a.0) {
        state.token_limits.per_address.check_key(&addr).map_err(|n| too_many(n.wait_time_from(now)))?;
    }
    state
        .token_limits
        .per_client
        .check_key(&client_id.to_owned())
        .map_err(|n| too_many(n.wait_time_from(now)))?;
    Ok(())
}

fn token_response(tokens: IssuedTokens) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::PRAGMA, "no-cache"))
        .json(TokenResponse::from(tokens))
}

async fn grant(
    req: &HttpRequest,
    state: &AppState,
    body: &[u8],
    refresh_only: bool,
) -> Result<HttpResponse, Reply> {
    let form = parse_form(req, body)?;
    let credentials = client_credentials(req.headers(), &form)?;
    rate_limit(req, state, credentials.as_ref().map_or("", |c| c.client_id.as_str()))?;
    let credentials = credentials.ok_or(Reply::OAuth(OAuthError::InvalidClient))?;
    let scope = form.get("scope").map(String::as_str);
    let tokens = match form.get("grant_type").map(String::as_str) {
        None => return Err(invalid_request("grant_type is required")),
        Some("client_credentials") if !refresh_only => {
            state.tokens.client_credentials(&credentials, scope).await?
        }
        Some("refresh_token") => {
            let presented =
                form.get("refresh_token").ok_or_else(|| invalid_request("refresh_token is required"))?;
            state.tokens.refresh(&credentials, presented, scope).await?
        }
        Some(_) => return Err(Reply::OAuth(OAuthError::UnsupportedGrantType)),
    };
    Ok(token_response(tokens))
}

/// Obtain an access token with the client credentials grant.
///
/// RFC 6749 section 4.4. Authenticate the client with HTTP Basic or with `client_id` and
/// `client_secret` in the body, not both. Also accepts `grant_type=refresh_token`.
#[utoipa::path(
    tag = "auth",
    operation_id = "create_token",
    request_body(content = TokenForm, content_type = "application/x-www-form-urlencoded"),
    security((), ("client_basic" = [])),
    extensions(("x-maturity" = json!("Available")), ("x-oauth" = json!(true))),
    responses(
        (status = 200, description = "Tokens issued", body = TokenResponse),
        (status = 400, description = "invalid_request, invalid_scope, invalid_grant or unsupported_grant_type", body = OAuthErrorResponse),
        (status = 401, description = "invalid_client", body = OAuthErrorResponse,
            headers(("WWW-Authenticate" = String, description = "Basic challenge"))),
        FormTooLarge,
        RateLimited,
    )
)]
#[post("/api/v1/auth/token")]
pub async fn create_token(req: HttpRequest, state: web::Data<AppState>, body: web::Bytes) -> HttpResponse {
    grant(&req, &state, &body, false).await.unwrap_or_else(Reply::into_response)
}

/// Refresh an access token.
///
/// RFC 6749 section 6: `grant_type=refresh_token` with client authentication. Refresh
/// tokens are single use; presenting a spent one revokes every token of its family.
#[utoipa::path(
    tag = "auth",
    operation_id = "refresh_token",
    request_body(content = RefreshForm, content_type = "application/x-www-form-urlencoded"),
    security((), ("client_basic" = [])),
    extensions(("x-maturity" = json!("Available")), ("x-oauth" = json!(true))),
    responses(
        (status = 200, description = "New tokens; the refresh token presented is spent", body = TokenResponse),
        (status = 400, description = "invalid_request, invalid_scope, invalid_grant or unsupported_grant_type", body = OAuthErrorResponse),
        (status = 401, description = "invalid_client", body = OAuthErrorResponse,
            headers(("WWW-Authenticate" = String, description = "Basic challenge"))),
        FormTooLarge,
        RateLimited,
    )
)]
#[post("/api/v1/auth/refresh")]
pub async fn refresh_token(req: HttpRequest, state: web::Data<AppState>, body: web::Bytes) -> HttpResponse {
    grant(&req, &state, &body, true).await.unwrap_or_else(Reply::into_response)
}

async fn revocation(req: &HttpRequest, state: &AppState, body: &[u8]) -> Result<HttpResponse, Reply> {
    // With a bearer token the body may be left out: the bearer token is then revoked.
    let form = if body.is_empty() && req.headers().get(header::CONTENT_TYPE).is_none() {
        HashMap::new()
    } else {
        parse_form(req, body)?
    };
    let bearer = bearer_token(req)?;
    let (caller, default_token) = match bearer {
        Some(token) => {
            let principal = state.tokens.authenticate_bearer(&token).await.map_err(ApiError::from)?;
            req.extensions_mut().insert(principal.clone());
            (principal.client_id, Some(token))
        }
        None => match client_credentials(req.headers(), &form)? {
            // A secret checked here could be guessed here: the token endpoint's limits apply.
            Some(credentials) => {
                rate_limit(req, state, &credentials.client_id)?;
                (state.tokens.authenticate_client(&credentials).await?.id, None)
            }
            None => {
                return Err(ApiError::new(
                    StatusCode::UNAUTHORIZED,
                    "unauthorized",
                    "a bearer token or client credentials are required",
                )
                .with_header(header::WWW_AUTHENTICATE, "Bearer realm=\"consular\"")
                .into());
            }
        },
    };
    let token =
        form.get("token").cloned().or(default_token).ok_or_else(|| invalid_request("token is required"))?;
    state.tokens.revoke(caller, &token, form.get("token_type_hint").map(String::as_str)).await?;
    Ok(HttpResponse::Ok().insert_header((header::CACHE_CONTROL, "no-store")).finish())
}

/// Revoke a token.
///
/// RFC 7009. Authenticate with a bearer token (the token revoked by default) or with
/// client credentials (rate limited as at the token endpoint). Answers 200 for unknown
/// tokens too; a client revokes only its own tokens. A revoked access token is refused by
/// every server node within a second.
#[utoipa::path(
    tag = "auth",
    operation_id = "revoke_token",
    request_body(content = RevokeForm, content_type = "application/x-www-form-urlencoded"),
    security(("oauth2" = []), ("client_basic" = [])),
    extensions(("x-maturity" = json!("Available")), ("x-oauth" = json!(true)), ("x-optional-body" = json!(true))),
    responses(
        (status = 200, description = "Revoked, or nothing of the caller's to revoke"),
        (status = 400, description = "invalid_request", body = OAuthErrorResponse),
        (status = 401, description = "No valid bearer token or client credentials",
            content(
                (OAuthErrorResponse = "application/json"),
                (Problem = "application/problem+json"),
            ),
            headers(("WWW-Authenticate" = String, description = "Bearer or Basic challenge"))),
        FormTooLarge,
        RevokeRateLimited,
    )
)]
#[post("/api/v1/auth/revoke")]
pub async fn revoke_token(req: HttpRequest, state: web::Data<AppState>, body: web::Bytes) -> HttpResponse {
    revocation(&req, &state, &body).await.unwrap_or_else(Reply::into_response)
}

/// The public keys that verify access tokens (RFC 7517).
///
/// No authentication. The Ed25519 public keys (EdDSA, each named by its `kid`) that
/// verify access tokens: a new key is published before it signs anything, and an old
/// one stays until every token it signed has expired. Cacheable for 5 minutes; when a
/// token's `kid` is not in a cached copy, fetch the set again before refusing the
/// token.
#[utoipa::path(
    tag = "auth",
    operation_id = "get_jwks",
    security(),
    extensions(("x-maturity" = json!("Available"))),
    responses((status = 200, description = "The JSON Web Key Set", body = JsonWebKeySet, content_type = "application/json"))
)]
#[get("/.well-known/jwks.json")]
pub async fn jwks(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, "public, max-age=300"))
        .json(state.tokens.keys().jwks())
}
