//! The hot path of every authenticated request: checking a bearer token (EdDSA signature
//! and claims at its first use on the node, then remembered; the in-memory revocation view
//! every time), and the client secret check of the token endpoint.
//! Run with `make bench`; prints operations per second per core.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_application::auth::{
    ClientCredentials, KeySet, RevocationCache, SigningKeys, TokenConfig, TokenPorts, TokenService, secrets,
};
use consular_domain::{ApiClient, PrincipalId, PrincipalKind, Scope, ScopeSet, Subject};
use consular_ports::{MockClientRepository, MockTokenRepository, SystemClock};
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};
use time::OffsetDateTime;

fn report(name: &str, iterations: u32, elapsed: Duration) {
    let per_op = elapsed / iterations;
    let per_second = f64::from(iterations) / elapsed.as_secs_f64();
    println!("{name:<44} {per_op:>10.2?}/op  {per_second:>12.0} ops/s");
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let secret = secrets::generate().unwrap();
    let now = OffsetDateTime::now_utc();
    let subject = Subject { kind: PrincipalKind::Admin, id: PrincipalId::new() };
    let client = ApiClient::issue(
        "bench".into(),
        ScopeSet::only(Scope::Admin),
        subject,
        None,
        secrets::hash(&secret),
        now,
    );
    let mut clients = MockClientRepository::new();
    let stored = client.clone();
    clients.expect_get().returning(move |_| Ok(Some(stored.clone())));
    let mut tokens = MockTokenRepository::new();
    tokens.expect_insert_refresh().returning(|_| Ok(()));
    tokens.expect_active_revocations().returning(|_| Ok(vec![]));
    tokens.expect_revocations_since().returning(|_| Ok(vec![]));
    tokens.expect_is_revoked().never();
    let service = TokenService::new(
        TokenPorts { clients: Arc::new(clients), tokens: Arc::new(tokens), clock: Arc::new(SystemClock) },
        Arc::new(SigningKeys::ephemeral(KeySet::generate_ephemeral().unwrap())),
        Arc::new(RevocationCache::new()),
        TokenConfig {
            issuer: "bench".into(),
            audience: "consular-api".into(),
            access_ttl: time::Duration::minutes(15),
            refresh_ttl: time::Duration::days(1),
            leeway_secs: 30,
        },
    );
    let credentials = ClientCredentials { client_id: client.id.to_string(), client_secret: secret.clone() };
    let issued = runtime.block_on(service.client_credentials(&credentials, None)).unwrap();

    // Bearer check, with the revocation view kept fresh as the background sync does.
    let rounds = 20u32;
    let per_round = 5_000u32;
    let mut elapsed = Duration::ZERO;
    for _ in 0..rounds {
        runtime.block_on(service.sync_revocations()).unwrap();
        let started = Instant::now();
        for _ in 0..per_round {
            black_box(
                runtime.block_on(service.authenticate_bearer(black_box(&issued.access_token))).unwrap(),
            );
        }
        elapsed += started.elapsed();
    }
    report("bearer check, token already verified", rounds * per_round, elapsed);

    // The first use of each token: its signature and claims verified, then remembered.
    let fresh: Vec<String> = (0..2_000)
        .map(|_| runtime.block_on(service.client_credentials(&credentials, None)).unwrap().access_token)
        .collect();
    runtime.block_on(service.sync_revocations()).unwrap();
    let started = Instant::now();
    for token in &fresh {
        black_box(runtime.block_on(service.authenticate_bearer(black_box(token))).unwrap());
    }
    report("bearer check, first use of a token (EdDSA)", fresh.len() as u32, started.elapsed());

    let iterations = 200_000u32;
    let started = Instant::now();
    for _ in 0..iterations {
        black_box(secrets::verify(black_box(&secret), black_box(&client.secret_hash)));
    }
    report("client secret check (SHA-256, constant time)", iterations, started.elapsed());

    let iterations = 5_000u32;
    let started = Instant::now();
    for _ in 0..iterations {
        black_box(runtime.block_on(service.client_credentials(&credentials, None)).unwrap());
    }
    report("token issuance (mocked storage)", iterations, started.elapsed());
}
