//! Prometheus metrics of the HTTP layer, served at `/metrics`.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::sync::atomic::AtomicU64;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    pub method: String,
    /// The route template (`/api/v1/missions/{id}`), never the raw path, so ids do not
    /// become label values.
    pub route: String,
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct LatencyLabels {
    pub method: String,
    pub route: String,
}

pub struct Metrics {
    registry: Registry,
    pub requests: Family<RequestLabels, Counter>,
    pub latency: Family<LatencyLabels, Histogram, fn() -> Histogram>,
    /// Undelivered outbox events (set at each scrape: docs/notifications.md).
    pub outbox_pending: Gauge,
    /// How long the oldest undelivered event has waited, in seconds (0 when none).
    pub outbox_oldest_age: Gauge<f64, AtomicU64>,
    /// Emails not yet delivered or failed for good.
    pub emails_unsent: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("consular");
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::<LatencyLabels, Histogram>::new_with_constructor(
            (|| Histogram::new(exponential_buckets(0.0005, 2.0, 16))) as fn() -> Histogram,
        );
        registry.register("http_requests", "HTTP requests answered", requests.clone());
        registry.register("http_request_duration_seconds", "Time to answer HTTP requests", latency.clone());
        let outbox_pending = Gauge::default();
        let outbox_oldest_age = Gauge::<f64, AtomicU64>::default();
        let emails_unsent = Gauge::default();
        registry.register("outbox_pending_events", "Outbox events not yet delivered", outbox_pending.clone());
        registry.register(
            "outbox_oldest_pending_age_seconds",
            "Age of the oldest undelivered outbox event (the worker's lag)",
            outbox_oldest_age.clone(),
        );
        registry.register(
            "emails_unsent",
            "Emails neither delivered nor failed for good",
            emails_unsent.clone(),
        );
        Metrics { registry, requests, latency, outbox_pending, outbox_oldest_age, emails_unsent }
    }
}

impl Metrics {
    pub fn encode(&self) -> Result<String, std::fmt::Error> {
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)?;
        Ok(out)
    }
}
