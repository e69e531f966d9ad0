//! The streaming upload (docs/documents.md "What is stored", docs/operations.md
//! "Document storage and malware scanning"): the body is pulled chunk by chunk, its first
//! [`SNIFF_LEN`] bytes decide the type before anything is written, then every chunk goes
//! to the blob upload and the scanner while its size and SHA-256 are counted. Past the
//! size limit reading stops and everything started is aborted; the row is written only
//! after the scanner passed the file and the blob is complete. Text parts may follow the
//! file (docs/api.md "Documents"): the file then streams into a pending blob, and the
//! checks that need those parts run once the body ended, before the blob is completed;
//! any refusal aborts it.

use super::accept::SNIFF_LEN;
use super::service::{DocumentService, audit, blob_error};
use super::upload_error::UploadError;
use crate::ServiceError;
use crate::idempotency::{self, Created, IdempotencyRequest};
use crate::paging::all_pages;
use bytes::Bytes;
use consular_domain::document::{may_upload, new_blob_key, validate_file_name};
use consular_domain::policy::Owned;
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
use futures_util::future::LocalBoxFuture;
use futures_util::stream::{Fuse, LocalBoxStream};
use sha2::{Digest, Sha256};
use time::OffsetDateTime;

/// Why the body stream could not give the next chunk, or the parts after the file could
/// not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyError {
    /// The body is not the form it should be (an unknown or repeated part, a text part
    /// too long, no `kind`, ...): 422 with these fields.
    Invalid(ValidationErrors),
    /// The connection broke or the multipart framing is wrong.
    Unreadable(String),
}

/// The file's bytes as the delivery layer reads them, pulled one chunk at a time. Local
/// (not `Send`): the HTTP server reads a request's body on the worker that received it.
pub type UploadBody = LocalBoxStream<'static, Result<Bytes, BodyError>>;

/// What the form's text parts say about the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadForm {
    /// A document kind of the catalog.
    pub kind: String,
    pub request_id: Option<RequestId>,
    /// Required from staff and admins; a citizen uploads for themself.
    pub citizen_id: Option<CitizenId>,
}

/// What the file part says about itself besides its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadFile {
    /// The name the client sent (only its last path segment is kept, as metadata).
    pub file_name: String,
    /// The `Content-Type` of the file part, checked against the bytes, never stored.
    pub declared_type: Option<String>,
}

/// The text parts as far as they are known, with the idempotency key of the request
/// they make (its fingerprint covers them and the file part's name and type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UploadFields {
    pub form: UploadForm,
    pub idempotency_key: Option<IdempotencyRequest>,
}

/// The text parts sent before the file (docs/api.md "Documents": the parts come in any
/// order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BeforeFile {
    /// Every text part of the form: no part can follow the file but a refused one, so a
    /// refusal or a replay is answered before any byte is read.
    Whole(UploadFields),
    /// `kind` and not every other part: checked before any byte is stored, but a refusal
    /// or a replay waits for the end of the body, since a part after the file may change
    /// the verdict.
    Partial(UploadFields),
    /// No `kind`: nothing is checked before the end of the body.
    Incomplete,
}

/// The form once the body ended: every text part, those sent before the file completed
/// by those after it, and whether any part followed the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormEnd {
    pub fields: UploadFields,
    pub parts_after_file: bool,
}

/// The parts after the file, read once its bytes are (at most the three small text parts;
/// the delivery layer bounds them): the form's end, or why it is not a valid form.
pub type AfterFile = LocalBoxFuture<'static, Result<FormEnd, BodyError>>;

/// An upload as the body gives it: the text parts before the file, the file part, its
/// bytes, then the parts after it. `after` is awaited only once `body` has ended.
pub struct Upload {
    pub before: BeforeFile,
    pub file: UploadFile,
    pub body: UploadBody,
    pub after: AfterFile,
}

/// What the checks that need no bytes decided.
enum Admission {
    /// The citizen the document is for.
    Proceed(Citizen),
    /// The answer of an earlier request with the same idempotency key.
    Replay(Created<Document>),
}

/// The file once its bytes are read: a pending blob, or a refusal of the file that is
/// answered only after the text parts that followed it were checked, as it would be had
/// they come first.
enum Received {
    /// The bytes are in a blob upload not completed yet (invisible), and the scanner
    /// passed them (or none is configured).
    Pending(Pending),
    /// Refused once read to its end (empty, of a type not accepted, infected); nothing of
    /// it is kept.
    Refused(ServiceError),
}

/// A streamed file waiting for the checks of the parts after it: what `keep` returns once
/// the blob upload completes.
struct Pending {
    upload: Box<dyn BlobUpload>,
    stored: Stored,
}

/// What was measured while the bytes streamed into the store, once the blob is complete.
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

/// Whether a refusal found before the file can still be lifted by a part after it: the
/// citizen that staff and admins must name, or `request_id` when a document of no request
/// is in the way. No other refusal of the checks turns into a pass with more parts.
fn liftable(actor: &Principal, form: &UploadForm, refusal: &ServiceError) -> bool {
    (form.citizen_id.is_none() && citizen_of(actor, None).is_err())
        || (form.request_id.is_none() && matches!(refusal, ServiceError::DocumentAlreadyPresent(_)))
}

/// Reads the rest of a file without keeping it, `size` bytes of it already read: whether
/// it ended within `limit` (`false`: reading stopped past it).
async fn read_through(body: &mut Fuse<UploadBody>, mut size: u64, limit: u64) -> Result<bool, BodyError> {
    while let Some(chunk) = body.next().await {
        size += chunk?.len() as u64;
        if size > limit {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Aborts a blob upload that must leave nothing (S3 bills the parts of an unfinished
/// upload).
async fn abort(upload: &mut Box<dyn BlobUpload>, key: &str) {
    if let Err(e) = upload.abort().await {
        tracing::debug!(key = %key, error = %e, "aborting a refused upload");
    }
}

impl Received {
    /// Drops the file: a pending blob is aborted, so nothing of it stays.
    async fn discard(self) {
        if let Received::Pending(mut pending) = self {
            abort(&mut pending.upload, &pending.stored.key).await;
        }
    }

    /// The file refused, or its blob completed (made visible).
    async fn keep(self) -> Result<Stored, ServiceError> {
        let mut pending = match self {
            Received::Refused(refusal) => return Err(refusal),
            Received::Pending(pending) => pending,
        };
        if let Err(e) = pending.upload.complete().await {
            abort(&mut pending.upload, &pending.stored.key).await;
            return Err(blob_error(e));
        }
        Ok(pending.stored)
    }
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

    /// The scanner's verdict: `Err` if it could not give one, `Ok(Err)` for an infected
    /// file (never made visible).
    async fn verdict(&mut self) -> Result<Result<ScanStatus, ServiceError>, ServiceError> {
        Ok(match &mut self.scan {
            None => Ok(ScanStatus::NotConfigured),
            Some(scan) => match scan.finish().await.map_err(scan_unavailable)? {
                ScanVerdict::Clean => Ok(ScanStatus::Clean),
                ScanVerdict::Infected { signature } => Err(UploadError::Malware { signature }.into()),
            },
        })
    }
}

impl DocumentService {
    /// Uploads a document: a citizen for themself, staff and admins for a citizen of
    /// their mission, optionally attached to one of the citizen's requests. Every check
    /// that needs no bytes comes first when the text parts come before the file; then the
    /// body is streamed (see the module doc). Text parts after the file are checked once
    /// the body ended, with the file in a pending blob (docs/api.md "Documents"). A
    /// refusal keeps nothing: no blob, no row.
    pub async fn upload(&self, actor: &Principal, upload: Upload) -> Result<Created<Document>, ServiceError> {
        let Upload { before, file, body, after } = upload;
        let now = self.ports.clock.now();
        policy::upload(actor)?;
        let (early, whole) = match &before {
            BeforeFile::Whole(fields) => (Some(fields), true),
            BeforeFile::Partial(fields) => (Some(fields), false),
            BeforeFile::Incomplete => (None, false),
        };
        let mut admitted = None;
        if let Some(fields) = early {
            match self.admit(actor, fields, &file, now).await {
                Ok(Admission::Proceed(citizen)) => admitted = Some(citizen),
                Ok(Admission::Replay(replayed)) if whole => return Ok(replayed),
                Err(refusal) if whole => return Err(refusal),
                // A part after the file may lift it: the file streams, judged at the end.
                Err(refusal) if liftable(actor, &fields.form, &refusal) => {}
                Err(refusal) => {
                    return self.answer_unstored(actor, Err(refusal), body, after, &file, now).await;
                }
                Ok(Admission::Replay(replayed)) => {
                    return self.answer_unstored(actor, Ok(replayed), body, after, &file, now).await;
                }
            }
        }

        let received = self.receive(body, &file, whole).await?;
        let end = match after.await {
            Ok(end) => end,
            Err(error) => {
                received.discard().await;
                return Err(body_error(error));
            }
        };
        let admission = match admitted {
            Some(citizen) if !end.parts_after_file => Ok(Admission::Proceed(citizen)),
            _ => self.admit(actor, &end.fields, &file, now).await,
        };
        let citizen = match admission {
            Ok(Admission::Proceed(citizen)) => citizen,
            Ok(Admission::Replay(replayed)) => {
                received.discard().await;
                return Ok(replayed);
            }
            Err(refusal) => {
                received.discard().await;
                return Err(refusal);
            }
        };
        let stored = received.keep().await?;
        let UploadFields { form, idempotency_key } = end.fields;
        let new = NewDocument {
            mission_id: citizen.mission_id,
            citizen_id: citizen.id,
            request_id: form.request_id,
            kind: form.kind,
            file_name: file.file_name,
            media_type: stored.media_type.to_owned(),
            size_bytes: stored.size,
            sha256: stored.sha256,
            scan: stored.scan,
        };
        let written = match new.validate() {
            Ok(()) => {
                let document = Document::upload(new, stored.key.clone(), actor, now);
                self.insert_unless_present(actor, &document, idempotency_key.as_ref())
                    .await
                    .map(|()| document)
            }
            Err(errors) => Err(errors.into()),
        };
        match written {
            Ok(document) => Ok(Created::fresh(document)),
            Err(error) => {
                // The row is not there: the blob must not stay either.
                if let Err(e) = self.ports.blobs.delete(&stored.key).await {
                    tracing::warn!(key = %stored.key, error = %e, "an unreferenced blob is left for the sweep");
                }
                Err(error)
            }
        }
    }

    /// The answer to an upload refused (or replayed) before its file, when parts may
    /// follow the file but none can turn the answer into a pass: the file is read
    /// without being stored, and the answer is the one the whole form gets, the same as
    /// with every text part first. When the parts after the file cannot be read (the file
    /// is over the size limit, the body broke off), the answer before the file stands.
    async fn answer_unstored(
        &self,
        actor: &Principal,
        held: Result<Created<Document>, ServiceError>,
        body: UploadBody,
        after: AfterFile,
        file: &UploadFile,
        now: OffsetDateTime,
    ) -> Result<Created<Document>, ServiceError> {
        let mut body = body.fuse();
        if !matches!(read_through(&mut body, 0, self.config.max_upload_bytes).await, Ok(true)) {
            return held;
        }
        let end = after.await.map_err(body_error)?;
        if !end.parts_after_file {
            return held;
        }
        match self.admit(actor, &end.fields, file, now).await? {
            Admission::Replay(replayed) => Ok(replayed),
            // Not expected (no part after the file lifts these refusals): the answer
            // before the file stands.
            Admission::Proceed(_) => held,
        }
    }

    /// The checks that need no bytes, in the order the answer depends on: who the
    /// document is for, a replay, the citizen, the kind, the file name, and no live
    /// document of the kind already there.
    async fn admit(
        &self,
        actor: &Principal,
        fields: &UploadFields,
        file: &UploadFile,
        now: OffsetDateTime,
    ) -> Result<Admission, ServiceError> {
        let ports = &self.ports;
        let form = &fields.form;
        let citizen_id = citizen_of(actor, form.citizen_id)?;
        let key = fields.idempotency_key.as_ref();
        if let Some(replayed) = idempotency::replay(&*ports.idempotency, actor, key, now).await? {
            return Ok(Admission::Replay(replayed));
        }
        let service = self.service_of(actor, form.request_id).await?;
        let citizen = match ports.citizens.get(citizen_id).await? {
            Some(c) if policy::upload_for(actor, &Owned::new_for(&c, service)).is_ok() => c,
            _ => return Err(ServiceError::unknown("/citizen_id", "no such citizen in your mission")),
        };
        crate::acting::refuse_minor_alone(&*ports.citizens, &*ports.missions, actor, now).await?;
        self.check_kind(actor, form, &citizen).await?;
        validate_file_name(&file.file_name)?;
        // Checked before any byte is stored; the insert is the check that holds when two
        // uploads of the kind run at once.
        self.refuse_if_present(citizen.id, form.request_id, &form.kind).await?;
        Ok(Admission::Proceed(citizen))
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
                        if r.citizen_id == citizen.id && policy::read(actor, &Owned::from(&r)).is_ok() =>
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

    /// Streams `body` into a fresh blob (and the scanner), aborting both on a refusal
    /// answered at once. A refusal found once the file's bytes are all read (empty,
    /// infected) is returned as `Received::Refused`, for the parts after the file to be
    /// checked first; so is a type refused when text parts may follow (`!whole`): the
    /// rest of the file is then read without being stored, up to the size limit.
    async fn receive(
        &self,
        body: UploadBody,
        file: &UploadFile,
        whole: bool,
    ) -> Result<Received, ServiceError> {
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
            return Ok(Received::Refused(UploadError::Empty.into()));
        }
        let sniffed: Vec<u8> = head.iter().flat_map(|c| c.iter().copied()).take(SNIFF_LEN).collect();
        let media_type =
            match self.config.accepted.check(&sniffed, file.declared_type.as_deref(), &file.file_name) {
                Ok(media_type) => media_type,
                Err(refusal) if whole => return Err(UploadError::from(refusal).into()),
                Err(refusal) => {
                    let refusal = ServiceError::from(UploadError::from(refusal));
                    return match read_through(&mut body, head_len as u64, limit).await {
                        Ok(true) => Ok(Received::Refused(refusal)),
                        Ok(false) => Err(refusal),
                        Err(error) => Err(body_error(error)),
                    };
                }
            };

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
            sink.verdict().await
        }
        .await;
        match streamed {
            Ok(Ok(scan)) => Ok(Received::Pending(Pending {
                upload: sink.upload,
                stored: Stored {
                    key,
                    size: sink.size,
                    sha256: format!("{:x}", sink.hasher.finalize()),
                    media_type,
                    scan,
                },
            })),
            Ok(Err(infected)) => {
                abort(&mut sink.upload, &key).await;
                Ok(Received::Refused(infected))
            }
            Err(error) => {
                // Dropping the scan session closes its connection; the upload must be
                // aborted explicitly.
                abort(&mut sink.upload, &key).await;
                Err(error)
            }
        }
    }
}
