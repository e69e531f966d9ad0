//! [`TestApp`]: one running server node (in this process, or the real `consular` binary
//! as a child process) on a fresh database and storage, and the requests a test sends it.

use crate::backend::{Backend, Stack};
use crate::http::http_client;
use crate::settings::prepare;
use crate::{child, moto};
use actix_web::dev::ServerHandle;
use consular_app::{Application, Settings};
use reqwest::{Method, RequestBuilder, Response};
use serde_json::Value;
use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tempfile::TempDir;

/// Where a test server keeps document bytes.
#[derive(Clone)]
pub enum Storage {
    /// `file://` in the test's temporary directory.
    Local,
    /// A fresh bucket of the moto server of this process.
    S3(Arc<moto::S3Bucket>),
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
