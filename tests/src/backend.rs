//! The databases and blob stores a test runs on ([`crate::both!`], [`crate::stacks!`]).

/// The database a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A database and a blob store, for tests that run on more than the two databases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stack {
    pub backend: Backend,
    pub s3: bool,
}

impl Stack {
    pub const SQLITE_LOCAL: Stack = Stack { backend: Backend::Sqlite, s3: false };
    pub const POSTGRES_S3: Stack = Stack { backend: Backend::Postgres, s3: true };
    pub const POSTGRES_LOCAL: Stack = Stack { backend: Backend::Postgres, s3: false };
}
