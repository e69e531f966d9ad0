//! Readiness: every dependency the service needs, checked now.

use consular_ports::HealthCheck;
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckResult {
    pub name: &'static str,
    pub error: Option<String>,
}

#[derive(Clone)]
pub struct HealthService {
    checks: Vec<Arc<dyn HealthCheck>>,
}

impl HealthService {
    pub fn new(checks: Vec<Arc<dyn HealthCheck>>) -> Self {
        HealthService { checks }
    }

    /// Runs every check; the service is ready when all pass.
    pub async fn readiness(&self) -> (bool, Vec<CheckResult>) {
        let mut results = Vec::with_capacity(self.checks.len());
        for check in &self.checks {
            results.push(CheckResult { name: check.name(), error: check.check().await.err() });
        }
        (results.iter().all(|r| r.error.is_none()), results)
    }
}
