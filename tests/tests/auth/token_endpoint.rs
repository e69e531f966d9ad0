//! The token endpoint's errors (a wrong secret and an unknown client alike, one
//! authentication method, malformed requests) and its rate limit, which revocation with
//! client credentials counts against.

use super::*;

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
