//! Readiness: every dependency the service needs, checked now.

use consular_ports::HealthCheck;
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckResult {
    pub name: &'static str,
    pub error: Option<String>,
}

/// What the readiness check looks at: every dependency that has a health check (the
/// database, the blob store, the scanner when there is one), named by the wiring.
#[derive(Clone)]
pub struct HealthPorts {
    pub checks: Vec<Arc<dyn HealthCheck>>,
}

#[derive(Clone)]
pub struct HealthService {
    ports: HealthPorts,
}

impl HealthService {
    pub fn new(ports: HealthPorts) -> Self {
        HealthService { ports }
    }

    /// Runs every check; the service is ready when all pass.
    pub async fn readiness(&self) -> (bool, Vec<CheckResult>) {
        let mut results = Vec::with_capacity(self.ports.checks.len());
        for check in &self.ports.checks {
            results.push(CheckResult { name: check.name(), error: check.check().await.err() });
        }
        (results.iter().all(|r| r.error.is_none()), results)
    }
}
