/// What a repository reports. Adapters map their database errors to these once, so the
/// core never sees SQL or driver types.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// The row to change does not exist (any more).
    #[error("not found")]
    NotFound,
    /// Optimistic concurrency: the stored version is not the expected one.
    #[error("the stored version has changed")]
    VersionConflict,
    /// A unique constraint other than the idempotency key was violated; `constraint`
    /// names the business rule (for example `missions_code`).
    #[error("duplicate value for {constraint}")]
    Duplicate { constraint: String },
    /// The idempotency key was stored by a concurrent request first.
    #[error("idempotency key already used")]
    IdempotencyKeyInUse,
    /// The database cannot be reached, the pool is exhausted or a statement timed out:
    /// the caller may retry later.
    #[error("database unavailable: {0}")]
    Unavailable(String),
    /// Anything else; the message is for logs, never for clients.
    #[error("database error: {0}")]
    Other(String),
}
