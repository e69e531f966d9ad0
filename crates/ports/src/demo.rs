//! The demo data set's port: bulk inserts of generated reference data and requests.

use crate::RepoError;
use async_trait::async_trait;
use consular_domain::{Citizen, HistoryEntry, Mission, ServiceRequest, ServiceType, StaffMember};

/// A generated request with its whole stage history, oldest entry first (the first one its
/// submission), as the domain's state machine produced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeededRequest {
    pub request: ServiceRequest,
    pub history: Vec<HistoryEntry>,
}

/// Loads a generated demo data set (`consular demo seed`) into the repositories' own
/// tables, as fast as the database allows.
///
/// **These writes bypass the audit log and the outbox on purpose**: seeded history is not
/// an event (no one did anything; no notification must be sent for a case that "closed"
/// months ago), so no `WriteMeta` is taken and nothing is written to `audit_events` or
/// `outbox_events`. Never use this port for anything a person or a client does.
///
/// Each method is one transaction: a failed call stores nothing. A row that already
/// exists (a mission code, a service type code, a citizen's passport in its mission, any
/// id) is `Duplicate { constraint }`; a request whose mission, citizen, service type or
/// assignee is not stored is a foreign-key violation (`Other`).
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait DemoRepository: Send + Sync {
    /// The missions, the service types and the staff members with their assignments.
    async fn insert_reference(
        &self,
        missions: &[Mission],
        service_types: &[ServiceType],
        staff: &[StaffMember],
    ) -> Result<(), RepoError>;
    /// A batch of citizens (their missions stored already).
    async fn insert_citizens(&self, citizens: &[Citizen]) -> Result<(), RepoError>;
    /// A batch of requests with their stage histories, each history stored in its order.
    async fn insert_requests(&self, requests: &[SeededRequest]) -> Result<(), RepoError>;
    /// After the last batch of requests: brings up to date what the batches left out of
    /// date (the analytics rollups, which millions of rows in batches would otherwise
    /// rewrite batch after batch).
    async fn finish_requests(&self) -> Result<(), RepoError>;
}
