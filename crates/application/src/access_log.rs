//! The access log (docs/data-protection.md "Access log"): the recorder every read of a
//! citizen's personal data hands its entries to, and the log read back by the citizen and
//! the admins of their mission.
//!
//! The recorder is a group commit. A read queues its entries and waits until they are
//! committed before its answer is returned, so that no personal data leaves without its
//! entry durable, and a failed write fails the read (503). One flush at a time inserts
//! everything queued, in one transaction; the reads that arrive meanwhile queue behind it
//! and go together in the next one, so a batch grows with the load and a read costs a
//! share of a commit rather than one of its own.

use crate::ServiceError;
use crate::adapters::Adapters;
use crate::error::OrNotFound;
use consular_domain::policy::access_log as policy;
use consular_domain::{AccessEntry, CitizenId, Page, PageRequest, Principal};
use consular_ports::{AccessLogRepository, CitizenRepository};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::oneshot;

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
}

impl<D: AccessLogRepository + CitizenRepository + 'static> From<&Adapters<D>> for AccessLogPorts {
    fn from(adapters: &Adapters<D>) -> Self {
        AccessLogPorts { log: adapters.database.clone(), citizens: adapters.database.clone() }
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

    /// A citizen's log, newest first: the citizen's own, or (admins of their mission,
    /// global admins) citizen `id`'s; whoever may not see the citizen gets 404. Reading
    /// the log is not itself logged: it shows who read, not the citizen's data.
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
        Ok(self.ports.log.list(citizen.id, page).await?)
    }
}

/// A node's queue of access entries and its flush (see the module's documentation).
/// Cloning shares the queue: every use case of a node records through one
/// (`Services::new`).
#[derive(Clone)]
pub struct AccessRecorder {
    shared: Arc<Shared>,
}

struct Shared {
    log: Arc<dyn AccessLogRepository>,
    queue: Mutex<Queue>,
}

/// What waits for the next flush.
#[derive(Default)]
struct Queue {
    entries: Vec<AccessEntry>,
    /// One per read waiting: told the outcome of the transaction that held its entries.
    waiters: Vec<oneshot::Sender<Result<(), String>>>,
    /// A flush is running: it takes what is queued when its transaction ends.
    flushing: bool,
}

impl Shared {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        // The lock is never held across an await nor while anything can panic.
        self.queue.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl AccessRecorder {
    pub fn new(log: Arc<dyn AccessLogRepository>) -> Self {
        AccessRecorder { shared: Arc::new(Shared { log, queue: Mutex::new(Queue::default()) }) }
    }

    /// Stores `entries` (none: nothing to wait for) and returns once they are committed;
    /// `Unavailable` (503) when they could not be. The entries of a read abandoned while
    /// it waits are stored all the same.
    pub async fn record(&self, entries: impl IntoIterator<Item = AccessEntry>) -> Result<(), ServiceError> {
        let (done, committed) = oneshot::channel();
        let start_flush = {
            let mut queue = self.shared.queue();
            let before = queue.entries.len();
            queue.entries.extend(entries);
            if queue.entries.len() == before {
                return Ok(());
            }
            queue.waiters.push(done);
            !std::mem::replace(&mut queue.flushing, true)
        };
        if start_flush {
            tokio::spawn(flush(self.shared.clone()));
        }
        match committed.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => {
                Err(ServiceError::Unavailable(format!("the access log could not be written: {error}")))
            }
            Err(_) => Err(ServiceError::Unavailable("the access log's flush stopped".to_owned())),
        }
    }

    /// How many reads wait for a flush (tests).
    #[cfg(test)]
    fn waiting(&self) -> usize {
        self.shared.queue().waiters.len()
    }
}

/// Inserts what is queued, one transaction at a time, until nothing is.
async fn flush(shared: Arc<Shared>) {
    let mut guard = Flushing { shared: &shared, done: false };
    loop {
        let (entries, waiters) = {
            let mut queue = shared.queue();
            if queue.entries.is_empty() {
                queue.flushing = false;
                guard.done = true;
                return;
            }
            (std::mem::take(&mut queue.entries), std::mem::take(&mut queue.waiters))
        };
        let outcome = shared.log.append(&entries).await.map_err(|e| e.to_string());
        for waiter in waiters {
            // A read that was abandoned no longer listens.
            let _ = waiter.send(outcome.clone());
        }
    }
}

/// Ends a flush that stops before the queue is empty (a panic in the port, the runtime
/// shutting down): the reads still queued fail rather than wait forever, and the next
/// read starts a flush again.
struct Flushing<'a> {
    shared: &'a Shared,
    done: bool,
}

impl Drop for Flushing<'_> {
    fn drop(&mut self) {
        if !self.done {
            let mut queue = self.shared.queue();
            queue.flushing = false;
            queue.entries.clear();
            // Dropping the senders tells each read that its entries were not stored.
            queue.waiters.clear();
        }
    }
}

#[cfg(test)]
mod tests;
