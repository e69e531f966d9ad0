//! The access log's port: who read a citizen's personal data (docs/data-protection.md
//! "Access log"). Entries are only ever added: no method changes or removes one.

use crate::RepoError;
use async_trait::async_trait;
use consular_domain::{AccessEntry, CitizenId, Page, PageRequest};

/// The citizens' access logs.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait AccessLogRepository: Send + Sync {
    /// Stores `entries` in one transaction: all of them or none (an entry's id already
    /// stored is `Duplicate`, and nothing of the call is kept). Nothing to store is no
    /// round trip.
    async fn append(&self, entries: &[AccessEntry]) -> Result<(), RepoError>;
    /// Citizen `citizen`'s entries newest first (id descending), those before `page.after`
    /// when it is set. Read on the primary: an entry is listed once its read answered.
    async fn list(&self, citizen: CitizenId, page: PageRequest) -> Result<Page<AccessEntry>, RepoError>;
}
