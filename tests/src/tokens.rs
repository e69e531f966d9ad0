//! Tokens and API clients: the token endpoint's requests, clients and principals made
//! through the API, tokens forged with the server's own key (or another one) for the
//! bearer checks, and the checks of OAuth and bearer errors.

use crate::app::TestApp;
use crate::http::{expect_problem, header};
use crate::json::merge;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use consular_ports::SigningKeyRepository;
use reqwest::header::HeaderMap;
use reqwest::{Method, Response, StatusCode};
use serde_json::{Value, json};

/// The tokens of a successful token response.
#[derive(Debug, Clone)]
pub struct Tokens {
    pub access_token: String,
    pub refresh_token: String,
    pub scope: String,
    pub expires_in: i64,
    pub token_type: String,
}

impl Tokens {
    pub fn from_json(body: &Value) -> Tokens {
        let text =
            |name: &str| body[name].as_str().unwrap_or_else(|| panic!("no `{name}` in {body}")).to_owned();
        Tokens {
            access_token: text("access_token"),
            refresh_token: text("refresh_token"),
            scope: text("scope"),
            token_type: text("token_type"),
            expires_in: body["expires_in"].as_i64().unwrap_or_else(|| panic!("no `expires_in` in {body}")),
        }
    }
}

/// A client created through the API, with its secret and a token holding all its scopes.
#[derive(Debug, Clone)]
pub struct Principal {
    pub client_id: String,
    pub secret: String,
    pub token: String,
    /// The creation response (with `client_secret`).
    pub body: Value,
}

impl TestApp {
    /// A raw token request: `form` as the body, with `basic` credentials if given.
    pub async fn token_request(
        &self,
        path: &str,
        basic: Option<(&str, &str)>,
        form: &[(&str, &str)],
    ) -> Response {
        let mut request = self.request(Method::POST, path).form(form);
        if let Some((id, secret)) = basic {
            request = request.basic_auth(id, Some(secret));
        }
        request.send().await.expect("token request")
    }

    /// Client credentials (`client_secret_post`); panics unless 200.
    pub async fn token_for(&self, client_id: &str, secret: &str, scope: Option<&str>) -> Tokens {
        let mut form =
            vec![("grant_type", "client_credentials"), ("client_id", client_id), ("client_secret", secret)];
        if let Some(scope) = scope {
            form.push(("scope", scope));
        }
        let response = self.token_request("/api/v1/auth/token", None, &form).await;
        let status = response.status();
        let body: Value = response.json().await.expect("a JSON token response");
        assert_eq!(status, StatusCode::OK, "token request for {client_id} failed: {body}");
        Tokens::from_json(&body)
    }

    /// `grant_type=refresh_token` at `path`, credentials in the body. The raw response.
    pub async fn refresh_request(
        &self,
        path: &str,
        client_id: &str,
        secret: &str,
        refresh_token: &str,
    ) -> Response {
        let form = [
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("client_id", client_id),
            ("client_secret", secret),
        ];
        self.token_request(path, None, &form).await
    }

    /// RFC 7009 revocation of `token` by the client (credentials in the body); panics unless 200.
    pub async fn revoke(&self, client_id: &str, secret: &str, token: &str) {
        let form = [("token", token), ("client_id", client_id), ("client_secret", secret)];
        let response = self.token_request("/api/v1/auth/revoke", None, &form).await;
        assert_eq!(response.status(), StatusCode::OK, "revocation failed: {:?}", response.text().await);
    }

    /// An access token of the bootstrap global admin.
    pub async fn admin_token(&self) -> String {
        self.token_for(&self.admin_id, &self.admin_secret, None).await.access_token
    }

    /// `POST /api/v1/auth/clients`; panics unless 201. The body, with `client_secret`.
    pub async fn create_client(&self, token: &str, body: &Value) -> Value {
        let response = self.post_json("/api/v1/auth/clients", token, body).await;
        let status = response.status();
        let body: Value = response.json().await.expect("a JSON body");
        assert_eq!(status, StatusCode::CREATED, "client creation failed: {body}");
        body
    }

    /// Creates a client with `scopes` (and `mission_id`) as the bootstrap admin, and gets
    /// it a token with all its scopes.
    pub async fn principal(&self, scopes: &[&str], mission_id: Option<&str>) -> Principal {
        let admin = self.admin_token().await;
        self.principal_by(&admin, scopes, mission_id).await
    }

    /// As [`TestApp::principal`], created by the admin holding `token`.
    pub async fn principal_by(&self, token: &str, scopes: &[&str], mission_id: Option<&str>) -> Principal {
        let body = self
            .create_client(token, &json!({ "name": format!("{} client", scopes.join("+")), "scopes": scopes, "mission_id": mission_id }))
            .await;
        let client_id = body["client_id"].as_str().expect("client_id").to_owned();
        let secret = body["client_secret"].as_str().expect("client_secret").to_owned();
        let token = self.token_for(&client_id, &secret, None).await.access_token;
        Principal { client_id, secret, token, body }
    }

    /// The stored signing keys, newest first: `(kid, PKCS#8 private key)`, opened with
    /// this node's key-encryption key when they are sealed.
    pub async fn signing_keys(&self) -> Vec<(String, Vec<u8>)> {
        let db =
            consular_db::Database::connect(&consular_db::DbConfig::new(self.settings.database_url.clone()))
                .expect("a database handle");
        let keys = db.all().await.expect("the signing keys");
        db.close();
        let kek = self.settings.key_encryption_key().expect("the test's KEK");
        keys.into_iter()
            .map(|k| {
                let pkcs8 = match k.protection {
                    consular_ports::KeyProtection::Clear => k.private_key,
                    consular_ports::KeyProtection::Aes256Gcm => kek
                        .as_ref()
                        .expect("a sealed key and no KEK")
                        .open(&k.kid, &k.private_key)
                        .unwrap_or_else(|e| panic!("{e}")),
                };
                (k.kid, pkcs8)
            })
            .collect()
    }

    /// A token signed with the server's own current key: `header` is merged into
    /// `{alg: EdDSA, typ: at+jwt, kid}` and `claims` into valid claims for the bootstrap admin.
    pub async fn forge(&self, header: Value, claims: Value) -> String {
        let (kid, pkcs8) = self.signing_keys().await.into_iter().next().expect("a signing key");
        let key = jsonwebtoken::EncodingKey::from_ed_der(&pkcs8);
        sign_raw(
            &merge(json!({ "alg": "EdDSA", "typ": "at+jwt", "kid": kid }), header),
            &self.claims(claims),
            &key,
        )
    }

    /// Valid access token claims for the bootstrap admin, with `overrides` merged in
    /// (a `null` override removes the claim).
    pub fn claims(&self, overrides: Value) -> Value {
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        let base = json!({
            "iss": self.settings.issuer,
            "aud": self.settings.audience,
            "sub": format!("admin:{}", uuid::Uuid::now_v7()),
            "client_id": self.admin_id,
            "scope": "admin",
            "iat": now,
            "nbf": now,
            "exp": now + 600,
            "jti": uuid::Uuid::now_v7().to_string(),
        });
        merge(base, overrides)
    }
}

/// A JWS with exactly this header (any `alg` string), signed with Ed25519 `key` (the
/// signature is computed whatever `alg` claims; `alg: none` tokens are built by hand).
pub fn sign_raw(header: &Value, claims: &Value, key: &jsonwebtoken::EncodingKey) -> String {
    let header = URL_SAFE_NO_PAD.encode(header.to_string());
    let claims = URL_SAFE_NO_PAD.encode(claims.to_string());
    let message = format!("{header}.{claims}");
    let signature = jsonwebtoken::crypto::sign(message.as_bytes(), key, jsonwebtoken::Algorithm::EdDSA)
        .expect("an Ed25519 signature");
    format!("{message}.{signature}")
}

/// A new Ed25519 key that the server does not know, as PKCS#8 DER.
pub fn foreign_ed25519_key() -> Vec<u8> {
    let rng = aws_lc_rs::rand::SystemRandom::new();
    aws_lc_rs::signature::Ed25519KeyPair::generate_pkcs8(&rng).expect("an Ed25519 key").as_ref().to_vec()
}

/// Checks an RFC 6749 section 5.2 error and returns its headers and body.
pub async fn expect_oauth_error(response: Response, status: u16, error: &str) -> (HeaderMap, Value) {
    let actual = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.expect("a body");
    assert_eq!(actual, status, "unexpected status; body: {text}");
    assert!(header(&headers, "content-type").starts_with("application/json"), "{headers:?}");
    assert_eq!(header(&headers, "cache-control"), "no-store");
    let body: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    assert_eq!(body["error"], error, "{body}");
    (headers, body)
}

/// Checks a 401 bearer refusal with `error="{error}"` in the challenge.
pub async fn expect_bearer_refusal(response: Response, error: &str) -> Value {
    let (headers, problem) = expect_problem(response, 401, error).await;
    let challenge = header(&headers, "www-authenticate");
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert!(challenge.contains(&format!("error=\"{error}\"")), "{challenge}");
    problem
}
