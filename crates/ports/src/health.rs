use async_trait::async_trait;

/// A dependency the readiness probe checks.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait HealthCheck: Send + Sync {
    /// A short name shown in the readiness report (`database`, `storage`).
    fn name(&self) -> &'static str;
    /// `Ok` when the dependency answers now; the error text is for operators.
    async fn check(&self) -> Result<(), String>;
}
