//! RFC 9457 problem details: the one error shape of the API (the OAuth endpoints keep
//! RFC 6749's). Handlers return [`ApiError`]; the response middleware renders every
//! error response, including the ones actix produces by itself, as a problem.

use actix_web::http::StatusCode;
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use consular_application::ServiceError;
use consular_application::auth::BearerError;
use consular_application::documents::UploadError;
use consular_domain::{FieldError, ValidationErrors};
use serde::Serialize;
use std::fmt;
use utoipa::ToSchema;
use uuid::Uuid;

pub const PROBLEM_JSON: &str = "application/problem+json";

/// One failing input: a JSON pointer into the body (or `/query/<name>` for a query
/// parameter), a stable code and a message.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ProblemFieldError {
    pub pointer: String,
    pub code: String,
    pub message: String,
}

/// An RFC 9457 problem.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Problem {
    /// A relative URI naming the kind of problem, e.g. `/problems/not-found`.
    #[serde(rename = "type")]
    pub problem_type: String,
    pub title: String,
    pub status: u16,
    pub detail: String,
    /// The path of the request that failed.
    pub instance: String,
    /// A stable snake_case code for programs.
    pub code: String,
    /// The request id, as in the `X-Request-Id` header.
    pub request_id: String,
    /// For validation failures: every failing field.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ProblemFieldError>,
    /// For an illegal transition: the statuses (or `advance_stage`) allowed instead
    /// (empty for a final request).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_actions: Option<Vec<String>>,
    /// For `document_already_present`: the live document of the kind that is there (to
    /// delete first if it must be replaced).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub existing_document_id: Option<Uuid>,
    /// For `already_booked`: the citizen's active booking that the booking would
    /// duplicate (to cancel first, or to keep).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub existing_appointment_id: Option<Uuid>,
    /// For `export_running`: the citizen's running export (to follow instead of starting
    /// another).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub existing_export_id: Option<Uuid>,
    /// For `representation_exists`: the representation not ended with the same dependant,
    /// representative and kind (to end first, or to keep).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub existing_representation_id: Option<Uuid>,
    /// For `slot_not_released`: the instant the slot opens for booking (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none", with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub release_at: Option<time::OffsetDateTime>,
}

/// Marks an error response whose body is the operation's own, documented in the OpenAPI
/// document (the readiness report's 503, docs/operations.md "Health"): the middleware
/// leaves it as it is instead of making it a problem.
#[derive(Debug, Clone, Copy)]
pub struct DocumentedBody;

/// An error on its way to becoming a problem response.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub detail: String,
    pub errors: Vec<FieldError>,
    /// What the problem adds for its kind (`allowed_actions`, `existing_document_id`,
    /// `existing_appointment_id`, `release_at`).
    pub extension: Extension,
    pub headers: Vec<(HeaderName, String)>,
}

/// The extension members of [`Problem`] that only some kinds of problem have, at most
/// one per problem (one field, so that `ApiError`, in every handler's `Err`, stays small).
#[derive(Debug, Clone, Default)]
pub enum Extension {
    #[default]
    None,
    /// `allowed_actions`, for an illegal transition.
    AllowedActions(Vec<String>),
    /// `existing_document_id`, for `document_already_present`.
    ExistingDocument(Uuid),
    /// `existing_appointment_id`, for `already_booked`.
    ExistingAppointment(Uuid),
    /// `existing_export_id`, for `export_running`.
    ExistingExport(Uuid),
    /// `existing_representation_id`, for `representation_exists`.
    ExistingRepresentation(Uuid),
    /// `release_at`, for `slot_not_released`.
    ReleaseAt(time::OffsetDateTime),
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, detail: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            detail: detail.into(),
            errors: Vec::new(),
            extension: Extension::None,
            headers: Vec::new(),
        }
    }

    pub fn with_header(mut self, name: HeaderName, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    pub fn validation(
        status: StatusCode,
        code: &'static str,
        detail: &str,
        errors: ValidationErrors,
    ) -> Self {
        ApiError { errors: errors.0, ..ApiError::new(status, code, detail) }
    }

    pub fn not_found() -> Self {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            "the resource does not exist or is not visible to you",
        )
    }

    pub fn unavailable(detail: impl Into<String>) -> Self {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "service_unavailable", detail)
            .with_header(actix_web::http::header::RETRY_AFTER, "1")
    }

    pub fn internal() -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", "an unexpected error occurred")
    }

    /// Renders the problem for a request.
    pub fn to_problem(&self, instance: &str, request_id: &str) -> Problem {
        Problem {
            problem_type: format!("/problems/{}", self.code.replace('_', "-")),
            title: self.status.canonical_reason().unwrap_or("Error").to_owned(),
            status: self.status.as_u16(),
            detail: self.detail.clone(),
            instance: instance.to_owned(),
            code: self.code.to_owned(),
            request_id: request_id.to_owned(),
            errors: self
                .errors
                .iter()
                .map(|e| ProblemFieldError {
                    pointer: e.pointer.clone(),
                    code: e.code.clone(),
                    message: e.message.clone(),
                })
                .collect(),
            allowed_actions: match &self.extension {
                Extension::AllowedActions(allowed) => Some(allowed.clone()),
                _ => None,
            },
            existing_document_id: match self.extension {
                Extension::ExistingDocument(id) => Some(id),
                _ => None,
            },
            existing_appointment_id: match self.extension {
                Extension::ExistingAppointment(id) => Some(id),
                _ => None,
            },
            existing_export_id: match self.extension {
                Extension::ExistingExport(id) => Some(id),
                _ => None,
            },
            existing_representation_id: match self.extension {
                Extension::ExistingRepresentation(id) => Some(id),
                _ => None,
            },
            release_at: match self.extension {
                Extension::ReleaseAt(at) => Some(at),
                _ => None,
            },
        }
    }

    /// The problem for a status that the framework produced without a body of ours.
    pub fn from_status(status: StatusCode) -> Self {
        let (code, detail) = match status.as_u16() {
            400 => ("bad_request", "the request is malformed"),
            401 => ("unauthorized", "authentication is required"),
            403 => ("forbidden", "the request is not allowed"),
            404 => ("not_found", "no resource at this address"),
            405 => ("method_not_allowed", "the method is not allowed on this resource"),
            406 => ("not_acceptable", "no acceptable representation"),
            408 => ("request_timeout", "the request took too long to arrive"),
            411 => ("length_required", "the request needs a Content-Length"),
            413 => ("payload_too_large", "the request body is too large"),
            414 => ("uri_too_long", "the request URI is too long"),
            415 => ("unsupported_media_type", "the request body's media type is not supported"),
            429 => ("too_many_requests", "too many requests; retry later"),
            431 => ("request_header_fields_too_large", "the request headers are too large"),
            503 => ("service_unavailable", "the service is temporarily unavailable"),
            s if s >= 500 => ("internal_error", "an unexpected error occurred"),
            _ => ("client_error", "the request cannot be processed"),
        };
        ApiError::new(status, code, detail)
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.status.as_u16(), self.code, self.detail)
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    /// The body is rendered by the response middleware, which knows the request; here
    /// the error travels in the response extensions.
    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status);
        for (name, value) in &self.headers {
            if let Ok(value) = HeaderValue::from_str(value) {
                response.insert_header((name.clone(), value));
            }
        }
        let mut response = response.finish();
        response.extensions_mut().insert(self.clone());
        response
    }
}

impl From<ServiceError> for ApiError {
    fn from(error: ServiceError) -> Self {
        use actix_web::http::header::WWW_AUTHENTICATE;
        match error {
            ServiceError::NotFound => ApiError::not_found(),
            ServiceError::InsufficientScope { required } => {
                let scopes: Vec<&str> = required.iter().map(|s| s.as_str()).collect();
                let scope = scopes.join(" ");
                ApiError::new(
                    StatusCode::FORBIDDEN,
                    "insufficient_scope",
                    format!("the token needs one of these scopes: {scope}"),
                )
                .with_header(
                    WWW_AUTHENTICATE,
                    format!("Bearer realm=\"consular\", error=\"insufficient_scope\", scope=\"{scope}\""),
                )
            }
            ServiceError::Forbidden(why) => ApiError::new(StatusCode::FORBIDDEN, "forbidden", why),
            ServiceError::Validation(errors) => ApiError::validation(
                StatusCode::UNPROCESSABLE_ENTITY,
                "validation_failed",
                "some fields are invalid",
                errors,
            ),
            ServiceError::Conflict { code, detail } => ApiError::new(StatusCode::CONFLICT, code, detail),
            ServiceError::DocumentAlreadyPresent(refused) => ApiError {
                extension: Extension::ExistingDocument(refused.existing.as_uuid()),
                ..ApiError::new(StatusCode::CONFLICT, "document_already_present", refused.to_string())
            },
            ServiceError::AlreadyBooked { existing, detail } => ApiError {
                extension: Extension::ExistingAppointment(existing.as_uuid()),
                ..ApiError::new(StatusCode::CONFLICT, "already_booked", detail)
            },
            ServiceError::ExportRunning { existing, detail } => ApiError {
                extension: Extension::ExistingExport(existing.as_uuid()),
                ..ApiError::new(StatusCode::CONFLICT, "export_running", detail)
            },
            ServiceError::RepresentationExists { existing, detail } => ApiError {
                extension: Extension::ExistingRepresentation(existing.as_uuid()),
                ..ApiError::new(StatusCode::CONFLICT, "representation_exists", detail)
            },
            ServiceError::SlotNotReleased { release_at, detail } => ApiError {
                extension: Extension::ReleaseAt(release_at),
                ..ApiError::new(StatusCode::CONFLICT, "slot_not_released", detail)
            },
            ServiceError::IllegalTransition { detail, allowed } => ApiError {
                extension: Extension::AllowedActions(allowed),
                ..ApiError::new(StatusCode::CONFLICT, "illegal_transition", detail)
            },
            ServiceError::PreconditionFailed => ApiError::new(
                StatusCode::PRECONDITION_FAILED,
                "precondition_failed",
                "the resource has changed since the ETag in If-Match was read",
            ),
            ServiceError::IdempotencyKeyMismatch => ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "idempotency_key_reused",
                "this Idempotency-Key was used with a different request",
            ),
            ServiceError::IdempotencyKeyInUse => ApiError::new(
                StatusCode::CONFLICT,
                "idempotency_key_in_use",
                "a request with this Idempotency-Key is being processed",
            ),
            ServiceError::RateLimited { retry_after, detail } => {
                ApiError::new(StatusCode::TOO_MANY_REQUESTS, "too_many_requests", detail)
                    .with_header(actix_web::http::header::RETRY_AFTER, retry_after.to_string())
            }
            ServiceError::Upload(refused) => ApiError::from(refused),
            ServiceError::InvalidDownloadUrl(why) => {
                ApiError::new(StatusCode::FORBIDDEN, "invalid_download_url", why)
            }
            ServiceError::RangeNotSatisfiable { size } => ApiError::new(
                StatusCode::RANGE_NOT_SATISFIABLE,
                "range_not_satisfiable",
                format!("the range is outside the {size} bytes of the document"),
            )
            .with_header(actix_web::http::header::CONTENT_RANGE, format!("bytes */{size}")),
            ServiceError::RequiredDocumentsMissing(kinds) => {
                let mut errors = ValidationErrors::new();
                for kind in &kinds {
                    errors.add(
                        &format!("/required_documents/{kind}"),
                        "missing",
                        format!("no verified {kind} document"),
                    );
                }
                ApiError::validation(
                    StatusCode::CONFLICT,
                    "required_documents_missing",
                    &format!(
                        "the request cannot be approved before these documents are verified: {}",
                        kinds.join(", ")
                    ),
                    errors,
                )
            }
            ServiceError::SlotsHaveBookings(conflicts) => {
                let mut errors = ValidationErrors::new();
                for c in &conflicts {
                    errors.add(
                        &format!("/slots/{}", c.slot_id.as_uuid()),
                        "slot_has_bookings",
                        format!(
                            "the slot starting at {} has {} booked seat(s); the change leaves {}",
                            c.starts_at,
                            c.booked,
                            if c.open { c.capacity } else { 0 }
                        ),
                    );
                }
                ApiError::validation(
                    StatusCode::CONFLICT,
                    "slot_has_bookings",
                    "the change would drop booked seats; send cancel_bookings: true to cancel those bookings",
                    errors,
                )
            }
            ServiceError::Unavailable(why) => {
                tracing::warn!(error = %why, "dependency unavailable");
                ApiError::unavailable("the service is temporarily unavailable")
            }
            ServiceError::Internal(why) => {
                tracing::error!(error = %why, "internal error");
                ApiError::internal()
            }
        }
    }
}

impl From<BearerError> for ApiError {
    fn from(error: BearerError) -> Self {
        match error {
            BearerError::Invalid(description) => ApiError::new(
                StatusCode::UNAUTHORIZED,
                "invalid_token",
                description,
            )
            .with_header(
                actix_web::http::header::WWW_AUTHENTICATE,
                format!(
                    "Bearer realm=\"consular\", error=\"invalid_token\", error_description=\"{description}\""
                ),
            ),
            BearerError::Unavailable(why) => {
                tracing::warn!(error = %why, "revocation state unavailable");
                ApiError::unavailable("the service is temporarily unavailable")
            }
        }
    }
}

/// How long a client should wait before retrying an upload the scanner could not judge.
const SCANNER_RETRY_AFTER_SECS: &str = "5";

impl From<UploadError> for ApiError {
    fn from(refused: UploadError) -> Self {
        let detail = refused.to_string();
        match refused {
            UploadError::TooLarge { .. } => {
                ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", detail)
            }
            UploadError::Type(_) => {
                ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type", detail)
            }
            UploadError::Empty => ApiError::validation(
                StatusCode::UNPROCESSABLE_ENTITY,
                "empty_file",
                &detail,
                ValidationErrors::single("/file", "empty", "the file is empty"),
            ),
            // The signature name is for the logs, not for the uploader.
            UploadError::Malware { signature } => {
                tracing::warn!(%signature, "an upload was refused by the malware scanner");
                ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "malware_detected",
                    "the malware scanner refused the file; nothing was kept",
                )
            }
            UploadError::ScannerUnavailable(why) => {
                tracing::warn!(error = %why, "malware scanner unavailable");
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "scanner_unavailable",
                    "the malware scanner is unavailable; retry later",
                )
                .with_header(actix_web::http::header::RETRY_AFTER, SCANNER_RETRY_AFTER_SECS)
            }
            UploadError::Unreadable(_) => ApiError::new(StatusCode::BAD_REQUEST, "bad_request", detail),
        }
    }
}
