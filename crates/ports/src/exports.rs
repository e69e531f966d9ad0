//! Exports of a citizen's data (docs/data-protection.md "Export"): the rows, the lease a
//! node holds while it builds one, and the expiry sweep's reads. The archives themselves
//! are in the `BlobStore` under each ready export's `blob_key`.

use crate::{RepoError, WriteMeta};
use async_trait::async_trait;
use consular_domain::{CitizenId, Export, ExportId};
use time::OffsetDateTime;

/// The partial unique index that keeps one running (`pending` or `running`) export per
/// citizen: the `constraint` of the `Duplicate` that [`ExportRepository::insert`] reports.
pub const ONE_RUNNING_EXPORT: &str = "exports_one_running";

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait ExportRepository: Send + Sync {
    /// Inserts a new (`pending`) export, in one transaction with `meta`. A second running
    /// export of the same citizen is `Duplicate { constraint: ONE_RUNNING_EXPORT }`,
    /// whichever of two concurrent inserts loses (the database decides).
    async fn insert(&self, export: &Export, meta: &WriteMeta) -> Result<(), RepoError>;
    async fn get(&self, id: ExportId) -> Result<Option<Export>, RepoError>;
    /// The citizen's running (`pending` or `running`) export, if any.
    async fn running_for(&self, citizen: CitizenId) -> Result<Option<Export>, RepoError>;
    /// Takes the oldest export that is `pending`, or `running` with its lease expired at
    /// `now` (its node died), in one guarded statement: it becomes `running`, started at
    /// `now`, leased to `node` until `lease_until`. Two nodes never take the same export
    /// (the loser of a race gets `None` and looks again later).
    async fn claim(
        &self,
        node: &str,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
    ) -> Result<Option<Export>, RepoError>;
    /// Extends `node`'s lease on `id` to `lease_until` if it still holds it (`running`,
    /// leased to `node`, not expired at `now`); `false` otherwise: the builder stops.
    async fn renew(
        &self,
        id: ExportId,
        node: &str,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
    ) -> Result<bool, RepoError>;
    /// Stores the outcome of `node`'s build (`export` now `ready` or `failed`) if `node`
    /// still holds the export (`running`, leased to `node`); `false` otherwise, and
    /// nothing changes (the caller deletes the archive it wrote).
    async fn settle(&self, export: &Export, node: &str) -> Result<bool, RepoError>;
    /// Up to `limit` `ready` exports whose `expires_at` is at or before `now`.
    async fn due_to_expire(&self, now: OffsetDateTime, limit: u32) -> Result<Vec<Export>, RepoError>;
    /// Stores `export` (now `expired`, without its key) if it is still `ready`.
    async fn expire(&self, export: &Export) -> Result<bool, RepoError>;
    /// Which of `keys` a `ready` export references (the sweep removes archives nobody
    /// references: a build that stopped after writing its archive).
    async fn known_archive_keys(&self, keys: &[String]) -> Result<Vec<String>, RepoError>;
}
