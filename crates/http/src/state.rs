//! What every handler can reach: the use cases, the OpenAPI document with its route
//! tables, the metrics and the per-node rate limiters.

use crate::edge::EdgePolicy;
use crate::metrics::Metrics;
use crate::spec::ApiSpec;
use consular_application::Services;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::ops::Deref;
use std::sync::Arc;

pub struct AppState {
    /// The use cases, built once at start-up; handlers reach them through `Deref`
    /// (`state.requests`).
    pub services: Services,
    pub metrics: Arc<Metrics>,
    /// Built once by `consular_http::api_spec`: the state holds the document as data and
    /// does not know the routes it was generated from.
    pub spec: Arc<ApiSpec>,
    pub token_limits: TokenRateLimits,
    /// CORS origins and trusted proxies.
    pub edge: EdgePolicy,
}

impl AppState {
    pub fn new(services: Services, spec: ApiSpec, token_limits: TokenRateLimits, edge: EdgePolicy) -> Self {
        AppState { services, metrics: Arc::new(Metrics::default()), spec: Arc::new(spec), token_limits, edge }
    }
}

impl Deref for AppState {
    type Target = Services;

    fn deref(&self) -> &Services {
        &self.services
    }
}

/// Rate limits of `/auth/token`, `/auth/refresh` and `/auth/revoke` with client
/// credentials, per client and per address.
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
