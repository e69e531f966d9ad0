//! The notification use cases' service, its ports and its configuration: what the
//! worker, the sender, the facts and the inbox (`worker.rs`, `sending.rs`, `facts.rs`,
//! `inbox.rs`) all use, apart from the module that declares them.

use crate::access_log::AccessRecorder;
use crate::adapters::Adapters;
use consular_domain::notification::RetryPolicy;
use consular_ports::{
    AppointmentRepository, CitizenRepository, Clock, Mailer, MissionRepository, NotificationRepository,
    RepresentationRepository, RequestRepository, ServiceTypeRepository, StaffRepository,
};
use std::sync::Arc;
use time::Duration;

pub const PREFERENCES_RESOURCE: &str = "notification_preferences";

/// The ports the notification use cases need.
#[derive(Clone)]
pub struct NotificationPorts {
    pub notifications: Arc<dyn NotificationRepository>,
    pub requests: Arc<dyn RequestRepository>,
    pub citizens: Arc<dyn CitizenRepository>,
    pub staff: Arc<dyn StaffRepository>,
    pub missions: Arc<dyn MissionRepository>,
    pub service_types: Arc<dyn ServiceTypeRepository>,
    /// A citizen's representations, who hear of what concerns them too.
    pub representations: Arc<dyn RepresentationRepository>,
    /// An appointment's service type (which representatives' mandates cover it).
    pub appointments: Arc<dyn AppointmentRepository>,
    /// None: no SMTP server configured, in-app notifications only (no email is made).
    pub mailer: Option<Arc<dyn Mailer>>,
    /// The node's access log recorder, shared by every use case (`Services::new`).
    pub access: AccessRecorder,
    pub clock: Arc<dyn Clock>,
}

impl<D> From<&Adapters<D>> for NotificationPorts
where
    D: NotificationRepository
        + RequestRepository
        + CitizenRepository
        + StaffRepository
        + MissionRepository
        + ServiceTypeRepository
        + RepresentationRepository
        + AppointmentRepository
        + 'static,
{
    fn from(adapters: &Adapters<D>) -> Self {
        let db = &adapters.database;
        NotificationPorts {
            notifications: db.clone(),
            requests: db.clone(),
            citizens: db.clone(),
            staff: db.clone(),
            missions: db.clone(),
            service_types: db.clone(),
            representations: db.clone(),
            appointments: db.clone(),
            mailer: adapters.mailer.clone(),
            access: adapters.access.clone(),
            clock: adapters.clock.clone(),
        }
    }
}

/// How this node's worker and sender run.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerConfig {
    /// This node's name, recorded on the events and emails it handles.
    pub node: String,
    /// Events claimed at a time.
    pub batch: u32,
    /// Emails claimed at a time at most (fewer when the lease cannot cover them:
    /// [`WorkerConfig::email_claim`]).
    pub email_batch: u32,
    /// Emails sent at once by this node.
    pub send_concurrency: usize,
    /// How long a claim holds its events or emails before another node may take them
    /// over; a sender renews an email's lease to this long right before sending it, so
    /// it must exceed `send_timeout` by [`LEASE_MARGIN`](super::LEASE_MARGIN) ([`check_send_lease`](super::check_send_lease)).
    pub lease: Duration,
    /// The longest one email's send may take: the mailer's deadline (`smtp_timeout_secs`).
    pub send_timeout: Duration,
    pub retry: RetryPolicy,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        WorkerConfig {
            node: "node".to_owned(),
            batch: 100,
            email_batch: 50,
            send_concurrency: 8,
            lease: Duration::seconds(60),
            send_timeout: Duration::seconds(30),
            retry: RetryPolicy::default(),
        }
    }
}

#[derive(Clone)]
pub struct NotificationService {
    pub(super) ports: NotificationPorts,
    pub(super) config: Arc<WorkerConfig>,
}

impl NotificationService {
    pub fn new(ports: NotificationPorts, config: WorkerConfig) -> Self {
        NotificationService { ports, config: Arc::new(config) }
    }

    pub fn config(&self) -> &WorkerConfig {
        &self.config
    }

    /// Whether emails are made and sent (an SMTP server is configured).
    pub fn sends_email(&self) -> bool {
        self.ports.mailer.is_some()
    }
}
