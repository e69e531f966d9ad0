use crate::documents::UploadError;
use consular_domain::policy::Denied;
use consular_domain::{Scope, ValidationErrors};
use consular_ports::RepoError;

/// Why a use case refused or failed. The HTTP edge maps each variant to one status and
/// problem type; nothing here carries SQL or driver details to clients.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// Absent, or not visible to the caller: the two are indistinguishable on purpose.
    #[error("not found")]
    NotFound,
    /// The token lacks every one of these scopes.
    #[error("insufficient scope")]
    InsufficientScope { required: Vec<Scope> },
    /// The scope is right but the principal's reach is not (e.g. a mission admin acting
    /// on global configuration).
    #[error("forbidden: {0}")]
    Forbidden(&'static str),
    #[error(transparent)]
    Validation(#[from] ValidationErrors),
    /// The change conflicts with the current state (`code` names the rule).
    #[error("conflict: {detail}")]
    Conflict { code: &'static str, detail: String },
    /// A live document of the kind is already there for the citizen and request (one
    /// at a time, docs/documents.md "Re-upload"): `0.existing` names it.
    #[error("conflict: {0}")]
    DocumentAlreadyPresent(consular_domain::UploadRefused),
    /// The citizen already has the active booking this one would duplicate (for the same
    /// request, or without a request in the same slot for the same service type,
    /// docs/appointments.md "The seat invariant"): `existing` names it.
    #[error("conflict: {detail}")]
    AlreadyBooked { existing: consular_domain::AppointmentId, detail: String },
    /// The citizen already has a running (pending or running) export: `existing` names
    /// it (one at a time, docs/data-protection.md "Export").
    #[error("conflict: {detail}")]
    ExportRunning { existing: consular_domain::ExportId, detail: String },
    /// The dependant already has a representation not ended with this representative and
    /// kind: `existing` names it (docs/representation.md).
    #[error("conflict: {detail}")]
    RepresentationExists { existing: consular_domain::RepresentationId, detail: String },
    /// The slot's scheduled release has not come (docs/appointments.md "Scheduled
    /// release"): `release_at` says when it opens.
    #[error("conflict: {detail}")]
    SlotNotReleased { release_at: time::OffsetDateTime, detail: String },
    /// The state machine refuses this change; `allowed` names what is possible instead.
    #[error("illegal transition: {detail}")]
    IllegalTransition { detail: String, allowed: Vec<String> },
    /// `If-Match` named a version that is no longer current.
    #[error("precondition failed")]
    PreconditionFailed,
    /// The `Idempotency-Key` was used before with a different request.
    #[error("idempotency key reused with another request")]
    IdempotencyKeyMismatch,
    /// The `Idempotency-Key` is being used by a concurrent request.
    #[error("idempotency key in use")]
    IdempotencyKeyInUse,
    /// Over a cap of attempts per minute (docs/appointments.md "Attempt caps"): `detail`
    /// names the cap, `retry_after` the seconds until its window ends.
    #[error("rate limited: {detail}")]
    RateLimited { retry_after: u64, detail: String },
    /// An upload refused while its bytes streamed in (too large, wrong type, empty,
    /// infected, scanner down): nothing of it is kept.
    #[error("upload refused: {0}")]
    Upload(#[from] UploadError),
    /// A signed download URL whose signature does not match or whose time is up.
    #[error("invalid download URL: {0}")]
    InvalidDownloadUrl(String),
    /// A byte range that starts past the end of a blob of `size` bytes.
    #[error("range not satisfiable for {size} bytes")]
    RangeNotSatisfiable { size: u64 },
    /// The approval gate: these required document kinds have no verified document.
    #[error("required documents missing: {}", .0.join(", "))]
    RequiredDocumentsMissing(Vec<String>),
    /// Submitted availability would drop booked seats (a lower capacity, a closed slot)
    /// and the submission did not ask to cancel those bookings.
    #[error("{} slot(s) have bookings the change would drop", .0.len())]
    SlotsHaveBookings(Vec<consular_domain::SlotConflict>),
    /// A dependency is down or saturated; retrying later may succeed.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// A bug or an unexpected dependency failure; the message is for logs only.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ServiceError {
    pub fn conflict(code: &'static str, detail: impl Into<String>) -> Self {
        ServiceError::Conflict { code, detail: detail.into() }
    }

    /// The 422 of an input that names something that does not exist, or that the caller
    /// may not see (the two answer alike): code `unknown` at the JSON pointer `pointer`
    /// (docs/api.md "Errors").
    pub(crate) fn unknown(pointer: &str, message: &str) -> Self {
        let mut errors = ValidationErrors::new();
        errors.unknown(pointer, message);
        errors.into()
    }
}

/// The get-or-404 of the use cases: a repository lookup that found nothing is
/// [`ServiceError::NotFound`].
pub(crate) trait OrNotFound<T> {
    fn or_not_found(self) -> Result<T, ServiceError>;
}

impl<T> OrNotFound<T> for Result<Option<T>, RepoError> {
    fn or_not_found(self) -> Result<T, ServiceError> {
        self?.ok_or(ServiceError::NotFound)
    }
}

impl From<RepoError> for ServiceError {
    fn from(error: RepoError) -> Self {
        match error {
            RepoError::NotFound => ServiceError::NotFound,
            RepoError::VersionConflict => ServiceError::PreconditionFailed,
            RepoError::Duplicate { constraint } => {
                ServiceError::conflict("duplicate", format!("a resource with the same {constraint} exists"))
            }
            RepoError::IdempotencyKeyInUse => ServiceError::IdempotencyKeyInUse,
            RepoError::Unavailable(msg) => ServiceError::Unavailable(msg),
            RepoError::Other(msg) => ServiceError::Internal(msg),
        }
    }
}

/// The one mapping of the access policy's refusals.
impl From<Denied> for ServiceError {
    fn from(denied: Denied) -> Self {
        match denied {
            Denied::NotFound => ServiceError::NotFound,
            Denied::Forbidden(why) => ServiceError::Forbidden(why),
            Denied::InsufficientScope(scopes) => {
                ServiceError::InsufficientScope { required: scopes.to_vec() }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_reference_is_one_field_error_at_its_pointer() {
        let ServiceError::Validation(errors) = ServiceError::unknown("/mission_id", "no such mission") else {
            panic!("not a validation error");
        };
        let mut collected = ValidationErrors::new();
        collected.unknown("/mission_id", "no such mission");
        assert_eq!(errors, collected);
        assert_eq!(
            (errors.0[0].pointer.as_str(), errors.0[0].code.as_str(), errors.0[0].message.as_str()),
            ("/mission_id", "unknown", "no such mission")
        );
    }

    #[test]
    fn a_lookup_that_found_nothing_is_not_found() {
        assert_eq!(Ok::<_, RepoError>(Some(7)).or_not_found().ok(), Some(7));
        assert!(matches!(Ok::<Option<u8>, RepoError>(None).or_not_found(), Err(ServiceError::NotFound)));
        let down = Err::<Option<u8>, _>(RepoError::Unavailable("down".into())).or_not_found();
        assert!(matches!(down, Err(ServiceError::Unavailable(_))));
    }
}
