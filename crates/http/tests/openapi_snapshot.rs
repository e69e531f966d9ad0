//! The OpenAPI document is a published contract: any change to it, even a reordering,
//! must be deliberate. This compares the document exactly as `GET /api/v1/openapi.json`
//! serves it with the committed snapshot, byte for byte.
//!
//! After an intended change, regenerate the snapshot and review its diff:
//! `UPDATE_OPENAPI_SNAPSHOT=1 cargo nextest run -p consular-http openapi`.

use std::path::PathBuf;

const UPDATE: &str = "UPDATE_OPENAPI_SNAPSHOT";

fn snapshot_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests").join("openapi.snapshot.json")
}

#[test]
fn the_served_openapi_document_matches_the_snapshot() {
    let spec = consular_http::api_spec();
    let served = spec.json().as_bytes();
    let path = snapshot_path();
    if std::env::var_os(UPDATE).is_some() {
        std::fs::write(&path, served).unwrap();
        return;
    }
    let expected = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; create it with {UPDATE}=1 cargo nextest run -p consular-http openapi",
            path.display()
        )
    });
    if served != expected.as_slice() {
        let at = served
            .iter()
            .zip(&expected)
            .position(|(a, b)| a != b)
            .unwrap_or(served.len().min(expected.len()));
        let context = |bytes: &[u8]| {
            String::from_utf8_lossy(&bytes[at.saturating_sub(80)..(at + 80).min(bytes.len())]).into_owned()
        };
        panic!(
            "the OpenAPI document differs from {} at byte {at} (served {} bytes, snapshot {} bytes)\n\
             served:   …{}…\nsnapshot: …{}…\n\
             If the change is intended, regenerate the snapshot and review its diff:\n\
             {UPDATE}=1 cargo nextest run -p consular-http openapi",
            path.display(),
            served.len(),
            expected.len(),
            context(served),
            context(&expected),
        );
    }
}

/// The document must not depend on hash order or anything else that varies between
/// builds, or the snapshot would be flaky.
#[test]
fn the_openapi_document_is_deterministic() {
    assert!(consular_http::api_spec().json() == consular_http::api_spec().json());
}
