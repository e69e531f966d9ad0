//! The storage adapter on a local directory (a tempdir).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use bytes::Bytes;
use common::{CHUNK, MIB, download, pattern, upload};
use consular_ports::{BlobError, BlobStore, HealthCheck};
use consular_storage::{MAX_KEY_LEN, MAX_SEGMENT_LEN, ObjectBlobStore, backend_of};
use std::path::Path;
use std::time::Duration;
use time::OffsetDateTime;

fn url_of(dir: &Path) -> String {
    format!("file://{}", dir.display())
}

fn open(dir: &Path) -> ObjectBlobStore {
    ObjectBlobStore::from_url(&url_of(dir)).unwrap()
}

/// Every file under `dir`, relative, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn streaming_multipart_upload_and_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    assert_eq!(store.backend(), "file");
    let key = "missions/0192-abc/documents/passport_scan.v1.pdf";
    let data = common::multipart_round_trip(&store, key).await;
    assert!(dir.path().join(key).is_file(), "stored under the configured directory");
    common::ranges(&store, key, &data).await;

    // A new upload under the same key replaces the blob only when it completes.
    let mut replacing = store.start_upload(key).await.unwrap();
    replacing.write(Bytes::from_static(b"second")).await.unwrap();
    assert_eq!(download(&store, key).await.unwrap().len(), data.len(), "old blob until complete");
    replacing.complete().await.unwrap();
    assert_eq!(download(&store, key).await.as_deref(), Some(&b"second"[..]));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upload_is_a_temporary_file_renamed_on_complete_and_removed_on_abort() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());

    let mut upload = store.start_upload("docs/a.pdf").await.unwrap();
    for chunk in pattern(6 * MIB, 1).chunks(CHUNK) {
        upload.write(Bytes::copy_from_slice(chunk)).await.unwrap();
    }
    assert_eq!(files(dir.path()), ["docs/a.pdf#1"], "written to a staging file first");
    assert!(common::keys(&store, "").await.is_empty(), "an upload in progress is not listed");
    upload.complete().await.unwrap();
    assert_eq!(files(dir.path()), ["docs/a.pdf"], "renamed into place");

    common::abort_leaves_nothing(&store, "docs/b.pdf").await;
    assert_eq!(files(dir.path()), ["docs/a.pdf"], "the aborted upload's staging file is gone");

    // An upload dropped without complete or abort is aborted in the background.
    let mut dropped = store.start_upload("docs/c.pdf").await.unwrap();
    dropped.write(Bytes::from_static(b"partial")).await.unwrap();
    drop(dropped);
    for _ in 0..100 {
        if files(dir.path()) == ["docs/a.pdf"] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(files(dir.path()), ["docs/a.pdf"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn staging_files_left_by_a_crash_are_swept_when_old() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    upload(&store, "docs/kept.pdf", b"kept").await;
    // What a process killed mid-upload leaves behind.
    std::fs::create_dir_all(dir.path().join("docs/x")).unwrap();
    std::fs::write(dir.path().join("docs/x/crashed.pdf#1"), b"partial").unwrap();
    std::fs::write(dir.path().join("docs/crashed.pdf#2"), b"partial").unwrap();

    // Younger than the cutoff: kept (it may be an upload in progress).
    let an_hour_ago = OffsetDateTime::now_utc() - time::Duration::hours(1);
    assert_eq!(store.remove_abandoned_uploads(an_hour_ago).await.unwrap(), 0);
    assert_eq!(files(dir.path()).len(), 3);

    let later = OffsetDateTime::now_utc() + time::Duration::seconds(5);
    assert_eq!(store.remove_abandoned_uploads(later).await.unwrap(), 2);
    assert_eq!(files(dir.path()), ["docs/kept.pdf"], "only staging files are removed");
}

#[tokio::test(flavor = "multi_thread")]
async fn list_and_delete() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    store.check().await.unwrap();
    common::list_and_delete(&store).await;
}

#[tokio::test]
async fn no_presigned_urls_on_the_local_file_system() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    upload(&store, "a.pdf", b"%PDF").await;
    let url = store.presigned_get_url("a.pdf", Duration::from_secs(300), "a.pdf", "application/pdf");
    assert_eq!(url.await.unwrap(), None);
}

#[tokio::test]
async fn missing_keys() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());

    assert_eq!(download(&store, "nothing-here").await, None);
    assert_eq!(download(&store, "no/such/dir/file").await, None);
    assert_eq!(store.head("no/such/dir/file").await.unwrap(), None);
    store.delete("nothing-here").await.unwrap();
    store.delete("no/such/dir/file").await.unwrap();

    // A prefix of a stored key is not itself a blob, and a path "through" a blob is missing.
    upload(&store, "a/b", b"x").await;
    assert_eq!(download(&store, "a").await, None);
    assert_eq!(download(&store, "a/b/c").await, None);
    assert_eq!(store.head("a/b/c").await.unwrap(), None);
    store.delete("a/b/c").await.unwrap();
    assert_eq!(download(&store, "a/b").await.as_deref(), Some(b"x".as_slice()));
}

#[tokio::test]
async fn invalid_keys_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());

    let long_segment = "a".repeat(MAX_SEGMENT_LEN + 1);
    let long_key = vec!["abcdefgh"; MAX_KEY_LEN / 9 + 1].join("/");
    let bad = [
        "",
        "/absolute",
        "trailing/",
        "double//slash",
        "..",
        "../escape",
        "a/../b",
        "./a",
        "a/./b",
        "space here",
        "back\\slash",
        "colon:x",
        "percent%2F",
        "hash#1",
        "unicode-é",
        "!consular-health-probe",
        "new\nline",
        long_segment.as_str(),
        long_key.as_str(),
    ];
    common::invalid_keys(&store, &bad).await;
    // Nothing escaped into (or out of) the directory.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    for key in ["a", "A-Z_0.9", "x/y/z", "...", "a..b/.c/d.", "_health/probe", &"a".repeat(MAX_SEGMENT_LEN)] {
        upload(&store, key, b"ok").await;
        assert_eq!(download(&store, key).await.as_deref(), Some(b"ok".as_slice()), "{key}");
    }
}

#[tokio::test]
async fn directory_is_created_and_relative_forms_work() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("not/yet/there");
    let store = open(&nested);
    assert!(nested.is_dir());
    upload(&store, "k", b"v").await;

    // A bare path names the same directory.
    let bare = ObjectBlobStore::from_url(nested.to_str().unwrap()).unwrap();
    assert_eq!(download(&bare, "k").await.as_deref(), Some(b"v".as_slice()));
}

#[tokio::test]
async fn health_check_ok_and_leaves_nothing_visible() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    assert_eq!(store.name(), "storage");
    store.check().await.unwrap();
    store.check().await.unwrap();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the probe object is removed");
}

#[tokio::test]
async fn health_check_fails_when_directory_is_unusable() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("blobs");
    let store = open(&root);
    store.check().await.unwrap();

    // Replace the directory by a plain file: nothing can be written under it any more
    // (this holds even for root, unlike a permission change).
    std::fs::remove_dir_all(&root).unwrap();
    std::fs::write(&root, b"not a directory").unwrap();

    let err = store.check().await.unwrap_err();
    assert!(err.contains("storage probe failed"), "{err}");
    match store.start_upload("k").await.map(drop) {
        Err(BlobError::Unavailable(_)) => {}
        other => panic!("expected Unavailable, got {other:?}"),
    }
}

#[test]
fn from_url_rejects_bad_urls() {
    let err = ObjectBlobStore::from_url("ftp://host/x").unwrap_err();
    assert!(err.contains("`ftp`"), "{err}");
    assert!(ObjectBlobStore::from_url("").is_err());
    assert!(ObjectBlobStore::from_url("s3:///no-bucket").is_err());

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    assert!(ObjectBlobStore::from_url(&url_of(&file)).is_err(), "a file is not a directory");
}

#[test]
fn backend_of_validates_without_connecting() {
    assert_eq!(backend_of("file:///var/lib/consular/blobs"), Ok("file"));
    assert_eq!(backend_of("file://./data/blobs"), Ok("file"));
    assert_eq!(backend_of("./data/blobs"), Ok("file"));
    assert_eq!(backend_of("s3://consular-docs/prod"), Ok("s3"));
    assert_eq!(backend_of("s3://consular-docs"), Ok("s3"));
    let err = backend_of("gs://bucket").unwrap_err();
    assert!(err.contains("`gs`"), "{err}");
    assert!(backend_of("").is_err());
    assert!(backend_of("s3://").is_err());
}

#[test]
fn s3_store_builds_without_network() {
    // Building only reads configuration; no request is made until the first operation.
    let store = ObjectBlobStore::from_url("s3://consular-test-bucket/some/prefix").unwrap();
    assert_eq!(store.backend(), "s3");
}
