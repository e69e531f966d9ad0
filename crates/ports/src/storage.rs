//! The blob store port: where document bytes live, written and read as streams so that no
//! layer ever holds a whole file in memory (docs/operations.md, "Document storage and
//! malware scanning").

use std::fmt;
use std::ops::Range;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::stream::BoxStream;
use time::OffsetDateTime;

#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    #[error("invalid blob key: {0}")]
    InvalidKey(String),
    /// The requested byte range starts at or past the end of the blob (or is empty); `size`
    /// is the blob's size, for the `Content-Range: bytes */size` of a 416 answer.
    #[error("range not satisfiable for a blob of {size} bytes")]
    RangeNotSatisfiable { size: u64 },
    #[error("blob storage unavailable: {0}")]
    Unavailable(String),
}

/// A byte range to read, as an HTTP `Range` header names one. Offsets are in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ByteRange {
    /// `start..end` (end exclusive); an `end` past the blob's end is cut to it.
    Bounded(Range<u64>),
    /// From `start` to the end of the blob.
    From(u64),
    /// The last `n` bytes (the whole blob when it is shorter).
    Suffix(u64),
}

/// What the store knows about one blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobMeta {
    pub key: String,
    pub size: u64,
    pub last_modified: OffsetDateTime,
}

/// The chunks of a blob, in order. An error ends the stream.
pub type BlobChunks = BoxStream<'static, Result<Bytes, BlobError>>;

/// The keys under a prefix, in no particular order. An error ends the stream.
pub type BlobListing = BoxStream<'static, Result<BlobMeta, BlobError>>;

/// An open read of a blob: the bytes of `range` arrive through `chunks`.
pub struct BlobRead {
    /// The bytes served, `start..end` (end exclusive) within `0..size`.
    pub range: Range<u64>,
    /// The size of the whole blob.
    pub size: u64,
    pub last_modified: OffsetDateTime,
    pub chunks: BlobChunks,
}

impl fmt::Debug for BlobRead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlobRead")
            .field("range", &self.range)
            .field("size", &self.size)
            .field("last_modified", &self.last_modified)
            .finish_non_exhaustive()
    }
}

/// One upload in progress, started by [`BlobStore::start_upload`].
///
/// Contract: call [`write`](BlobUpload::write) for each chunk in order, then exactly one of
/// [`complete`](BlobUpload::complete) or [`abort`](BlobUpload::abort). Nothing is visible
/// under the key before `complete` returns `Ok`; after it, the blob is durable. Any error
/// from `write` or `complete` has already discarded the upload (nothing is left behind), so
/// the caller only reports it. An upload dropped without either is aborted in the
/// background, best effort. Calls after `complete` or `abort` fail with
/// [`BlobError::Unavailable`]. The adapter holds a bounded amount of the data at any time
/// (one multipart part and at most one part in flight; docs/operations.md).
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait BlobUpload: Send {
    /// Appends `chunk`; may wait while earlier bytes are being sent (back pressure).
    async fn write(&mut self, chunk: Bytes) -> Result<(), BlobError>;
    /// Makes the blob visible and durable under its key, replacing what was there, and
    /// returns its size in bytes.
    async fn complete(&mut self) -> Result<u64, BlobError>;
    /// Discards everything written: on S3 the multipart upload is aborted (its parts are
    /// billed until then), on the local file system the temporary file is removed.
    async fn abort(&mut self) -> Result<(), BlobError>;
}

/// Where document bytes live. Keys are relative paths made of `[A-Za-z0-9._-]` segments
/// separated by `/` (no `.` or `..` segment); every method refuses another key with
/// [`BlobError::InvalidKey`] before touching storage. The store never interprets keys, and
/// keys never come from user input such as a file name.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait BlobStore: Send + Sync {
    /// Starts writing a blob under `key` (see [`BlobUpload`]).
    async fn start_upload(&self, key: &str) -> Result<Box<dyn BlobUpload>, BlobError>;

    /// Opens `key` for reading, the whole blob or `range`; `None` when nothing is stored
    /// there. A range that starts at or past the end is [`BlobError::RangeNotSatisfiable`].
    async fn read(&self, key: &str, range: Option<ByteRange>) -> Result<Option<BlobRead>, BlobError>;

    /// Size and last-modified time of `key`, or `None` when nothing is stored there.
    async fn head(&self, key: &str) -> Result<Option<BlobMeta>, BlobError>;

    /// Removes `key`; removing a missing key is not an error.
    async fn delete(&self, key: &str) -> Result<(), BlobError>;

    /// Every blob whose key starts with the whole segments of `prefix` (`""` for all; `a/b`
    /// lists `a/b/c`, not `a/bc`), with its last-modified time, for the orphan sweep.
    /// Uploads in progress are not listed.
    async fn list(&self, prefix: &str) -> Result<BlobListing, BlobError>;

    /// Removes what interrupted uploads (a crash between start and complete) left behind
    /// and that is older than `older_than`; returns how many were removed. On the local
    /// file system these are temporary files; on S3 incomplete multipart uploads are the
    /// bucket lifecycle rule's job (docs/operations.md) and this returns 0.
    async fn remove_abandoned_uploads(&self, older_than: OffsetDateTime) -> Result<u64, BlobError>;

    /// A URL that fetches `key` without credentials until `expires_in` has passed, answered
    /// with `Content-Disposition: attachment; filename=…` (`download_name`) and
    /// `Content-Type: media_type`; `None` when the backend cannot sign URLs (the local file
    /// system: the service then signs its own). `download_name` is made header-safe here.
    async fn presigned_get_url(
        &self,
        key: &str,
        expires_in: Duration,
        download_name: &str,
        media_type: &str,
    ) -> Result<Option<String>, BlobError>;
}
