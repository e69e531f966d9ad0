//! Every use case, wired once at start-up and shared by whatever drives them (the HTTP
//! server, the command line, the background tasks), so that the list of services exists
//! in one place only: [`Services::new`] builds each from the one [`Adapters`] the
//! application runs on and the [`ServiceConfig`] read at start-up.
//!
//! Each service takes its area's `<Area>Ports` (plain structs of `Arc<dyn Port>`, which
//! unit tests fill with mocks); in production each is built `From` the [`Adapters`]
//! (`adapters.rs`, which the areas use and this file re-exports). A new area adds its
//! field, its `From` bound and its line in [`Services::new`] here, and nothing in the
//! binary.

use crate::access_log::{AccessLogPorts, AccessLogService};
use crate::analytics::{AnalyticsPorts, AnalyticsService};
use crate::appointments::{AppointmentPorts, AppointmentService, AvailabilityCache};
use crate::audit::{AuditPorts, AuditService};
use crate::auth::{RevocationCache, SigningKeys, TokenConfig, TokenPorts, TokenService};
use crate::catalog::{CatalogPorts, CatalogService};
use crate::citizens::{CitizenPorts, CitizenService};
use crate::clients::{ClientPorts, ClientService};
use crate::documents::signed_url::UrlSigner;
use crate::documents::{DocumentConfig, DocumentPorts, DocumentService};
use crate::erasure::{ErasurePorts, ErasureService};
use crate::exports::{ExportConfig, ExportPorts, ExportService};
use crate::health::{HealthPorts, HealthService};
use crate::missions::{MissionPorts, MissionService};
use crate::notifications::{NotificationPorts, NotificationService, WorkerConfig};
use crate::reads::{ReadPorts, ReadService};
use crate::representation::{RepresentationPorts, RepresentationService};
use crate::requests::{RequestPorts, RequestService};
use crate::staff::{StaffPorts, StaffService};
use consular_ports::HealthCheck;
use std::sync::Arc;

pub use crate::adapters::Adapters;

/// The use cases of one node. Cloning is cheap: each service holds shared handles.
#[derive(Clone)]
pub struct Services {
    pub missions: MissionService,
    pub clients: ClientService,
    pub catalog: CatalogService,
    pub citizens: CitizenService,
    pub staff: StaffService,
    pub audit: AuditService,
    pub access_log: AccessLogService,
    pub requests: RequestService,
    pub documents: DocumentService,
    pub erasure: ErasureService,
    pub exports: ExportService,
    pub representation: RepresentationService,
    pub appointments: AppointmentService,
    pub analytics: AnalyticsService,
    pub notifications: NotificationService,
    pub tokens: TokenService,
    pub health: HealthService,
    pub reads: ReadService,
}

/// What some services take besides their ports: the settings and the keys the binary
/// reads at start-up (from its configuration and, for the keys, the database).
pub struct ServiceConfig {
    /// The access tokens' signing keys, loaded (and rotated) from the database.
    pub signing_keys: SigningKeys,
    pub tokens: TokenConfig,
    /// The download URLs' key, loaded from the database.
    pub url_signer: UrlSigner,
    pub documents: DocumentConfig,
    /// How many active bookings a citizen may hold.
    pub max_active_bookings: u32,
    /// How long a node serves an availability page from memory (zero: never).
    pub availability_cache: std::time::Duration,
    /// The booking attempts a citizen and a client may make per minute (0: no cap).
    pub booking_caps: consular_domain::rate::BookingCaps,
    /// How this node's outbox worker and email sender run.
    pub worker: WorkerConfig,
    /// What readiness checks: the database, the blob store, and clamd when configured.
    pub health_checks: Vec<Arc<dyn HealthCheck>>,
}

impl Services {
    /// Every use case on `adapters`, each through its area's `<Area>Ports`, with the
    /// settings of `config`. The clients' service shares the tokens' revocation cache, so
    /// that disabling a client revokes its access tokens on this node at once; the
    /// missions' service shares the appointments' availability cache, so that a changed
    /// mission's pages are read again on this node at once.
    pub fn new<D>(adapters: &Adapters<D>, config: ServiceConfig) -> Services
    where
        for<'a> MissionPorts: From<&'a Adapters<D>>,
        for<'a> ClientPorts: From<&'a Adapters<D>>,
        for<'a> CatalogPorts: From<&'a Adapters<D>>,
        for<'a> CitizenPorts: From<&'a Adapters<D>>,
        for<'a> StaffPorts: From<&'a Adapters<D>>,
        for<'a> AuditPorts: From<&'a Adapters<D>>,
        for<'a> AccessLogPorts: From<&'a Adapters<D>>,
        for<'a> RequestPorts: From<&'a Adapters<D>>,
        for<'a> DocumentPorts: From<&'a Adapters<D>>,
        for<'a> ErasurePorts: From<&'a Adapters<D>>,
        for<'a> ExportPorts: From<&'a Adapters<D>>,
        for<'a> RepresentationPorts: From<&'a Adapters<D>>,
        for<'a> AppointmentPorts: From<&'a Adapters<D>>,
        for<'a> AnalyticsPorts: From<&'a Adapters<D>>,
        for<'a> NotificationPorts: From<&'a Adapters<D>>,
        for<'a> TokenPorts: From<&'a Adapters<D>>,
        for<'a> ReadPorts: From<&'a Adapters<D>>,
    {
        let tokens = TokenService::new(
            TokenPorts::from(adapters),
            Arc::new(config.signing_keys),
            Arc::new(RevocationCache::new()),
            config.tokens,
        );
        let availability = AvailabilityCache::new(config.availability_cache);
        let exports = ExportConfig {
            node: config.worker.node.clone(),
            download_url_ttl: config.documents.download_url_ttl,
            public_base_url: config.documents.public_base_url.clone(),
            ..ExportConfig::default()
        };
        let documents =
            DocumentService::new(DocumentPorts::from(adapters), config.url_signer, config.documents);
        Services {
            missions: MissionService::new(MissionPorts::from(adapters))
                .with_availability_cache(availability.clone()),
            clients: ClientService::new(ClientPorts::from(adapters))
                .with_revocations(tokens.revocation_cache()),
            catalog: CatalogService::new(CatalogPorts::from(adapters)),
            citizens: CitizenService::new(CitizenPorts::from(adapters)),
            staff: StaffService::new(StaffPorts::from(adapters)),
            audit: AuditService::new(AuditPorts::from(adapters)),
            access_log: AccessLogService::new(AccessLogPorts::from(adapters)),
            requests: RequestService::new(RequestPorts::from(adapters)),
            exports: ExportService::new(ExportPorts::from(adapters), documents.url_signer(), exports),
            representation: RepresentationService::new(RepresentationPorts::from(adapters)),
            documents,
            erasure: ErasureService::new(ErasurePorts::from(adapters)),
            appointments: AppointmentService::new(AppointmentPorts::from(adapters))
                .with_max_active_bookings(config.max_active_bookings)
                .with_availability_cache(availability)
                .with_booking_caps(config.booking_caps),
            analytics: AnalyticsService::new(AnalyticsPorts::from(adapters)),
            notifications: NotificationService::new(NotificationPorts::from(adapters), config.worker),
            tokens,
            health: HealthService::new(HealthPorts { checks: config.health_checks }),
            reads: ReadService::new(ReadPorts::from(adapters)),
        }
    }
}
