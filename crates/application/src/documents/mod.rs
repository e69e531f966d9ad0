//! Documents: citizens' identity documents, uploaded as streams, checked by their bytes,
//! scanned, stored in the blob store and downloaded through expiring signed URLs
//! (docs/documents.md). [`accept`] decides what a file is and [`signed_url`] makes the
//! service's own download URLs; [`DocumentService`] holds the use cases: the streaming
//! upload (`upload.rs`), reading, downloading, deciding, deleting and listing
//! (`manage.rs`), and the orphan-blob sweep.
//!
//! Every use case asks `consular_domain::policy::documents` first; another principal's
//! document is 404. Every change is written with its audit entry and outbox event in one
//! transaction; the bytes are written under a fresh key before the row (a crash in
//! between leaves an orphan blob, which the sweep removes).

pub mod accept;
mod manage;
pub mod signed_url;
#[cfg(test)]
mod tests;
mod upload;

pub use manage::{Decision, DocumentContent, DocumentDownload, ORPHAN_AGE, SweepReport};
pub use upload::{BodyError, UploadBody, UploadForm};

use crate::ServiceError;
use crate::auth::KeyEncryptionKey;
use crate::auth::kek::{self, KekError, Unreadable};
use crate::services::Adapters;
use accept::{AcceptedTypes, TypeRefusal};
use consular_domain::{AuditAction, AuditRecord, Document, Principal};
use consular_ports::{
    AuditRepository, BlobError, BlobStore, CitizenRepository, Clock, DocumentRepository,
    IdempotencyRepository, MalwareScanner, RequestRepository, ServiceSecretRepository, ServiceTypeRepository,
    StoredSecret,
};
use signed_url::{MIN_KEY_LEN, UrlSigner};
use std::sync::Arc;
use std::time::Duration;
use time::OffsetDateTime;

pub const RESOURCE: &str = "document";

/// The name of the download-URL key in the shared secrets.
pub const URL_KEY_SECRET: &str = "document_download_url_key";

/// Why an upload was refused while its bytes came in; nothing of it is kept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UploadError {
    /// More than the configured limit arrived: reading stopped there.
    #[error("the file exceeds the limit of {limit} bytes")]
    TooLarge { limit: u64 },
    /// What the bytes are is not accepted, or disagrees with the declared type or name.
    #[error(transparent)]
    Type(#[from] TypeRefusal),
    #[error("the file is empty")]
    Empty,
    #[error("the file was refused by the malware scanner ({signature})")]
    Malware { signature: String },
    /// The scanner could not say: refused as temporarily impossible, never let through.
    #[error("the malware scanner is unavailable: {0}")]
    ScannerUnavailable(String),
    /// The client's body broke off or was not a readable multipart body.
    #[error("the upload could not be read: {0}")]
    Unreadable(String),
}

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
    pub audit: Arc<dyn AuditRepository>,
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
        + AuditRepository
        + 'static,
{
    fn from(adapters: &Adapters<D>) -> Self {
        let db = &adapters.database;
        DocumentPorts {
            documents: db.clone(),
            requests: db.clone(),
            citizens: db.clone(),
            service_types: db.clone(),
            idempotency: db.clone(),
            audit: db.clone(),
            blobs: adapters.blobs.clone(),
            scanner: adapters.scanner.clone(),
            clock: adapters.clock.clone(),
        }
    }
}

#[derive(Clone)]
pub struct DocumentService {
    ports: DocumentPorts,
    signer: Arc<UrlSigner>,
    config: Arc<DocumentConfig>,
}

impl DocumentService {
    pub fn new(ports: DocumentPorts, signer: UrlSigner, config: DocumentConfig) -> Self {
        DocumentService { ports, signer: Arc::new(signer), config: Arc::new(config) }
    }

    pub fn config(&self) -> &DocumentConfig {
        &self.config
    }
}

/// The download-URL signer over the key every node shares: the first node to start
/// stores 32 random bytes, every node (this one included) uses what is stored.
///
/// With a key-encryption key the bytes are stored sealed under it (AES-256-GCM, the
/// secret's name as associated data), as the private signing keys are, so that a dump of
/// the database does not give the power to forge download URLs; a key found in clear
/// (stored by an earlier version, or by a node without a KEK) is sealed in its row.
/// A sealed key and no KEK, or the wrong one, stop the start with a message that says so
/// (docs/operations.md "Encryption at rest").
pub async fn load_url_signer(
    secrets: &dyn ServiceSecretRepository,
    kek: Option<&KeyEncryptionKey>,
    clock: &dyn Clock,
) -> Result<UrlSigner, ServiceError> {
    let mut key = [0u8; MIN_KEY_LEN];
    aws_lc_rs::rand::fill(&mut key)
        .map_err(|_| ServiceError::Internal("no randomness for the download URL key".to_owned()))?;
    let (value, protection) =
        kek::protect(kek, URL_KEY_SECRET, &key).map_err(|e| ServiceError::Internal(e.to_string()))?;
    let stored =
        secrets.get_or_insert(URL_KEY_SECRET, &StoredSecret { value, protection }, clock.now()).await?;
    let revealed = kek::reveal(kek, URL_KEY_SECRET, &stored.value, stored.protection).map_err(|e| {
        ServiceError::Internal(match e {
            Unreadable::NoKek => "the download URL key is encrypted at rest: configure the \
                                  key_encryption_key that sealed it"
                .to_owned(),
            Unreadable::Kek(KekError::Open { .. }) => {
                "cannot decrypt the download URL key: wrong key_encryption_key?".to_owned()
            }
            Unreadable::Kek(e) => e.to_string(),
        })
    })?;
    if let Some(sealed) = revealed.sealed
        && secrets.protect(URL_KEY_SECRET, &sealed).await?
    {
        tracing::info!("the download URL key stored in clear is now encrypted at rest");
    }
    let key = revealed.plaintext;
    UrlSigner::new(&key).map_err(ServiceError::Internal)
}

/// A blob store failure as the use cases report it.
fn blob_error(error: BlobError) -> ServiceError {
    match error {
        BlobError::RangeNotSatisfiable { size } => ServiceError::RangeNotSatisfiable { size },
        BlobError::Unavailable(why) => ServiceError::Unavailable(format!("blob storage: {why}")),
        BlobError::InvalidKey(key) => ServiceError::Internal(format!("invalid blob key {key}")),
    }
}

fn audit(
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
