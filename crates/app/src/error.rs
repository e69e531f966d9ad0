//! Why the service could not start.

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("database: {0}")]
    Database(String),
    #[error("storage: {0}")]
    Storage(String),
    #[error("signing keys: {0}")]
    Keys(String),
    #[error("cannot listen on {addr}: {error}")]
    Bind { addr: String, error: std::io::Error },
    #[error("{0}")]
    Setup(String),
}
