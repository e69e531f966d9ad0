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
mod service;
pub mod signed_url;
#[cfg(test)]
mod tests;
mod upload;
mod upload_error;

pub use manage::{Decision, DocumentContent, DocumentDownload, ORPHAN_AGE, SweepReport};
pub use service::{DocumentConfig, DocumentPorts, DocumentService, RESOURCE};
pub use upload::{
    AfterFile, BeforeFile, BodyError, FormEnd, Upload, UploadBody, UploadFields, UploadFile, UploadForm,
};
pub use upload_error::UploadError;

use crate::ServiceError;
use crate::auth::KeyEncryptionKey;
use crate::auth::kek::{self, KekError, Unreadable};
use consular_ports::{Clock, ServiceSecretRepository, StoredSecret};
use signed_url::{MIN_KEY_LEN, UrlSigner};

/// The name of the download-URL key in the shared secrets.
pub const URL_KEY_SECRET: &str = "document_download_url_key";

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
