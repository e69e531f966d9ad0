//! The wire of `/api/v1/auth/token`, `/refresh` and `/revoke`: the forms (as documented;
//! the handlers read them as forms), the token response, the OAuth error, and the
//! problems these operations document; and the key set of `/.well-known/jwks.json`, as
//! documented.

use crate::wire::common::problem_response;
use consular_application::auth::IssuedTokens;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A successful token response (RFC 6749 section 5.1).
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenResponse {
    /// A signed JWT (`typ: at+jwt`, EdDSA); send it as `Authorization: Bearer ...`.
    pub access_token: String,
    pub token_type: TokenType,
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
            token_type: TokenType::Bearer,
            expires_in: tokens.expires_in,
            scope: tokens.scope.to_string(),
            refresh_token: tokens.refresh_token,
        }
    }
}

/// The type of the access tokens issued (RFC 6750): always `Bearer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub enum TokenType {
    Bearer,
}

/// An error of the OAuth endpoints (RFC 6749 section 5.2).
#[derive(Debug, Serialize, ToSchema)]
pub struct OAuthErrorResponse {
    pub error: OAuthErrorCode,
    pub error_description: String,
}

/// The error codes of RFC 6749 section 5.2 this server answers (`server_error` only if a
/// failure of the server is not answered as a problem).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum OAuthErrorCode {
    InvalidRequest,
    InvalidClient,
    InvalidGrant,
    InvalidScope,
    UnsupportedGrantType,
    ServerError,
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

/// A JSON Web Key Set (RFC 7517 section 5): the public keys that verify access tokens,
/// newest first.
// Only documented: `GET /.well-known/jwks.json` serves the `KeySet`'s own set, which the
// test below reads into this type and writes back unchanged.
#[derive(Serialize, Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct JsonWebKeySet {
    keys: Vec<JsonWebKey>,
}

/// An Ed25519 public key (RFC 8037 section 2).
#[derive(Serialize, Deserialize, ToSchema)]
#[allow(dead_code)]
pub struct JsonWebKey {
    // No doc comment here: with `inline`, utoipa would wrap the enum in an `allOf` beside
    // an object carrying the description.
    #[serde(rename = "use")]
    #[schema(inline)]
    key_use: KeyUse,
    #[schema(inline)]
    alg: KeyAlgorithm,
    /// The key's id: the `kid` of the tokens it signs.
    kid: String,
    #[schema(inline)]
    kty: KeyType,
    #[schema(inline)]
    crv: KeyCurve,
    /// The public key, base64url without padding (32 bytes).
    #[schema(pattern = "^[A-Za-z0-9_-]{43}$")]
    x: String,
}

/// What the key is for: signatures.
#[derive(Serialize, Deserialize, ToSchema)]
#[allow(dead_code)]
enum KeyUse {
    #[serde(rename = "sig")]
    Signature,
}

#[derive(Serialize, Deserialize, ToSchema)]
#[allow(dead_code)]
enum KeyAlgorithm {
    EdDSA,
}

/// An octet key pair.
#[derive(Serialize, Deserialize, ToSchema)]
#[allow(dead_code)]
enum KeyType {
    #[serde(rename = "OKP")]
    OctetKeyPair,
}

#[derive(Serialize, Deserialize, ToSchema)]
#[allow(dead_code)]
enum KeyCurve {
    Ed25519,
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

#[cfg(test)]
mod tests {
    use super::*;
    use consular_application::auth::KeySet;

    #[test]
    fn the_key_set_served_is_the_documented_one() {
        let keys = KeySet::generate_ephemeral().unwrap();
        let documented: JsonWebKeySet =
            serde_json::from_value(serde_json::to_value(keys.jwks()).unwrap()).unwrap();
        assert_eq!(documented.keys.len(), 1);
        assert_eq!(serde_json::to_string(&documented).unwrap(), serde_json::to_string(keys.jwks()).unwrap());
    }

    #[test]
    fn the_token_response_and_the_oauth_error_are_sent_as_before() {
        let error = OAuthErrorResponse {
            error: OAuthErrorCode::UnsupportedGrantType,
            error_description: "no".into(),
        };
        assert_eq!(
            serde_json::to_string(&error).unwrap(),
            r#"{"error":"unsupported_grant_type","error_description":"no"}"#
        );
        assert_eq!(serde_json::to_value(TokenType::Bearer).unwrap(), "Bearer");
    }
}
