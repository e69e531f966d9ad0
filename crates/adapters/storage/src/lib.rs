//! Blob storage adapter: implements the `consular_ports::BlobStore` and
//! `consular_ports::HealthCheck` ports over the `object_store` crate, on a local directory
//! (`file://…` or a bare path) or an S3 bucket (`s3://bucket/prefix`, configured from the
//! `AWS_*` environment). Uploads stream through object_store's multipart API with bounded
//! buffering ([`PART_SIZE`]); reads stream chunks; S3 signs download URLs.
//!
//! This crate owns the storage URL format ([`backend_of`], [`ObjectBlobStore::from_url`]),
//! the key rules ([`validate_key`]) and the mapping of `object_store` errors onto [`BlobError`]. It must
//! not touch the database, HTTP, domain rules or configuration loading: callers hand it a
//! URL, keys and bytes, nothing else.

mod abandoned;
mod blobs;
mod key;
mod location;
mod store;
mod upload;

// The rule is the domain's, shared with the service's own downloads.
pub use consular_domain::document::{attachment_disposition, safe_media_type};
pub use key::{MAX_KEY_LEN, MAX_SEGMENT_LEN, validate_key};
pub use store::ObjectBlobStore;
pub use upload::PART_SIZE;

/// Validates a storage URL without connecting to anything and names its backend:
/// `"file"` or `"s3"`. Meant for configuration validation; the error names the problem
/// (an unsupported scheme is named in it).
pub fn backend_of(url: &str) -> Result<&'static str, String> {
    location::parse(url).map(|loc| loc.backend())
}
