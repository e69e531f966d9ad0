//! The document use cases' service, its ports and configuration, and the helpers its
//! use cases share (`upload.rs`, `manage.rs`): what they all use, apart from the module
//! that declares them.

use super::accept::AcceptedTypes;
use super::signed_url::UrlSigner;
use crate::ServiceError;
use crate::access_log::AccessRecorder;
use crate::adapters::Adapters;
use consular_domain::{AuditAction, AuditRecord, Document, Principal, RequestId, ServiceTypeId};
use consular_ports::{
    AuditRepository, BlobError, BlobStore, CitizenRepository, Clock, DocumentRepository,
    IdempotencyRepository, MalwareScanner, MissionRepository, RequestRepository, ServiceTypeRepository,
};
use std::sync::Arc;
use std::time::Duration;
use time::OffsetDateTime;

pub const RESOURCE: &str = "document";

/// What an operator configures about documents (docs/operations.md).
#[derive(Debug, Clone)]
pub struct DocumentConfig {
    pub max_upload_bytes: u64,
    pub accepted: AcceptedTypes,
    pub download_url_ttl: Duration,
    /// Makes the service's own download URLs absolute (`https://api.example.org`); they
    /// are relative to the API without it.
    pub public_base_url: Option<String>,
}

impl Default for DocumentConfig {
    fn default() -> Self {
        DocumentConfig {
            max_upload_bytes: 20 * 1024 * 1024,
            accepted: AcceptedTypes::default(),
            download_url_ttl: Duration::from_secs(300),
            public_base_url: None,
        }
    }
}

/// The ports the document use cases need.
#[derive(Clone)]
pub struct DocumentPorts {
    pub documents: Arc<dyn DocumentRepository>,
    pub requests: Arc<dyn RequestRepository>,
    pub citizens: Arc<dyn CitizenRepository>,
    pub service_types: Arc<dyn ServiceTypeRepository>,
    pub idempotency: Arc<dyn IdempotencyRepository>,
    /// The mission's time zone: whether a citizen acting alone is a minor.
    pub missions: Arc<dyn MissionRepository>,
    pub audit: Arc<dyn AuditRepository>,
    /// The node's access log recorder, shared by every use case (`Services::new`).
    pub access: AccessRecorder,
    pub blobs: Arc<dyn BlobStore>,
    /// `None`: no scanner configured; uploads are kept unscanned (`scan: not_configured`).
    pub scanner: Option<Arc<dyn MalwareScanner>>,
    pub clock: Arc<dyn Clock>,
}

impl<D> From<&Adapters<D>> for DocumentPorts
where
    D: DocumentRepository
        + RequestRepository
        + CitizenRepository
        + ServiceTypeRepository
        + IdempotencyRepository
        + MissionRepository
        + AuditRepository
        + 'static,
{
    fn from(adapters: &Adapters<D>) -> Self {
        let db = &adapters.database;
        DocumentPorts {
            missions: db.clone(),
            documents: db.clone(),
            requests: db.clone(),
            citizens: db.clone(),
            service_types: db.clone(),
            idempotency: db.clone(),
            audit: db.clone(),
            access: adapters.access.clone(),
            blobs: adapters.blobs.clone(),
            scanner: adapters.scanner.clone(),
            clock: adapters.clock.clone(),
        }
    }
}

#[derive(Clone)]
pub struct DocumentService {
    pub(super) ports: DocumentPorts,
    pub(super) signer: Arc<UrlSigner>,
    pub(super) config: Arc<DocumentConfig>,
}

impl DocumentService {
    pub fn new(ports: DocumentPorts, signer: UrlSigner, config: DocumentConfig) -> Self {
        DocumentService { ports, signer: Arc::new(signer), config: Arc::new(config) }
    }

    pub fn config(&self) -> &DocumentConfig {
        &self.config
    }

    /// The download URLs' signer, which exports share (one key, one mechanism).
    pub fn url_signer(&self) -> Arc<UrlSigner> {
        self.signer.clone()
    }

    /// The service of a document attached to `request` (its request's), as the policy
    /// judges it: only a principal acting for someone is judged by it (a mandate may
    /// cover some services), so the request is read for them alone; `None` otherwise, and
    /// for a document of no request.
    pub(super) async fn service_of(
        &self,
        actor: &Principal,
        request: Option<RequestId>,
    ) -> Result<Option<ServiceTypeId>, ServiceError> {
        Ok(match (&actor.acting_for, request) {
            (Some(_), Some(id)) => self.ports.requests.get(id).await?.map(|r| r.service_type_id),
            _ => None,
        })
    }
}

/// A blob store failure as the use cases report it.
pub(super) fn blob_error(error: BlobError) -> ServiceError {
    match error {
        BlobError::RangeNotSatisfiable { size } => ServiceError::RangeNotSatisfiable { size },
        BlobError::Unavailable(why) => ServiceError::Unavailable(format!("blob storage: {why}")),
        BlobError::InvalidKey(key) => ServiceError::Internal(format!("invalid blob key {key}")),
    }
}

pub(super) fn audit(
    actor: &Principal,
    now: OffsetDateTime,
    action: AuditAction,
    document: &Document,
    fields: &[&str],
) -> AuditRecord {
    AuditRecord::new(
        Some(actor),
        now,
        action,
        RESOURCE,
        document.id.as_uuid(),
        fields.iter().map(|f| (*f).to_owned()).collect(),
    )
}
