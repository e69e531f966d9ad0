//! Issuing, refreshing, revoking and checking tokens (docs/architecture.md, "Tokens without
//! a database round trip").

use super::keys::KeyError;
use super::verified::{Verified, VerifiedTokens};
use super::{RevocationCache, SigningKeys, secrets};
use crate::adapters::Adapters;
use consular_domain::{ApiClient, ClientId, MissionId, Principal, ScopeSet, Subject};
use consular_ports::{
    ClientRepository, Clock, RefreshOutcome, RefreshReplacement, RefreshTokenRecord, RepoError, Revocation,
    RevocationKind, TokenRepository,
};
use jsonwebtoken::{Algorithm, Header, Validation};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

/// The `typ` header of access tokens (RFC 9068).
pub const ACCESS_TOKEN_TYPE: &str = "at+jwt";

#[derive(Debug, Clone)]
pub struct TokenConfig {
    /// `iss` of every token and the only issuer accepted.
    pub issuer: String,
    /// `aud` of every token and the only audience accepted.
    pub audience: String,
    pub access_ttl: Duration,
    pub refresh_ttl: Duration,
    /// Clock skew tolerated on `exp`/`nbf`; at most 30 seconds.
    pub leeway_secs: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Claims {
    iss: String,
    aud: String,
    sub: String,
    client_id: String,
    scope: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mission: Option<String>,
    iat: i64,
    nbf: i64,
    exp: i64,
    jti: String,
}

/// Client authentication as presented (Basic or form fields, already decoded).
#[derive(Debug, Clone)]
pub struct ClientCredentials {
    pub client_id: String,
    pub client_secret: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedTokens {
    pub access_token: String,
    pub expires_in: i64,
    pub scope: ScopeSet,
    pub refresh_token: String,
}

/// RFC 6749 section 5.2 errors.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OAuthError {
    #[error("client authentication failed")]
    InvalidClient,
    #[error("{0}")]
    InvalidRequest(String),
    #[error("{0}")]
    InvalidScope(String),
    #[error("{0}")]
    InvalidGrant(String),
    #[error("the grant type is not supported")]
    UnsupportedGrantType,
    #[error("temporarily unavailable: {0}")]
    Unavailable(String),
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<RepoError> for OAuthError {
    fn from(error: RepoError) -> Self {
        match error {
            RepoError::Unavailable(msg) => OAuthError::Unavailable(msg),
            other => OAuthError::Internal(other.to_string()),
        }
    }
}

/// Why a bearer token was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BearerError {
    /// Malformed, badly signed, expired, for another audience, revoked...: the
    /// description goes into `WWW-Authenticate` and carries no secret.
    #[error("invalid token: {0}")]
    Invalid(&'static str),
    /// The revocation state could not be established.
    #[error("unavailable: {0}")]
    Unavailable(String),
}

/// The ports the token use cases need (the signing keys have their own,
/// [`SigningKeys::load`]).
#[derive(Clone)]
pub struct TokenPorts {
    pub clients: Arc<dyn ClientRepository>,
    pub tokens: Arc<dyn TokenRepository>,
    pub clock: Arc<dyn Clock>,
}

impl<D: ClientRepository + TokenRepository + 'static> From<&Adapters<D>> for TokenPorts {
    fn from(adapters: &Adapters<D>) -> Self {
        let db = &adapters.database;
        TokenPorts { clients: db.clone(), tokens: db.clone(), clock: adapters.clock.clone() }
    }
}

#[derive(Clone)]
pub struct TokenService {
    ports: TokenPorts,
    keys: Arc<SigningKeys>,
    revocations: Arc<RevocationCache>,
    config: TokenConfig,
    validation: Validation,
    verified: VerifiedTokens,
}

fn requested_scopes(requested: Option<&str>, allowed: ScopeSet) -> Result<ScopeSet, OAuthError> {
    let Some(list) = requested.filter(|s| !s.trim().is_empty()) else { return Ok(allowed) };
    let wanted = ScopeSet::parse(list).map_err(|e| OAuthError::InvalidScope(e.to_string()))?;
    if wanted.is_subset_of(allowed) {
        Ok(wanted)
    } else {
        Err(OAuthError::InvalidScope(format!("the client may request only: {allowed}")))
    }
}

impl TokenService {
    pub fn new(
        ports: TokenPorts,
        keys: Arc<SigningKeys>,
        revocations: Arc<RevocationCache>,
        config: TokenConfig,
    ) -> Self {
        let mut validation = Validation::new(Algorithm::EdDSA);
        validation.set_issuer(&[&config.issuer]);
        validation.set_audience(&[&config.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub", "nbf"]);
        validation.validate_nbf = true;
        validation.leeway = config.leeway_secs.min(30);
        let verified = VerifiedTokens::new(validation.leeway);
        TokenService { ports, keys, revocations, config, validation, verified }
    }

    /// The keys in force on this node (the JWKS is published from them).
    pub fn keys(&self) -> Arc<super::KeySet> {
        self.keys.current()
    }

    /// The node's signing keys, to rotate or list them.
    pub fn signing_keys(&self) -> Arc<SigningKeys> {
        self.keys.clone()
    }

    /// Picks up key rotations and retirements made anywhere, and retires or rotates keys
    /// when due. Run with [`sync_revocations`](Self::sync_revocations), every
    /// [`SYNC_INTERVAL`](super::revocation::SYNC_INTERVAL): a rotation reaches every node
    /// before any node signs with the new key (docs/architecture.md "Signing keys:
    /// rotation and retirement").
    pub async fn refresh_keys(&self) -> Result<(), KeyError> {
        self.keys.refresh().await
    }

    /// The shared handle of this node's revocation view.
    pub fn revocation_cache(&self) -> Arc<RevocationCache> {
        self.revocations.clone()
    }

    /// Pulls new revocations into this node's view, as of the service's clock. Run once
    /// before serving and then every [`SYNC_INTERVAL`](super::revocation::SYNC_INTERVAL),
    /// so that a token revoked on another node is refused here within a second.
    pub async fn sync_revocations(&self) -> Result<(), RepoError> {
        self.revocations.sync(&*self.ports.tokens, self.ports.clock.now()).await
    }

    /// Deletes what has expired by the service's clock (refresh tokens, access-token
    /// revocations, idempotency records); returns how many rows went.
    pub async fn purge_expired(&self) -> Result<u64, RepoError> {
        self.ports.tokens.purge_expired(self.ports.clock.now()).await
    }

    /// Checks client credentials. An unknown client, a wrong secret and a disabled client
    /// are the same `invalid_client`, and cost the same.
    pub async fn authenticate_client(
        &self,
        credentials: &ClientCredentials,
    ) -> Result<ApiClient, OAuthError> {
        let client = match credentials.client_id.parse::<ClientId>() {
            Ok(id) => self.ports.clients.get(id).await?,
            Err(_) => None,
        };
        let stored_hash = client.as_ref().map_or(&[0u8; 32][..], |c| &c.secret_hash[..]);
        let secret_ok = secrets::verify(&credentials.client_secret, stored_hash);
        match client {
            Some(client) if secret_ok && client.is_active() => Ok(client),
            _ => Err(OAuthError::InvalidClient),
        }
    }

    /// `grant_type=client_credentials` (RFC 6749 section 4.4).
    pub async fn client_credentials(
        &self,
        credentials: &ClientCredentials,
        scope: Option<&str>,
    ) -> Result<IssuedTokens, OAuthError> {
        let client = self.authenticate_client(credentials).await?;
        let scopes = requested_scopes(scope, client.scopes)?;
        let now = self.ports.clock.now();
        let refresh_token = secrets::generate().map_err(OAuthError::Internal)?;
        let jti = Uuid::now_v7();
        let record = RefreshTokenRecord {
            hash: secrets::hash(&refresh_token),
            client_id: client.id,
            family_id: Uuid::now_v7(),
            // The grant, not the client's whole set: a refresh never widens it.
            scopes,
            access_jti: jti,
            access_expires_at: now + self.config.access_ttl,
            issued_at: now,
            expires_at: now + self.config.refresh_ttl,
        };
        self.ports.tokens.insert_refresh(&record).await?;
        let access_token = self.sign(&client, scopes, jti, now)?;
        Ok(IssuedTokens {
            access_token,
            expires_in: self.config.access_ttl.whole_seconds(),
            scope: scopes,
            refresh_token,
        })
    }

    /// `grant_type=refresh_token` (RFC 6749 section 6). Refresh tokens are single use:
    /// each refresh returns a new one, and presenting a spent one revokes its family.
    pub async fn refresh(
        &self,
        credentials: &ClientCredentials,
        refresh_token: &str,
        scope: Option<&str>,
    ) -> Result<IssuedTokens, OAuthError> {
        let client = self.authenticate_client(credentials).await?;
        // Checked against the client first so that a bad request does not spend the token.
        requested_scopes(scope, client.scopes)?;
        let now = self.ports.clock.now();
        let new_refresh = secrets::generate().map_err(OAuthError::Internal)?;
        let jti = Uuid::now_v7();
        let replacement = RefreshReplacement {
            hash: secrets::hash(&new_refresh),
            access_jti: jti,
            access_expires_at: now + self.config.access_ttl,
            issued_at: now,
            expires_at: now + self.config.refresh_ttl,
        };
        let spent = match self
            .ports
            .tokens
            .rotate_refresh(client.id, &secrets::hash(refresh_token), &replacement, now)
            .await?
        {
            RefreshOutcome::Rotated(spent) => spent,
            RefreshOutcome::Reused => {
                tracing::warn!(client_id = %client.id, "refresh token reused; its family is revoked");
                // The family's access tokens are revoked in the database; refuse them on
                // this node now rather than at the next sync.
                if let Err(error) = self.revocations.sync(&*self.ports.tokens, self.ports.clock.now()).await {
                    tracing::warn!(%error, "revocation sync after refresh reuse failed");
                }
                return Err(OAuthError::InvalidGrant("the refresh token is invalid".into()));
            }
            RefreshOutcome::Invalid => {
                return Err(OAuthError::InvalidGrant("the refresh token is invalid".into()));
            }
        };
        // A refresh may narrow the scopes of the original grant, never widen them.
        let scopes =
            requested_scopes(scope, spent.scopes.iter().filter(|s| client.scopes.contains(*s)).collect())?;
        let access_token = self.sign(&client, scopes, jti, now)?;
        Ok(IssuedTokens {
            access_token,
            expires_in: self.config.access_ttl.whole_seconds(),
            scope: scopes,
            refresh_token: new_refresh,
        })
    }

    /// RFC 7009 revocation by `caller`. Unknown tokens, and tokens of other clients, are
    /// ignored without telling the caller which it was.
    pub async fn revoke(&self, caller: ClientId, token: &str, hint: Option<&str>) -> Result<(), OAuthError> {
        let looks_like_jwt = token.split('.').count() == 3;
        let access_first = hint.map_or(looks_like_jwt, |h| h == "access_token" && looks_like_jwt);
        if access_first && self.revoke_access(caller, token).await? {
            return Ok(());
        }
        let now = self.ports.clock.now();
        if self.ports.tokens.revoke_refresh(caller, &secrets::hash(token), now).await? {
            return Ok(());
        }
        if !access_first && looks_like_jwt {
            self.revoke_access(caller, token).await?;
        }
        Ok(())
    }

    async fn revoke_access(&self, caller: ClientId, token: &str) -> Result<bool, OAuthError> {
        // Expired tokens need no revocation, so exp is checked as usual.
        let Ok((claims, _)) = self.verify_signature(token) else { return Ok(false) };
        let (Ok(jti), Ok(client)) = (claims.jti.parse::<Uuid>(), claims.client_id.parse::<ClientId>()) else {
            return Ok(false);
        };
        if client != caller {
            return Ok(false);
        }
        let expires_at = OffsetDateTime::from_unix_timestamp(claims.exp)
            .map_err(|e| OAuthError::Internal(e.to_string()))?;
        let revocation = Revocation {
            id: Uuid::now_v7(),
            kind: RevocationKind::AccessToken { jti, expires_at },
            created_at: self.ports.clock.now(),
        };
        self.ports.tokens.insert_revocation(&revocation).await?;
        self.revocations.record(&revocation);
        Ok(true)
    }

    /// The bearer check of every authenticated request: the signature and claims of a
    /// token this node has not checked yet (then remembered, see [`VerifiedTokens`]), its
    /// expiry, and whether it has been revoked, every time.
    pub async fn authenticate_bearer(&self, token: &str) -> Result<Principal, BearerError> {
        // A remembered token counts only while the key that verified it still verifies: a
        // key deleted since (retired, or its row removed after a leak, docs/operations.md
        // "Signing keys") takes its tokens with it, as it does for tokens never seen.
        let remembered = self
            .verified
            .get(token)
            .filter(|verified| self.keys.current().verifying(&verified.kid).is_some());
        let Verified { principal, jti, .. } = match remembered {
            Some(verified) => verified,
            None => {
                let verified = self.verify(token)?;
                self.verified.insert(token, verified.clone());
                verified
            }
        };
        let client_id = principal.client_id;
        let revoked = match self.revocations.check(jti, client_id, self.ports.clock.now()) {
            Some(revoked) => revoked,
            None => self
                .ports
                .tokens
                .is_revoked(jti, client_id)
                .await
                .map_err(|e| BearerError::Unavailable(e.to_string()))?,
        };
        if revoked {
            return Err(BearerError::Invalid("the token has been revoked"));
        }
        Ok(principal)
    }

    /// The signature and claims of `token`, checked.
    fn verify(&self, token: &str) -> Result<Verified, BearerError> {
        let (claims, kid) = self.verify_signature(token)?;
        let invalid = || BearerError::Invalid("the token's claims are malformed");
        let subject: Subject = claims.sub.parse().map_err(|_| invalid())?;
        let client_id: ClientId = claims.client_id.parse().map_err(|_| invalid())?;
        let jti: Uuid = claims.jti.parse().map_err(|_| invalid())?;
        let scopes = ScopeSet::parse(&claims.scope).map_err(|_| invalid())?;
        let mission =
            claims.mission.as_deref().map(str::parse::<MissionId>).transpose().map_err(|_| invalid())?;
        Ok(Verified {
            principal: Principal { subject, client_id, mission, scopes, address: None, acting_for: None },
            jti,
            exp: claims.exp,
            kid,
        })
    }

    /// The claims of `token`, with the kid of the key that verified them.
    fn verify_signature(&self, token: &str) -> Result<(Claims, String), BearerError> {
        let header =
            jsonwebtoken::decode_header(token).map_err(|_| BearerError::Invalid("the token is malformed"))?;
        if header.alg != Algorithm::EdDSA {
            return Err(BearerError::Invalid("the token's algorithm is not accepted"));
        }
        let typ_ok = header.typ.as_deref().is_some_and(|t| {
            t.eq_ignore_ascii_case(ACCESS_TOKEN_TYPE) || t.eq_ignore_ascii_case("application/at+jwt")
        });
        if !typ_ok {
            return Err(BearerError::Invalid("the token is not an access token"));
        }
        let keys = self.keys.current();
        let (kid, key) = header
            .kid
            .and_then(|kid| keys.verifying(&kid).map(|key| (kid, key)))
            .ok_or(BearerError::Invalid("the token's signing key is unknown"))?;
        let decoded = jsonwebtoken::decode::<Claims>(token, key, &self.validation);
        decoded.map(|data| (data.claims, kid)).map_err(|e| {
            use jsonwebtoken::errors::ErrorKind;
            BearerError::Invalid(match e.kind() {
                ErrorKind::ExpiredSignature => "the token has expired",
                ErrorKind::ImmatureSignature => "the token is not valid yet",
                ErrorKind::InvalidSignature => "the token's signature is invalid",
                ErrorKind::InvalidIssuer => "the token's issuer is not accepted",
                ErrorKind::InvalidAudience => "the token's audience is not accepted",
                ErrorKind::MissingRequiredClaim(_) => "the token lacks a required claim",
                _ => "the token is invalid",
            })
        })
    }

    fn sign(
        &self,
        client: &ApiClient,
        scopes: ScopeSet,
        jti: Uuid,
        now: OffsetDateTime,
    ) -> Result<String, OAuthError> {
        let keys = self.keys.current();
        let (kid, key) = keys.signing(now);
        let mut header = Header::new(Algorithm::EdDSA);
        header.typ = Some(ACCESS_TOKEN_TYPE.to_owned());
        header.kid = Some(kid.to_owned());
        let issued = now.unix_timestamp();
        let claims = Claims {
            iss: self.config.issuer.clone(),
            aud: self.config.audience.clone(),
            sub: client.subject.to_string(),
            client_id: client.id.to_string(),
            scope: scopes.to_string(),
            mission: client.mission.map(|m| m.to_string()),
            iat: issued,
            nbf: issued,
            exp: (now + self.config.access_ttl).unix_timestamp(),
            jti: jti.to_string(),
        };
        jsonwebtoken::encode(&header, &claims, key).map_err(|e| OAuthError::Internal(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::KeyPolicy;
    use crate::auth::keys::OpenedKey;
    use consular_domain::{ClientStatus, PrincipalId, PrincipalKind, Scope};
    use consular_ports::{
        KeyProtection, MockClientRepository, MockSigningKeyRepository, MockTokenRepository, SigningKeyRecord,
        SigningKeyRepository, SystemClock,
    };
    use std::sync::Mutex;

    const SECRET: &str = "s3cret-s3cret-s3cret-s3cret-s3cret-s3cret12";

    fn client(status: ClientStatus) -> ApiClient {
        let subject = Subject { kind: PrincipalKind::Admin, id: PrincipalId::new() };
        let scopes = ScopeSet::only(Scope::Admin).with(Scope::Staff);
        let now = OffsetDateTime::now_utc();
        ApiClient {
            status,
            ..ApiClient::issue("portal".into(), scopes, subject, None, secrets::hash(SECRET), now)
        }
    }

    fn config() -> TokenConfig {
        TokenConfig {
            issuer: "https://consular.test".into(),
            audience: "consular-api".into(),
            access_ttl: Duration::minutes(15),
            refresh_ttl: Duration::days(30),
            leeway_secs: 30,
        }
    }

    fn service(clients: MockClientRepository, tokens: MockTokenRepository) -> TokenService {
        TokenService::new(
            TokenPorts { clients: Arc::new(clients), tokens: Arc::new(tokens), clock: Arc::new(SystemClock) },
            Arc::new(SigningKeys::ephemeral(crate::auth::KeySet::generate_ephemeral().unwrap())),
            Arc::new(RevocationCache::new()),
            config(),
        )
    }

    fn clients_with(c: ApiClient) -> MockClientRepository {
        let mut clients = MockClientRepository::new();
        clients.expect_get().returning(move |id| Ok((id == c.id).then(|| c.clone())));
        clients
    }

    fn credentials(c: &ApiClient, secret: &str) -> ClientCredentials {
        ClientCredentials { client_id: c.id.to_string(), client_secret: secret.into() }
    }

    #[tokio::test]
    async fn a_token_carries_the_requested_scopes_and_checks_back_to_its_principal() {
        let c = client(ClientStatus::Active);
        let mut tokens = MockTokenRepository::new();
        tokens.expect_insert_refresh().times(1).returning(|_| Ok(()));
        tokens.expect_is_revoked().returning(|_, _| Ok(false));
        let svc = service(clients_with(c.clone()), tokens);
        let issued = svc.client_credentials(&credentials(&c, SECRET), Some("staff")).await.unwrap();
        assert_eq!(issued.scope, ScopeSet::only(Scope::Staff));
        assert_eq!(issued.expires_in, 900);
        let principal = svc.authenticate_bearer(&issued.access_token).await.unwrap();
        assert_eq!(principal.client_id, c.id);
        assert_eq!(principal.subject, c.subject);
        assert_eq!(principal.scopes, ScopeSet::only(Scope::Staff));
    }

    #[tokio::test]
    async fn unknown_clients_wrong_secrets_and_disabled_clients_look_the_same() {
        let active = client(ClientStatus::Active);
        let disabled = client(ClientStatus::Disabled);
        let mut clients = MockClientRepository::new();
        let (a, d) = (active.clone(), disabled.clone());
        clients.expect_get().returning(move |id| Ok([a.clone(), d.clone()].into_iter().find(|c| c.id == id)));
        let svc = service(clients, MockTokenRepository::new());
        for creds in [
            credentials(&active, "wrong"),
            credentials(&disabled, SECRET),
            ClientCredentials { client_id: ClientId::new().to_string(), client_secret: SECRET.into() },
            ClientCredentials { client_id: "not-a-uuid".into(), client_secret: SECRET.into() },
        ] {
            assert_eq!(svc.client_credentials(&creds, None).await, Err(OAuthError::InvalidClient));
        }
    }

    #[tokio::test]
    async fn scopes_beyond_the_client_are_refused() {
        let c = client(ClientStatus::Active);
        let svc = service(clients_with(c.clone()), MockTokenRepository::new());
        for scope in ["citizen", "admin root"] {
            let result = svc.client_credentials(&credentials(&c, SECRET), Some(scope)).await;
            assert!(matches!(result, Err(OAuthError::InvalidScope(_))), "{scope}");
        }
    }

    #[tokio::test]
    async fn a_reused_refresh_token_is_an_invalid_grant() {
        let c = client(ClientStatus::Active);
        let mut tokens = MockTokenRepository::new();
        tokens.expect_rotate_refresh().returning(|_, _, _, _| Ok(RefreshOutcome::Reused));
        // The node pulls the family's revocations at once.
        tokens.expect_active_revocations().times(1).returning(|_| Ok(vec![]));
        let svc = service(clients_with(c.clone()), tokens);
        let result = svc.refresh(&credentials(&c, SECRET), "spent", None).await;
        assert!(matches!(result, Err(OAuthError::InvalidGrant(_))));
    }

    /// The `signing_keys` rows of a test, newest first, read through a mocked repository.
    fn key_rows(rows: &Arc<Mutex<Vec<SigningKeyRecord>>>) -> Arc<dyn SigningKeyRepository> {
        let mut repo = MockSigningKeyRepository::new();
        let all = rows.clone();
        repo.expect_all().returning(move || Ok(all.lock().unwrap().clone()));
        let kids = rows.clone();
        repo.expect_kids()
            .returning(move || Ok(kids.lock().unwrap().iter().map(|r| r.kid.clone()).collect()));
        Arc::new(repo)
    }

    fn stored(key: &OpenedKey) -> SigningKeyRecord {
        SigningKeyRecord {
            kid: key.kid.clone(),
            private_key: key.pkcs8.clone(),
            protection: KeyProtection::Clear,
            public_key: key.public_key.clone(),
            created_at: key.created_at,
        }
    }

    #[tokio::test]
    async fn a_remembered_token_is_refused_once_its_key_is_gone() {
        let now = SystemClock.now();
        let first = OpenedKey::generate(now - Duration::hours(1)).unwrap();
        let rows = Arc::new(Mutex::new(vec![stored(&first)]));
        let policy = KeyPolicy {
            access_ttl: Duration::minutes(15),
            leeway: Duration::seconds(30),
            rotation_period: None,
        };
        let keys = SigningKeys::load(key_rows(&rows), Arc::new(SystemClock), None, policy).await.unwrap();
        let c = client(ClientStatus::Active);
        let mut tokens = MockTokenRepository::new();
        tokens.expect_insert_refresh().returning(|_| Ok(()));
        tokens.expect_is_revoked().returning(|_, _| Ok(false));
        let svc = TokenService::new(
            TokenPorts {
                clients: Arc::new(clients_with(c.clone())),
                tokens: Arc::new(tokens),
                clock: Arc::new(SystemClock),
            },
            Arc::new(keys),
            Arc::new(RevocationCache::new()),
            config(),
        );
        let token = svc.client_credentials(&credentials(&c, SECRET), None).await.unwrap().access_token;
        assert_eq!(
            svc.authenticate_bearer(&token).await.unwrap().client_id,
            c.id,
            "verified, then remembered"
        );
        assert_eq!(svc.verified.get(&token).map(|v| v.kid), Some(first.kid.clone()));

        // A rotation: the first key still verifies, so its remembered token still passes.
        let second = OpenedKey::generate(now).unwrap();
        rows.lock().unwrap().insert(0, stored(&second));
        svc.refresh_keys().await.unwrap();
        assert_eq!(svc.authenticate_bearer(&token).await.unwrap().client_id, c.id);

        // The first key's row deleted (as after a leak): refused at once, remembered or not.
        rows.lock().unwrap().retain(|r| r.kid == second.kid);
        svc.refresh_keys().await.unwrap();
        for _ in 0..2 {
            assert_eq!(
                svc.authenticate_bearer(&token).await,
                Err(BearerError::Invalid("the token's signing key is unknown"))
            );
        }
    }

    #[tokio::test]
    async fn a_revoked_token_is_refused_by_this_node_at_once() {
        let c = client(ClientStatus::Active);
        let mut tokens = MockTokenRepository::new();
        tokens.expect_insert_refresh().returning(|_| Ok(()));
        tokens.expect_insert_revocation().times(1).returning(|_| Ok(()));
        tokens.expect_active_revocations().returning(|_| Ok(vec![]));
        let svc = service(clients_with(c.clone()), tokens);
        svc.sync_revocations().await.unwrap();
        let issued = svc.client_credentials(&credentials(&c, SECRET), None).await.unwrap();
        assert!(svc.authenticate_bearer(&issued.access_token).await.is_ok());
        svc.revoke(c.id, &issued.access_token, None).await.unwrap();
        assert_eq!(
            svc.authenticate_bearer(&issued.access_token).await,
            Err(BearerError::Invalid("the token has been revoked"))
        );
    }

    #[tokio::test]
    async fn another_clients_access_token_is_not_revoked() {
        let c = client(ClientStatus::Active);
        let mut tokens = MockTokenRepository::new();
        tokens.expect_insert_refresh().returning(|_| Ok(()));
        tokens.expect_insert_revocation().never();
        tokens.expect_revoke_refresh().returning(|_, _, _| Ok(false));
        let svc = service(clients_with(c.clone()), tokens);
        let issued = svc.client_credentials(&credentials(&c, SECRET), None).await.unwrap();
        svc.revoke(ClientId::new(), &issued.access_token, Some("access_token")).await.unwrap();
    }

    #[tokio::test]
    async fn tampered_and_foreign_tokens_are_refused() {
        use base64::Engine;
        use base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let c = client(ClientStatus::Active);
        let mut tokens = MockTokenRepository::new();
        tokens.expect_insert_refresh().returning(|_| Ok(()));
        tokens.expect_is_revoked().returning(|_, _| Ok(false));
        let svc = service(clients_with(c.clone()), tokens);
        let issued = svc.client_credentials(&credentials(&c, SECRET), None).await.unwrap();
        let other = service(clients_with(c.clone()), MockTokenRepository::new());
        assert!(matches!(
            other.authenticate_bearer(&issued.access_token).await,
            Err(BearerError::Invalid(_))
        ));
        // Verified once (and remembered): other claims under its signature are still
        // checked, and refused.
        assert!(svc.authenticate_bearer(&issued.access_token).await.is_ok());
        let mut parts: Vec<&str> = issued.access_token.split('.').collect();
        let forged_claims =
            URL_SAFE_NO_PAD.encode(br#"{"sub":"admin:00000000-0000-0000-0000-000000000000"}"#);
        let forged = [parts[0], forged_claims.as_str(), parts[2]].join(".");
        assert!(matches!(svc.authenticate_bearer(&forged).await, Err(BearerError::Invalid(_))));
        parts[2] = "AAAA";
        assert!(matches!(svc.authenticate_bearer(&parts.join(".")).await, Err(BearerError::Invalid(_))));
        assert!(matches!(svc.authenticate_bearer("garbage").await, Err(BearerError::Invalid(_))));
    }
}
