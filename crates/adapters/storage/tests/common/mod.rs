//! What every backend must do, run by `local.rs` and `s3.rs` on their own store.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use bytes::Bytes;
use consular_ports::{BlobError, BlobStore, ByteRange};
use futures_util::TryStreamExt;
use sha2::{Digest, Sha256};
use time::OffsetDateTime;

pub const MIB: usize = 1024 * 1024;
pub const CHUNK: usize = 64 * 1024;

/// Deterministic, incompressible-looking bytes (xorshift), so that misplaced parts show.
pub fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Streams `bytes` to `key` in `CHUNK`-sized chunks and completes the upload.
pub async fn upload(store: &dyn BlobStore, key: &str, bytes: &[u8]) {
    let mut upload = store.start_upload(key).await.unwrap();
    for chunk in bytes.chunks(CHUNK) {
        upload.write(Bytes::copy_from_slice(chunk)).await.unwrap();
    }
    assert_eq!(upload.complete().await.unwrap(), bytes.len() as u64);
}

/// The whole blob, or `None`.
pub async fn download(store: &dyn BlobStore, key: &str) -> Option<Vec<u8>> {
    read_range(store, key, None).await.unwrap()
}

pub async fn read_range(
    store: &dyn BlobStore,
    key: &str,
    range: Option<ByteRange>,
) -> Result<Option<Vec<u8>>, BlobError> {
    let Some(read) = store.read(key, range).await? else {
        return Ok(None);
    };
    let chunks: Vec<Bytes> = read.chunks.try_collect().await?;
    let bytes = chunks.concat();
    assert_eq!(bytes.len() as u64, read.range.end - read.range.start, "served range matches the bytes");
    Ok(Some(bytes))
}

pub async fn keys(store: &dyn BlobStore, prefix: &str) -> Vec<String> {
    let mut keys: Vec<String> =
        store.list(prefix).await.unwrap().map_ok(|m| m.key).try_collect().await.unwrap();
    keys.sort();
    keys
}

fn sha256(bytes: &[u8]) -> Vec<u8> {
    Sha256::digest(bytes).to_vec()
}

/// A 12 MiB blob (three parts) streamed in 64 KiB chunks round-trips byte for byte.
pub async fn multipart_round_trip(store: &dyn BlobStore, key: &str) -> Vec<u8> {
    let data = pattern(12 * MIB, 7);
    upload(store, key, &data).await;
    let back = download(store, key).await.expect("stored");
    assert_eq!(back.len(), data.len());
    assert_eq!(sha256(&back), sha256(&data), "SHA-256 of what was read equals what was written");
    let meta = store.head(key).await.unwrap().expect("head");
    assert_eq!(meta.size, data.len() as u64);
    assert_eq!(meta.key, key);
    data
}

/// Range reads return exactly the bytes asked, across part boundaries too.
pub async fn ranges(store: &dyn BlobStore, key: &str, data: &[u8]) {
    let size = data.len() as u64;
    let part = 5 * MIB as u64;
    let cases = [
        (ByteRange::Bounded(0..1), 0..1),
        (ByteRange::Bounded(part - 10..part + 10), part - 10..part + 10),
        (ByteRange::Bounded(size - 5..size + 100), size - 5..size),
        (ByteRange::From(size - 3), size - 3..size),
        (ByteRange::Suffix(1000), size - 1000..size),
    ];
    for (range, expected) in cases {
        let read = store.read(key, Some(range.clone())).await.unwrap().unwrap();
        assert_eq!(read.range, expected, "{range:?}");
        assert_eq!(read.size, size);
        let got = read_range(store, key, Some(range.clone())).await.unwrap().unwrap();
        let (start, end) = (expected.start as usize, expected.end as usize);
        assert!(got == data[start..end], "{range:?}: wrong bytes");
    }
    for range in [ByteRange::Bounded(size..size + 1), ByteRange::From(size), ByteRange::Suffix(0)] {
        match store.read(key, Some(range.clone())).await {
            Err(BlobError::RangeNotSatisfiable { size: s }) => assert_eq!(s, size),
            other => panic!("{range:?}: expected RangeNotSatisfiable, got {other:?}"),
        }
    }
    assert!(store.read("no/such/blob", Some(ByteRange::From(0))).await.unwrap().is_none());
}

/// An aborted upload (after more than one part) leaves no blob; a completed or aborted
/// upload refuses further writes.
pub async fn abort_leaves_nothing(store: &dyn BlobStore, key: &str) {
    let mut upload = store.start_upload(key).await.unwrap();
    for chunk in pattern(6 * MIB, 3).chunks(CHUNK) {
        upload.write(Bytes::copy_from_slice(chunk)).await.unwrap();
    }
    upload.abort().await.unwrap();
    upload.abort().await.unwrap();
    assert!(upload.write(Bytes::from_static(b"late")).await.is_err());
    assert!(upload.complete().await.is_err());
    assert_eq!(store.head(key).await.unwrap(), None);
    assert_eq!(download(store, key).await, None);

    let mut done = store.start_upload(key).await.unwrap();
    done.write(Bytes::from_static(b"small")).await.unwrap();
    assert_eq!(done.complete().await.unwrap(), 5);
    assert!(done.write(Bytes::from_static(b"more")).await.is_err());
    assert!(done.abort().await.is_err(), "a completed upload cannot be aborted");
    assert_eq!(download(store, key).await.as_deref(), Some(&b"small"[..]));
    store.delete(key).await.unwrap();
}

/// Listing shows keys under a prefix (whole segments) with their last-modified times;
/// delete removes, and deleting again is fine.
pub async fn list_and_delete(store: &dyn BlobStore) {
    let before = OffsetDateTime::now_utc() - time::Duration::minutes(5);
    for key in ["sweep/a/one", "sweep/a/two", "sweep/ab/three", "sweep/b"] {
        upload(store, key, key.as_bytes()).await;
    }
    // An empty upload is a blob too.
    upload(store, "sweep/empty", b"").await;
    assert_eq!(download(store, "sweep/empty").await, Some(Vec::new()));

    assert_eq!(keys(store, "sweep/a").await, ["sweep/a/one", "sweep/a/two"]);
    let listed: Vec<_> = store.list("sweep").await.unwrap().try_collect().await.unwrap();
    assert_eq!(listed.len(), 5);
    for meta in &listed {
        assert!(meta.last_modified > before, "{meta:?}");
        assert!(meta.last_modified < OffsetDateTime::now_utc() + time::Duration::minutes(5), "{meta:?}");
        let expected = if meta.key == "sweep/empty" { 0 } else { meta.key.len() as u64 };
        assert_eq!(meta.size, expected);
    }
    assert!(keys(store, "").await.contains(&"sweep/b".to_owned()));
    assert!(matches!(store.list("../x").await, Err(BlobError::InvalidKey(_))));

    for key in ["sweep/a/one", "sweep/a/two", "sweep/ab/three", "sweep/b", "sweep/empty"] {
        store.delete(key).await.unwrap();
        store.delete(key).await.unwrap();
        assert_eq!(store.head(key).await.unwrap(), None);
    }
    assert!(keys(store, "sweep").await.is_empty());
}

/// Every method refuses keys outside the contract before touching storage.
pub async fn invalid_keys(store: &dyn BlobStore, bad: &[&str]) {
    for &key in bad {
        let is_invalid = |r: Result<(), BlobError>| matches!(r, Err(BlobError::InvalidKey(_)));
        assert!(is_invalid(store.start_upload(key).await.map(drop)), "start_upload {key:?}");
        assert!(is_invalid(store.read(key, None).await.map(drop)), "read {key:?}");
        assert!(is_invalid(store.head(key).await.map(drop)), "head {key:?}");
        assert!(is_invalid(store.delete(key).await), "delete {key:?}");
        let signed =
            store.presigned_get_url(key, std::time::Duration::from_secs(60), "a.pdf", "application/pdf");
        assert!(is_invalid(signed.await.map(drop)), "presigned_get_url {key:?}");
        if !key.is_empty() {
            assert!(is_invalid(store.list(key).await.map(drop)), "list {key:?}");
        }
    }
}
