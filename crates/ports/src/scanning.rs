//! The malware scanning port: a file's bytes are streamed to a scanner while they are
//! stored, and the verdict decides whether the document is kept (docs/operations.md,
//! "Document storage and malware scanning").

use async_trait::async_trait;
use bytes::Bytes;

/// What a scanner concluded about a whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanVerdict {
    Clean,
    /// `signature` is the scanner's name for what it found (e.g. `Eicar-Test-Signature`).
    Infected {
        signature: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScanError {
    /// The scanner could not be reached, failed, refused the file or did not answer in
    /// time. The file is then neither clean nor infected: the caller refuses the upload as
    /// temporarily impossible (503 + `Retry-After`), never lets it pass unscanned.
    #[error("malware scanner unavailable: {0}")]
    Unavailable(String),
}

/// One file being scanned, started by [`MalwareScanner::start`].
///
/// Contract: call [`write`](ScanSession::write) for each chunk in order, then
/// [`finish`](ScanSession::finish) once. Every call is bounded in time; a scanner that
/// stops answering yields [`ScanError::Unavailable`]. A session dropped before `finish`
/// closes its connection. Calls after `finish` fail with [`ScanError::Unavailable`].
/// Memory stays bounded: the session forwards chunks as they come.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait ScanSession: Send {
    /// Sends `chunk` to the scanner; may wait while the scanner catches up.
    async fn write(&mut self, chunk: Bytes) -> Result<(), ScanError>;
    /// Ends the file and returns the scanner's verdict.
    async fn finish(&mut self) -> Result<ScanVerdict, ScanError>;
}

/// A malware scanner (clamd in production).
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait MalwareScanner: Send + Sync {
    /// Opens a scan of one file; [`ScanError::Unavailable`] when the scanner cannot be
    /// reached.
    async fn start(&self) -> Result<Box<dyn ScanSession>, ScanError>;
}
