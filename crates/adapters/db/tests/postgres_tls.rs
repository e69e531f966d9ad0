//! TLS to PostgreSQL through the adapter's own connection code (the pool behind every
//! repository, and the migrations' connection), against a cluster of each test's own that
//! accepts TLS connections only, with a CA and a server certificate (for `localhost` and
//! 127.0.0.1) made here. A second CA stands for the wrong one. The cluster authenticates
//! with a password, which no error may show.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_db::{Database, DbConfig, DbError, backend_of};
use consular_ports::HealthCheck;
use consular_testkit::postgres_tls::TlsCluster;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use std::path::{Path, PathBuf};
use std::time::Duration;

const PASSWORD: &str = "Tls4Consular9secret";

/// The certificates of one test: the server's CA, another CA, and the server's
/// certificate and key, the CAs as files for `sslrootcert`.
struct Pki {
    dir: tempfile::TempDir,
    server_certificate: String,
    server_key: String,
}

impl Pki {
    fn new() -> Pki {
        let dir = tempfile::tempdir().unwrap();
        let (right_pem, right) = ca("Consular test CA");
        let (wrong_pem, _) = ca("Some other CA");
        std::fs::write(dir.path().join("right-ca.pem"), right_pem).unwrap();
        std::fs::write(dir.path().join("wrong-ca.pem"), wrong_pem).unwrap();

        let key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
        params.distinguished_name.push(DnType::CommonName, "localhost");
        params.use_authority_key_identifier_extension = true;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let certificate = params.signed_by(&key, &right).unwrap();
        Pki { dir, server_certificate: certificate.pem(), server_key: key.serialize_pem() }
    }

    fn right_ca(&self) -> PathBuf {
        self.dir.path().join("right-ca.pem")
    }

    fn wrong_ca(&self) -> PathBuf {
        self.dir.path().join("wrong-ca.pem")
    }
}

fn ca(name: &str) -> (String, Issuer<'static, KeyPair>) {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(Vec::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let certificate = params.self_signed(&key).unwrap();
    (certificate.pem(), Issuer::new(params, key))
}

/// A TLS-only cluster with the server certificate of `pki`.
fn tls_cluster(pki: &Pki) -> TlsCluster {
    TlsCluster::start(&pki.server_certificate, &pki.server_key, PASSWORD).unwrap()
}

fn root(path: &Path) -> String {
    format!("sslrootcert={}", path.display())
}

fn connect(url: &str) -> Database {
    let config =
        DbConfig { max_connections: 2, acquire_timeout: Duration::from_secs(10), ..DbConfig::new(url) };
    Database::connect(&config).unwrap()
}

/// `url` connects through the pool, over TLS, and migrates.
async fn assert_encrypted(url: &str) {
    let db = connect(url);
    db.migrate().await.unwrap_or_else(|e| panic!("{url}: {e}"));
    db.check().await.unwrap_or_else(|e| panic!("{url}: {e}"));
    assert_eq!(db.session_encrypted().await.unwrap(), Some(true), "{url}");
    db.close();
}

/// `url` is refused both through the pool (what a request's 503 and the readiness check
/// log) and by the migrations (the start-up error), each time naming `cause`, never the
/// password.
async fn assert_refused(url: &str, cause: &str) {
    let db = connect(url);
    let pooled = db.check().await.unwrap_err();
    let migration = db.migrate().await.unwrap_err();
    assert!(matches!(migration, DbError::Connect(_)), "{migration:?}");
    for message in [pooled, migration.to_string()] {
        eprintln!("MSG {message}");
        assert!(message.contains(cause), "{url}: expected `{cause}` in: {message}");
        assert!(!message.contains(PASSWORD), "the password leaked: {message}");
    }
}

#[tokio::test]
async fn verify_full_with_the_right_ca_and_host_name_connects_encrypted() {
    let pki = Pki::new();
    let cluster = tls_cluster(&pki);
    let url = cluster.url("localhost", &format!("sslmode=verify-full&{}", root(&pki.right_ca())));
    assert_encrypted(&url).await;

    // The schema the migrations made is there for the pool, and the pool's statement
    // set-up ran on the TLS connection.
    let db = connect(&url);
    assert_eq!(db.count_rows("missions").await.unwrap(), 0);
    // The migrations from a plain thread (how test harnesses prepare templates): the
    // same connection code on a private runtime; a second run applies nothing.
    let again = url.clone();
    std::thread::spawn(move || consular_db::migrate_blocking(&again)).join().unwrap().unwrap();

    // The certificate names 127.0.0.1 too.
    let by_address = cluster.url("127.0.0.1", &format!("sslmode=verify-full&{}", root(&pki.right_ca())));
    assert_encrypted(&by_address).await;
    // No sslmode on a loopback host: `prefer`, which takes the TLS the server offers.
    assert_encrypted(&cluster.url("localhost", "")).await;
}

#[tokio::test]
async fn a_certificate_from_another_ca_is_refused() {
    let pki = Pki::new();
    let cluster = tls_cluster(&pki);
    let unknown = "not signed by a trusted CA";
    for mode in ["verify-full", "verify-ca", "require"] {
        // `require` with a root file checks the chain, as libpq does.
        let url = cluster.url("localhost", &format!("sslmode={mode}&{}", root(&pki.wrong_ca())));
        assert_refused(&url, unknown).await;
    }
    let url = cluster.url("localhost", &format!("sslmode=verify-full&{}", root(&pki.wrong_ca())));
    assert_refused(&url, &format!("trusted: the certificates of sslrootcert={}", pki.wrong_ca().display()))
        .await;
}

#[tokio::test]
async fn verify_full_refuses_a_host_name_the_certificate_lacks_and_verify_ca_accepts_it() {
    let pki = Pki::new();
    let cluster = tls_cluster(&pki);
    // `hostaddr` reaches the cluster while the name checked is another one.
    let query = |mode: &str| format!("sslmode={mode}&{}&hostaddr=127.0.0.1", root(&pki.right_ca()));
    let wrong_name = cluster.url("db.example.test", &query("verify-full"));
    assert_refused(&wrong_name, "not valid for the host name connected to").await;
    assert_refused(&wrong_name, "db.example.test").await;
    assert_encrypted(&cluster.url("db.example.test", &query("verify-ca"))).await;
}

#[tokio::test]
async fn require_encrypts_without_a_root_and_disable_is_refused_by_a_tls_only_server() {
    let pki = Pki::new();
    let cluster = tls_cluster(&pki);
    assert_encrypted(&cluster.url("localhost", "sslmode=require")).await;
    let plain = cluster.url("localhost", "sslmode=disable");
    assert_refused(&plain, "no encryption").await;
    assert_refused(&plain, "sslmode=disable rules out").await;
}

#[tokio::test]
async fn a_server_without_tls_is_refused_when_tls_is_required() {
    let cluster = TlsCluster::start_without_tls(PASSWORD).unwrap();
    assert_refused(&cluster.url("localhost", "sslmode=require"), "the server does not support TLS").await;
    assert_refused(&cluster.url("127.0.0.1", "sslmode=verify-full"), "sslmode=verify-full (from the URL)")
        .await;
    // `prefer`, the loopback default, falls back to a plain connection.
    let db = connect(&cluster.url("localhost", ""));
    db.migrate().await.unwrap();
    assert_eq!(db.session_encrypted().await.unwrap(), Some(false));
}

#[test]
fn bad_tls_settings_are_configuration_errors() {
    let url = format!("postgres://consular:{PASSWORD}@db.example.test/consular?sslmode=verify_full");
    let error = backend_of(&url).unwrap_err();
    assert!(error.contains("unknown sslmode `verify_full`") && !error.contains(PASSWORD), "{error}");
    let error = Database::connect(&DbConfig::new(url.as_str())).unwrap_err();
    assert!(matches!(error, DbError::InvalidUrl(_)), "{error:?}");
    assert!(!error.to_string().contains(PASSWORD), "{error}");

    let missing = format!(
        "postgres://consular:{PASSWORD}@db.example.test/x?sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem"
    );
    assert!(backend_of(&missing).is_ok(), "the file is read when connecting, not when validating");
    let error = Database::connect(&DbConfig::new(missing.as_str())).unwrap_err();
    assert!(matches!(error, DbError::Setup(_)), "{error:?}");
    assert!(error.to_string().contains("sslrootcert /nonexistent/ca.pem cannot be read"), "{error}");
    let error = consular_db::migrate_blocking(&missing).unwrap_err();
    assert!(error.to_string().contains("sslrootcert /nonexistent/ca.pem"), "{error}");
}
