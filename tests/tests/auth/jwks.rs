//! The JWKS verifies the tokens the server issues.

use super::*;

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
