//! Revocation (RFC 7009): by bearer, of a client's own tokens only, authenticated, and
//! on every node.

use super::*;

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
