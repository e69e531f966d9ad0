//! A client's lifecycle: disabled, it loses its tokens and credentials; a rotated secret
//! replaces the old one.

use super::*;

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
