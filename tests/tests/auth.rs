//! Tokens end to end (docs/api.md "Authentication"): the client credentials grant through the
//! `oauth2` crate, refresh rotation and reuse detection, RFC 7009 revocation on one and
//! two nodes, every way a bearer token is refused, scopes, the token endpoint's errors,
//! disabled clients, secret rotation and the JWKS.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

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

// ------------------------------------------------------------ the oauth2 crate as client

async fn oauth2_client_credentials_with_basic_auth(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let http = OAuthHttp(app.http.clone());
    let client = oauth_client(&app, &app.admin_id, &app.admin_secret, TOKEN, AuthType::BasicAuth);
    let token = client.exchange_client_credentials().request_async(&http).await.unwrap();
    assert_eq!(*token.token_type(), BasicTokenType::Bearer);
    assert_eq!(token.expires_in(), Some(Duration::from_secs(900)));
    assert_eq!(scopes_of(&token), ["admin"]);
    assert!(token.refresh_token().is_some());
    assert_eq!(status_with(&app, token.access_token().secret()).await, StatusCode::OK);
}
both!(oauth2_client_credentials_with_basic_auth);

async fn oauth2_client_credentials_with_request_body(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let mission = app.create_mission(&admin, "fr-paris").await;
    let both_scopes = app.principal_by(&admin, &["admin", "staff"], mission["id"].as_str()).await;
    let http = OAuthHttp(app.http.clone());
    let client =
        oauth_client(&app, &both_scopes.client_id, &both_scopes.secret, TOKEN, AuthType::RequestBody);

    let all = client.exchange_client_credentials().request_async(&http).await.unwrap();
    assert_eq!(scopes_of(&all), ["admin", "staff"]);
    let narrowed = client
        .exchange_client_credentials()
        .add_scope(Scope::new("staff".into()))
        .request_async(&http)
        .await
        .unwrap();
    assert_eq!(scopes_of(&narrowed), ["staff"]);
    assert_eq!(status_with(&app, narrowed.access_token().secret()).await, StatusCode::OK);

    let refused = client
        .exchange_client_credentials()
        .add_scope(Scope::new("citizen".into()))
        .request_async(&http)
        .await;
    match refused {
        Err(RequestTokenError::ServerResponse(e)) => {
            assert_eq!(*e.error(), BasicErrorResponseType::InvalidScope)
        }
        other => panic!("expected invalid_scope, got {other:?}"),
    }
}
both!(oauth2_client_credentials_with_request_body);

async fn oauth2_refresh_at_both_endpoints_then_revoke(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let http = OAuthHttp(app.http.clone());
    let at_token = oauth_client(&app, &app.admin_id, &app.admin_secret, TOKEN, AuthType::BasicAuth);
    let at_refresh = oauth_client(&app, &app.admin_id, &app.admin_secret, REFRESH, AuthType::RequestBody);

    let first = at_token.exchange_client_credentials().request_async(&http).await.unwrap();
    let spent = first.refresh_token().unwrap().clone();
    let second = at_token.exchange_refresh_token(&spent).request_async(&http).await.unwrap();
    assert_eq!(*second.token_type(), BasicTokenType::Bearer);
    assert_eq!(second.expires_in(), Some(Duration::from_secs(900)));
    assert_eq!(scopes_of(&second), ["admin"]);
    let rotated = second.refresh_token().unwrap().clone();
    assert_ne!(rotated.secret(), spent.secret(), "refresh tokens rotate");
    assert_ne!(second.access_token().secret(), first.access_token().secret());

    let third = at_refresh.exchange_refresh_token(&rotated).request_async(&http).await.unwrap();
    assert_eq!(scopes_of(&third), ["admin"]);
    let access = third.access_token().secret().clone();
    assert_eq!(status_with(&app, &access).await, StatusCode::OK);

    // oauth2's revocation refuses http:// URLs: RFC 7009 by hand, with client_secret_basic.
    let revoked = app
        .request(Method::POST, REVOKE)
        .basic_auth(&app.admin_id, Some(&app.admin_secret))
        .form(&[("token", access.as_str()), ("token_type_hint", "access_token")])
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), StatusCode::OK);
    assert_eq!(header(revoked.headers(), "cache-control"), "no-store");
    let problem = expect_bearer_refusal(app.get(MISSIONS, &access).await, "invalid_token").await;
    assert!(problem["detail"].as_str().unwrap().contains("revoked"), "{problem}");
    // The other access tokens of the family are untouched by an access token revocation.
    assert_eq!(status_with(&app, second.access_token().secret()).await, StatusCode::OK);

    // Revoking the live refresh token ends the family: it cannot be used any more.
    let live = third.refresh_token().unwrap().clone();
    app.revoke(&app.admin_id, &app.admin_secret, live.secret()).await;
    match at_refresh.exchange_refresh_token(&live).request_async(&http).await {
        Err(RequestTokenError::ServerResponse(e)) => {
            assert_eq!(*e.error(), BasicErrorResponseType::InvalidGrant)
        }
        other => panic!("expected invalid_grant, got {other:?}"),
    }
    // RFC 7009 section 2.1: the access tokens of that grant go with it.
    refused_within(&app, second.access_token().secret(), PROPAGATION, "an access token of a revoked grant")
        .await;
    refused_within(&app, first.access_token().secret(), PROPAGATION, "an access token of a revoked grant")
        .await;
}
both!(oauth2_refresh_at_both_endpoints_then_revoke);

async fn token_responses_are_never_cached(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let form = [("grant_type", "client_credentials")];
    let response = app.token_request(TOKEN, Some((&app.admin_id, &app.admin_secret)), &form).await;
    assert_eq!(response.status(), StatusCode::OK);
    let headers = response.headers().clone();
    assert_eq!(header(&headers, "cache-control"), "no-store");
    assert_eq!(header(&headers, "pragma"), "no-cache");
    assert!(header(&headers, "content-type").starts_with("application/json"));
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 900);
    assert_eq!(body["scope"], "admin");
    assert!(body["refresh_token"].as_str().is_some_and(|r| r.len() >= 43), "{body}");

    let refreshed = app
        .refresh_request(REFRESH, &app.admin_id, &app.admin_secret, body["refresh_token"].as_str().unwrap())
        .await;
    assert_eq!(refreshed.status(), StatusCode::OK);
    assert_eq!(header(refreshed.headers(), "cache-control"), "no-store");
}
both!(token_responses_are_never_cached);

async fn the_access_token_lifetime_is_configured(backend: Backend) {
    let app = TestApp::spawn_with(backend, |s| s.access_token_ttl_secs = 120).await;
    let tokens = app.token_for(&app.admin_id, &app.admin_secret, None).await;
    assert_eq!(tokens.expires_in, 120);
    let claims = tokens.access_token.split('.').nth(1).unwrap().to_owned();
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).unwrap()).unwrap();
    assert_eq!(claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap(), 120);
}
both!(the_access_token_lifetime_is_configured);

async fn access_tokens_follow_rfc_9068(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let mission = app.create_mission(&admin, "fr-paris").await;
    let staff = app.principal(&["staff"], mission["id"].as_str()).await;
    let parts: Vec<&str> = staff.token.split('.').collect();
    assert_eq!(parts.len(), 3);
    let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
    assert_eq!(header["typ"], "at+jwt");
    assert_eq!(header["alg"], "EdDSA");
    assert!(header["kid"].is_string());
    assert_eq!(claims["iss"], "https://consular.test");
    assert_eq!(claims["aud"], "consular-api");
    assert_eq!(claims["client_id"], staff.client_id.as_str());
    assert_eq!(claims["scope"], "staff");
    assert_eq!(claims["mission"], mission["id"]);
    assert!(claims["sub"].as_str().unwrap().starts_with("staff:"), "{claims}");
    assert!(uuid::Uuid::parse_str(claims["jti"].as_str().unwrap()).is_ok());
    let iat = claims["iat"].as_i64().unwrap();
    assert_eq!(claims["nbf"].as_i64().unwrap(), iat);
    assert_eq!(claims["exp"].as_i64().unwrap() - iat, 900);

    let global: Value = {
        let token = app.admin_token().await;
        let payload = token.split('.').nth(1).unwrap().to_owned();
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap()).unwrap()
    };
    assert!(global.get("mission").is_none(), "a global admin's token has no mission: {global}");
}
both!(access_tokens_follow_rfc_9068);

// ------------------------------------------------------------ refresh rotation and reuse

async fn a_reused_refresh_token_revokes_its_family(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (id, secret) = (app.admin_id.clone(), app.admin_secret.clone());
    let first = app.token_for(&id, &secret, None).await;
    let response = app.refresh_request(REFRESH, &id, &secret, &first.refresh_token).await;
    assert_eq!(response.status(), StatusCode::OK);
    let second = consular_tests::Tokens::from_json(&response.json().await.unwrap());
    assert_eq!(status_with(&app, &second.access_token).await, StatusCode::OK);
    let unrelated = app.token_for(&id, &secret, None).await;

    // The spent token again: refused, and the whole family dies with it.
    let reuse = app.refresh_request(TOKEN, &id, &secret, &first.refresh_token).await;
    let (_, body) = expect_oauth_error(reuse, 400, "invalid_grant").await;
    assert!(body["error_description"].is_string());

    let next = app.refresh_request(REFRESH, &id, &secret, &second.refresh_token).await;
    expect_oauth_error(next, 400, "invalid_grant").await;
    refused_within(&app, &second.access_token, PROPAGATION, "the access token of the reused family").await;
    refused_within(&app, &first.access_token, PROPAGATION, "the first access token of the family").await;
    expect_bearer_refusal(app.get(MISSIONS, &second.access_token).await, "invalid_token").await;

    // Another grant of the same client is another family.
    assert_eq!(status_with(&app, &unrelated.access_token).await, StatusCode::OK);
    let other = app.refresh_request(REFRESH, &id, &secret, &unrelated.refresh_token).await;
    assert_eq!(other.status(), StatusCode::OK);
}
both!(a_reused_refresh_token_revokes_its_family);

async fn refresh_tokens_belong_to_their_client(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let other = app.principal(&["admin"], None).await;
    let tokens = app.token_for(&app.admin_id, &app.admin_secret, None).await;
    let stolen = app.refresh_request(REFRESH, &other.client_id, &other.secret, &tokens.refresh_token).await;
    expect_oauth_error(stolen, 400, "invalid_grant").await;
    let garbage = app.refresh_request(REFRESH, &app.admin_id, &app.admin_secret, "not-a-refresh-token").await;
    expect_oauth_error(garbage, 400, "invalid_grant").await;
    // Neither attempt spent the token for its owner.
    let own = app.refresh_request(REFRESH, &app.admin_id, &app.admin_secret, &tokens.refresh_token).await;
    assert_eq!(own.status(), StatusCode::OK);
    // Missing refresh_token, and a client_credentials grant at /refresh.
    let form = [("grant_type", "refresh_token")];
    let missing = app.token_request(REFRESH, Some((&app.admin_id, &app.admin_secret)), &form).await;
    expect_oauth_error(missing, 400, "invalid_request").await;
    let form = [("grant_type", "client_credentials")];
    let wrong_grant = app.token_request(REFRESH, Some((&app.admin_id, &app.admin_secret)), &form).await;
    expect_oauth_error(wrong_grant, 400, "unsupported_grant_type").await;
}
both!(refresh_tokens_belong_to_their_client);

/// RFC 6749 section 6: a refresh without `scope` gets the scope originally granted, and a
/// refresh can never widen it.
async fn a_refresh_keeps_the_scope_that_was_granted(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let mission = app.create_mission(&admin, "fr-paris").await;
    let client = app.principal_by(&admin, &["admin", "staff"], mission["id"].as_str()).await;
    let narrowed = app.token_for(&client.client_id, &client.secret, Some("staff")).await;
    assert_eq!(narrowed.scope, "staff");

    let response =
        app.refresh_request(REFRESH, &client.client_id, &client.secret, &narrowed.refresh_token).await;
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["scope"], "staff", "a refresh widened the granted scope: {body}");
    let refreshed = consular_tests::Tokens::from_json(&body);
    let create = app.post_json(MISSIONS, &refreshed.access_token, &mission_body("de-berlin")).await;
    expect_problem(create, 403, "insufficient_scope").await;

    let form = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refreshed.refresh_token.as_str()),
        ("scope", "admin"),
    ];
    let widened = app.token_request(REFRESH, Some((&client.client_id, &client.secret)), &form).await;
    expect_oauth_error(widened, 400, "invalid_scope").await;
}
both!(a_refresh_keeps_the_scope_that_was_granted);

// ------------------------------------------------------------ revocation

async fn revocation_by_bearer_defaults_to_the_bearer_itself(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let keep = app.admin_token().await;
    let empty_form: [(&str, &str); 0] = [];
    let response = app.authed(Method::POST, REVOKE, &token).form(&empty_form).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    expect_bearer_refusal(app.get(MISSIONS, &token).await, "invalid_token").await;
    assert_eq!(status_with(&app, &keep).await, StatusCode::OK);
}
both!(revocation_by_bearer_defaults_to_the_bearer_itself);

/// docs/api.md "Revoking": the body's `token` defaults to the bearer token; a bearer request with no
/// body at all (so no form content type) should revoke the bearer token too.
async fn revocation_by_bearer_without_a_body(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let response = app.authed(Method::POST, REVOKE, &token).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{:?}", response.text().await);
    expect_bearer_refusal(app.get(MISSIONS, &token).await, "invalid_token").await;
}
both!(revocation_by_bearer_without_a_body);

async fn a_client_revokes_only_its_own_tokens(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let other = app.principal(&["admin"], None).await;
    let victim = app.token_for(&app.admin_id, &app.admin_secret, None).await;
    // Another client "revokes" the admin's access and refresh tokens: 200, and no effect.
    for token in [&victim.access_token, &victim.refresh_token] {
        let response = app
            .authed(Method::POST, REVOKE, &other.token)
            .form(&[("token", token.as_str())])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
    // Unknown tokens are 200 too (RFC 7009 section 2.2).
    let unknown = app
        .authed(Method::POST, REVOKE, &other.token)
        .form(&[("token", "no-such-token"), ("token_type_hint", "refresh_token")])
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), StatusCode::OK);
    tokio::time::sleep(Duration::from_millis(400)).await; // past one revocation sync
    assert_eq!(status_with(&app, &victim.access_token).await, StatusCode::OK);
    let refresh = app.refresh_request(REFRESH, &app.admin_id, &app.admin_secret, &victim.refresh_token).await;
    assert_eq!(refresh.status(), StatusCode::OK);
}
both!(a_client_revokes_only_its_own_tokens);

async fn revocation_needs_authentication(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let anonymous =
        app.request(Method::POST, REVOKE).form(&[("token", token.as_str())]).send().await.unwrap();
    let (headers, _) = expect_problem(anonymous, 401, "unauthorized").await;
    assert!(header(&headers, "www-authenticate").starts_with("Bearer"));
    let wrong = app
        .request(Method::POST, REVOKE)
        .basic_auth(&app.admin_id, Some("wrong-secret"))
        .form(&[("token", token.as_str())])
        .send()
        .await
        .unwrap();
    let (headers, _) = expect_oauth_error(wrong, 401, "invalid_client").await;
    assert!(header(&headers, "www-authenticate").starts_with("Basic"));
    assert_eq!(status_with(&app, &token).await, StatusCode::OK);
}
both!(revocation_needs_authentication);

/// Two nodes on one database: a token revoked through node A is refused by node B within
/// a second, and a client disabled through node B is refused by node A.
async fn a_revocation_reaches_every_node(backend: Backend) {
    let a = TestApp::spawn(backend).await;
    let b = a.spawn_node().await;
    let tokens = a.token_for(&a.admin_id, &a.admin_secret, None).await;
    assert_eq!(status_with(&b, &tokens.access_token).await, StatusCode::OK, "node B accepts node A's tokens");
    assert_eq!(status_with(&a, &tokens.access_token).await, StatusCode::OK);

    a.revoke(&a.admin_id, &a.admin_secret, &tokens.access_token).await;
    expect_bearer_refusal(a.get(MISSIONS, &tokens.access_token).await, "invalid_token").await;
    refused_within(&b, &tokens.access_token, PROPAGATION, "node B refusing a token revoked on node A").await;
    expect_bearer_refusal(b.get(MISSIONS, &tokens.access_token).await, "invalid_token").await;

    let admin_b = b.admin_token().await;
    let client = b.principal_by(&admin_b, &["admin"], None).await;
    assert_eq!(status_with(&a, &client.token).await, StatusCode::OK);
    let disabled = b.post_empty(&format!("{CLIENTS}/{}/disable", client.client_id), &admin_b).await;
    assert_eq!(disabled.status(), StatusCode::OK);
    refused_within(&a, &client.token, PROPAGATION, "node A refusing a client disabled on node B").await;
    b.stop().await;
}
both!(a_revocation_reaches_every_node);

// ------------------------------------------------------------ bearer refusals

/// The forging helper makes tokens the server accepts, so each refusal below is caused by
/// the one thing that test changes.
async fn a_forged_token_with_valid_claims_is_accepted(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.forge(json!({}), json!({})).await;
    assert_eq!(status_with(&app, &token).await, StatusCode::OK);
    let typ = app.forge(json!({ "typ": "application/at+jwt" }), json!({})).await;
    assert_eq!(status_with(&app, &typ).await, StatusCode::OK);
    let skewed =
        app.forge(json!({}), json!({ "exp": time::OffsetDateTime::now_utc().unix_timestamp() - 10 })).await;
    assert_eq!(status_with(&app, &skewed).await, StatusCode::OK, "10 s of clock skew is tolerated");
}
both!(a_forged_token_with_valid_claims_is_accepted);

async fn an_expired_token_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let token = app.forge(json!({}), json!({ "iat": now - 1000, "nbf": now - 1000, "exp": now - 60 })).await;
    let problem = expect_bearer_refusal(app.get(MISSIONS, &token).await, "invalid_token").await;
    assert!(problem["detail"].as_str().unwrap().contains("expired"), "{problem}");
}
both!(an_expired_token_is_refused);

async fn a_token_not_valid_yet_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let token = app.forge(json!({}), json!({ "iat": now + 120, "nbf": now + 120, "exp": now + 900 })).await;
    expect_bearer_refusal(app.get(MISSIONS, &token).await, "invalid_token").await;
}
both!(a_token_not_valid_yet_is_refused);

async fn a_bad_signature_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (kid, _) = app.signing_keys().await.into_iter().next().unwrap();
    let foreign = jsonwebtoken::EncodingKey::from_ed_der(&foreign_ed25519_key());
    let token =
        sign_raw(&json!({ "alg": "EdDSA", "typ": "at+jwt", "kid": kid }), &app.claims(json!({})), &foreign);
    let problem = expect_bearer_refusal(app.get(MISSIONS, &token).await, "invalid_token").await;
    assert!(problem["detail"].as_str().unwrap().contains("signature"), "{problem}");

    // A real token with a changed payload.
    let real = app.admin_token().await;
    let parts: Vec<&str> = real.split('.').collect();
    let mut claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
    claims["scope"] = json!("admin staff");
    let tampered = format!("{}.{}.{}", parts[0], URL_SAFE_NO_PAD.encode(claims.to_string()), parts[2]);
    expect_bearer_refusal(app.get(MISSIONS, &tampered).await, "invalid_token").await;
}
both!(a_bad_signature_is_refused);

async fn an_unsigned_token_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let (kid, _) = app.signing_keys().await.into_iter().next().unwrap();
    for alg in ["none", "None", "NONE"] {
        let header = URL_SAFE_NO_PAD.encode(json!({ "alg": alg, "typ": "at+jwt", "kid": kid }).to_string());
        let claims = URL_SAFE_NO_PAD.encode(app.claims(json!({})).to_string());
        for token in [format!("{header}.{claims}."), format!("{header}.{claims}")] {
            expect_bearer_refusal(app.get(MISSIONS, &token).await, "invalid_token").await;
        }
    }
    // Another algorithm than the one pinned (HS256 keyed with the public key, the classic
    // confusion attack) is refused as well.
    let hs = jsonwebtoken::encode(
        &jsonwebtoken::Header { typ: Some("at+jwt".into()), kid: Some(kid.clone()), ..Default::default() },
        &app.claims(json!({})),
        &jsonwebtoken::EncodingKey::from_secret(kid.as_bytes()),
    )
    .unwrap();
    expect_bearer_refusal(app.get(MISSIONS, &hs).await, "invalid_token").await;
}
both!(an_unsigned_token_is_refused);

async fn a_token_from_another_issuer_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.forge(json!({}), json!({ "iss": "https://evil.example" })).await;
    let problem = expect_bearer_refusal(app.get(MISSIONS, &token).await, "invalid_token").await;
    assert!(problem["detail"].as_str().unwrap().contains("issuer"), "{problem}");
    let missing = app.forge(json!({}), json!({ "iss": null })).await;
    expect_bearer_refusal(app.get(MISSIONS, &missing).await, "invalid_token").await;
}
both!(a_token_from_another_issuer_is_refused);

async fn a_token_for_another_audience_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.forge(json!({}), json!({ "aud": "another-api" })).await;
    let problem = expect_bearer_refusal(app.get(MISSIONS, &token).await, "invalid_token").await;
    assert!(problem["detail"].as_str().unwrap().contains("audience"), "{problem}");
    let missing = app.forge(json!({}), json!({ "aud": null })).await;
    expect_bearer_refusal(app.get(MISSIONS, &missing).await, "invalid_token").await;
}
both!(a_token_for_another_audience_is_refused);

async fn a_token_of_another_type_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    for typ in [json!("JWT"), json!("id_token+jwt"), json!(null)] {
        let token = app.forge(json!({ "typ": typ }), json!({})).await;
        let problem = expect_bearer_refusal(app.get(MISSIONS, &token).await, "invalid_token").await;
        assert!(problem["detail"].as_str().unwrap().contains("not an access token"), "{typ}: {problem}");
    }
}
both!(a_token_of_another_type_is_refused);

async fn a_token_with_an_unknown_kid_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    for kid in [json!("not-our-key"), json!(null)] {
        let token = app.forge(json!({ "kid": kid }), json!({})).await;
        let problem = expect_bearer_refusal(app.get(MISSIONS, &token).await, "invalid_token").await;
        assert!(problem["detail"].as_str().unwrap().contains("key"), "{kid}: {problem}");
    }
    // A token signed by another deployment's key, named with its own kid.
    let foreign = jsonwebtoken::EncodingKey::from_ed_der(&foreign_ed25519_key());
    let token = sign_raw(
        &json!({ "alg": "EdDSA", "typ": "at+jwt", "kid": "foreign" }),
        &app.claims(json!({})),
        &foreign,
    );
    expect_bearer_refusal(app.get(MISSIONS, &token).await, "invalid_token").await;
}
both!(a_token_with_an_unknown_kid_is_refused);

async fn a_token_in_the_query_string_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    let response =
        app.request(Method::GET, &format!("{MISSIONS}?access_token={token}")).send().await.unwrap();
    expect_bearer_refusal(response, "invalid_request").await;
    // Even next to a valid Authorization header.
    let response = app.get(&format!("{MISSIONS}?access_token={token}"), &token).await;
    expect_bearer_refusal(response, "invalid_request").await;
}
both!(a_token_in_the_query_string_is_refused);

async fn a_revoked_token_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let token = app.admin_token().await;
    assert_eq!(status_with(&app, &token).await, StatusCode::OK);
    app.revoke(&app.admin_id, &app.admin_secret, &token).await;
    let problem = expect_bearer_refusal(app.get(MISSIONS, &token).await, "invalid_token").await;
    assert!(problem["detail"].as_str().unwrap().contains("revoked"), "{problem}");
}
both!(a_revoked_token_is_refused);

async fn a_malformed_token_is_refused(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    for token in ["garbage", "a.b.c", "eyJhbGciOiJFZERTQSJ9..", "...."] {
        expect_bearer_refusal(app.get(MISSIONS, token).await, "invalid_token").await;
    }
}
both!(a_malformed_token_is_refused);

async fn a_missing_token_gets_a_bare_challenge(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    for request in [
        app.request(Method::GET, MISSIONS),
        app.request(Method::GET, MISSIONS).header("authorization", "Basic Zm9vOmJhcg=="),
        app.request(Method::GET, MISSIONS).header("authorization", "Bearer "),
    ] {
        let response = request.send().await.unwrap();
        let (headers, _) = expect_problem(response, 401, "unauthorized").await;
        let challenge = header(&headers, "www-authenticate");
        assert!(challenge.starts_with("Bearer realm="), "{challenge}");
        assert!(!challenge.contains("error="), "no error code without a token: {challenge}");
    }
}
both!(a_missing_token_gets_a_bare_challenge);

// ------------------------------------------------------------ scopes

async fn missing_scopes_are_403_insufficient_scope(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let mission = app.create_mission(&admin, "fr-paris").await;
    let staff = app.principal_by(&admin, &["staff"], mission["id"].as_str()).await;
    let citizen = app.principal_by(&admin, &["citizen"], mission["id"].as_str()).await;
    for token in [&staff.token, &citizen.token] {
        let create = app.post_json(MISSIONS, token, &mission_body("de-berlin")).await;
        let (headers, _) = expect_problem(create, 403, "insufficient_scope").await;
        let challenge = header(&headers, "www-authenticate");
        assert!(challenge.contains("error=\"insufficient_scope\""), "{challenge}");
        assert!(challenge.contains("scope=\"admin\""), "{challenge}");
        let list = app.get(CLIENTS, token).await;
        let (headers, _) = expect_problem(list, 403, "insufficient_scope").await;
        assert!(header(&headers, "www-authenticate").contains("error=\"insufficient_scope\""));
    }

    // A client holding admin and staff, with a token asked for `staff` only.
    let global_both = app.principal_by(&admin, &["admin", "staff"], None).await;
    let staff_only = app.token_for(&global_both.client_id, &global_both.secret, Some("staff")).await;
    assert_eq!(staff_only.scope, "staff");
    let create = app.post_json(MISSIONS, &staff_only.access_token, &mission_body("de-berlin")).await;
    expect_problem(create, 403, "insufficient_scope").await;
    let full = app.token_for(&global_both.client_id, &global_both.secret, None).await;
    assert_eq!(full.scope, "admin staff");
    let create = app.post_json(MISSIONS, &full.access_token, &mission_body("de-berlin")).await;
    assert_eq!(create.status(), StatusCode::CREATED);
}
both!(missing_scopes_are_403_insufficient_scope);

// ------------------------------------------------------------ token endpoint errors

async fn a_wrong_secret_and_an_unknown_client_answer_alike(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let form = [("grant_type", "client_credentials")];
    let unknown_id = uuid::Uuid::now_v7().to_string();
    let mut answers = Vec::new();
    for (id, secret) in [
        (app.admin_id.as_str(), "wrong-secret"),
        (unknown_id.as_str(), app.admin_secret.as_str()),
        ("not-a-uuid", "whatever"),
    ] {
        let basic = app.token_request(TOKEN, Some((id, secret)), &form).await;
        let (headers, body) = expect_oauth_error(basic, 401, "invalid_client").await;
        let challenge = header(&headers, "www-authenticate");
        assert!(challenge.starts_with("Basic"), "{challenge}");
        answers.push((challenge, body));
        let posted = [("grant_type", "client_credentials"), ("client_id", id), ("client_secret", secret)];
        let (headers, body) =
            expect_oauth_error(app.token_request(TOKEN, None, &posted).await, 401, "invalid_client").await;
        answers.push((header(&headers, "www-authenticate"), body));
    }
    assert!(answers.windows(2).all(|w| w[0] == w[1]), "the answers differ: {answers:#?}");
    // No credentials at all.
    let none = app.token_request(TOKEN, None, &form).await;
    expect_oauth_error(none, 401, "invalid_client").await;
}
both!(a_wrong_secret_and_an_unknown_client_answer_alike);

/// RFC 6749 section 5.2: a request that "utilizes more than one mechanism for
/// authenticating the client" is `invalid_request` (400), and so says the brief.
async fn two_client_authentication_methods_are_invalid_request(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let form = [
        ("grant_type", "client_credentials"),
        ("client_id", app.admin_id.as_str()),
        ("client_secret", app.admin_secret.as_str()),
    ];
    let response = app.token_request(TOKEN, Some((&app.admin_id, &app.admin_secret)), &form).await;
    expect_oauth_error(response, 400, "invalid_request").await;
}
both!(two_client_authentication_methods_are_invalid_request);

async fn half_a_credential_is_a_failed_client_authentication(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let half = [("grant_type", "client_credentials"), ("client_id", app.admin_id.as_str())];
    let (headers, _) =
        expect_oauth_error(app.token_request(TOKEN, None, &half).await, 401, "invalid_client").await;
    assert!(header(&headers, "www-authenticate").starts_with("Basic"));
    let secret_only = [("grant_type", "client_credentials"), ("client_secret", app.admin_secret.as_str())];
    expect_oauth_error(app.token_request(TOKEN, None, &secret_only).await, 401, "invalid_client").await;
}
both!(half_a_credential_is_a_failed_client_authentication);

async fn token_request_errors(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let basic = Some((app.admin_id.as_str(), app.admin_secret.as_str()));

    let password = app.token_request(TOKEN, basic, &[("grant_type", "password")]).await;
    expect_oauth_error(password, 400, "unsupported_grant_type").await;
    let missing = app.token_request(TOKEN, basic, &[("scope", "admin")]).await;
    expect_oauth_error(missing, 400, "invalid_request").await;
    for scope in ["citizen", "admin staff", "root", "admin root"] {
        let response =
            app.token_request(TOKEN, basic, &[("grant_type", "client_credentials"), ("scope", scope)]).await;
        expect_oauth_error(response, 400, "invalid_scope").await;
    }
    let repeated = app
        .token_request(
            TOKEN,
            basic,
            &[("grant_type", "client_credentials"), ("grant_type", "client_credentials")],
        )
        .await;
    let (_, body) = expect_oauth_error(repeated, 400, "invalid_request").await;
    assert!(body["error_description"].as_str().unwrap().contains("repeated"), "{body}");

    let json_body = app
        .request(Method::POST, TOKEN)
        .basic_auth(&app.admin_id, Some(&app.admin_secret))
        .json(&json!({ "grant_type": "client_credentials" }))
        .send()
        .await
        .unwrap();
    expect_oauth_error(json_body, 400, "invalid_request").await;
    let no_type = app
        .request(Method::POST, TOKEN)
        .basic_auth(&app.admin_id, Some(&app.admin_secret))
        .body("grant_type=client_credentials")
        .send()
        .await
        .unwrap();
    expect_oauth_error(no_type, 400, "invalid_request").await;
    let with_charset = app
        .request(Method::POST, TOKEN)
        .basic_auth(&app.admin_id, Some(&app.admin_secret))
        .header("content-type", "application/x-www-form-urlencoded; charset=UTF-8")
        .body("grant_type=client_credentials")
        .send()
        .await
        .unwrap();
    assert_eq!(with_charset.status(), StatusCode::OK);

    let huge = "x".repeat(10 * 1024);
    let large =
        app.token_request(TOKEN, basic, &[("grant_type", "client_credentials"), ("scope", &huge)]).await;
    expect_problem(large, 413, "payload_too_large").await;
    let get = app.request(Method::GET, TOKEN).send().await.unwrap();
    let (headers, _) = expect_problem(get, 405, "method_not_allowed").await;
    assert_eq!(header(&headers, "allow"), "POST");
}
both!(token_request_errors);

async fn the_token_endpoint_is_rate_limited(backend: Backend) {
    let app = TestApp::spawn_with(backend, |s| s.token_rate_limit_per_minute = 3).await;
    let form = [("grant_type", "client_credentials")];
    for _ in 0..3 {
        let response = app.token_request(TOKEN, Some((&app.admin_id, &app.admin_secret)), &form).await;
        assert_eq!(response.status(), StatusCode::OK);
    }
    let limited = app.token_request(TOKEN, Some((&app.admin_id, &app.admin_secret)), &form).await;
    let (headers, _) = expect_problem(limited, 429, "too_many_requests").await;
    let retry_after: u64 = header(&headers, "retry-after").parse().expect("Retry-After in seconds");
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    // Refresh shares the limit; other endpoints do not.
    let limited = app.token_request(REFRESH, Some((&app.admin_id, &app.admin_secret)), &form).await;
    expect_problem(limited, 429, "too_many_requests").await;
    let health = app.request(Method::GET, "/health/live").send().await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
}
both!(the_token_endpoint_is_rate_limited);

/// `/auth/revoke` checks a client secret when called with client credentials: it counts
/// against the token endpoint's limits, so that it is no way around them for a client (or
/// a guesser of its secret). With a bearer token it checks no secret and is not limited.
async fn revocation_with_client_credentials_is_rate_limited(backend: Backend) {
    let app = TestApp::spawn_with(backend, |s| s.token_rate_limit_per_minute = 3).await;
    let bearer = app.admin_token().await;
    let basic = Some((app.admin_id.as_str(), app.admin_secret.as_str()));
    let form = [("token", "not-a-token-of-this-client")];
    for _ in 0..2 {
        assert_eq!(app.token_request(REVOKE, basic, &form).await.status(), StatusCode::OK);
    }
    let limited = app.token_request(REVOKE, basic, &form).await;
    let (headers, _) = expect_problem(limited, 429, "too_many_requests").await;
    let retry_after: u64 = header(&headers, "retry-after").parse().expect("Retry-After in seconds");
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    // A wrong secret is refused before it is checked; the token endpoint shares the limit.
    let guess = app.token_request(REVOKE, Some((&app.admin_id, "a-guess")), &form).await;
    expect_problem(guess, 429, "too_many_requests").await;
    let token = app.token_request(TOKEN, basic, &[("grant_type", "client_credentials")]).await;
    expect_problem(token, 429, "too_many_requests").await;
    // The bearer side is not limited.
    let revoked = app.request(Method::POST, REVOKE).bearer_auth(&bearer).send().await.unwrap();
    assert_eq!(revoked.status(), StatusCode::OK);
}
both!(revocation_with_client_credentials_is_rate_limited);

// ------------------------------------------------------------ client lifecycle

async fn a_disabled_client_loses_its_tokens_and_credentials(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let client = app.principal_by(&admin, &["admin"], None).await;
    let tokens = app.token_for(&client.client_id, &client.secret, None).await;
    assert_eq!(status_with(&app, &tokens.access_token).await, StatusCode::OK);

    let response = app.post_empty(&format!("{CLIENTS}/{}/disable", client.client_id), &admin).await;
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["status"], "disabled");
    assert!(body.get("client_secret").is_none());

    refused_within(&app, &tokens.access_token, PROPAGATION, "a disabled client's token").await;
    expect_bearer_refusal(app.get(MISSIONS, &client.token).await, "invalid_token").await;
    let form = [("grant_type", "client_credentials")];
    let denied = app.token_request(TOKEN, Some((&client.client_id, &client.secret)), &form).await;
    expect_oauth_error(denied, 401, "invalid_client").await;
    let refresh =
        app.refresh_request(REFRESH, &client.client_id, &client.secret, &tokens.refresh_token).await;
    expect_oauth_error(refresh, 401, "invalid_client").await;
    // The admin is unaffected.
    assert_eq!(status_with(&app, &admin).await, StatusCode::OK);
}
both!(a_disabled_client_loses_its_tokens_and_credentials);

async fn a_rotated_secret_replaces_the_old_one(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let admin = app.admin_token().await;
    let client = app.principal_by(&admin, &["admin"], None).await;
    let response = app.post_empty(&format!("{CLIENTS}/{}/rotate-secret", client.client_id), &admin).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(header(response.headers(), "etag"), "\"2\"");
    let body: Value = response.json().await.unwrap();
    let new_secret = body["client_secret"].as_str().expect("the new secret, once").to_owned();
    assert_ne!(new_secret, client.secret);
    assert_eq!(body["status"], "active");

    let form = [("grant_type", "client_credentials")];
    let old = app.token_request(TOKEN, Some((&client.client_id, &client.secret)), &form).await;
    expect_oauth_error(old, 401, "invalid_client").await;
    let fresh = app.token_for(&client.client_id, &new_secret, None).await;
    assert_eq!(status_with(&app, &fresh.access_token).await, StatusCode::OK);
    // Tokens issued before the rotation stay valid until they expire or are revoked.
    assert_eq!(status_with(&app, &client.token).await, StatusCode::OK);
    let again: Value =
        app.get(&format!("{CLIENTS}/{}", client.client_id), &admin).await.json().await.unwrap();
    assert!(again.get("client_secret").is_none(), "{again}");
}
both!(a_rotated_secret_replaces_the_old_one);

// ------------------------------------------------------------ JWKS

async fn the_jwks_verifies_issued_tokens(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let response = app.request(Method::GET, "/.well-known/jwks.json").send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(header(response.headers(), "api-maturity"), "Available");
    let jwks: jsonwebtoken::jwk::JwkSet = response.json().await.unwrap();
    assert!(!jwks.keys.is_empty());

    let token = app.admin_token().await;
    let kid = jsonwebtoken::decode_header(&token).unwrap().kid.expect("a kid");
    let jwk = jwks.find(&kid).expect("the token's key is published");
    for key in &jwks.keys {
        let text = serde_json::to_string(key).unwrap();
        assert!(!text.contains("\"d\""), "a private key member is published: {text}");
    }
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::EdDSA);
    validation.set_issuer(&["https://consular.test"]);
    validation.set_audience(&["consular-api"]);
    validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
    let key = jsonwebtoken::DecodingKey::from_jwk(jwk).unwrap();
    let data = jsonwebtoken::decode::<Value>(&token, &key, &validation).expect("the JWKS verifies the token");
    assert_eq!(data.claims["client_id"], app.admin_id.as_str());

    // And it does not verify a token signed by another key under the same kid.
    let foreign = jsonwebtoken::EncodingKey::from_ed_der(&foreign_ed25519_key());
    let forged =
        sign_raw(&json!({ "alg": "EdDSA", "typ": "at+jwt", "kid": kid }), &app.claims(json!({})), &foreign);
    assert!(jsonwebtoken::decode::<Value>(&forged, &key, &validation).is_err());

    // A second node publishes the same keys.
    let b = app.spawn_node().await;
    let other: Value =
        b.request(Method::GET, "/.well-known/jwks.json").send().await.unwrap().json().await.unwrap();
    assert_eq!(other, serde_json::to_value(&jwks).unwrap());
}
both!(the_jwks_verifies_issued_tokens);
