//! The streaming upload (docs/documents.md "What is stored", docs/operations.md
//! "Document storage and malware scanning"): the body is pulled chunk by chunk, its first
//! [`SNIFF_LEN`] bytes decide the type before anything is written, then every chunk goes
//! to the blob upload and the scanner while its size and SHA-256 are counted. Past the
//! size limit reading stops and everything started is aborted; the row is written only
//! after the scanner passed the file and the blob is complete.

use super::accept::SNIFF_LEN;
use super::service::{DocumentService, audit, blob_error};
use super::upload_error::UploadError;
use crate::ServiceError;
use crate::idempotency::{self, Created, IdempotencyRequest};
use crate::paging::all_pages;
use bytes::Bytes;
use consular_domain::document::{may_upload, new_blob_key, validate_file_name};
use consular_domain::policy::citizens::citizen_of;
use consular_domain::policy::documents as policy;
use consular_domain::{
    AuditAction, Citizen, CitizenId, Document, DocumentRef, DocumentStatus, DomainEvent, NewDocument,
    Principal, RequestId, ScanStatus, ValidationErrors,
};
use consular_ports::{
    BlobUpload, DocumentFilter, ONE_LIVE_DOCUMENT, OutboxEvent, RepoError, ScanError, ScanSession,
    ScanVerdict, ServiceTypeFilter, WriteMeta,
};
use futures_util::StreamExt;
use futures_util::stream::LocalBoxStream;
use sha2::{Digest, Sha256};

/// Why the body stream could not give the next chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyError {
    /// The body is not the form it should be (a field after the file, ...): 422 with
    /// these fields.
    Invalid(ValidationErrors),
    /// The connection broke or the multipart framing is wrong.
    Unreadable(String),
}

/// The file's bytes as the delivery layer reads them, pulled one chunk at a time. Local
/// (not `Send`): the HTTP server reads a request's body on the worker that received it.
pub type UploadBody = LocalBoxStream<'static, Result<Bytes, BodyError>>;

/// What an upload says about the file besides its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadForm {
    /// A document kind of the catalog.
    pub kind: String,
    pub request_id: Option<RequestId>,
    /// Required from staff and admins; a citizen uploads for themself.
    pub citizen_id: Option<CitizenId>,
    /// The name the client sent (only its last path segment is kept, as metadata).
    pub file_name: String,
    /// The `Content-Type` of the file part, checked against the bytes, never stored.
    pub declared_type: Option<String>,
}

/// What was measured while the bytes streamed into the store.
struct Stored {
    key: String,
    size: u64,
    sha256: String,
    media_type: &'static str,
    scan: ScanStatus,
}

fn body_error(error: BodyError) -> ServiceError {
    match error {
        BodyError::Invalid(errors) => ServiceError::Validation(errors),
        BodyError::Unreadable(why) => UploadError::Unreadable(why).into(),
    }
}

fn scan_unavailable(error: ScanError) -> ServiceError {
    let ScanError::Unavailable(why) = error;
    UploadError::ScannerUnavailable(why).into()
}

/// Where the bytes go: the blob upload and, when configured, the scanner, with the
/// digest and size counted on the way.
struct Sink {
    upload: Box<dyn BlobUpload>,
    scan: Option<Box<dyn ScanSession>>,
    hasher: Sha256,
    size: u64,
    limit: u64,
}

impl Sink {
    async fn write(&mut self, chunk: Bytes) -> Result<(), ServiceError> {
        self.size += chunk.len() as u64;
        if self.size > self.limit {
            return Err(UploadError::TooLarge { limit: self.limit }.into());
        }
        self.hasher.update(&chunk);
        if let Some(scan) = &mut self.scan {
            scan.write(chunk.clone()).await.map_err(scan_unavailable)?;
        }
        self.upload.write(chunk).await.map_err(blob_error)
    }

    /// The scanner's verdict, then the blob made visible: an infected file never is.
    async fn finish(&mut self) -> Result<ScanStatus, ServiceError> {
        let status = match &mut self.scan {
            None => ScanStatus::NotConfigured,
            Some(scan) => match scan.finish().await.map_err(scan_unavailable)? {
                ScanVerdict::Clean => ScanStatus::Clean,
                ScanVerdict::Infected { signature } => return Err(UploadError::Malware { signature }.into()),
            },
        };
        self.upload.complete().await.map_err(blob_error)?;
        Ok(status)
    }
}

impl DocumentService {
    /// Uploads a document: a citizen for themself, staff and admins for a citizen of
    /// their mission, optionally attached to one of the citizen's requests. Every check
    /// that needs no bytes comes first; then the body is streamed (see the module doc).
    /// A refusal keeps nothing: no blob, no row.
    pub async fn upload(
        &self,
        actor: &Principal,
        form: UploadForm,
        body: UploadBody,
        idempotency_key: Option<&IdempotencyRequest>,
    ) -> Result<Created<Document>, ServiceError> {
        let ports = &self.ports;
        let now = ports.clock.now();
        policy::upload(actor)?;
        let citizen_id = citizen_of(actor, form.citizen_id)?;
        if let Some(replayed) = idempotency::replay(&*ports.idempotency, actor, idempotency_key, now).await? {
            return Ok(replayed);
        }
        let citizen = match ports.citizens.get(citizen_id).await? {
            Some(c) if policy::upload_for(actor, c.id, c.mission_id).is_ok() => c,
            _ => return Err(ServiceError::unknown("/citizen_id", "no such citizen in your mission")),
        };
        self.check_kind(actor, &form, &citizen).await?;
        validate_file_name(&form.file_name)?;
        // Checked before any byte is stored; the insert is the check that holds when two
        // uploads of the kind run at once.
        self.refuse_if_present(citizen.id, form.request_id, &form.kind).await?;

        let stored = self.store(body, &form).await?;
        let new = NewDocument {
            mission_id: citizen.mission_id,
            citizen_id: citizen.id,
            request_id: form.request_id,
            kind: form.kind,
            file_name: form.file_name,
            media_type: stored.media_type.to_owned(),
            size_bytes: stored.size,
            sha256: stored.sha256,
            scan: stored.scan,
        };
        let written = match new.validate() {
            Ok(()) => {
                let document = Document::upload(new, stored.key.clone(), actor.subject, now);
                self.insert_unless_present(actor, &document, idempotency_key).await.map(|()| document)
            }
            Err(errors) => Err(errors.into()),
        };
        match written {
            Ok(document) => Ok(Created::fresh(document)),
            Err(error) => {
                // The row is not there: the blob must not stay either.
                if let Err(e) = ports.blobs.delete(&stored.key).await {
                    tracing::warn!(key = %stored.key, error = %e, "an unreferenced blob is left for the sweep");
                }
                Err(error)
            }
        }
    }

    /// Refused (409 naming it) when a live document of `kind` is there for the citizen
    /// and request (docs/documents.md "Re-upload").
    async fn refuse_if_present(
        &self,
        citizen: CitizenId,
        request: Option<RequestId>,
        kind: &str,
    ) -> Result<(), ServiceError> {
        let filter = DocumentFilter {
            citizen_id: Some(citizen),
            request_id: request,
            kind: Some(kind.to_owned()),
            statuses: vec![DocumentStatus::Uploaded, DocumentStatus::Verified],
            ..DocumentFilter::default()
        };
        let existing = all_pages(|page| self.ports.documents.list(filter.clone(), page)).await?;
        // The listing's `request_id` filter cannot ask for "no request": `may_upload`
        // keeps only the documents of `request` itself.
        may_upload(citizen, request, kind, &existing).map_err(ServiceError::DocumentAlreadyPresent)
    }

    /// Inserts the document unless a live one of its citizen, request and kind got in
    /// first: two uploads at once both pass the check made before streaming, and the
    /// database's unique index lets one row through. The loser is refused naming the
    /// winner, read once the index has refused; if that one is already gone again (deleted
    /// in between), the insert is tried once more.
    async fn insert_unless_present(
        &self,
        actor: &Principal,
        document: &Document,
        idempotency_key: Option<&IdempotencyRequest>,
    ) -> Result<(), ServiceError> {
        for _ in 0..2 {
            if self.insert(actor, document, idempotency_key).await? {
                return Ok(());
            }
            self.refuse_if_present(document.citizen_id, document.request_id, &document.kind).await?;
        }
        Err(ServiceError::Unavailable(format!(
            "uploads of a {} document for citizen {} keep colliding",
            document.kind, document.citizen_id
        )))
    }

    /// Whether the row went in (`false`: a live document of its citizen, request and kind
    /// was there first, and nothing was written).
    async fn insert(
        &self,
        actor: &Principal,
        document: &Document,
        idempotency_key: Option<&IdempotencyRequest>,
    ) -> Result<bool, ServiceError> {
        let now = document.created_at;
        let meta = WriteMeta {
            audit: vec![audit(
                actor,
                now,
                AuditAction::Created,
                document,
                &["kind", "citizen_id", "request_id", "file_name", "media_type", "size_bytes", "sha256"],
            )],
            events: vec![OutboxEvent::new(
                &DomainEvent::DocumentUploaded {
                    document: DocumentRef::of(document),
                    media_type: document.media_type.clone(),
                },
                now,
            )?],
            idempotency: idempotency::record(actor, idempotency_key, document.id.as_uuid(), document, now)?,
        };
        match self.ports.documents.insert(document, &meta).await {
            Ok(()) => Ok(true),
            Err(RepoError::Duplicate { constraint }) if constraint == ONE_LIVE_DOCUMENT => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// The kind must be one the catalog knows; attached to a request (one of the
    /// citizen's that the caller sees), one that the request's service type requires.
    async fn check_kind(
        &self,
        actor: &Principal,
        form: &UploadForm,
        citizen: &Citizen,
    ) -> Result<(), ServiceError> {
        let ports = &self.ports;
        let (required, message) = match form.request_id {
            Some(id) => {
                let request = match ports.requests.get(id).await? {
                    Some(r)
                        if r.citizen_id == citizen.id
                            && policy::read(actor, r.citizen_id, r.mission_id).is_ok() =>
                    {
                        r
                    }
                    _ => return Err(ServiceError::unknown("/request_id", "no such request of this citizen")),
                };
                let service_type = ports.service_types.get(request.service_type_id).await?;
                (
                    service_type.map(|t| t.required_documents).unwrap_or_default(),
                    "the request's service type does not require this kind of document",
                )
            }
            None => {
                let types =
                    all_pages(|page| ports.service_types.list(ServiceTypeFilter::default(), page)).await?;
                (
                    types.into_iter().flat_map(|t| t.required_documents).collect(),
                    "no service type of the catalog requires this kind of document",
                )
            }
        };
        if required.contains(&form.kind) { Ok(()) } else { Err(ServiceError::unknown("/kind", message)) }
    }

    /// Streams `body` into a fresh blob (and the scanner); aborts both on any refusal.
    async fn store(&self, body: UploadBody, form: &UploadForm) -> Result<Stored, ServiceError> {
        let limit = self.config.max_upload_bytes;
        // A stream that ended while the head was read is not polled again.
        let mut body = body.fuse();
        // The first chunks, until the type can be decided: at most SNIFF_LEN bytes plus
        // one chunk are held.
        let mut head: Vec<Bytes> = Vec::new();
        let mut head_len = 0usize;
        while head_len < SNIFF_LEN {
            match body.next().await {
                None => break,
                Some(chunk) => {
                    let chunk = chunk.map_err(body_error)?;
                    head_len += chunk.len();
                    if head_len as u64 > limit {
                        return Err(UploadError::TooLarge { limit }.into());
                    }
                    head.push(chunk);
                }
            }
        }
        if head_len == 0 {
            return Err(UploadError::Empty.into());
        }
        let sniffed: Vec<u8> = head.iter().flat_map(|c| c.iter().copied()).take(SNIFF_LEN).collect();
        let media_type = self
            .config
            .accepted
            .check(&sniffed, form.declared_type.as_deref(), &form.file_name)
            .map_err(UploadError::from)?;

        let scan = match &self.ports.scanner {
            Some(scanner) => Some(scanner.start().await.map_err(scan_unavailable)?),
            None => None,
        };
        let key = new_blob_key();
        let upload = self.ports.blobs.start_upload(&key).await.map_err(blob_error)?;
        let mut sink = Sink { upload, scan, hasher: Sha256::new(), size: 0, limit };
        let streamed = async {
            for chunk in head {
                sink.write(chunk).await?;
            }
            while let Some(chunk) = body.next().await {
                sink.write(chunk.map_err(body_error)?).await?;
            }
            sink.finish().await
        }
        .await;
        match streamed {
            Ok(scan) => Ok(Stored {
                key,
                size: sink.size,
                sha256: format!("{:x}", sink.hasher.finalize()),
                media_type,
                scan,
            }),
            Err(error) => {
                // Dropping the scan session closes its connection; the upload must be
                // aborted explicitly (S3 bills the parts of an unfinished upload).
                if let Err(e) = sink.upload.abort().await {
                    tracing::debug!(key = %key, error = %e, "aborting a refused upload");
                }
                Err(error)
            }
        }
    }
}
