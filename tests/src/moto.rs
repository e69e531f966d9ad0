//! An S3-protocol server on loopback for the document tests: moto, installed into a venv
//! under the target directory the first time (pip, about half a minute), one server per
//! test process at a time (shared by the tests that run together, stopped when the last
//! [`S3Bucket`] is dropped), and a fresh bucket per test.
//!
//! The server under test reads its S3 settings from the `AWS_*` environment (see the
//! storage adapter), so an S3-backed server runs as a child process ([`crate::child`])
//! with [`S3Bucket::env`]; the test process itself talks to the bucket through
//! [`S3Bucket::options`] given explicitly, and never changes its own environment.

use crate::http::http_client;
use crate::target::target_dir;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

const MOTO: &str = "moto[server]==5.*";

/// The moto venv: `target/tmp/venv-moto`, the one the storage adapter's tests use too.
fn venv() -> PathBuf {
    target_dir().join("tmp").join("venv-moto")
}

/// The path of `moto_server`, installing it first when missing. Installs are serialised
/// across test processes by an exclusive lock file, so parallel first runs do not race.
fn ensure_moto() -> PathBuf {
    let venv = venv();
    let server = venv.join("bin/moto_server");
    if server.exists() {
        return server;
    }
    std::fs::create_dir_all(venv.parent().expect("the venv has a parent")).expect("target/tmp");
    let status = Command::new("flock")
        .arg(venv.with_extension("lock"))
        .arg("sh")
        .arg("-c")
        .arg(format!(
            "test -x {server} || {{ python3 -m venv {venv} && {venv}/bin/python -m pip install --quiet \
             --disable-pip-version-check '{MOTO}'; }}",
            server = server.display(),
            venv = venv.display()
        ))
        .status()
        .expect("flock and sh");
    assert!(status.success() && server.exists(), "installing {MOTO} into {} failed", venv.display());
    server
}

/// A running moto server; killed when dropped.
pub struct MotoServer {
    child: Mutex<Child>,
    /// `http://127.0.0.1:PORT`
    pub endpoint: String,
}

impl Drop for MotoServer {
    fn drop(&mut self) {
        if let Ok(child) = self.child.get_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn start_moto() -> MotoServer {
    let server = ensure_moto();
    let port =
        TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("an address").port();
    let child = Command::new(server)
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("moto_server starts");
    let moto = MotoServer { child: Mutex::new(child), endpoint: format!("http://127.0.0.1:{port}") };
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(30), "moto did not start on port {port}");
        std::thread::sleep(Duration::from_millis(100));
    }
    moto
}

/// The server of this process, started when no live [`S3Bucket`] holds one.
fn shared_moto() -> Arc<MotoServer> {
    static SHARED: Mutex<Weak<MotoServer>> = Mutex::new(Weak::new());
    let mut shared = SHARED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(moto) = shared.upgrade() {
        return moto;
    }
    let moto = Arc::new(start_moto());
    *shared = Arc::downgrade(&moto);
    moto
}

/// A fresh, empty bucket on the moto server of this process.
pub struct S3Bucket {
    pub moto: Arc<MotoServer>,
    pub bucket: String,
}

impl S3Bucket {
    /// Starts moto if needed and creates a bucket with a unique name.
    pub async fn create() -> S3Bucket {
        let moto = tokio::task::spawn_blocking(shared_moto).await.expect("the moto start thread");
        let bucket = format!("consular-{}", uuid::Uuid::now_v7().simple());
        let response =
            http_client().put(format!("{}/{bucket}", moto.endpoint)).send().await.expect("moto answers");
        assert!(response.status().is_success(), "creating bucket {bucket}: {}", response.status());
        S3Bucket { moto, bucket }
    }

    /// The storage URL of the server under test: the whole bucket.
    pub fn storage_url(&self) -> String {
        format!("s3://{}", self.bucket)
    }

    /// object_store's S3 options for this server (credentials are dummies: moto does not
    /// check signatures).
    pub fn options(&self) -> Vec<(&'static str, String)> {
        vec![
            ("aws_endpoint", self.moto.endpoint.clone()),
            ("aws_allow_http", "true".to_owned()),
            ("aws_region", "us-east-1".to_owned()),
            ("aws_access_key_id", "test".to_owned()),
            ("aws_secret_access_key", "test".to_owned()),
        ]
    }

    /// The same options as `AWS_*` environment variables, for a child server.
    pub fn env(&self) -> Vec<(String, String)> {
        self.options().into_iter().map(|(key, value)| (key.to_uppercase(), value)).collect()
    }

    /// The `<Key>`s of the multipart uploads still pending in the bucket (neither
    /// completed nor aborted): what an interrupted upload leaves on S3.
    pub async fn pending_uploads(&self) -> Vec<String> {
        let url = format!("{}/{}?uploads", self.moto.endpoint, self.bucket);
        let body = http_client().get(url).send().await.expect("moto answers").text().await.expect("a body");
        body.split("<Upload>")
            .skip(1)
            .filter_map(|upload| {
                upload.split_once("<Key>")?.1.split_once("</Key>").map(|(k, _)| k.to_owned())
            })
            .collect()
    }
}
