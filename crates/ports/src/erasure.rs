//! Retention and erasure's port (docs/data-protection.md "Retention and erasure").

use crate::{RepoError, WriteMeta};
use async_trait::async_trait;
use consular_domain::erasure::RetainedRequest;
use consular_domain::{Citizen, CitizenId, RequestId, ServiceTypeId};
use time::OffsetDateTime;

/// One erasure of a citizen, decided by the use case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Erasure {
    /// The citizen erased (`erasure::erased`), written over the stored row if that is still
    /// at `expected_version`; `None` when the citizen was erased before (the row is
    /// never written again).
    pub citizen: Option<(Citizen, i64)>,
    /// The citizen whose data goes.
    pub citizen_id: CitizenId,
    /// The requests deleted (`erasure::plan`): those no retention period holds.
    pub requests: Vec<RequestId>,
    /// When.
    pub at: OffsetDateTime,
}

/// What an erasure or a retention deletion left to do after its commit: the blobs of the
/// documents it made tombstones, to be deleted from the blob store (any left behind are
/// collected by the orphan sweep, whose known keys are the live documents' only).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Erased {
    pub blob_keys: Vec<String>,
    /// [`ErasureRepository::delete_requests`] only: the requests asked for that were
    /// already gone (another node's sweep deleted them since they were listed). When any
    /// is, nothing was written, and the caller asks again without them.
    pub gone: Vec<RequestId>,
}

/// Retention and erasure over every table that holds a citizen's data.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait ErasureRepository: Send + Sync {
    /// Every request of the citizen with its type's retention, in id order.
    async fn requests_of(&self, citizen: CitizenId) -> Result<Vec<RetainedRequest>, RepoError>;

    /// Erases in one transaction: locks the citizen row first (a request, document or
    /// appointment inserted for them waits for the commit, then is refused by the
    /// database), writes the erased row (`VersionConflict` if it moved), deletes
    /// `erasure.requests` as [`ErasureRepository::delete_requests`] does, makes every
    /// document of the citizen not attached to a request that stays a scrubbed tombstone,
    /// deletes the citizen's appointments of no request that stays, the notifications
    /// (and their emails) addressed to the citizen or about what went, the outbox events
    /// about what went, their idempotency records and notification preferences, and
    /// clears the client address of the audit entries the citizen wrote. Stores `meta`
    /// (the audit entry of the erasure) in the same transaction.
    async fn erase(&self, erasure: &Erasure, meta: &WriteMeta) -> Result<Erased, RepoError>;

    /// Ended requests of `service_type` closed before `ended_before` (their retention ran
    /// out), oldest end first, at most `limit`.
    async fn expired_requests(
        &self,
        service_type: ServiceTypeId,
        ended_before: OffsetDateTime,
        limit: i64,
    ) -> Result<Vec<RequestId>, RepoError>;

    /// Deletes the requests with their history, messages, notes, stage spells,
    /// appointments (a booked seat is given back), notifications, emails, outbox events
    /// and idempotency records; their documents become scrubbed tombstones attached to no
    /// request. One transaction, with `meta`. The requests are locked first; if any is
    /// already gone, nothing is written (no audit entry names a request this call did
    /// not delete) and `Erased::gone` names them.
    async fn delete_requests(
        &self,
        requests: &[RequestId],
        at: OffsetDateTime,
        meta: &WriteMeta,
    ) -> Result<Erased, RepoError>;
}
