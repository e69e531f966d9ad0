//! Every way a bearer token is refused, and the scopes an operation needs (403
//! `insufficient_scope`).

use super::*;

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
