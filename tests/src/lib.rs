//! The harness of the end-to-end tests in `tests/tests/*.rs`: a real server on a free
//! port of 127.0.0.1, on a fresh SQLite file or a fresh PostgreSQL database, driven over
//! HTTP with `reqwest` (and with the `oauth2` crate, through [`OAuthHttp`]).
//!
//! Every test is an `async fn(Backend)`; [`both!`] turns it into `name::sqlite` and
//! `name::postgres`, so each one runs on both databases.
//!
//! The document tests also run a server on S3 (moto, [`moto`]) with a real clamd
//! ([`clamd`]), and the real `consular` binary as a child process that a test can SIGKILL
//! and start again on the same database and storage ([`child`], [`TestApp::spawn_process`]);
//! [`stacks!`] runs a test on SQLite + local files and on PostgreSQL + S3; [`files`] builds
//! uploads. Tokens, API clients and forged tokens are in `tokens.rs`, the objects most
//! tests build on in `world.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod bench;
pub mod blobs;
pub mod child;
pub mod clamd;
pub mod files;
pub mod moto;
mod oauth;
mod tokens;
mod world;

pub use oauth::{OAuthHttp, OAuthHttpError};
pub use tokens::*;
pub use world::*;

use actix_web::dev::ServerHandle;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use consular_app::{Application, Settings};
use reqwest::header::HeaderMap;
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde_json::{Value, json};
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tempfile::TempDir;

pub use consular_app;
pub use consular_application;
pub use consular_db;
pub use consular_domain;
pub use consular_ports;
pub use consular_storage;
pub use oauth2;
pub use reqwest;
pub use serde_json;

/// Generates `$name::sqlite` and `$name::postgres`, two multi-thread tokio tests that call
/// `async fn $name(backend: Backend)` (defined next to the macro call) with each backend.
/// Attributes given before the name (`#[ignore = "..."]`) apply to both.
#[macro_export]
macro_rules! both {
    ($(#[$meta:meta])* $name:ident) => {
        mod $name {
            $(#[$meta])*
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$name($crate::Backend::Sqlite).await
            }

            $(#[$meta])*
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$name($crate::Backend::Postgres).await
            }
        }
    };
}

/// The database a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Where the PostgreSQL migrations are, to name the template database by their content.
fn postgres_migrations() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/postgres"))
}

/// A fresh, migrated PostgreSQL database cloned from the shared template.
async fn fresh_postgres_url() -> String {
    tokio::task::spawn_blocking(|| {
        let key = consular_testkit::fingerprint(postgres_migrations())?;
        consular_testkit::postgres::fresh_database(&key, |url| {
            consular_db::migrate_blocking(url).map_err(|e| e.to_string())
        })
    })
    .await
    .expect("the PostgreSQL setup thread panicked")
    .unwrap_or_else(|e| panic!("no PostgreSQL test database: {e}"))
}

/// A plain HTTP client: no proxy, no redirects, so that tests see exactly what the server says.
pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .expect("a reqwest client")
}

/// Where a test server keeps document bytes.
#[derive(Clone)]
pub enum Storage {
    /// `file://` in the test's temporary directory.
    Local,
    /// A fresh bucket of the moto server of this process.
    S3(Arc<moto::S3Bucket>),
}

/// A database and a blob store, for tests that run on more than the two databases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stack {
    pub backend: Backend,
    pub s3: bool,
}

impl Stack {
    pub const SQLITE_LOCAL: Stack = Stack { backend: Backend::Sqlite, s3: false };
    pub const POSTGRES_S3: Stack = Stack { backend: Backend::Postgres, s3: true };
    pub const POSTGRES_LOCAL: Stack = Stack { backend: Backend::Postgres, s3: false };
}

/// Generates `$name::sqlite_local` and `$name::postgres_s3`, two multi-thread tokio tests
/// that call `async fn $name(stack: Stack)`; start the server with
/// [`TestApp::spawn_stack`]. Attributes given before the name apply to both.
#[macro_export]
macro_rules! stacks {
    ($(#[$meta:meta])* $name:ident) => {
        mod $name {
            $(#[$meta])*
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite_local() {
                super::$name($crate::Stack::SQLITE_LOCAL).await
            }

            $(#[$meta])*
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres_s3() {
                super::$name($crate::Stack::POSTGRES_S3).await
            }
        }
    };
}

/// How a node runs: inside the test process, or as a `consular serve` child process.
enum Node {
    InProcess(ServerHandle),
    Child(Arc<child::ServerProcess>),
}

/// One running server node and what a test needs to talk to it.
pub struct TestApp {
    pub backend: Backend,
    /// `http://127.0.0.1:PORT`
    pub base_url: String,
    pub port: u16,
    /// The metrics listener's port, when the test set `metrics_bind` (see
    /// [`TestApp::metrics_url`]).
    pub metrics_port: Option<u16>,
    pub http: reqwest::Client,
    /// The bootstrap global admin client (`admin` scope, no mission).
    pub admin_id: String,
    pub admin_secret: String,
    /// The settings this node runs with (a second node reuses them with another port).
    pub settings: Settings,
    /// Where the documents' bytes are.
    pub storage: Storage,
    node: Node,
    /// The SQLite file and the blob directory; shared by the nodes of one test.
    dir: Arc<TempDir>,
}

/// A temporary directory and the test settings for it, with `tweak` applied and checked.
async fn prepare(backend: Backend, tweak: impl FnOnce(&mut Settings)) -> (Arc<TempDir>, Settings) {
    let dir = Arc::new(tempfile::tempdir().expect("a temporary directory"));
    let mut settings = test_settings(backend, dir.path()).await;
    tweak(&mut settings);
    settings.validate().unwrap_or_else(|e| panic!("test settings: {e}"));
    (dir, settings)
}

/// The test settings on `backend`, with the database and blobs in `dir`.
async fn test_settings(backend: Backend, dir: &Path) -> Settings {
    let database_url = match backend {
        Backend::Sqlite => consular_testkit::sqlite_url(dir),
        Backend::Postgres => fresh_postgres_url().await,
    };
    Settings {
        database_url,
        storage_url: format!("file://{}", dir.join("blobs").display()),
        bind: SocketAddr::from(([127, 0, 0, 1], 0)),
        issuer: "https://consular.test".to_owned(),
        audience: "consular-api".to_owned(),
        workers: 1,
        db_max_connections: 4,
        log_level: "warn".to_owned(),
        // The notification tests turn the worker on; elsewhere it would only add queries.
        run_worker: false,
        // Sealed signing keys, as in production (PostgreSQL refuses to start without a
        // KEK); a second node of the test reuses the settings, and so the KEK.
        key_encryption_key: Some(consular_app::config::Secret(
            consular_application::auth::KeyEncryptionKey::generate_base64().expect("a random KEK"),
        )),
        ..Settings::default()
    }
}

/// Sets the setting `key` to `value` through serde, so that a test can name a setting
/// by its configuration key (`max_upload_bytes`, `clamav_addr`); panics when there is no
/// such setting or the value does not fit.
pub fn set_setting(settings: &mut Settings, key: &str, value: Value) {
    let mut members = serde_json::to_value(&*settings).expect("settings serialize");
    members[key] = value;
    *settings = serde_json::from_value(members).unwrap_or_else(|e| panic!("setting `{key}`: {e}"));
}

/// The target directory (`target/`) this test binary was built into, from its path
/// `target/<profile>/deps/<binary>`.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.ancestors().nth(3).expect("target/<profile>/deps/<binary>").to_path_buf()
}

impl TestApp {
    /// A server on a fresh database with the default settings.
    pub async fn spawn(backend: Backend) -> TestApp {
        TestApp::spawn_with(backend, |_| {}).await
    }

    /// A server on a fresh database, with `tweak` applied to the test settings first.
    pub async fn spawn_with(backend: Backend, tweak: impl FnOnce(&mut Settings)) -> TestApp {
        let (dir, settings) = prepare(backend, tweak).await;
        TestApp::launch(backend, dir, settings).await
    }

    /// [`TestApp::spawn_with`], with `seed` run on the migrated database before the server
    /// starts: rows a test needs to be there already, such as signing keys created days
    /// ago. The handle is closed once `seed` has finished.
    pub async fn spawn_seeded<Seed, Seeded>(
        backend: Backend,
        tweak: impl FnOnce(&mut Settings),
        seed: Seed,
    ) -> TestApp
    where
        Seed: FnOnce(Settings, consular_db::Database) -> Seeded,
        Seeded: Future<Output = ()>,
    {
        let (dir, settings) = prepare(backend, tweak).await;
        let db = consular_db::Database::connect(&consular_db::DbConfig::new(settings.database_url.clone()))
            .expect("a database handle");
        db.migrate().await.unwrap_or_else(|e| panic!("the migrations: {e}"));
        seed(settings.clone(), db.clone()).await;
        db.close();
        TestApp::launch(backend, dir, settings).await
    }

    /// The server in this process, on the prepared database.
    async fn launch(backend: Backend, dir: Arc<TempDir>, settings: Settings) -> TestApp {
        let Started { handle, port, metrics_port, bootstrap_admin } = start_in_process(&settings).await;
        let admin = bootstrap_admin.expect("a fresh database bootstraps an admin client");
        TestApp {
            backend,
            base_url: format!("http://127.0.0.1:{port}"),
            port,
            metrics_port,
            http: http_client(),
            admin_id: admin.client.id.to_string(),
            admin_secret: admin.secret,
            settings,
            storage: Storage::Local,
            node: Node::InProcess(handle),
            dir,
        }
    }

    /// A server for `stack`: in this process on local files, as a child process on S3
    /// (it takes its S3 settings from the environment; see [`moto`]).
    pub async fn spawn_stack(stack: Stack, tweak: impl FnOnce(&mut Settings)) -> TestApp {
        if stack.s3 {
            TestApp::spawn_process(stack, tweak).await
        } else {
            TestApp::spawn_with(stack.backend, tweak).await
        }
    }

    /// The real `consular serve` as a child process on a fresh database and storage
    /// (a fresh bucket when `stack.s3`), with `tweak` applied to the test settings; see
    /// [`TestApp::kill`] and [`TestApp::spawn_node`].
    pub async fn spawn_process(stack: Stack, tweak: impl FnOnce(&mut Settings)) -> TestApp {
        let storage =
            if stack.s3 { Storage::S3(Arc::new(moto::S3Bucket::create().await)) } else { Storage::Local };
        let (dir, settings) = prepare(stack.backend, |settings| {
            if let Storage::S3(bucket) = &storage {
                settings.storage_url = bucket.storage_url();
            }
            tweak(settings);
        })
        .await;
        let (server, bootstrap) =
            child::ServerProcess::start(&settings, &storage_env(&storage), dir.path()).await;
        let admin = bootstrap.unwrap_or_else(|| {
            panic!("a fresh database bootstraps an admin client; the server printed:\n{}", server.log_text())
        });
        TestApp {
            backend: stack.backend,
            base_url: format!("http://127.0.0.1:{}", server.port),
            port: server.port,
            metrics_port: server.metrics_port,
            http: http_client(),
            admin_id: admin.client_id,
            admin_secret: admin.secret,
            settings,
            storage,
            node: Node::Child(Arc::new(server)),
            dir,
        }
    }

    /// A second server node on the same database and storage, with the same settings (and
    /// so the same signing keys, issuer and audience) but its own port and memory: in this
    /// process, or a new child process when this node is one (a restart after
    /// [`TestApp::kill`]).
    pub async fn spawn_node(&self) -> TestApp {
        self.spawn_node_with(self.settings.clone()).await
    }

    /// [`TestApp::spawn_node`] with other settings (the same database and storage, e.g. a
    /// node that runs the notification worker beside one that only serves).
    pub async fn spawn_node_with(&self, settings: Settings) -> TestApp {
        let (node, port, metrics_port) = match &self.node {
            Node::InProcess(_) => {
                let started = start_in_process(&settings).await;
                assert!(started.bootstrap_admin.is_none(), "a second node must not bootstrap another admin");
                (Node::InProcess(started.handle), started.port, started.metrics_port)
            }
            Node::Child(_) => {
                let (server, bootstrap) =
                    child::ServerProcess::start(&settings, &storage_env(&self.storage), self.dir.path())
                        .await;
                assert!(bootstrap.is_none(), "a second node must not bootstrap another admin");
                let (port, metrics_port) = (server.port, server.metrics_port);
                (Node::Child(Arc::new(server)), port, metrics_port)
            }
        };
        TestApp {
            backend: self.backend,
            base_url: format!("http://127.0.0.1:{port}"),
            port,
            metrics_port,
            http: http_client(),
            admin_id: self.admin_id.clone(),
            admin_secret: self.admin_secret.clone(),
            settings,
            storage: self.storage.clone(),
            node,
            dir: self.dir.clone(),
        }
    }

    /// Stops this node gracefully (SIGTERM for a child process).
    pub async fn stop(&self) {
        match &self.node {
            Node::InProcess(handle) => handle.stop(true).await,
            Node::Child(server) => {
                let server = server.clone();
                tokio::task::spawn_blocking(move || server.terminate()).await.expect("the stop thread");
            }
        }
    }

    /// SIGKILL of this node's process (a child process only): it ends at once, in the
    /// middle of whatever it was doing. Start it again with [`TestApp::spawn_node`].
    pub fn kill(&self) {
        match &self.node {
            Node::Child(server) => server.kill(),
            Node::InProcess(_) => panic!("only a child process can be killed: use TestApp::spawn_process"),
        }
    }

    /// The process id of this node's server (this process for an in-process node).
    pub fn server_pid(&self) -> u32 {
        match &self.node {
            Node::Child(server) => server.pid,
            Node::InProcess(_) => std::process::id(),
        }
    }

    /// Waits up to `timeout` for this node's process (a child process only) to end by
    /// itself, after a signal the test sent to [`TestApp::server_pid`]: its exit status,
    /// or `None` if it still runs.
    pub async fn wait_for_exit(&self, timeout: Duration) -> Option<std::process::ExitStatus> {
        match &self.node {
            Node::Child(server) => {
                let server = server.clone();
                tokio::task::spawn_blocking(move || server.wait_for_exit(timeout))
                    .await
                    .expect("the wait thread")
            }
            Node::InProcess(_) => panic!("only a child process exits: use TestApp::spawn_process"),
        }
    }

    /// What a child process wrote (empty for an in-process node), for failure messages.
    pub fn server_log(&self) -> String {
        match &self.node {
            Node::Child(server) => server.log_text(),
            Node::InProcess(_) => String::new(),
        }
    }

    /// The blob store this node writes to, opened by the test itself (to look behind the
    /// API: which blobs exist, their bytes).
    pub fn blob_store(&self) -> consular_storage::ObjectBlobStore {
        let options = match &self.storage {
            Storage::S3(bucket) => bucket.options(),
            Storage::Local => Vec::new(),
        };
        consular_storage::ObjectBlobStore::from_url_with(
            &self.settings.storage_url,
            options.iter().map(|(k, v)| (*k, v.as_str())),
        )
        .unwrap_or_else(|e| panic!("the test cannot open the blob store: {e}"))
    }

    /// A handle on this node's database (to look behind the API); close it after use.
    pub fn database(&self) -> consular_db::Database {
        consular_db::Database::connect(&consular_db::DbConfig::new(self.settings.database_url.clone()))
            .expect("a database handle")
    }

    /// The directory of the SQLite file and local blobs (shared by the nodes of a test).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// `path` on this node's metrics listener; panics when the test did not set
    /// `metrics_bind`.
    pub fn metrics_url(&self, path: &str) -> String {
        let port = self.metrics_port.expect("a metrics listener: set `metrics_bind` in the test's settings");
        format!("http://127.0.0.1:{port}{path}")
    }

    /// A request to `path` on this node.
    pub fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.http.request(method, self.url(path))
    }

    /// A request with `Authorization: Bearer token`.
    pub fn authed(&self, method: Method, path: &str, token: &str) -> RequestBuilder {
        self.request(method, path).bearer_auth(token)
    }

    pub async fn get(&self, path: &str, token: &str) -> Response {
        self.authed(Method::GET, path, token).send().await.expect("GET")
    }

    pub async fn post_json(&self, path: &str, token: &str, body: &Value) -> Response {
        self.authed(Method::POST, path, token).json(body).send().await.expect("POST")
    }

    pub async fn post_empty(&self, path: &str, token: &str) -> Response {
        self.authed(Method::POST, path, token).send().await.expect("POST")
    }

    pub async fn patch_json(
        &self,
        path: &str,
        token: &str,
        if_match: Option<&str>,
        body: &Value,
    ) -> Response {
        let mut request = self.authed(Method::PATCH, path, token).json(body);
        if let Some(tag) = if_match {
            request = request.header("if-match", tag);
        }
        request.send().await.expect("PATCH")
    }

    /// `POST /api/v1/missions` with valid fields; panics unless 201. The mission.
    pub async fn create_mission(&self, token: &str, code: &str) -> Value {
        let response = self.post_json("/api/v1/missions", token, &mission_body(code)).await;
        let status = response.status();
        let body: Value = response.json().await.expect("a JSON body");
        assert_eq!(status, StatusCode::CREATED, "mission creation failed: {body}");
        body
    }
}

/// Asks the node to stop (without waiting) so that servers do not pile up when many tests
/// share one process (`cargo test`); under nextest the process ends anyway. A child
/// process is killed when the last handle on it goes.
impl Drop for TestApp {
    fn drop(&mut self) {
        if let Node::InProcess(handle) = &self.node {
            drop(handle.stop(false));
        }
    }
}

/// The environment a child server needs for `storage` (S3 settings).
fn storage_env(storage: &Storage) -> Vec<(String, String)> {
    match storage {
        Storage::S3(bucket) => bucket.env(),
        Storage::Local => Vec::new(),
    }
}

/// A node started in this process: its handle, ports and bootstrap admin.
struct Started {
    handle: ServerHandle,
    port: u16,
    metrics_port: Option<u16>,
    bootstrap_admin: Option<consular_application::clients::ClientWithSecret>,
}

/// Builds the application for `settings` and runs it in this process.
async fn start_in_process(settings: &Settings) -> Started {
    let application =
        Application::build(settings).await.unwrap_or_else(|e| panic!("the server did not start: {e}"));
    let started = Started {
        handle: application.handle(),
        port: application.port(),
        metrics_port: application.metrics_addr().map(|addr| addr.port()),
        bootstrap_admin: application.bootstrap_admin.clone(),
    };
    tokio::spawn(application.run());
    started
}

/// `base` with the members of `overrides` set (or removed when `null`).
pub fn merge(mut base: Value, overrides: Value) -> Value {
    if let (Some(base), Value::Object(overrides)) = (base.as_object_mut(), overrides) {
        for (key, value) in overrides {
            if value.is_null() {
                base.remove(&key);
            } else {
                base.insert(key, value);
            }
        }
    }
    base
}

/// Valid fields for a new mission with `code`.
pub fn mission_body(code: &str) -> Value {
    json!({
        "code": code,
        "name": format!("Embassy {code}"),
        "country": "FR",
        "city": "Paris",
        "timezone": "Europe/Paris",
    })
}

/// Polls `check` every 50 ms until it holds; panics with `what` after `timeout`. Returns
/// how long it took.
pub async fn eventually<F, Fut>(timeout: Duration, what: &str, mut check: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let started = Instant::now();
    loop {
        if check().await {
            return started.elapsed();
        }
        if started.elapsed() > timeout {
            panic!("{what}: still not the case after {timeout:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A header as text ("" when absent).
pub fn header(headers: &HeaderMap, name: &str) -> String {
    headers.get(name).map(|v| v.to_str().expect("a text header").to_owned()).unwrap_or_default()
}

/// Checks that `response` is an RFC 9457 problem with `status` and `code`, and returns it.
pub async fn expect_problem(response: Response, status: u16, code: &str) -> (HeaderMap, Value) {
    let actual = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.expect("a body");
    assert_eq!(actual, status, "unexpected status; body: {text}");
    assert_eq!(header(&headers, "content-type"), "application/problem+json", "body: {text}");
    let problem: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    assert_eq!(problem["status"], status, "{problem}");
    assert_eq!(problem["code"], code, "{problem}");
    for member in ["type", "title", "detail", "instance", "request_id"] {
        assert!(problem[member].is_string(), "problem without `{member}`: {problem}");
    }
    assert!(problem["type"].as_str().unwrap_or_default().starts_with('/'), "{problem}");
    assert_eq!(problem["request_id"].as_str(), Some(header(&headers, "x-request-id").as_str()), "{problem}");
    (headers, problem)
}
