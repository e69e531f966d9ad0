//! `/api/v1/documents`: streaming uploads, reads with expiring download URLs, the
//! signed-URL download itself, verification, deletion and the lists (spec 4.3 and 4.4;
//! docs/documents.md, docs/api.md "Documents"). The bodies are in
//! `crate::wire::documents`.
//!
//! The upload reads the multipart body as a stream of fields (never `MultipartForm`,
//! which buffers and caps bodies), its parts in any order: the text parts before the
//! `file` part, the file part, whose chunks go straight to the use case, then the text
//! parts after it, read once those chunks ended (docs/api.md "Documents").

use crate::extract::{
    ApiJson, ApiQuery, Authenticated, PageParams, fingerprinted, idempotency_key, if_match,
    optional_if_match, page_request,
};
use crate::problem::ApiError;
use crate::respond::{self, Resource, list, with_etag};
use crate::state::AppState;
use crate::wire::IfMatchMissing;
use crate::wire::documents::{
    AlreadyPresent, BadDownloadUrl, ContentParams, DocumentBody, DocumentChanged, DocumentDownloadBody,
    DocumentList, DocumentListParams, DownloadGone, FileNotAccepted, FileTooLarge, NotAwaitingReview,
    NotDeletable, RangeNotSatisfiable, ScannerOrStorageUnavailable, UploadDocumentForm, UploadInvalid,
    VerifyDocument,
};
use actix_multipart::{Field, Multipart, MultipartError};
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderMap};
use actix_web::{HttpRequest, HttpResponse, delete, get, patch, post, web};
use consular_application::ServiceError;
use consular_application::documents::signed_url::DownloadGrant;
use consular_application::documents::{
    AfterFile, BeforeFile, BodyError, Decision, FormEnd, Upload, UploadBody, UploadFields, UploadFile,
    UploadForm,
};
use consular_domain::document::{attachment_disposition, safe_media_type};
use consular_domain::{CitizenId, DocumentId, RequestId, ValidationErrors};
use consular_ports::{ByteRange, DocumentFilter};
use futures_util::{FutureExt, StreamExt, TryStreamExt};
use time::OffsetDateTime;
use utoipa_actix_web::service_config::ServiceConfig;
use uuid::Uuid;

/// Registers this area's operations, in the order actix tries them (`super::register`).
pub fn register(cfg: &mut ServiceConfig) {
    cfg.service(list_documents)
        .service(upload_document)
        .service(get_document)
        .service(delete_document)
        .service(download_document_content)
        .service(verify_document)
        .service(list_request_documents);
}

/// The longest text part of an upload form.
const TEXT_PART_LIMIT: usize = 1024;

fn invalid(pointer: &str, code: &str, message: &str) -> ApiError {
    ApiError::from(consular_application::ServiceError::from(ValidationErrors::single(pointer, code, message)))
}

fn multipart_error(error: MultipartError) -> ApiError {
    match error {
        MultipartError::ContentTypeMissing
        | MultipartError::ContentTypeParse
        | MultipartError::ContentTypeIncompatible
        | MultipartError::BoundaryMissing => ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "the body must be multipart/form-data",
        ),
        other => ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_request",
            format!("the body could not be read: {other}"),
        ),
    }
}

/// Why a text part could not be read.
enum PartError {
    Invalid(ValidationErrors),
    Multipart(MultipartError),
}

impl From<PartError> for ApiError {
    fn from(error: PartError) -> Self {
        match error {
            PartError::Invalid(errors) => ApiError::from(ServiceError::from(errors)),
            PartError::Multipart(error) => multipart_error(error),
        }
    }
}

impl From<PartError> for BodyError {
    fn from(error: PartError) -> Self {
        match error {
            PartError::Invalid(errors) => BodyError::Invalid(errors),
            PartError::Multipart(error) => BodyError::Unreadable(error.to_string()),
        }
    }
}

fn refused(pointer: &str, code: &str, message: &str) -> PartError {
    PartError::Invalid(ValidationErrors::single(pointer, code, message))
}

/// A text part, at most [`TEXT_PART_LIMIT`] bytes of UTF-8 without control characters.
async fn text_part(mut field: Field, name: &str) -> Result<String, PartError> {
    let mut text = Vec::new();
    while let Some(chunk) = field.try_next().await.map_err(PartError::Multipart)? {
        if text.len() + chunk.len() > TEXT_PART_LIMIT {
            return Err(refused(&format!("/{name}"), "too_long", "at most 1024 bytes"));
        }
        text.extend_from_slice(&chunk);
    }
    let text =
        String::from_utf8(text).map_err(|_| refused(&format!("/{name}"), "invalid", "must be UTF-8 text"))?;
    // The boundary rule of every text the API reads (docs/api.md "Text").
    use consular_domain::validation::{CONTROL_CHARACTER, NO_CONTROL_IN_LINE, refused_in_line};
    if text.chars().any(refused_in_line) {
        return Err(refused(&format!("/{name}"), CONTROL_CHARACTER, NO_CONTROL_IN_LINE));
    }
    Ok(text)
}

fn uuid_part(text: &str, name: &str) -> Result<Uuid, PartError> {
    Uuid::parse_str(text.trim()).map_err(|_| refused(&format!("/{name}"), "invalid", "must be a UUID"))
}

/// The text parts of the form read so far, each at most once: at most three parts of
/// [`TEXT_PART_LIMIT`] bytes are ever held, whatever their order.
#[derive(Default)]
struct TextParts {
    kind: Option<String>,
    request_id: Option<String>,
    citizen_id: Option<String>,
}

impl TextParts {
    /// Reads the text part `field` into its slot; an unknown or repeated part is refused.
    async fn read(&mut self, field: Field, name: &str) -> Result<(), PartError> {
        let slot = match name {
            "kind" => &mut self.kind,
            "request_id" => &mut self.request_id,
            "citizen_id" => &mut self.citizen_id,
            "file" => return Err(refused("/file", "duplicate", "sent more than once")),
            _ => return Err(refused(&format!("/{name}"), "unknown_field", "not a field of the upload form")),
        };
        if slot.is_some() {
            return Err(refused(&format!("/{name}"), "duplicate", "sent more than once"));
        }
        *slot = Some(text_part(field, name).await?);
        Ok(())
    }

    /// The form, once `kind` is there.
    fn form(&self) -> Result<Option<UploadForm>, PartError> {
        let Some(kind) = &self.kind else { return Ok(None) };
        Ok(Some(UploadForm {
            kind: kind.clone(),
            request_id: self
                .request_id
                .as_deref()
                .map(|t| uuid_part(t, "request_id").map(RequestId))
                .transpose()?,
            citizen_id: self
                .citizen_id
                .as_deref()
                .map(|t| uuid_part(t, "citizen_id").map(CitizenId))
                .transpose()?,
        }))
    }

    /// Whether every text part of the form is there: any part after the file is refused.
    fn whole(&self) -> bool {
        self.kind.is_some() && self.request_id.is_some() && self.citizen_id.is_some()
    }
}

/// The form's fields with the idempotency key they make of `key` (checked once, at the
/// file part). The fingerprint covers the form's fields and the file's name and declared
/// type, whatever the order of the parts.
fn fields(req: &HttpRequest, key: Option<&str>, form: UploadForm, file: &UploadFile) -> UploadFields {
    let idempotency_key = key.map(|key| {
        let fingerprint = format!(
            "kind={}\nrequest_id={:?}\ncitizen_id={:?}\nfile_name={}\ndeclared_type={:?}",
            form.kind, form.request_id, form.citizen_id, file.file_name, file.declared_type
        );
        fingerprinted(req, key, fingerprint.as_bytes())
    });
    UploadFields { form, idempotency_key }
}

/// The `file` part's bytes; the part is dropped when they end, so that the form can be
/// read on.
fn file_stream(field: Field) -> UploadBody {
    futures_util::stream::unfold(Some(field), |field| async move {
        let mut field = field?;
        match field.next().await {
            Some(Ok(bytes)) => Some((Ok(bytes), Some(field))),
            Some(Err(e)) => Some((Err(BodyError::Unreadable(e.to_string())), None)),
            None => None,
        }
    })
    .boxed_local()
}

/// The parts after the file, read once its bytes are: each a text part (bounded as
/// before it), then the whole form (docs/api.md "Documents") with the idempotency `key`.
fn after_file(
    req: HttpRequest,
    mut multipart: Multipart,
    mut parts: TextParts,
    file: UploadFile,
    key: Option<String>,
) -> AfterFile {
    async move {
        let mut parts_after_file = false;
        while let Some(field) = multipart.next().await {
            let field = field.map_err(|e| BodyError::Unreadable(e.to_string()))?;
            let name = field.name().unwrap_or("").to_owned();
            parts.read(field, &name).await?;
            parts_after_file = true;
        }
        let Some(form) = parts.form()? else {
            return Err(BodyError::Invalid(ValidationErrors::single(
                "/kind",
                "required",
                "the form needs a kind part",
            )));
        };
        // The key was checked at the file part: only its fingerprint is new here.
        let fields = fields(&req, key.as_deref(), form, &file);
        Ok(FormEnd { fields, parts_after_file })
    }
    .boxed_local()
}

/// The upload as the body gives it: the text parts up to the `file` part (checked as
/// they come), the file part, its bytes, and the parts after it.
async fn read_form(req: &HttpRequest, mut multipart: Multipart) -> Result<Upload, ApiError> {
    let mut parts = TextParts::default();
    loop {
        let Some(field) = multipart.try_next().await.map_err(multipart_error)? else {
            return Err(invalid("/file", "required", "the form needs a file part"));
        };
        let name = field.name().unwrap_or("").to_owned();
        if name != "file" {
            parts.read(field, &name).await?;
            continue;
        }
        let file_name = field
            .content_disposition()
            .and_then(|d| d.get_filename())
            .map(str::to_owned)
            .ok_or_else(|| invalid("/file", "required", "the file part needs a file name"))?;
        let file =
            UploadFile { file_name, declared_type: field.content_type().map(|m| m.essence_str().to_owned()) };
        // A malformed key is refused before any byte is read, whatever the order.
        let key = idempotency_key(req)?;
        let before = match parts.form()? {
            Some(form) if parts.whole() => BeforeFile::Whole(fields(req, key, form, &file)),
            Some(form) => BeforeFile::Partial(fields(req, key, form, &file)),
            None => BeforeFile::Incomplete,
        };
        let after = after_file(req.clone(), multipart, parts, file.clone(), key.map(str::to_owned));
        return Ok(Upload { before, file, body: file_stream(field), after });
    }
}

/// Upload a document (multipart/form-data, streamed).
///
/// A citizen uploads for themself; staff and admins for a citizen of their mission
/// (`citizen_id`). The type is decided by the file's bytes; the parts come in any
/// order, and the file is streamed wherever it is among them.
#[utoipa::path(
    tag = "documents",
    operation_id = "upload_document",
    request_body(content = UploadDocumentForm, content_type = "multipart/form-data"),
    params(("Idempotency-Key" = Option<String>, Header, description = "Replays the first response for a retried request")),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 201, description = "Stored", body = DocumentBody, headers(
            ("Location" = String, description = "The new document"),
            ("ETag" = String, description = "Its version"))),
        AlreadyPresent,
        FileTooLarge,
        FileNotAccepted,
        UploadInvalid,
        ScannerOrStorageUnavailable,
    )
)]
#[post("/api/v1/documents/upload")]
pub async fn upload_document(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    multipart: Multipart,
) -> Result<HttpResponse, ApiError> {
    let upload = read_form(&req, multipart).await?;
    let written = state.documents.upload(&actor, upload).await?;
    let document = &written.value;
    let resource =
        Resource { location: format!("/api/v1/documents/{}", document.id), version: document.version };
    Ok(respond::created(&written, Some(resource), |d| DocumentBody::from(d)))
}

/// Whether the client asks for the metadata (JSON) rather than the file itself.
fn wants_json(headers: &HeaderMap) -> bool {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else { return true };
    accept.trim().is_empty()
        || accept
            .split(',')
            .map(|range| range.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
            .any(|range| range == "*/*" || range == "application/json")
}

/// One `Range: bytes=…` range; anything else (several ranges, another unit, garbage) is
/// ignored and the whole file is served, as RFC 9110 allows.
fn byte_range(headers: &HeaderMap) -> Option<ByteRange> {
    let spec = headers.get(header::RANGE)?.to_str().ok()?.trim().strip_prefix("bytes=")?;
    if spec.contains(',') {
        return None;
    }
    match spec.split_once('-')? {
        ("", last) => last.trim().parse().ok().map(ByteRange::Suffix),
        (first, "") => first.trim().parse().ok().map(ByteRange::From),
        (first, last) => {
            let (first, last): (u64, u64) = (first.trim().parse().ok()?, last.trim().parse().ok()?);
            (first <= last).then(|| ByteRange::Bounded(first..last.saturating_add(1)))
        }
    }
}

/// Get a document's metadata and a download URL, or be redirected to the file.
///
/// With `Accept` absent, `*/*` or `application/json`: the metadata with a
/// `download_url` that expires. With any other `Accept`: `303 See Other` to that URL.
#[utoipa::path(
    tag = "documents",
    operation_id = "get_document",
    params(("id" = Uuid, Path, description = "Document id")),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 200, description = "The document and its download URL", body = DocumentDownloadBody,
            headers(("ETag" = String, description = "Its version"))),
        (status = 303, description = "The file: follow `Location` (it expires)",
            headers(("Location" = String, description = "The download URL"))),
    )
)]
#[get("/api/v1/documents/{id}")]
pub async fn get_document(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let download = state.documents.download(&actor, DocumentId(id.into_inner())).await?;
    if !wants_json(req.headers()) {
        return Ok(HttpResponse::SeeOther().insert_header((header::LOCATION, download.url)).finish());
    }
    let version = download.document.version;
    Ok(with_etag(&DocumentDownloadBody::from(download), version))
}

/// Download a document's bytes through a signed URL (no bearer token; an extension).
///
/// The URL comes from `GET /api/v1/documents/{id}` and expires. `Range` (one range) is
/// honoured.
#[utoipa::path(
    tag = "documents",
    operation_id = "download_document_content",
    security(),
    params(("id" = Uuid, Path, description = "Document id"), ContentParams,
        ("Range" = Option<String>, Header, description = "One byte range, `bytes=first-last`")),
    extensions(("x-maturity" = json!("Beta"))),
    responses(
        (status = 200, description = "The file, as an attachment, with its stored media type",
            content(
                (inline(crate::wire::documents::DocumentBytes) = "application/octet-stream"),
                (inline(crate::wire::documents::DocumentBytes) = "*/*"),
            )),
        (status = 206, description = "The range asked for",
            content(
                (inline(crate::wire::documents::DocumentBytes) = "application/octet-stream"),
                (inline(crate::wire::documents::DocumentBytes) = "*/*"),
            ),
            headers(("Content-Range" = String, description = "`bytes first-last/size`"))),
        BadDownloadUrl,
        DownloadGone,
        RangeNotSatisfiable,
    )
)]
#[get("/api/v1/documents/{id}/content")]
pub async fn download_document_content(
    req: HttpRequest,
    state: web::Data<AppState>,
    id: web::Path<Uuid>,
    ApiQuery(params): ApiQuery<ContentParams>,
) -> Result<HttpResponse, ApiError> {
    let invalid_url =
        || ApiError::new(StatusCode::FORBIDDEN, "invalid_download_url", "the download URL is not valid");
    let expires_at = OffsetDateTime::from_unix_timestamp(params.expires).map_err(|_| invalid_url())?;
    let grant = DownloadGrant { document: DocumentId(id.into_inner()), version: params.version, expires_at };
    let range = byte_range(req.headers());
    let partial = range.is_some();
    let content = state.documents.content(grant, &params.signature, range).await?;
    let (document, read) = (content.document, content.read);
    let mut response = if partial { HttpResponse::PartialContent() } else { HttpResponse::Ok() };
    response
        .insert_header((header::CONTENT_TYPE, safe_media_type(&document.media_type).to_owned()))
        .insert_header((header::CONTENT_DISPOSITION, attachment_disposition(&document.file_name)))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::ETAG, format!("\"{}\"", document.sha256)))
        .insert_header((header::ACCEPT_RANGES, "bytes"))
        .insert_header((header::CACHE_CONTROL, "no-store"));
    if partial {
        let (first, end) = (read.range.start, read.range.end);
        response.insert_header((header::CONTENT_RANGE, format!("bytes {first}-{}/{}", end - 1, read.size)));
    }
    Ok(response.no_chunking(read.range.end - read.range.start).streaming(read.chunks))
}

/// Delete a document: its owner while it is not verified; staff and admins of the
/// mission. `If-Match` is optional.
///
/// The document leaves every list and checklist and its bytes leave storage; a
/// tombstone stays for the audit log and the request's timeline, and reading the
/// document again is 404. The owner deleting a verified document is 409,
/// `allowed_actions` saying what they may do. With `If-Match`, another version than the
/// current one is 412.
#[utoipa::path(
    tag = "documents",
    operation_id = "delete_document",
    params(
        ("id" = Uuid, Path, description = "Document id"),
        ("If-Match" = Option<String>, Header, description = "The ETag you read, to delete only that version"),
    ),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 204, description = "Deleted"),
        NotDeletable,
        DocumentChanged,
    )
)]
#[delete("/api/v1/documents/{id}")]
pub async fn delete_document(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
) -> Result<HttpResponse, ApiError> {
    let expected = optional_if_match(req.headers())?;
    state.documents.delete(&actor, DocumentId(id.into_inner()), expected.as_deref()).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Verify or reject an uploaded document (staff/admin of the mission).
///
/// A rejection needs a `reason` the citizen reads; the kind may then be uploaded again.
#[utoipa::path(
    tag = "documents",
    operation_id = "verify_document",
    request_body = VerifyDocument,
    params(
        ("id" = Uuid, Path, description = "Document id"),
        ("If-Match" = String, Header, description = "The ETag you read"),
    ),
    security(("oauth2" = ["admin"]), ("oauth2" = ["staff"])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses(
        (status = 200, description = "Decided", body = DocumentBody, headers(("ETag" = String, description = "The new version"))),
        NotAwaitingReview,
        DocumentChanged,
        IfMatchMissing,
    )
)]
#[patch("/api/v1/documents/{id}/verify")]
pub async fn verify_document(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
    body: ApiJson<VerifyDocument>,
) -> Result<HttpResponse, ApiError> {
    let expected = if_match(req.headers())?;
    let decision = Decision::try_from(body.value).map_err(ServiceError::from)?;
    let document =
        state.documents.decide(&actor, DocumentId(id.into_inner()), decision, expected.as_deref()).await?;
    Ok(with_etag(&DocumentBody::from(&document), document.version))
}

/// List a request's documents, newest first (who reads the request reads them).
///
/// The live documents attached to the request (deleted ones are not listed): for the
/// citizen who owns it and the staff and admins of its mission; anyone else gets 404
/// for the request.
#[utoipa::path(
    tag = "documents",
    operation_id = "list_request_documents",
    params(("id" = Uuid, Path, description = "Request id"), PageParams),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Coming Soon"))),
    responses((status = 200, description = "A page of documents", body = DocumentList,
        headers(("Link" = String, description = "The next page, when there is one"))))
)]
#[get("/api/v1/requests/{id}/documents")]
pub async fn list_request_documents(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    id: web::Path<Uuid>,
    ApiQuery(page): ApiQuery<PageParams>,
) -> Result<HttpResponse, ApiError> {
    let documents =
        state.documents.for_request(&actor, RequestId(id.into_inner()), page.to_request()?).await?;
    Ok(list(&req, documents, |d| DocumentBody::from(&d)))
}

/// List documents, newest first (an extension of the spec).
///
/// A citizen sees their own; staff and admins their mission's; global admins all.
#[utoipa::path(
    tag = "documents",
    operation_id = "list_documents",
    params(DocumentListParams),
    security(("oauth2" = [])),
    extensions(("x-maturity" = json!("Beta"))),
    responses((status = 200, description = "A page of documents", body = DocumentList,
        headers(("Link" = String, description = "The next page, when there is one"))))
)]
#[get("/api/v1/documents")]
pub async fn list_documents(
    req: HttpRequest,
    state: web::Data<AppState>,
    Authenticated(actor): Authenticated,
    ApiQuery(params): ApiQuery<DocumentListParams>,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(params.limit, params.cursor.as_deref())?;
    let filter = DocumentFilter {
        mission_id: None,
        citizen_id: params.citizen_id.map(CitizenId),
        request_id: params.request_id.map(RequestId),
        kind: crate::extract::query_text("kind", params.kind, 1, 64)?,
        statuses: params.status.unwrap_or_default().into_iter().map(Into::into).collect(),
        // Set by the use case from the caller's mandate, never by the query.
        within_services: None,
    };
    let documents = state.documents.list(&actor, filter, page).await?;
    Ok(list(&req, documents, |d| DocumentBody::from(&d)))
}
