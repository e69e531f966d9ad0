//! `Idempotency-Key` handling shared by every creating use case: look the key up before
//! doing anything, and store the outcome in the same transaction as the change.
//!
//! What is stored is what the core knows — the created resource's id and a snapshot of
//! the created object — never an HTTP response: the delivery layer renders a replay from
//! the snapshot exactly as it rendered the first answer (docs/architecture.md, "Writes").

use crate::ServiceError;
use consular_domain::Principal;
use consular_ports::{IdempotencyRecord, IdempotencyRepository, StoredOutcome};
use serde::Serialize;
use serde::de::DeserializeOwned;
use time::{Duration, OffsetDateTime};
use uuid::Uuid;

/// How long a key is remembered.
pub const KEY_LIFETIME: Duration = Duration::hours(24);

/// The key a client sent and the fingerprint (method, path, body) of its request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyRequest {
    pub key: String,
    pub fingerprint: String,
}

/// What a creating use case returns: the created object and whether it is the replay of
/// an earlier request with the same key (then it is the snapshot stored by that request,
/// without anything shown only once, such as a client secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created<T> {
    pub value: T,
    pub replayed: bool,
}

impl<T> Created<T> {
    pub fn fresh(value: T) -> Self {
        Created { value, replayed: false }
    }

    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Created<U> {
        Created { value: f(self.value), replayed: self.replayed }
    }
}

/// The snapshot stored by an earlier request with the same key and the same fingerprint,
/// if there was one; an error if the key was used with a different request.
pub(crate) async fn replay<S: DeserializeOwned>(
    repo: &dyn IdempotencyRepository,
    actor: &Principal,
    request: Option<&IdempotencyRequest>,
    now: OffsetDateTime,
) -> Result<Option<Created<S>>, ServiceError> {
    let Some(request) = request else { return Ok(None) };
    match repo.find(actor.client_id, &request.key, now).await? {
        None => Ok(None),
        Some(record) if record.fingerprint == request.fingerprint => {
            let value = serde_json::from_value(record.outcome.snapshot).map_err(|e| {
                ServiceError::Internal(format!("idempotency record of key `{}`: {e}", request.key))
            })?;
            Ok(Some(Created { value, replayed: true }))
        }
        Some(_) => Err(ServiceError::IdempotencyKeyMismatch),
    }
}

/// The record to store with the change, when the request carried a key: `snapshot` is
/// what [`replay`] will return for the resource `resource_id`.
pub(crate) fn record<S: Serialize>(
    actor: &Principal,
    request: Option<&IdempotencyRequest>,
    resource_id: Uuid,
    snapshot: &S,
    now: OffsetDateTime,
) -> Result<Option<IdempotencyRecord>, ServiceError> {
    let Some(request) = request else { return Ok(None) };
    let snapshot = serde_json::to_value(snapshot)
        .map_err(|e| ServiceError::Internal(format!("snapshot of {resource_id}: {e}")))?;
    Ok(Some(IdempotencyRecord {
        owner: actor.client_id,
        key: request.key.clone(),
        fingerprint: request.fingerprint.clone(),
        outcome: StoredOutcome { resource_id, snapshot },
        created_at: now,
        expires_at: now + KEY_LIFETIME,
    }))
}
