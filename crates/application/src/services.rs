//! Every use case, wired once at start-up and shared by whatever drives them (the HTTP
//! server, the command line, the background tasks), so that the list of services exists
//! in one place only.
//!
//! Each service takes its area's `<Area>Ports` (plain structs of `Arc<dyn Port>`, which
//! unit tests fill with mocks); in production each is built `From` the one [`Adapters`]
//! the application runs on (`adapters.rs`, which the areas use and this file re-exports).

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
    pub requests: RequestService,
    pub documents: DocumentService,
    pub appointments: AppointmentService,
    pub analytics: AnalyticsService,
    pub notifications: NotificationService,
    pub tokens: TokenService,
    pub health: HealthService,
}
