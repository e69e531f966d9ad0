//! Every use case, wired once at start-up and shared by whatever drives them (the HTTP
//! server, the command line, the background tasks), so that the list of services exists
//! in one place only.
//!
//! Each service takes its area's `<Area>Ports` (plain structs of `Arc<dyn Port>`, which
//! unit tests fill with mocks); in production each is built `From` the one [`Adapters`]
//! the application runs on.

use crate::analytics::AnalyticsService;
use crate::appointments::AppointmentService;
use crate::audit::AuditService;
use crate::auth::TokenService;
use crate::catalog::CatalogService;
use crate::citizens::CitizenService;
use crate::clients::ClientService;
use crate::documents::DocumentService;
use crate::health::HealthService;
use crate::missions::MissionService;
use crate::notifications::NotificationService;
use crate::requests::RequestService;
use crate::staff::StaffService;
use consular_ports::{BlobStore, Clock, Mailer, MalwareScanner};
use std::sync::Arc;

/// The adapters every use case is built on: the database adapter `D`, which implements
/// every repository port (each `<Area>Ports` asks of it only the ports its area uses), the
/// blob store, the optional scanner and mailer, and the one clock. `D` stays a type
/// parameter so that this crate never names an adapter.
pub struct Adapters<D> {
    pub database: Arc<D>,
    pub blobs: Arc<dyn BlobStore>,
    /// `None`: uploads are kept unscanned.
    pub scanner: Option<Arc<dyn MalwareScanner>>,
    /// `None`: notifications are in-app only.
    pub mailer: Option<Arc<dyn Mailer>>,
    pub clock: Arc<dyn Clock>,
}

/// The use cases of one node. Cloning is cheap: each service holds shared handles.
#[derive(Clone)]
pub struct Services {
    pub missions: MissionService,
    pub clients: ClientService,
    pub catalog: CatalogService,
    pub citizens: CitizenService,
    pub staff: StaffService,
    pub audit: AuditService,
    pub requests: RequestService,
    pub documents: DocumentService,
    pub appointments: AppointmentService,
    pub analytics: AnalyticsService,
    pub notifications: NotificationService,
    pub tokens: TokenService,
    pub health: HealthService,
}
