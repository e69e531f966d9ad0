//! The ports: every trait the core needs from the outside world (persistence, blob
//! storage, clock, health probes), each documented as a contract that adapters honour
//! and that the `mock` feature turns into mockall mocks for use-case tests.
//!
//! This crate holds traits and plain data only: no adapter, no I/O library.

mod access_log;
mod analytics;
mod appointments;
mod audit;
mod catalog;
mod citizens;
mod clients;
mod clock;
mod demo;
mod documents;
mod erasure;
mod error;
mod exports;
mod health;
mod idempotency;
mod missions;
mod notifications;
mod rate_limits;
mod reads;
mod representations;
mod requests;
mod scanning;
mod secrets;
mod staff;
mod storage;
mod tokens;
mod write;

pub use access_log::AccessLogRepository;
pub use analytics::{
    AnalyticsQuery, AnalyticsRepository, MissionScope, OverviewFigures, RequestCounts, RequestGroup,
    SeatCounts, ServiceFigures, StaffGroups, StageGroup, StatusCounts,
};
pub use appointments::{
    AppointmentFilter, AppointmentRepository, AvailabilityQuery, BookOutcome, SlotUpsert, StartPage,
    StartPageRequest,
};
pub use audit::{AuditFilter, AuditRepository};
pub use catalog::{ServiceTypeFilter, ServiceTypeRepository};
pub use citizens::{CitizenFilter, CitizenRepository};
pub use clients::{ClientFilter, ClientRepository};
pub use clock::{Clock, SystemClock};
pub use demo::{DemoRepository, SeededRequest};
pub use documents::{DocumentFilter, DocumentRepository, ONE_LIVE_DOCUMENT};
pub use erasure::{Erased, Erasure, ErasureRepository};
pub use error::RepoError;
pub use exports::{ExportRepository, ONE_RUNNING_EXPORT};
pub use health::HealthCheck;
pub use idempotency::{IdempotencyRecord, IdempotencyRepository, StoredOutcome};
pub use missions::MissionRepository;
pub use notifications::{Backlog, Claim, MailError, Mailer, NotificationRepository, NotificationWithEmail};
pub use rate_limits::RateLimitRepository;
pub use reads::{Consistency, WriteMarks};
pub use representations::{ActingFacts, ONE_REPRESENTATION, RepresentationRepository};
pub use requests::{Message, Note, QueueGroup, RequestFilter, RequestRecord, RequestRepository};
pub use scanning::{MalwareScanner, ScanError, ScanSession, ScanVerdict};
pub use secrets::{ServiceSecretRepository, StoredSecret};
pub use staff::{StaffFilter, StaffRepository};
pub use storage::{BlobChunks, BlobError, BlobListing, BlobMeta, BlobRead, BlobStore, BlobUpload, ByteRange};
pub use tokens::{
    KeyProtection, RefreshOutcome, RefreshReplacement, RefreshTokenRecord, Revocation, RevocationKind,
    SigningKeyRecord, SigningKeyRepository, TokenRepository,
};
pub use write::{OutboxEvent, WriteMeta};

#[cfg(feature = "mock")]
pub use access_log::MockAccessLogRepository;
#[cfg(feature = "mock")]
pub use analytics::MockAnalyticsRepository;
#[cfg(feature = "mock")]
pub use appointments::MockAppointmentRepository;
#[cfg(feature = "mock")]
pub use audit::MockAuditRepository;
#[cfg(feature = "mock")]
pub use catalog::MockServiceTypeRepository;
#[cfg(feature = "mock")]
pub use citizens::MockCitizenRepository;
#[cfg(feature = "mock")]
pub use clients::MockClientRepository;
#[cfg(feature = "mock")]
pub use clock::MockClock;
#[cfg(feature = "mock")]
pub use demo::MockDemoRepository;
#[cfg(feature = "mock")]
pub use documents::MockDocumentRepository;
#[cfg(feature = "mock")]
pub use erasure::MockErasureRepository;
#[cfg(feature = "mock")]
pub use exports::MockExportRepository;
#[cfg(feature = "mock")]
pub use health::MockHealthCheck;
#[cfg(feature = "mock")]
pub use idempotency::MockIdempotencyRepository;
#[cfg(feature = "mock")]
pub use missions::MockMissionRepository;
#[cfg(feature = "mock")]
pub use notifications::{MockMailer, MockNotificationRepository};
#[cfg(feature = "mock")]
pub use rate_limits::MockRateLimitRepository;
#[cfg(feature = "mock")]
pub use reads::MockWriteMarks;
#[cfg(feature = "mock")]
pub use representations::MockRepresentationRepository;
#[cfg(feature = "mock")]
pub use requests::MockRequestRepository;
#[cfg(feature = "mock")]
pub use scanning::{MockMalwareScanner, MockScanSession};
#[cfg(feature = "mock")]
pub use secrets::MockServiceSecretRepository;
#[cfg(feature = "mock")]
pub use staff::MockStaffRepository;
#[cfg(feature = "mock")]
pub use storage::{MockBlobStore, MockBlobUpload};
#[cfg(feature = "mock")]
pub use tokens::{MockSigningKeyRepository, MockTokenRepository};
