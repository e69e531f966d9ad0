use async_trait::async_trait;

#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    #[error("invalid blob key: {0}")]
    InvalidKey(String),
    #[error("blob storage unavailable: {0}")]
    Unavailable(String),
}

/// Where document bytes live. Keys are relative paths made of `[A-Za-z0-9._-]` segments
/// separated by `/`; the store never interprets them.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait BlobStore: Send + Sync {
    /// Stores `bytes` under `key`, replacing what was there; durable when it returns `Ok`.
    async fn put(&self, key: &str, bytes: Vec<u8>) -> Result<(), BlobError>;
    /// The bytes under `key`, or `None` when nothing is stored there.
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, BlobError>;
    /// Removes `key`; removing a missing key is not an error.
    async fn delete(&self, key: &str) -> Result<(), BlobError>;
}
