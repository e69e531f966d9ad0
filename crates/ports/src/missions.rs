//! The missions' port.

use crate::{RepoError, WriteMeta};
use async_trait::async_trait;
use consular_domain::{Mission, MissionId, Page, PageRequest};

/// Missions. Every write stores its [`WriteMeta`] in the same transaction; a failed write
/// stores nothing.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait MissionRepository: Send + Sync {
    /// Inserts a new mission. A code already taken is `Duplicate { constraint: "missions_code" }`.
    async fn insert(&self, mission: &Mission, meta: &WriteMeta) -> Result<(), RepoError>;
    /// Replaces the stored mission if its version is still `expected_version`
    /// (`VersionConflict` otherwise, `NotFound` if it is gone).
    async fn update(
        &self,
        mission: &Mission,
        expected_version: i64,
        meta: &WriteMeta,
    ) -> Result<(), RepoError>;
    async fn get(&self, id: MissionId) -> Result<Option<Mission>, RepoError>;
    /// Missions in id order (oldest first), after `page.after`.
    async fn list(&self, page: PageRequest) -> Result<Page<Mission>, RepoError>;
}
