//! The ports: every trait the core needs from the outside world (persistence, blob
//! storage, clock, health probes), each documented as a contract that adapters honour
//! and that the `mock` feature turns into mockall mocks for use-case tests.
//!
//! This crate holds traits and plain data only: no adapter, no I/O library.

mod clock;
mod error;
mod health;
mod reference;
mod repos;
mod requests;
mod storage;
mod tokens;
mod write;

pub use clock::{Clock, SystemClock};
pub use error::RepoError;
pub use health::HealthCheck;
pub use reference::{
    AuditFilter, AuditRepository, CitizenFilter, CitizenRepository, ServiceTypeFilter, ServiceTypeRepository,
    StaffFilter, StaffRepository,
};
pub use repos::{ClientFilter, ClientRepository, IdempotencyRepository, MissionRepository};
pub use requests::{Message, Note, QueueGroup, RequestFilter, RequestRepository};
pub use storage::{BlobError, BlobStore};
pub use tokens::{
    RefreshOutcome, RefreshReplacement, RefreshTokenRecord, Revocation, RevocationKind, SigningKeyRecord,
    SigningKeyRepository, TokenRepository,
};
pub use write::{IdempotencyRecord, OutboxEvent, StoredOutcome, WriteMeta};

#[cfg(feature = "mock")]
pub use clock::MockClock;
#[cfg(feature = "mock")]
pub use health::MockHealthCheck;
#[cfg(feature = "mock")]
pub use reference::{
    MockAuditRepository, MockCitizenRepository, MockServiceTypeRepository, MockStaffRepository,
};
#[cfg(feature = "mock")]
pub use repos::{MockClientRepository, MockIdempotencyRepository, MockMissionRepository};
#[cfg(feature = "mock")]
pub use requests::MockRequestRepository;
#[cfg(feature = "mock")]
pub use storage::MockBlobStore;
#[cfg(feature = "mock")]
pub use tokens::{MockSigningKeyRepository, MockTokenRepository};
