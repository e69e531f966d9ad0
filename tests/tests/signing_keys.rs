//! Signing-key rotation and encryption at rest (docs/operations.md "Signing keys"), end to
//! end on both databases: `consular keys rotate` run beside two server nodes, tokens signed
//! before and after it verified by the node that signed neither, the JWKS of both, a
//! database dump searched for the private keys, the start-up rules of the key-encryption
//! key, and the retirement of a key every node drops once no token it signed can be valid.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_tests::consular_app::Settings;
use consular_tests::consular_app::config::Secret;
use consular_tests::consular_application::auth::rotation::ACTIVATION_DELAY;
use consular_tests::consular_application::auth::{KeyEncryptionKey, KeyPolicy, Rotation, SigningKeys};
use consular_tests::consular_application::documents::URL_KEY_SECRET;
use consular_tests::consular_db::Database;
use consular_tests::consular_ports::{
    Clock, KeyProtection, ServiceSecretRepository, SigningKeyRepository, StoredSecret, SystemClock,
};
use consular_tests::reqwest::StatusCode;
use consular_tests::serde_json::{self, Value};
use consular_tests::{Backend, TestApp, both, child, eventually, expect_bearer_refusal};
use std::path::Path;
use std::process::Output;
use std::sync::Arc;
use std::time::Duration;
use time::OffsetDateTime;

const MISSIONS: &str = "/api/v1/missions";

/// `consular ARGS` with `settings` as its environment, in `dir`.
async fn cli(dir: &Path, settings: &Settings, args: &[&str]) -> Output {
    let binary = tokio::task::spawn_blocking(child::server_binary).await.unwrap();
    let mut command = tokio::process::Command::new(binary);
    command.args(args).current_dir(dir).env_clear().envs(child::settings_env(settings));
    command.output().await.unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The kids a node publishes at `/.well-known/jwks.json`, in its order (newest first).
async fn jwks_kids(app: &TestApp) -> Vec<String> {
    let jwks: Value =
        app.http.get(app.url("/.well-known/jwks.json")).send().await.unwrap().json().await.unwrap();
    jwks["keys"].as_array().unwrap().iter().map(|k| k["kid"].as_str().unwrap().to_owned()).collect()
}

/// The `kid` of a token's header.
fn kid_of(token: &str) -> String {
    jsonwebtoken::decode_header(token).unwrap().kid.unwrap()
}

/// `consular keys rotate`; the new kid.
async fn rotate(app: &TestApp) -> String {
    let output = cli(app.dir(), &app.settings, &["keys", "rotate"]).await;
    assert!(output.status.success(), "keys rotate: {}", stderr(&output));
    let out = stdout(&output);
    out.strip_prefix("new signing key ")
        .and_then(|rest| rest.split(':').next())
        .unwrap_or_else(|| panic!("{out}"))
        .to_owned()
}

async fn tokens_signed_before_and_after_a_rotation_verify_on_another_node(backend: Backend) {
    let a = TestApp::spawn(backend).await;
    let b = a.spawn_node().await;
    let old = jwks_kids(&a).await;
    assert_eq!(old.len(), 1);
    let old = old[0].clone();
    // Signed by node A before the rotation, never shown to B until after it.
    let before = a.admin_token().await;
    assert_eq!(kid_of(&before), old);

    let new = rotate(&a).await;
    assert_ne!(new, old);
    let seen = eventually(Duration::from_secs(5), "both nodes publish both keys", || async {
        jwks_kids(&a).await == [new.clone(), old.clone()] && jwks_kids(&b).await == [new.clone(), old.clone()]
    })
    .await;
    // Every node reloads the keys on its revocation sync (250 ms); allow for a slow machine.
    assert!(seen < Duration::from_secs(3), "the rotation took {seen:?} to reach the nodes");
    // A node signs with a new key only once it has had it for ACTIVATION_DELAY.
    tokio::time::sleep(Duration::from_millis(ACTIVATION_DELAY.whole_milliseconds() as u64 + 300)).await;
    let after = a.admin_token().await;
    assert_eq!(kid_of(&after), new);

    for (node, name) in [(&b, "node B"), (&a, "node A")] {
        for (token, which) in [(&before, "before"), (&after, "after")] {
            let status = node.get(MISSIONS, token).await.status();
            assert_eq!(status, StatusCode::OK, "the token signed {which} the rotation, on {name}");
        }
    }
    // The old key keeps verifying, so it stays published, until it is retired.
    assert_eq!(jwks_kids(&b).await, [new.clone(), old.clone()]);

    // `keys list`: both keys, the old one retiring once its tokens have expired; no private
    // material.
    let listed = cli(a.dir(), &a.settings, &["keys", "list", "--json"]).await;
    assert!(listed.status.success(), "keys list: {}", stderr(&listed));
    let text = stdout(&listed);
    let keys: Vec<Value> = text.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(keys.iter().map(|k| k["kid"].as_str().unwrap()).collect::<Vec<_>>(), [&new, &old]);
    assert!(keys.iter().all(|k| k["protection"] == "aes-256-gcm"), "{text}");
    assert_eq!(keys[0]["retires_at"], Value::Null);
    let retires_at = consular_tests::instant(&keys[1]["retires_at"]);
    let ttl = time::Duration::seconds(i64::from(a.settings.access_token_ttl_secs));
    assert!(retires_at > time::OffsetDateTime::now_utc() + ttl, "{text}");
    for (_, pkcs8) in a.signing_keys().await {
        let seed = seed(&pkcs8);
        assert!(!text.contains(&hex(&seed)) && !text.contains(&base64_of(&seed)), "{text}");
    }
}
both!(tokens_signed_before_and_after_a_rotation_verify_on_another_node);

/// A clock stopped at one instant, to write key rows as a node would have days ago.
struct At(OffsetDateTime);

impl Clock for At {
    fn now(&self) -> OffsetDateTime {
        self.0
    }
}

/// The stored keys opened as a node whose clock reads `ago` in the past would open them
/// (creating the first key if there is none), with the nodes' KEK and token lifetime.
async fn keys_as_of(db: Database, settings: &Settings, ago: time::Duration) -> SigningKeys {
    let policy = KeyPolicy {
        access_ttl: time::Duration::seconds(i64::from(settings.access_token_ttl_secs)),
        leeway: time::Duration::seconds(30),
        rotation_period: None,
    };
    let clock = Arc::new(At(SystemClock.now() - ago));
    SigningKeys::load(Arc::new(db), clock, settings.key_encryption_key().unwrap(), policy).await.unwrap()
}

/// Retirement, end to end, without waiting for it: a key retires once its successor is
/// older than activation + token lifetime + leeway + margin (2.5 minutes at the least).
/// Here the first key is stored as created three days ago, before the nodes start, and
/// its successor as created two days ago, while they run. By those times every token the
/// first key signed has expired, so the nodes must drop it: from the database, from both
/// JWKS, and from verification: a token it signed moments before, which both nodes had
/// verified and remember, is refused by both (a token no real clock could have left
/// valid, but the one a key row deleted after a leak leaves, docs/operations.md).
async fn a_key_whose_tokens_have_all_expired_is_retired_on_every_node(backend: Backend) {
    let a = TestApp::spawn_seeded(
        backend,
        |_| {},
        |settings, db| async move {
            keys_as_of(db, &settings, time::Duration::days(3)).await;
        },
    )
    .await;
    let b = a.spawn_node().await;
    let old = jwks_kids(&a).await;
    assert_eq!(old.len(), 1, "{old:?}");
    let old = old[0].clone();
    let before = a.admin_token().await;
    assert_eq!(kid_of(&before), old);
    assert_eq!(b.get(MISSIONS, &before).await.status(), StatusCode::OK);

    let rotated =
        keys_as_of(a.database(), &a.settings, time::Duration::days(2)).await.rotate().await.unwrap();
    let Rotation::Rotated { kid: new } = rotated else { panic!("{rotated:?}") };
    eventually(Duration::from_secs(5), "both nodes publish the successor alone", || async {
        jwks_kids(&a).await == [new.clone()] && jwks_kids(&b).await == [new.clone()]
    })
    .await;

    // Deleted, not only hidden: the database and `keys list` hold the successor alone.
    let stored: Vec<String> = a.signing_keys().await.into_iter().map(|(kid, _)| kid).collect();
    assert_eq!(stored, [new.as_str()]);
    let listed = cli(a.dir(), &a.settings, &["keys", "list", "--json"]).await;
    assert!(listed.status.success(), "keys list: {}", stderr(&listed));
    let keys: Vec<Value> = stdout(&listed).lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(keys.len(), 1, "{keys:?}");
    assert_eq!((keys[0]["kid"].as_str(), &keys[0]["retires_at"]), (Some(new.as_str()), &Value::Null));

    for node in [&a, &b] {
        expect_bearer_refusal(node.get(MISSIONS, &before).await, "invalid_token").await;
    }
    let after = a.admin_token().await;
    assert_eq!(kid_of(&after), new);
    assert_eq!(b.get(MISSIONS, &after).await.status(), StatusCode::OK);
}
both!(a_key_whose_tokens_have_all_expired_is_retired_on_every_node);

/// The 32-byte Ed25519 seed inside a PKCS#8 document (after `04 20`).
fn seed(pkcs8: &[u8]) -> Vec<u8> {
    let at = pkcs8.windows(2).position(|w| w == [0x04, 0x20]).expect("an Ed25519 PKCS#8 key");
    pkcs8[at + 2..at + 34].to_vec()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Everything the database holds, as an operator's backup would: `pg_dump` of the
/// PostgreSQL database, or the SQLite file with its WAL.
async fn dump(app: &TestApp) -> Vec<u8> {
    match app.backend {
        Backend::Postgres => {
            let output = tokio::process::Command::new(consular_tests::bench::pg_bin("pg_dump"))
                .args(["--no-owner", "-d", &app.settings.database_url])
                .output()
                .await
                .unwrap();
            assert!(output.status.success(), "pg_dump: {}", stderr(&output));
            output.stdout
        }
        Backend::Sqlite => {
            let mut bytes = Vec::new();
            for entry in std::fs::read_dir(app.dir()).unwrap() {
                let path = entry.unwrap().path();
                if path.file_name().unwrap().to_string_lossy().starts_with("consular.db") {
                    bytes.extend(std::fs::read(&path).unwrap());
                }
            }
            bytes
        }
    }
}

/// Whether `dump` holds the private key `pkcs8` in any form a dump writes bytes in: raw
/// (the SQLite file), hex (`pg_dump`'s bytea), base64.
fn holds_private_key(dump: &[u8], pkcs8: &[u8]) -> bool {
    let seed = seed(pkcs8);
    contains(dump, pkcs8)
        || contains(dump, &seed)
        || contains(dump, hex(&seed).as_bytes())
        || contains(dump, base64_of(&seed).as_bytes())
}

/// Whether `dump` holds `bytes` raw (the SQLite file), in hex (`pg_dump`'s bytea) or in
/// base64.
fn holds_bytes(dump: &[u8], bytes: &[u8]) -> bool {
    contains(dump, bytes)
        || contains(dump, hex(bytes).as_bytes())
        || contains(dump, base64_of(bytes).as_bytes())
}

/// The download URL key as the node stored it (read back, nothing inserted: it exists).
async fn stored_url_key(app: &TestApp) -> StoredSecret {
    let probe = StoredSecret { value: vec![0; 32], protection: KeyProtection::Clear };
    let database = app.database();
    let stored =
        database.get_or_insert(URL_KEY_SECRET, &probe, time::OffsetDateTime::now_utc()).await.unwrap();
    database.close();
    stored
}

async fn a_database_dump_holds_no_private_key_in_clear(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    rotate(&app).await;
    let keys = app.signing_keys().await;
    assert_eq!(keys.len(), 2);
    let dump = dump(&app).await;
    for (kid, pkcs8) in &keys {
        // The dump has the keys' rows...
        assert!(contains(&dump, kid.as_bytes()), "the dump lacks signing key {kid}");
        // ...but not the private keys.
        assert!(!holds_private_key(&dump, pkcs8), "signing key {kid} is in the dump in clear");
    }
    // Nor the key of the download URLs, sealed under the same KEK.
    let sealed = stored_url_key(&app).await;
    assert_eq!(sealed.protection, KeyProtection::Aes256Gcm);
    let kek = app.settings.key_encryption_key().unwrap().unwrap();
    let url_key = kek.open(URL_KEY_SECRET, &sealed.value).unwrap();
    assert_eq!(url_key.len(), 32);
    assert!(holds_bytes(&dump, &sealed.value), "the dump has the sealed URL key");
    assert!(!holds_bytes(&dump, &url_key), "the download URL key is in the dump in clear");

    // The same search finds a key stored in clear (a node without a KEK).
    let plain = TestApp::spawn_with(backend, |settings| {
        settings.key_encryption_key = None;
        settings.allow_plaintext_keys = true;
    })
    .await;
    let (kid, pkcs8) = plain.signing_keys().await.remove(0);
    let plain_dump = self::dump(&plain).await;
    assert!(holds_private_key(&plain_dump, &pkcs8), "signing key {kid} stored in clear not found");
    let clear = stored_url_key(&plain).await;
    assert_eq!(clear.protection, KeyProtection::Clear);
    assert!(holds_bytes(&plain_dump, &clear.value), "the download URL key stored in clear not found");
}
both!(a_database_dump_holds_no_private_key_in_clear);

async fn keys_stored_in_clear_are_sealed_once_a_kek_is_configured(backend: Backend) {
    // As an earlier version, or a node without a KEK, left them.
    let app = TestApp::spawn_with(backend, |settings| {
        settings.key_encryption_key = None;
        settings.allow_plaintext_keys = true;
    })
    .await;
    let database = app.database();
    let stored = database.all().await.unwrap();
    assert_eq!(stored[0].protection, KeyProtection::Clear);
    let url_key = stored_url_key(&app).await;
    assert_eq!(url_key.protection, KeyProtection::Clear);
    let before = app.admin_token().await;

    let mut with_kek = app.settings.clone();
    with_kek.key_encryption_key = Some(Secret(KeyEncryptionKey::generate_base64().unwrap()));
    with_kek.allow_plaintext_keys = false;
    // Any start with a KEK (here the CLI's) seals them.
    let listed = cli(app.dir(), &with_kek, &["keys", "list"]).await;
    assert!(listed.status.success(), "keys list: {}", stderr(&listed));
    let sealed = database.all().await.unwrap();
    database.close();
    assert_eq!(sealed[0].kid, stored[0].kid);
    assert_eq!(sealed[0].protection, KeyProtection::Aes256Gcm);
    let kek = with_kek.key_encryption_key().unwrap().unwrap();
    assert_eq!(kek.open(&sealed[0].kid, &sealed[0].private_key).unwrap(), stored[0].private_key);
    // The download URL key too, and it is the same key: URLs handed out before stay valid.
    let sealed_url_key = stored_url_key(&app).await;
    assert_eq!(sealed_url_key.protection, KeyProtection::Aes256Gcm);
    assert_eq!(kek.open(URL_KEY_SECRET, &sealed_url_key.value).unwrap(), url_key.value);

    // A node with the KEK verifies what the key signed while it was in clear.
    let node = app.spawn_node_with(with_kek).await;
    assert_eq!(node.get(MISSIONS, &before).await.status(), StatusCode::OK);
}
both!(keys_stored_in_clear_are_sealed_once_a_kek_is_configured);

async fn sealed_keys_need_the_right_kek(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let kid = jwks_kids(&app).await.remove(0);

    let mut wrong = app.settings.clone();
    wrong.key_encryption_key = Some(Secret(KeyEncryptionKey::generate_base64().unwrap()));
    let output = cli(app.dir(), &wrong, &["keys", "list"]).await;
    assert_eq!(output.status.code(), Some(1));
    let message = format!("cannot decrypt signing key {kid}: wrong key_encryption_key?");
    assert!(stderr(&output).contains(&message), "{}", stderr(&output));

    let mut none = app.settings.clone();
    none.key_encryption_key = None;
    none.allow_plaintext_keys = true;
    let output = cli(app.dir(), &none, &["keys", "list"]).await;
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains(&format!("signing key {kid} is encrypted but no key_encryption_key")),
        "{}",
        stderr(&output)
    );
}
both!(sealed_keys_need_the_right_kek);

async fn without_a_kek_sqlite_warns_and_postgres_refuses(backend: Backend) {
    let app = TestApp::spawn(backend).await;
    let dir = tempfile::tempdir().unwrap();
    let mut settings = app.settings.clone();
    settings.key_encryption_key = None;
    match backend {
        Backend::Postgres => {
            let output = cli(app.dir(), &settings, &["serve"]).await;
            assert_eq!(output.status.code(), Some(2), "a configuration error");
            let error = stderr(&output);
            assert!(error.contains("setting `key_encryption_key`: required on PostgreSQL"), "{error}");
            assert!(error.contains("allow_plaintext_keys"), "{error}");
        }
        Backend::Sqlite => {
            settings.database_url = format!("sqlite://{}", dir.path().join("consular.db").display());
            let (server, _) = child::ServerProcess::start(&settings, &[], dir.path()).await;
            let log = server.log_text();
            assert!(log.contains("no key_encryption_key configured"), "{log}");
            assert!(server.is_running());
        }
    }
}
both!(without_a_kek_sqlite_warns_and_postgres_refuses);
