//! The S3 path of the blob store against a real S3-protocol server on loopback (moto).
//! The test installs moto into a venv under the target directory the first time (pip,
//! about half a minute), starts it on a free port, and stops it at the end. moto does not
//! check signatures, so the presigned URL test proves the URL's shape and the response
//! header overrides, not the signature (object_store's own tests cover SigV4).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use bytes::Bytes;
use common::{CHUNK, MIB, download, pattern, upload};
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

/// The multipart uploads the server still holds for `bucket` (pending: neither completed
/// nor aborted), as the `<Key>`s of S3's ListMultipartUploads answer.
async fn pending_uploads(endpoint: &str, bucket: &str) -> Vec<String> {
    let body = reqwest::get(format!("{endpoint}/{bucket}?uploads")).await.unwrap().text().await.unwrap();
    body.split("<Upload>")
        .skip(1)
        .filter_map(|upload| upload.split_once("<Key>")?.1.split_once("</Key>").map(|(k, _)| k.to_owned()))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn blobs_stream_through_an_s3_protocol_server() {
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

    let key = "citizens/a/passport.pdf";
    let data = common::multipart_round_trip(&store, key).await;
    common::ranges(&store, key, &data).await;
    assert!(pending_uploads(&endpoint, "consular-test").await.is_empty());

    // While an upload runs its parts are pending on the server; abort removes them.
    let mut running = store.start_upload("citizens/a/visa.pdf").await.unwrap();
    for chunk in pattern(6 * MIB, 5).chunks(CHUNK) {
        running.write(Bytes::copy_from_slice(chunk)).await.unwrap();
    }
    assert_eq!(pending_uploads(&endpoint, "consular-test").await, ["documents/citizens/a/visa.pdf"]);
    running.abort().await.unwrap();
    assert!(pending_uploads(&endpoint, "consular-test").await.is_empty(), "abort removes the parts");
    common::abort_leaves_nothing(&store, "citizens/a/visa.pdf").await;
    assert!(pending_uploads(&endpoint, "consular-test").await.is_empty());

    // A dropped upload is aborted in the background.
    let mut dropped = store.start_upload("citizens/a/dropped.pdf").await.unwrap();
    dropped.write(Bytes::from_static(b"partial")).await.unwrap();
    drop(dropped);
    let started = Instant::now();
    while !pending_uploads(&endpoint, "consular-test").await.is_empty() {
        assert!(started.elapsed() < Duration::from_secs(10), "the dropped upload was not aborted");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(store.remove_abandoned_uploads(time::OffsetDateTime::now_utc()).await.unwrap(), 0);

    common::list_and_delete(&store).await;

    // A presigned URL serves the bytes to an ordinary HTTP client, as an attachment with
    // the stored media type, whatever the file name holds.
    let url = store
        .presigned_get_url(key, Duration::from_secs(300), "scan \"1\".pdf", "application/pdf")
        .await
        .unwrap()
        .expect("S3 signs URLs");
    assert!(url.contains("X-Amz-Signature="), "{url}");
    let response = reqwest::get(&url).await.unwrap();
    assert_eq!(response.status(), 200);
    let header = |name: &str| response.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
    assert_eq!(header("content-type").as_deref(), Some("application/pdf"));
    assert_eq!(
        header("content-disposition").as_deref(),
        Some("attachment; filename=\"scan _1_.pdf\"; filename*=UTF-8''scan%20%221%22.pdf")
    );
    assert!(response.bytes().await.unwrap() == data, "the URL serves the stored bytes");

    // The prefix keeps the store inside its folder of the bucket.
    let listing = reqwest::get(format!("{endpoint}/consular-test?list-type=2")).await.unwrap();
    let text = listing.text().await.unwrap();
    assert!(!text.contains("<Key>citizens/"), "keys live under the prefix: {text}");
    assert!(text.contains("<Key>documents/citizens/a/passport.pdf</Key>"), "{text}");
    store.delete(key).await.unwrap();
    assert_eq!(download(&store, key).await, None);
    upload(&store, key, b"").await;

    // A bucket that does not exist makes the health check and uploads fail, not panic.
    let missing = ObjectBlobStore::from_url_with("s3://no-such-bucket", options).unwrap();
    assert!(missing.check().await.is_err());
    assert!(missing.start_upload("k").await.is_err());
}
