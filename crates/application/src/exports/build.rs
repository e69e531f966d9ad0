//! The background work: a build pass takes one export under a lease and streams its
//! archive into the blob store; the hourly sweep expires ready exports whose time is up
//! and removes archives no ready export references (docs/data-protection.md "Export").

use super::archive::{ArchiveError, ArchiveWriter};
use super::contents;
use super::service::{ExportService, blob_error};
use crate::ServiceError;
use crate::error::OrNotFound;
use consular_domain::{Export, ExportState};
use futures_util::StreamExt;
use time::OffsetDateTime;

/// How old an unreferenced archive must be before the sweep removes it: a build's blob
/// appears when its upload completes, just before its row says `ready`.
const ORPHAN_AGE: time::Duration = time::Duration::hours(1);

/// How many exports or keys the sweep handles at once.
const SWEEP_BATCH: u32 = 200;

/// What one build pass did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildOutcome {
    /// Nothing to build.
    Idle,
    /// An export was built and is `ready`, or could not be and is `failed`.
    Settled(ExportState),
    /// The lease was lost to another node (this node was too slow, or paused): the other
    /// node builds it; what this one wrote is discarded.
    LeaseLost,
}

/// What one sweep removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExportSweep {
    pub expired: u64,
    pub orphans: u64,
}

/// Why a build stopped.
enum Stop {
    LeaseLost,
    Failed(String),
}

impl From<ArchiveError> for Stop {
    fn from(error: ArchiveError) -> Self {
        Stop::Failed(error.to_string())
    }
}

impl From<ServiceError> for Stop {
    fn from(error: ServiceError) -> Self {
        Stop::Failed(error.to_string())
    }
}

impl ExportService {
    fn lease_end(&self, now: OffsetDateTime) -> OffsetDateTime {
        now + self.config.lease
    }

    /// Takes the oldest pending export (or one whose builder's lease ran out) and builds
    /// it. A failure of the database while taking or settling it is an error (the loop
    /// retries); a failure while building settles it as `failed`.
    pub async fn build_next(&self) -> Result<BuildOutcome, ServiceError> {
        let node = self.config.node.as_str();
        let now = self.ports.clock.now();
        let Some(mut export) = self.ports.exports.claim(node, now, self.lease_end(now)).await? else {
            return Ok(BuildOutcome::Idle);
        };
        tracing::info!(export = %export.id, node, "building an export");
        let key = export.new_blob_key();
        let result = self.write_archive(&export, &key).await;
        let now = self.ports.clock.now();
        let settled = match result {
            Ok(size) => export.finish(key.clone(), size, now),
            Err(Stop::LeaseLost) => return Ok(BuildOutcome::LeaseLost),
            Err(Stop::Failed(why)) => {
                tracing::warn!(export = %export.id, %why, "an export failed");
                export.fail(why, now)
            }
        };
        if let Err(illegal) = settled {
            return Err(ServiceError::Internal(illegal.to_string()));
        }
        if self.ports.exports.settle(&export, node).await? {
            Ok(BuildOutcome::Settled(export.state))
        } else {
            if export.state == ExportState::Ready {
                self.forget(&key).await;
            }
            Ok(BuildOutcome::LeaseLost)
        }
    }

    async fn forget(&self, key: &str) {
        if let Err(error) = self.ports.blobs.delete(key).await {
            tracing::warn!(key, %error, "an unused export archive is left for the sweep");
        }
    }

    /// Renews the lease; `LeaseLost` when another node holds the export now.
    async fn keep_lease(&self, export: &Export) -> Result<(), Stop> {
        let now = self.ports.clock.now();
        match self.ports.exports.renew(export.id, &self.config.node, now, self.lease_end(now)).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(Stop::LeaseLost),
            Err(e) => Err(Stop::Failed(e.to_string())),
        }
    }

    /// Streams the archive of `export` under `key`; returns its size. Any stop aborts the
    /// upload, so nothing is left under `key`.
    async fn write_archive(&self, export: &Export, key: &str) -> Result<u64, Stop> {
        let upload = self.ports.blobs.start_upload(key).await.map_err(|e| Stop::Failed(e.to_string()))?;
        let mut zip = ArchiveWriter::new(upload);
        match self.write_entries(export, &mut zip).await {
            Ok(()) => Ok(zip.finish().await?),
            Err(stop) => {
                zip.abort().await;
                Err(stop)
            }
        }
    }

    async fn write_entries(&self, export: &Export, zip: &mut ArchiveWriter) -> Result<(), Stop> {
        let p = &self.ports;
        let citizen = p.citizens.get(export.citizen_id).await.or_not_found()?;
        let now = p.clock.now();
        zip.text("README.txt", &contents::readme(&citizen, &export.id.to_string(), now)).await?;
        zip.json("profile.json", &contents::profile(&citizen)).await?;
        zip.json("requests.json", &contents::requests(p.requests.as_ref(), &citizen).await?).await?;
        self.keep_lease(export).await?;
        let documents = contents::documents(p.documents.as_ref(), &citizen).await?;
        let listed: Vec<_> = documents.iter().map(contents::document).collect();
        zip.json("documents.json", &serde_json::Value::Array(listed)).await?;
        for document in &documents {
            let read = p.blobs.read(&document.blob_key, None).await.map_err(blob_error)?;
            let Some(read) = read else {
                return Err(Stop::Failed(format!("the file of document {} is missing", document.id)));
            };
            zip.file(&contents::document_path(document), read.chunks).await?;
            self.keep_lease(export).await?;
        }
        zip.json("appointments.json", &contents::appointments(p.appointments.as_ref(), &citizen).await?)
            .await?;
        zip.json("notifications.json", &contents::notifications(p.notifications.as_ref(), &citizen).await?)
            .await?;
        // The reads this node answered are written before the log is copied.
        p.access.flushed().await?;
        zip.json("access_log.json", &contents::access_log(p.access_log.as_ref(), &citizen).await?).await?;
        self.keep_lease(export).await
    }

    /// Expires ready exports whose time is up (the row first, then the blob: a blob left
    /// by a failed delete is no longer referenced and the next sweep removes it), then
    /// removes archives older than an hour that no ready export references.
    pub async fn sweep(&self) -> Result<ExportSweep, ServiceError> {
        let mut report = ExportSweep::default();
        let now = self.ports.clock.now();
        loop {
            let due = self.ports.exports.due_to_expire(now, SWEEP_BATCH).await?;
            let full = due.len() == SWEEP_BATCH as usize;
            for mut export in due {
                let key = export.blob_key.clone();
                export.expire(now).map_err(|e| ServiceError::Internal(e.to_string()))?;
                if self.ports.exports.expire(&export).await? {
                    report.expired += 1;
                    if let Some(key) = key {
                        self.forget(&key).await;
                    }
                }
            }
            if !full {
                break;
            }
        }
        let cutoff = now - ORPHAN_AGE;
        let mut listing = self.ports.blobs.list("exports").await.map_err(blob_error)?;
        let mut old = Vec::new();
        while let Some(meta) = listing.next().await.transpose().map_err(blob_error)? {
            if meta.last_modified < cutoff {
                old.push(meta.key);
            }
        }
        for batch in old.chunks(SWEEP_BATCH as usize) {
            let known = self.ports.exports.known_archive_keys(batch).await?;
            for key in batch.iter().filter(|k| !known.contains(k)) {
                self.forget(key).await;
                report.orphans += 1;
            }
        }
        Ok(report)
    }
}
