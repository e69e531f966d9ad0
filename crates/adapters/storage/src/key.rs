//! Blob key validation: the one rule every backend shares.

use consular_ports::BlobError;

/// Longest accepted key in bytes (the S3 limit).
pub const MAX_KEY_LEN: usize = 1024;
/// Longest accepted segment in bytes: the usual 255-byte file-name limit, less room for
/// the `#<n>` suffix of the staging file the local backend writes before renaming.
pub const MAX_SEGMENT_LEN: usize = 200;

/// Checks `key` against the port's contract: a relative path of non-empty segments made of
/// `[A-Za-z0-9._-]`, separated by `/`, with no `.` or `..` segment. Keys are also bounded
/// ([`MAX_KEY_LEN`], [`MAX_SEGMENT_LEN`]) so that every backend can store what it accepts.
pub fn validate_key(key: &str) -> Result<(), BlobError> {
    let invalid = |why: &str| Err(BlobError::InvalidKey(format!("{why}: {:?}", truncate(key))));
    if key.is_empty() {
        return invalid("empty key");
    }
    if key.len() > MAX_KEY_LEN {
        return invalid("key longer than 1024 bytes");
    }
    if key.starts_with('/') {
        return invalid("key must be relative");
    }
    for segment in key.split('/') {
        if segment.is_empty() {
            return invalid("empty path segment");
        }
        if segment == "." || segment == ".." {
            return invalid("`.` and `..` segments are not allowed");
        }
        if segment.len() > MAX_SEGMENT_LEN {
            return invalid("path segment longer than 200 bytes");
        }
        if !segment.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')) {
            return invalid("segments may only contain A-Z a-z 0-9 . _ -");
        }
    }
    Ok(())
}

/// Keeps error messages short when a caller passes something huge.
fn truncate(key: &str) -> &str {
    match key.char_indices().nth(80) {
        Some((idx, _)) => &key[..idx],
        None => key,
    }
}
