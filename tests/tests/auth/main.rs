//! Tokens end to end (docs/api.md "Authentication"): the client credentials grant through the
//! `oauth2` crate, refresh rotation and reuse detection, RFC 7009 revocation on one and
//! two nodes, every way a bearer token is refused, scopes, the token endpoint's errors,
//! disabled clients, secret rotation and the JWKS.
//! One module per concern; the helpers they share are below.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod bearer;
mod clients;
mod grants;
mod jwks;
mod refresh;
mod revocation;
mod token_endpoint;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use consular_tests::{
    Backend, OAuthHttp, TestApp, both, eventually, expect_bearer_refusal, expect_oauth_error, expect_problem,
    foreign_ed25519_key, header, mission_body, sign_raw,
};
use oauth2::basic::{BasicClient, BasicErrorResponseType, BasicTokenType};
use oauth2::{AuthType, ClientId, ClientSecret, RequestTokenError, Scope, TokenResponse, TokenUrl};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::time::Duration;

const TOKEN: &str = "/api/v1/auth/token";
const REFRESH: &str = "/api/v1/auth/refresh";
const REVOKE: &str = "/api/v1/auth/revoke";
const MISSIONS: &str = "/api/v1/missions";
const CLIENTS: &str = "/api/v1/auth/clients";

/// How long a revocation may take to reach every node (within a second: docs/architecture.md,
/// "Revocation reaches every node within a second"), with some slack for a loaded test
/// machine.
const PROPAGATION: Duration = Duration::from_millis(1500);

type OAuthClient = oauth2::basic::BasicClient<
    oauth2::EndpointNotSet,
    oauth2::EndpointNotSet,
    oauth2::EndpointNotSet,
    oauth2::EndpointNotSet,
    oauth2::EndpointSet,
>;

fn oauth_client(app: &TestApp, id: &str, secret: &str, token_path: &str, auth: AuthType) -> OAuthClient {
    BasicClient::new(ClientId::new(id.to_owned()))
        .set_client_secret(ClientSecret::new(secret.to_owned()))
        .set_token_uri(TokenUrl::new(app.url(token_path)).unwrap())
        .set_auth_type(auth)
}

fn scopes_of(token: &impl TokenResponse) -> Vec<String> {
    let mut scopes: Vec<String> = token.scopes().into_iter().flatten().map(|s| s.to_string()).collect();
    scopes.sort();
    scopes
}

async fn status_with(app: &TestApp, token: &str) -> StatusCode {
    app.get(MISSIONS, token).await.status()
}

/// Waits until `token` is refused on `app` (401 invalid_token), polling every 50 ms.
async fn refused_within(app: &TestApp, token: &str, limit: Duration, what: &str) -> Duration {
    eventually(limit, what, || async { status_with(app, token).await == StatusCode::UNAUTHORIZED }).await
}
