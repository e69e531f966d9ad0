//! The client credentials grant and refreshes through the `oauth2` crate, the token
//! responses' caching and lifetime, and the access token's claims (RFC 9068).

use super::*;

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
