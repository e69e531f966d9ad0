//! Reads a replica may serve, and the marks that keep a principal's own writes in them
//! (docs/operations.md "Read replicas").

use crate::RepoError;
use async_trait::async_trait;
use consular_domain::Subject;
use time::OffsetDateTime;

/// What a *tolerant* read (a port method taking a `Consistency`) must see, which decides
/// whether a read replica, which can be behind the primary, may serve it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Consistency {
    /// Every committed write: the primary serves it.
    Latest,
    /// At least every write this principal's requests made (their [`WriteMarks::mark`]):
    /// a replica that has replayed them serves it, else the primary. So a principal always
    /// reads its own writes, on any node, and may see other principals' writes late.
    OwnWrites(Subject),
}

/// What a node records after a principal's request wrote, so that this principal's
/// tolerant reads, on every node, see it (docs/operations.md "Read replicas").
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait WriteMarks: Send + Sync {
    /// Records that every write `writer` has made until now is committed: called once a
    /// request that may have written is answered, before the answer leaves. Without a
    /// read replica, nothing to do (and no round trip).
    async fn mark(&self, writer: Subject) -> Result<(), RepoError>;
    /// Forgets the marks made before `older_than`, keeping the furthest of them as the
    /// point every replica must have reached to serve anyone; the number forgotten.
    async fn sweep_marks(&self, older_than: OffsetDateTime) -> Result<u64, RepoError>;
}
