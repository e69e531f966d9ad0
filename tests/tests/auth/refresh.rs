//! Refresh rotation: reuse detection, the client a refresh token belongs to, and the
//! scope a refresh keeps.

use super::*;

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
