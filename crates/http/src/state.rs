//! What every handler can reach: the use cases, the readiness probe, the metrics and the
//! per-node rate limiters.

use crate::metrics::Metrics;
use crate::spec::ApiSpec;
use consular_application::audit::AuditService;
use consular_application::auth::TokenService;
use consular_application::catalog::CatalogService;
use consular_application::citizens::CitizenService;
use consular_application::clients::ClientService;
use consular_application::health::HealthService;
use consular_application::missions::MissionService;
use consular_application::requests::RequestService;
use consular_application::staff::StaffService;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;

pub struct AppState {
    pub missions: MissionService,
    pub clients: ClientService,
    pub catalog: CatalogService,
    pub citizens: CitizenService,
    pub staff: StaffService,
    pub audit: AuditService,
    pub requests: RequestService,
    pub tokens: TokenService,
    pub health: HealthService,
    pub metrics: Arc<Metrics>,
    pub spec: Arc<ApiSpec>,
    pub token_limits: TokenRateLimits,
}

/// Rate limits of `/auth/token` and `/auth/refresh`, per client and per address.
pub struct TokenRateLimits {
    pub per_client: DefaultKeyedRateLimiter<String>,
    pub per_address: DefaultKeyedRateLimiter<IpAddr>,
}

impl TokenRateLimits {
    /// `per_minute` requests per minute for each client and for each address, with a
    /// burst of the same size.
    pub fn new(per_minute: NonZeroU32) -> Self {
        let quota = Quota::per_minute(per_minute);
        TokenRateLimits { per_client: RateLimiter::keyed(quota), per_address: RateLimiter::keyed(quota) }
    }

    /// Forgets keys whose limit has fully recovered. The per-client limiter is keyed by
    /// whatever client id a request presents, before authentication, so without this an
    /// attacker sending random ids would grow it without bound.
    pub fn forget_idle(&self) {
        self.per_client.retain_recent();
        self.per_client.shrink_to_fit();
        self.per_address.retain_recent();
        self.per_address.shrink_to_fit();
    }
}
