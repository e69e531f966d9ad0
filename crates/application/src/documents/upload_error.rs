//! Why an upload was refused: a leaf of its own, since `ServiceError` (`error.rs`) carries
//! it and the document use cases return `ServiceError`.

use super::accept::TypeRefusal;

/// Why an upload was refused while its bytes came in; nothing of it is kept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UploadError {
    /// More than the configured limit arrived: reading stopped there.
    #[error("the file exceeds the limit of {limit} bytes")]
    TooLarge { limit: u64 },
    /// What the bytes are is not accepted, or disagrees with the declared type or name.
    #[error(transparent)]
    Type(#[from] TypeRefusal),
    #[error("the file is empty")]
    Empty,
    #[error("the file was refused by the malware scanner ({signature})")]
    Malware { signature: String },
    /// The scanner could not say: refused as temporarily impossible, never let through.
    #[error("the malware scanner is unavailable: {0}")]
    ScannerUnavailable(String),
    /// The client's body broke off or was not a readable multipart body.
    #[error("the upload could not be read: {0}")]
    Unreadable(String),
}
