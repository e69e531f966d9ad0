//! The node's access log recorder (docs/data-protection.md "Access log"): every read of
//! a citizen's personal data hands its entries to it. One per node, on the `Adapters`
//! (`adapters.rs`), so that every area records through the queue that graceful shutdown
//! drains and that log reads wait for.
//!
//! It appends in batches, behind the reads. A read queues its entries and is answered
//! at once; the first entry into an empty queue starts a flush, which waits `linger`
//! before each batch, then inserts everything queued by then in one statement, until the
//! queue is empty. So an entry is durable within some 20 ms of its read, and under load
//! one insert carries dozens of entries: waiting for each read's own commit cost a third
//! of a logged read's throughput (docs/benchmarks.md "Access log"). What is exposed:
//!
//! - a node that dies abruptly loses the entries of its last `linger` (plus a flush); a
//!   node that stops gracefully writes them first (`AccessRecorder::drain`);
//! - a flush that fails keeps its entries, first in line, and is retried; while the
//!   oldest entry waiting is older than `max_lag` (the database is down or the log cannot
//!   be written), or the queue is full, every logged read fails with 503: data never
//!   leaves for longer than that without its trace;
//! - the log read back (`AccessLogService::list`, the export's copy) first waits for the
//!   node's own queue, so a node shows the reads it answered.

use crate::ServiceError;
use consular_domain::AccessEntry;
use consular_ports::AccessLogRepository;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, watch};

/// How the recorder batches and when it refuses (see the module's documentation).
#[derive(Debug, Clone, Copy)]
pub struct RecorderTiming {
    /// How long the first entry into an empty queue waits for others.
    pub linger: Duration,
    /// The age of the oldest entry waiting past which logged reads fail (503).
    pub max_lag: Duration,
    /// How many entries may wait before logged reads fail (503): bounded memory.
    pub max_queued: usize,
    /// The pause before a failed flush is tried again.
    pub retry: Duration,
}

impl Default for RecorderTiming {
    fn default() -> Self {
        RecorderTiming {
            linger: Duration::from_millis(20),
            max_lag: Duration::from_secs(5),
            max_queued: 100_000,
            retry: Duration::from_millis(200),
        }
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
    timing: RecorderTiming,
    queue: Mutex<Queue>,
    /// Wakes a lingering flush when someone waits for the queue (`flushed`).
    hurry: Notify,
    /// How many entries have been committed since the node started.
    committed: watch::Sender<u64>,
}

/// What waits for the next flush.
#[derive(Default)]
struct Queue {
    entries: Vec<AccessEntry>,
    /// When the oldest entry waiting (or being written) was queued.
    oldest: Option<Instant>,
    /// How many entries were ever queued (committed ones included).
    queued: u64,
    /// A flush task runs (lingering, writing or waiting to retry).
    flushing: bool,
    /// Why the last flush failed, while its entries wait to be tried again.
    failing: Option<String>,
}

impl Shared {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        // The lock is never held across an await nor while anything can panic.
        self.queue.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn unavailable(&self) -> ServiceError {
        let why = self.queue().failing.clone().unwrap_or_else(|| "its writes are behind".to_owned());
        ServiceError::Unavailable(format!("the access log cannot be written: {why}"))
    }
}

impl AccessRecorder {
    pub fn new(log: Arc<dyn AccessLogRepository>) -> Self {
        Self::with_timing(log, RecorderTiming::default())
    }

    pub fn with_timing(log: Arc<dyn AccessLogRepository>, timing: RecorderTiming) -> Self {
        let shared = Shared {
            log,
            timing,
            queue: Mutex::new(Queue::default()),
            hurry: Notify::new(),
            committed: watch::Sender::new(0),
        };
        AccessRecorder { shared: Arc::new(shared) }
    }

    /// Queues `entries` (none: nothing to do) for the next flush. `Unavailable` (503),
    /// and nothing queued, while the log is behind: its oldest entry waiting is older
    /// than `max_lag`, or the queue is full.
    pub fn record(&self, entries: impl IntoIterator<Item = AccessEntry>) -> Result<(), ServiceError> {
        let timing = self.shared.timing;
        let mut entries = entries.into_iter().peekable();
        // A read that logs nothing (the citizen's own) never waits for nor fails on the log.
        if entries.peek().is_none() {
            return Ok(());
        }
        let start_flush = {
            let mut queue = self.shared.queue();
            let now = Instant::now();
            let behind = queue.oldest.is_some_and(|oldest| now.duration_since(oldest) > timing.max_lag);
            if behind || queue.entries.len() >= timing.max_queued {
                drop(queue);
                return Err(self.shared.unavailable());
            }
            let before = queue.entries.len();
            queue.entries.extend(entries);
            let added = queue.entries.len() - before;
            queue.queued += added as u64;
            queue.oldest.get_or_insert(now);
            !std::mem::replace(&mut queue.flushing, true)
        };
        if start_flush {
            tokio::spawn(flush(self.shared.clone()));
        }
        Ok(())
    }

    /// Returns once every entry queued before the call is committed: at once when there
    /// is none, else after a flush started without lingering. `Unavailable` when that
    /// takes longer than `max_lag`.
    pub async fn flushed(&self) -> Result<(), ServiceError> {
        let target = self.shared.queue().queued;
        let mut committed = self.shared.committed.subscribe();
        if *committed.borrow() >= target {
            return Ok(());
        }
        self.shared.hurry.notify_one();
        let wait = committed.wait_for(|&done| done >= target);
        match tokio::time::timeout(self.shared.timing.max_lag, wait).await {
            Ok(Ok(_)) => Ok(()),
            _ => Err(self.shared.unavailable()),
        }
    }

    /// Writes what is queued before the node stops (graceful shutdown), giving up at
    /// `deadline`; what is left then is logged as lost.
    pub async fn drain(&self, deadline: tokio::time::Instant) {
        if let Ok(Ok(())) = tokio::time::timeout_at(deadline, self.flushed()).await {
            return;
        }
        let left = self.shared.queue().entries.len();
        tracing::error!(entries = left, "stopping with access-log entries that could not be written");
    }
}

/// Until the queue is empty: lingers (unless hurried), then inserts what is queued in one
/// statement. Lingering before every batch, not only the first, is what makes batches:
/// under steady load the queue is never empty, and without it each insert would carry
/// only the few entries queued during the one before. A failed insert puts its entries
/// back first in line and is tried again after `retry`.
async fn flush(shared: Arc<Shared>) {
    let timing = shared.timing;
    let mut guard = Flushing { shared: &shared, batch: Vec::new(), done: false };
    loop {
        tokio::select! {
            () = tokio::time::sleep(timing.linger) => {}
            () = shared.hurry.notified() => {}
        }
        {
            let mut queue = shared.queue();
            if queue.entries.is_empty() {
                queue.flushing = false;
                queue.oldest = None;
                guard.done = true;
                return;
            }
            guard.batch = std::mem::take(&mut queue.entries);
        }
        let started = Instant::now();
        match shared.log.append(&guard.batch).await {
            Ok(()) => {
                let written = guard.batch.len() as u64;
                guard.batch.clear();
                {
                    let mut queue = shared.queue();
                    queue.failing = None;
                    // What was queued meanwhile has waited at most since this write began.
                    queue.oldest = (!queue.entries.is_empty()).then_some(started);
                }
                shared.committed.send_modify(|committed| *committed += written);
            }
            Err(error) => {
                tracing::warn!(%error, entries = guard.batch.len(), "the access log could not be written; retrying");
                guard.restore(error.to_string());
                tokio::time::sleep(timing.retry.saturating_sub(timing.linger)).await;
            }
        }
    }
}

/// The flush's batch while it is written: put back first in line when the insert fails,
/// or when the flush stops half-way (a panic in the port, the runtime shutting down), in
/// which case the next read starts a flush again.
struct Flushing<'a> {
    shared: &'a Shared,
    batch: Vec<AccessEntry>,
    done: bool,
}

impl Flushing<'_> {
    fn restore(&mut self, failing: String) {
        let mut queue = self.shared.queue();
        let newer = std::mem::take(&mut queue.entries);
        queue.entries = std::mem::take(&mut self.batch);
        queue.entries.extend(newer);
        queue.failing = Some(failing);
    }
}

impl Drop for Flushing<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.restore("a flush stopped half-way".to_owned());
            self.shared.queue().flushing = false;
        }
    }
}
