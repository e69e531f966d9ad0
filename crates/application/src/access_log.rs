//! The access log (docs/data-protection.md "Access log"): the log read back by the
//! citizen and the admins of their mission. What writes it is the node's recorder
//! (`access_recorder.rs`, re-exported here), which every read of a citizen's personal
//! data hands its entries to.

use crate::ServiceError;
pub use crate::access_recorder::{AccessRecorder, RecorderTiming};
use crate::adapters::Adapters;
use crate::error::OrNotFound;
use consular_domain::policy::access_log as policy;
use consular_domain::{AccessEntry, CitizenId, Page, PageRequest, Principal};
use consular_ports::{AccessLogRepository, CitizenRepository};
use std::sync::Arc;

/// Whose record a call names (the access log, exports): the caller's own or a citizen
/// by id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whose {
    /// The caller's own: a citizen's token (`/citizens/me/...`).
    Me,
    Citizen(CitizenId),
}

/// The ports the access log's use cases need.
#[derive(Clone)]
pub struct AccessLogPorts {
    pub log: Arc<dyn AccessLogRepository>,
    pub citizens: Arc<dyn CitizenRepository>,
    /// The node's recorder: the log is read once the node's own queue is written.
    pub access: AccessRecorder,
}

impl<D: AccessLogRepository + CitizenRepository + 'static> From<&Adapters<D>> for AccessLogPorts {
    fn from(adapters: &Adapters<D>) -> Self {
        let db = &adapters.database;
        AccessLogPorts { log: db.clone(), citizens: db.clone(), access: adapters.access.clone() }
    }
}

#[derive(Clone)]
pub struct AccessLogService {
    ports: AccessLogPorts,
}

impl AccessLogService {
    pub fn new(ports: AccessLogPorts) -> Self {
        AccessLogService { ports }
    }

    /// The node's recorder (the binary drains it when the node stops).
    pub fn recorder(&self) -> AccessRecorder {
        self.ports.access.clone()
    }

    /// A citizen's log, newest first: the citizen's own, or (admins of their mission,
    /// global admins) citizen `id`'s; whoever may not see the citizen gets 404. Reading
    /// the log is not itself logged: it shows who read, not the citizen's data. The
    /// entries this node has queued are written first.
    pub async fn list(
        &self,
        actor: &Principal,
        whose: Whose,
        page: PageRequest,
    ) -> Result<Page<AccessEntry>, ServiceError> {
        let id = match whose {
            Whose::Me => policy::own(actor)?,
            Whose::Citizen(id) => id,
        };
        let citizen = self.ports.citizens.get(id).await.or_not_found()?;
        policy::read(actor, citizen.id, citizen.mission_id)?;
        self.ports.access.flushed().await?;
        Ok(self.ports.log.list(citizen.id, page).await?)
    }
}

#[cfg(test)]
mod tests;
