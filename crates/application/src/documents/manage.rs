//! Reading, downloading, deciding, deleting and listing documents, and the sweep of
//! blobs no live document references (docs/documents.md).

use super::service::{DocumentService, audit, blob_error};
use super::signed_url::DownloadGrant;
use crate::concurrency::{require_version, retry_unconditional};
use crate::error::{OrNotFound, ServiceError};
use consular_domain::policy::documents as policy;
use consular_domain::policy::requests::RequestReach;
use consular_domain::policy::{Listing, Owned};
use consular_domain::{AccessEntry, AccessedData};
use consular_domain::{
    AuditAction, Document, DocumentId, IllegalDocumentTransition, Page, PageRequest, Principal, Reason,
    RequestId, Role,
};
use consular_ports::{BlobRead, ByteRange, DocumentFilter, OutboxEvent, WriteMeta};
use futures_util::StreamExt;
use time::OffsetDateTime;

/// How old an unreferenced blob must be before the sweep removes it: an upload in
/// progress writes its blob before its row.
pub const ORPHAN_AGE: time::Duration = time::Duration::hours(1);

/// How many keys the sweep checks against the database at once.
const SWEEP_BATCH: usize = 500;

/// A document with a URL that fetches its bytes until `expires_at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentDownload {
    pub document: Document,
    pub url: String,
    pub expires_at: OffsetDateTime,
}

/// The bytes a valid signed URL grants, streaming from the store.
#[derive(Debug)]
pub struct DocumentContent {
    pub document: Document,
    pub read: BlobRead,
}

/// Staff's decision on an uploaded document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Verify,
    /// The reason (required, at most 4000 characters) is for the citizen to read.
    Reject {
        reason: Option<String>,
    },
}

/// What one sweep removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SweepReport {
    /// Complete blobs under `documents/` that no live document references.
    pub orphans: u64,
    /// What interrupted uploads left behind.
    pub abandoned_uploads: u64,
}

fn illegal(e: IllegalDocumentTransition) -> ServiceError {
    ServiceError::IllegalTransition {
        detail: e.to_string(),
        allowed: e.allowed.iter().map(ToString::to_string).collect(),
    }
}

impl DocumentService {
    /// The live document `id`; a tombstone is 404 like an id that never existed.
    async fn live(&self, id: DocumentId) -> Result<Document, ServiceError> {
        match self.ports.documents.get(id).await? {
            Some(d) if !d.is_deleted() => Ok(d),
            _ => Err(ServiceError::NotFound),
        }
    }

    /// `document` as the policy judges it (its service: `service_of`).
    async fn owned(&self, actor: &Principal, document: &Document) -> Result<Owned, ServiceError> {
        let service = self.service_of(actor, document.request_id).await?;
        Ok(Owned { citizen: document.citizen_id, mission: document.mission_id, service })
    }

    /// The document, if the caller may read it.
    pub async fn get(&self, actor: &Principal, id: DocumentId) -> Result<Document, ServiceError> {
        let document = self.live(id).await?;
        policy::read(actor, &self.owned(actor, &document).await?)?;
        Ok(document)
    }

    /// The document with a download URL that expires after the configured time: the
    /// store's presigned URL when it has one (S3), else the service's own signed URL.
    /// Each URL handed out is an audit entry.
    pub async fn download(
        &self,
        actor: &Principal,
        id: DocumentId,
    ) -> Result<DocumentDownload, ServiceError> {
        let document = self.get(actor, id).await?;
        let now = self.ports.clock.now();
        let ttl = self.config.download_url_ttl;
        // Whole seconds: the signed URL carries its expiry as a Unix time.
        let expires_at = OffsetDateTime::from_unix_timestamp((now + ttl).unix_timestamp())
            .map_err(|e| ServiceError::Internal(e.to_string()))?;
        let presigned = self
            .ports
            .blobs
            .presigned_get_url(&document.blob_key, ttl, &document.file_name, &document.media_type)
            .await
            .map_err(blob_error)?;
        let url = match presigned {
            Some(url) => url,
            None => {
                let grant = DownloadGrant { document: document.id, version: document.version, expires_at };
                let path = format!(
                    "/api/v1/documents/{}/content?version={}&expires={}&signature={}",
                    document.id,
                    document.version,
                    expires_at.unix_timestamp(),
                    self.signer.sign(&grant)
                );
                match &self.config.public_base_url {
                    Some(base) => format!("{}{path}", base.trim_end_matches('/')),
                    None => path,
                }
            }
        };
        let record = audit(actor, now, AuditAction::DownloadUrlIssued, &document, &[]);
        self.ports.audit.append(&[record]).await?;
        let read = AccessEntry::of_read(
            actor,
            document.citizen_id,
            AccessedData::Document,
            document.id.as_uuid(),
            now,
        );
        self.ports.access.record(read)?;
        Ok(DocumentDownload { document, url, expires_at })
    }

    /// The bytes a signed URL grants (no bearer token): the signature and expiry are
    /// checked before the database and the store are touched; a deleted document or
    /// another version than the URL was made for is 404.
    pub async fn content(
        &self,
        grant: DownloadGrant,
        signature: &str,
        range: Option<ByteRange>,
    ) -> Result<DocumentContent, ServiceError> {
        self.signer
            .verify(&grant, signature, self.ports.clock.now())
            .map_err(|e| ServiceError::InvalidDownloadUrl(e.to_string()))?;
        let document = self.live(grant.document).await?;
        if document.version != grant.version {
            return Err(ServiceError::NotFound);
        }
        let read = self
            .ports
            .blobs
            .read(&document.blob_key, range)
            .await
            .map_err(blob_error)?
            .ok_or(ServiceError::NotFound)?;
        Ok(DocumentContent { document, read })
    }

    /// Verifies or rejects an uploaded document (staff and admins of the mission), if it
    /// is still at one of `expected_versions`.
    pub async fn decide(
        &self,
        actor: &Principal,
        id: DocumentId,
        decision: Decision,
        expected_versions: Option<&[i64]>,
    ) -> Result<Document, ServiceError> {
        policy::review(actor)?;
        let reason = match &decision {
            Decision::Verify => None,
            Decision::Reject { reason } => Some(Reason::required(reason.clone())?),
        };
        let mut document = self.live(id).await?;
        policy::review_of(actor, &self.owned(actor, &document).await?)?;
        let stored_version = document.version;
        require_version(expected_versions, stored_version)?;
        let now = self.ports.clock.now();
        let event = match reason {
            None => document.verify(Role::Staff, actor.subject, now).map_err(illegal)?,
            Some(reason) => document.reject(Role::Staff, reason, actor.subject, now).map_err(illegal)?,
        };
        let meta = WriteMeta {
            audit: vec![audit(
                actor,
                now,
                AuditAction::StatusChanged,
                &document,
                &["status", "rejection_reason"],
            )],
            events: vec![OutboxEvent::new(&event, now)?],
            idempotency: None,
        };
        self.ports.documents.update(&document, stored_version, &meta).await?;
        Ok(document)
    }

    /// Deletes a document (its owner while it is not verified; staff and admins of the
    /// mission): the row becomes a tombstone with its audit entry and event, then the
    /// blob is removed (a failure there is logged: the sweep collects it).
    pub async fn delete(
        &self,
        actor: &Principal,
        id: DocumentId,
        expected_versions: Option<&[i64]>,
    ) -> Result<(), ServiceError> {
        let document =
            retry_unconditional(expected_versions, || self.delete_once(actor, id, expected_versions)).await?;
        if let Err(error) = self.ports.blobs.delete(&document.blob_key).await {
            tracing::warn!(key = %document.blob_key, %error, "the blob of a deleted document is left for the sweep");
        }
        Ok(())
    }

    async fn delete_once(
        &self,
        actor: &Principal,
        id: DocumentId,
        expected_versions: Option<&[i64]>,
    ) -> Result<Document, ServiceError> {
        let mut document = self.live(id).await?;
        let role = policy::delete(actor, &self.owned(actor, &document).await?)?;
        let stored_version = document.version;
        require_version(expected_versions, stored_version)?;
        let now = self.ports.clock.now();
        let ports = &self.ports;
        crate::acting::refuse_minor_alone(&*ports.citizens, &*ports.missions, actor, now).await?;
        let event = document.delete(role, actor.subject, now).map_err(illegal)?;
        let meta = WriteMeta {
            audit: vec![audit(actor, now, AuditAction::Deleted, &document, &["status"])],
            events: vec![OutboxEvent::new(&event, now)?],
            idempotency: None,
        };
        self.ports.documents.update(&document, stored_version, &meta).await?;
        Ok(document)
    }

    /// Newest first. A citizen sees their own documents; staff and admins their
    /// mission's; global admins all.
    pub async fn list(
        &self,
        actor: &Principal,
        mut filter: DocumentFilter,
        page: PageRequest,
    ) -> Result<Page<Document>, ServiceError> {
        match policy::list(actor, filter.mission_id, filter.citizen_id) {
            Listing::Within(RequestReach::Citizen(own, mission, services)) => {
                filter.citizen_id = Some(own);
                filter.mission_id = Some(mission);
                filter.within_services = services;
            }
            Listing::Within(RequestReach::Mission(mission)) => filter.mission_id = mission,
            Listing::Empty => return Ok(Page::empty()),
        }
        Ok(self.ports.documents.list(filter, page).await?)
    }

    /// The live documents of a request the caller may read, newest first.
    pub async fn for_request(
        &self,
        actor: &Principal,
        request: RequestId,
        page: PageRequest,
    ) -> Result<Page<Document>, ServiceError> {
        let found = self.ports.requests.get(request).await.or_not_found()?;
        policy::read(actor, &Owned::from(&found))?;
        let filter = DocumentFilter { request_id: Some(request), ..DocumentFilter::default() };
        Ok(self.ports.documents.list(filter, page).await?)
    }

    /// Removes the blobs under `documents/` older than [`ORPHAN_AGE`] that no live
    /// document references (a crash between a blob and its row, a deletion whose blob
    /// removal failed), and what interrupted uploads left (docs/documents.md "Crash
    /// consistency").
    pub async fn sweep(&self) -> Result<SweepReport, ServiceError> {
        let cutoff = self.ports.clock.now() - ORPHAN_AGE;
        let mut listing = self.ports.blobs.list("documents").await.map_err(blob_error)?;
        let mut report = SweepReport::default();
        let mut batch = Vec::with_capacity(SWEEP_BATCH);
        loop {
            let next = listing.next().await.transpose().map_err(blob_error)?;
            if let Some(meta) = &next
                && meta.last_modified < cutoff
            {
                batch.push(meta.key.clone());
            }
            if batch.len() >= SWEEP_BATCH || (next.is_none() && !batch.is_empty()) {
                report.orphans += self.remove_unknown(std::mem::take(&mut batch)).await?;
            }
            if next.is_none() {
                break;
            }
        }
        report.abandoned_uploads =
            self.ports.blobs.remove_abandoned_uploads(cutoff).await.map_err(blob_error)?;
        Ok(report)
    }

    async fn remove_unknown(&self, keys: Vec<String>) -> Result<u64, ServiceError> {
        let known = self.ports.documents.known_blob_keys(&keys).await?;
        let mut removed = 0;
        for key in keys.iter().filter(|k| !known.contains(k)) {
            self.ports.blobs.delete(key).await.map_err(blob_error)?;
            tracing::info!(%key, "orphan document blob removed");
            removed += 1;
        }
        Ok(removed)
    }
}
