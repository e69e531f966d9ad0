//! Probes: [`HealthCheck`] and [`Database::count_rows`](crate::Database::count_rows).

use crate::Database;
use crate::shared::{repository, run};
use async_trait::async_trait;
use consular_ports::HealthCheck;

// `name` is not a query: this port is written by hand rather than with `repository!`.
#[async_trait]
impl HealthCheck for Database {
    fn name(&self) -> &'static str {
        "database"
    }

    async fn check(&self) -> Result<(), String> {
        run!(self, health::ping()).map_err(|e| e.to_string())
    }
}

repository! {
    impl Database => health {
        /// The number of rows in `table` (one of the schema's tables); for tests.
        #[doc(hidden)]
        pub fn count_rows(table: &str) -> i64;
    }
}
