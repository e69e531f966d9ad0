//! The export use cases' service, its ports and configuration, and the signed grant of
//! an archive's download URL.

use crate::ServiceError;
use crate::access_log::AccessRecorder;
use crate::adapters::Adapters;
use crate::documents::signed_url::{Grant, UrlSigner};
use consular_domain::ExportId;
use consular_ports::{
    AccessLogRepository, AppointmentRepository, AuditRepository, BlobError, BlobStore, CitizenRepository,
    Clock, DocumentRepository, ExportRepository, NotificationRepository, RequestRepository,
};
use std::sync::Arc;
use std::time::Duration;
use time::OffsetDateTime;

pub const RESOURCE: &str = "export";

/// Domain separation of an archive's signed URL from a document's (same key).
const CONTEXT: &str = "consular-export-download-v1";

/// What an archive's signed URL grants: reading export `export`'s archive until
/// `expires_at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportGrant {
    pub export: ExportId,
    pub expires_at: OffsetDateTime,
}

impl Grant for ExportGrant {
    fn message(&self) -> String {
        format!("{CONTEXT}\n{}\n{}", self.export, self.expires_at.unix_timestamp())
    }

    fn expires_at(&self) -> OffsetDateTime {
        self.expires_at
    }
}

/// How exports are built and handed out.
#[derive(Debug, Clone)]
pub struct ExportConfig {
    /// This node's name, recorded as the holder of the exports it builds.
    pub node: String,
    /// How long a build holds its export before another node may take it over; renewed
    /// after every file written into the archive.
    pub lease: Duration,
    /// How long a download URL works (the documents' `download_url_ttl_secs`).
    pub download_url_ttl: Duration,
    /// Makes the service's own download URLs absolute, as for documents.
    pub public_base_url: Option<String>,
}

impl Default for ExportConfig {
    fn default() -> Self {
        ExportConfig {
            node: "node".to_owned(),
            lease: Duration::from_secs(60),
            download_url_ttl: Duration::from_secs(300),
            public_base_url: None,
        }
    }
}

/// The ports the export use cases need: their own repository, everything an archive
/// holds, the blob store and the clock.
#[derive(Clone)]
pub struct ExportPorts {
    pub exports: Arc<dyn ExportRepository>,
    pub citizens: Arc<dyn CitizenRepository>,
    pub requests: Arc<dyn RequestRepository>,
    pub documents: Arc<dyn DocumentRepository>,
    pub appointments: Arc<dyn AppointmentRepository>,
    pub notifications: Arc<dyn NotificationRepository>,
    /// Who read the citizen's data: the archive holds their access log.
    pub access_log: Arc<dyn AccessLogRepository>,
    pub audit: Arc<dyn AuditRepository>,
    /// The node's access log recorder (`Services::new`): an admin given a citizen's
    /// archive has read their whole record.
    pub access: AccessRecorder,
    pub blobs: Arc<dyn BlobStore>,
    pub clock: Arc<dyn Clock>,
}

impl<D> From<&Adapters<D>> for ExportPorts
where
    D: ExportRepository
        + CitizenRepository
        + RequestRepository
        + DocumentRepository
        + AppointmentRepository
        + NotificationRepository
        + AccessLogRepository
        + AuditRepository
        + 'static,
{
    fn from(adapters: &Adapters<D>) -> Self {
        let db = &adapters.database;
        ExportPorts {
            exports: db.clone(),
            citizens: db.clone(),
            requests: db.clone(),
            documents: db.clone(),
            appointments: db.clone(),
            notifications: db.clone(),
            access_log: db.clone(),
            audit: db.clone(),
            access: adapters.access.clone(),
            blobs: adapters.blobs.clone(),
            clock: adapters.clock.clone(),
        }
    }
}

#[derive(Clone)]
pub struct ExportService {
    pub(super) ports: ExportPorts,
    pub(super) signer: Arc<UrlSigner>,
    pub(super) config: Arc<ExportConfig>,
}

impl ExportService {
    /// The service over `ports`, signing download URLs with the documents' `signer`.
    pub fn new(ports: ExportPorts, signer: Arc<UrlSigner>, config: ExportConfig) -> Self {
        ExportService { ports, signer, config: Arc::new(config) }
    }

    pub fn config(&self) -> &ExportConfig {
        &self.config
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
