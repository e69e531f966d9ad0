//! `Idempotency-Key` handling shared by every creating use case: look the key up before
//! doing anything, and store the response in the same transaction as the change.

use crate::ServiceError;
use consular_domain::Principal;
use consular_ports::{IdempotencyRecord, IdempotencyRepository, StoredResponse};
use time::{Duration, OffsetDateTime};

/// How long a key is remembered.
pub const KEY_LIFETIME: Duration = Duration::hours(24);

/// The key a client sent and the fingerprint (method, path, body) of its request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyRequest {
    pub key: String,
    pub fingerprint: String,
}

/// The response of a write, and whether it is a replay of an earlier one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub response: StoredResponse,
    pub replayed: bool,
}

impl Written {
    pub fn fresh(response: StoredResponse) -> Self {
        Written { response, replayed: false }
    }
}

/// The earlier response for this key, if the same request was already made; an error if
/// the key was used with a different request.
pub(crate) async fn replay(
    repo: &dyn IdempotencyRepository,
    actor: &Principal,
    request: Option<&IdempotencyRequest>,
    now: OffsetDateTime,
) -> Result<Option<Written>, ServiceError> {
    let Some(request) = request else { return Ok(None) };
    match repo.find(actor.client_id, &request.key, now).await? {
        None => Ok(None),
        Some(record) if record.fingerprint == request.fingerprint => {
            Ok(Some(Written { response: record.response, replayed: true }))
        }
        Some(_) => Err(ServiceError::IdempotencyKeyMismatch),
    }
}

/// The record to store with the change, when the request carried a key.
pub(crate) fn record(
    actor: &Principal,
    request: Option<&IdempotencyRequest>,
    response: &StoredResponse,
    now: OffsetDateTime,
) -> Option<IdempotencyRecord> {
    request.map(|request| IdempotencyRecord {
        owner: actor.client_id,
        key: request.key.clone(),
        fingerprint: request.fingerprint.clone(),
        response: response.clone(),
        created_at: now,
        expires_at: now + KEY_LIFETIME,
    })
}
