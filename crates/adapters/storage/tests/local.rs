//! The storage adapter on a local directory (a tempdir).

use consular_ports::{BlobError, BlobStore, HealthCheck};
use consular_storage::{MAX_KEY_LEN, MAX_SEGMENT_LEN, ObjectBlobStore, backend_of};

fn url_of(dir: &std::path::Path) -> String {
    format!("file://{}", dir.display())
}

#[tokio::test]
async fn put_get_delete_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let store = ObjectBlobStore::from_url(&url_of(dir.path())).unwrap();
    assert_eq!(store.backend(), "file");

    let key = "missions/0192-abc/documents/passport_scan.v1.pdf";
    store.put(key, b"first".to_vec()).await.unwrap();
    assert_eq!(store.get(key).await.unwrap().as_deref(), Some(b"first".as_slice()));
    assert!(dir.path().join(key).is_file(), "stored under the configured directory");

    // Put replaces.
    store.put(key, b"second".to_vec()).await.unwrap();
    assert_eq!(store.get(key).await.unwrap().as_deref(), Some(b"second".as_slice()));

    // Empty blobs are blobs.
    store.put("empty", Vec::new()).await.unwrap();
    assert_eq!(store.get("empty").await.unwrap(), Some(Vec::new()));

    store.delete(key).await.unwrap();
    assert_eq!(store.get(key).await.unwrap(), None);
    // Deleting again is fine.
    store.delete(key).await.unwrap();
}

#[tokio::test]
async fn missing_keys() {
    let dir = tempfile::tempdir().unwrap();
    let store = ObjectBlobStore::from_url(&url_of(dir.path())).unwrap();

    assert_eq!(store.get("nothing-here").await.unwrap(), None);
    assert_eq!(store.get("no/such/dir/file").await.unwrap(), None);
    store.delete("nothing-here").await.unwrap();
    store.delete("no/such/dir/file").await.unwrap();

    // A prefix of a stored key is not itself a blob, and a path "through" a blob is missing.
    store.put("a/b", b"x".to_vec()).await.unwrap();
    assert_eq!(store.get("a").await.unwrap(), None);
    assert_eq!(store.get("a/b/c").await.unwrap(), None);
    store.delete("a/b/c").await.unwrap();
    assert_eq!(store.get("a/b").await.unwrap().as_deref(), Some(b"x".as_slice()));
}

#[tokio::test]
async fn invalid_keys_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let store = ObjectBlobStore::from_url(&url_of(dir.path())).unwrap();

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
        "unicode-é",
        "!consular-health-probe",
        "new\nline",
        long_segment.as_str(),
        long_key.as_str(),
    ];
    for key in bad {
        match store.put(key, b"x".to_vec()).await {
            Err(BlobError::InvalidKey(_)) => {}
            other => panic!("put {key:?}: expected InvalidKey, got {other:?}"),
        }
        match store.get(key).await {
            Err(BlobError::InvalidKey(_)) => {}
            other => panic!("get {key:?}: expected InvalidKey, got {other:?}"),
        }
        match store.delete(key).await {
            Err(BlobError::InvalidKey(_)) => {}
            other => panic!("delete {key:?}: expected InvalidKey, got {other:?}"),
        }
    }
    // Nothing escaped into (or out of) the directory.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    for key in ["a", "A-Z_0.9", "x/y/z", "...", "a..b/.c/d.", "_health/probe", &"a".repeat(MAX_SEGMENT_LEN)] {
        store.put(key, b"ok".to_vec()).await.unwrap();
        assert_eq!(store.get(key).await.unwrap().as_deref(), Some(b"ok".as_slice()), "{key}");
    }
}

#[tokio::test]
async fn directory_is_created_and_relative_forms_work() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("not/yet/there");
    let store = ObjectBlobStore::from_url(&url_of(&nested)).unwrap();
    assert!(nested.is_dir());
    store.put("k", b"v".to_vec()).await.unwrap();

    // A bare path names the same directory.
    let bare = ObjectBlobStore::from_url(nested.to_str().unwrap()).unwrap();
    assert_eq!(bare.get("k").await.unwrap().as_deref(), Some(b"v".as_slice()));
}

#[tokio::test]
async fn health_check_ok_and_leaves_nothing_visible() {
    let dir = tempfile::tempdir().unwrap();
    let store = ObjectBlobStore::from_url(&url_of(dir.path())).unwrap();
    assert_eq!(store.name(), "storage");
    store.check().await.unwrap();
    store.check().await.unwrap();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the probe object is removed");
}

#[tokio::test]
async fn health_check_fails_when_directory_is_unusable() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("blobs");
    let store = ObjectBlobStore::from_url(&url_of(&root)).unwrap();
    store.check().await.unwrap();

    // Replace the directory by a plain file: nothing can be written under it any more
    // (this holds even for root, unlike a permission change).
    std::fs::remove_dir_all(&root).unwrap();
    std::fs::write(&root, b"not a directory").unwrap();

    let err = store.check().await.unwrap_err();
    assert!(err.contains("storage probe failed"), "{err}");
    match store.put("k", b"v".to_vec()).await {
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
