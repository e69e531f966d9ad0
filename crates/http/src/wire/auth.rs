//! The wire of `/api/v1/auth/token`, `/refresh` and `/revoke`: the forms (as documented;
//! the handlers read them as forms), the token response, the OAuth error, and the
//! problems these operations document.

use crate::wire::common::problem_response;
use consular_application::auth::IssuedTokens;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A successful token response (RFC 6749 section 5.1).
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenResponse {
    /// A signed JWT (`typ: at+jwt`, EdDSA); send it as `Authorization: Bearer ...`.
    pub access_token: String,
    /// Always `Bearer`.
    #[schema(example = "Bearer")]
    pub token_type: String,
    /// Seconds until the access token expires.
    pub expires_in: i64,
    /// The granted scopes, space separated.
    #[schema(example = "admin")]
    pub scope: String,
    /// Opaque, single use: each refresh returns a new one.
    pub refresh_token: String,
}

impl From<IssuedTokens> for TokenResponse {
    fn from(tokens: IssuedTokens) -> Self {
        TokenResponse {
            access_token: tokens.access_token,
            token_type: "Bearer".to_owned(),
            expires_in: tokens.expires_in,
            scope: tokens.scope.to_string(),
            refresh_token: tokens.refresh_token,
        }
    }
}

/// An error of the OAuth endpoints (RFC 6749 section 5.2).
#[derive(Debug, Serialize, ToSchema)]
pub struct OAuthErrorResponse {
    #[schema(example = "invalid_client")]
    pub error: String,
    pub error_description: String,
}

/// The token request, `application/x-www-form-urlencoded`: the client credentials grant,
/// or the refresh grant as at `/auth/refresh`, which needs its `refresh_token`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
#[allow(dead_code)]
pub enum TokenForm {
    ClientCredentials(ClientCredentialsForm),
    Refresh(RefreshForm),
}

/// The client credentials grant (RFC 6749 section 4.4), `application/x-www-form-urlencoded`.
#[derive(Debug, Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct ClientCredentialsForm {
    #[schema(example = "client_credentials", pattern = "^client_credentials$")]
    grant_type: String,
    /// A subset of the client's scopes, space separated; all of them by default.
    scope: Option<String>,
    /// With `client_secret_post`; otherwise use HTTP Basic.
    client_id: Option<String>,
    client_secret: Option<String>,
}

/// The refresh request, `application/x-www-form-urlencoded`.
#[derive(Debug, Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct RefreshForm {
    #[schema(example = "refresh_token", pattern = "^refresh_token$")]
    grant_type: String,
    #[schema(min_length = 1)]
    refresh_token: String,
    /// Narrower scopes than the original grant, if wanted.
    scope: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
}

/// The revocation request (RFC 7009), `application/x-www-form-urlencoded`.
#[derive(Debug, Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct RevokeForm {
    /// The token to revoke; by default the bearer token of the request.
    token: Option<String>,
    /// `access_token` or `refresh_token`.
    token_type_hint: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
}

problem_response! {
    /// 413 of the three endpoints.
    FormTooLarge = 413, "The form is too large";
    /// 429 of the token endpoints.
    RateLimited = 429, "Rate limited per client and per address",
        headers (("Retry-After" = u64, description = "Seconds to wait"));
    /// 429 of the revocation with client credentials.
    RevokeRateLimited = 429, "With client credentials: rate limited per client and per address, as the token endpoint",
        headers (("Retry-After" = u64, description = "Seconds to wait"));
}
