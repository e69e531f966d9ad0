//! The S3 path of the blob store against a real S3-protocol server on loopback (moto).
//! The test installs moto into a venv under the target directory the first time (pip,
//! about half a minute), starts it on a free port, and stops it at the end.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_ports::{BlobStore, HealthCheck};
use consular_storage::ObjectBlobStore;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const MOTO: &str = "moto[server]==5.*";

fn venv() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("venv-moto")
}

fn ensure_moto() -> PathBuf {
    let venv = venv();
    let server = venv.join("bin/moto_server");
    if !server.exists() {
        let created = Command::new("python3").args(["-m", "venv"]).arg(&venv).status().unwrap();
        assert!(created.success(), "python3 -m venv failed (is python3-venv installed?)");
        let pip = Command::new(venv.join("bin/python"))
            .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", MOTO])
            .status()
            .unwrap();
        assert!(pip.success(), "pip install {MOTO} failed");
    }
    server
}

struct Moto(Child);

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_moto() -> (Moto, String) {
    let server = ensure_moto();
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(server)
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let endpoint = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(30), "moto did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    (Moto(child), endpoint)
}

fn create_bucket(endpoint: &str, bucket: &str) {
    let status = Command::new("curl")
        .args(["-fsS", "-X", "PUT", &format!("{endpoint}/{bucket}")])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "creating the bucket failed");
}

#[tokio::test(flavor = "multi_thread")]
async fn blobs_round_trip_through_an_s3_protocol_server() {
    let (_moto, endpoint) = tokio::task::spawn_blocking(start_moto).await.unwrap();
    create_bucket(&endpoint, "consular-test");
    let options = [
        ("aws_endpoint", endpoint.as_str()),
        ("aws_allow_http", "true"),
        ("aws_region", "us-east-1"),
        ("aws_access_key_id", "test"),
        ("aws_secret_access_key", "test"),
    ];
    let store = ObjectBlobStore::from_url_with("s3://consular-test/documents", options).unwrap();
    assert_eq!(store.backend(), "s3");

    assert_eq!(store.check().await, Ok(()));
    store.put("citizens/a/passport.pdf", b"%PDF-1.7 passport".to_vec()).await.unwrap();
    assert_eq!(
        store.get("citizens/a/passport.pdf").await.unwrap().as_deref(),
        Some(&b"%PDF-1.7 passport"[..])
    );
    store.put("citizens/a/passport.pdf", b"replaced".to_vec()).await.unwrap();
    assert_eq!(store.get("citizens/a/passport.pdf").await.unwrap().as_deref(), Some(&b"replaced"[..]));
    assert_eq!(store.get("citizens/a/missing.pdf").await.unwrap(), None);
    store.delete("citizens/a/passport.pdf").await.unwrap();
    assert_eq!(store.get("citizens/a/passport.pdf").await.unwrap(), None);
    store.delete("citizens/a/passport.pdf").await.unwrap();
    assert!(store.put("../escape", b"x".to_vec()).await.is_err());

    // The prefix keeps the store inside its folder of the bucket.
    let listing = Command::new("curl")
        .args(["-fsS", &format!("{endpoint}/consular-test?list-type=2")])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&listing.stdout);
    assert!(!text.contains("<Key>citizens/"), "keys live under the prefix: {text}");

    // A bucket that does not exist makes the health check fail, not panic.
    let missing = ObjectBlobStore::from_url_with("s3://no-such-bucket", options).unwrap();
    assert!(missing.check().await.is_err());
}
