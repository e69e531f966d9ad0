//! The demo data set (`consular demo seed`): a deterministic generator of missions,
//! catalog, staff, citizens and requests with realistic histories (`generate.rs`, pure),
//! and [`DemoService`], which loads it through the [`DemoRepository`] port batch by batch.
//!
//! Seeded data is history, not activity: it is written without audit entries or outbox
//! events (see the port), so loading it sends no notification.
//!
//! Every code of the data set carries the seed (missions `gb-demo-s1-001`, service types
//! `demo_s1_passport_renewal`): seeding the same seed twice into one database is refused
//! by the first transaction (`Conflict` on the mission code) and stores nothing more;
//! another seed adds another, independent data set beside it.

mod generate;
#[cfg(test)]
mod tests;
mod vocabulary;

pub use generate::{CitizenBatches, DemoError, DemoPlan, Generator, RequestBatches};

use crate::ServiceError;
use consular_ports::{Clock, DemoRepository};
use std::sync::Arc;

/// Rows per call of the port (and per transaction).
pub const BATCH: usize = 1_000;

/// What to seed; `now` comes from the clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeedOptions {
    pub missions: u32,
    pub requests: u64,
    pub seed: u64,
    pub days: u32,
}

/// What was stored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SeedCounts {
    pub missions: u64,
    pub service_types: u64,
    pub staff: u64,
    pub citizens: u64,
    pub requests: u64,
    pub history_entries: u64,
}

/// The ports the demo loader needs.
#[derive(Clone)]
pub struct DemoPorts {
    pub demo: Arc<dyn DemoRepository>,
    pub clock: Arc<dyn Clock>,
}

#[derive(Clone)]
pub struct DemoService {
    ports: DemoPorts,
}

impl DemoService {
    pub fn new(ports: DemoPorts) -> Self {
        DemoService { ports }
    }

    /// Generates the data set of `options` ending now and stores it: the reference data
    /// in one transaction, then citizens and requests in transactions of [`BATCH`] rows.
    /// `progress` is called after each batch with the counts so far. A failure leaves the
    /// batches already stored (the data set is then incomplete: use a fresh database or
    /// another seed).
    pub async fn seed(
        &self,
        options: SeedOptions,
        progress: impl FnMut(&SeedCounts),
    ) -> Result<SeedCounts, ServiceError> {
        let plan = DemoPlan {
            missions: options.missions,
            requests: options.requests,
            seed: options.seed,
            days: options.days,
            now: self.ports.clock.now(),
        };
        self.seed_plan(plan, progress).await
    }

    /// As [`DemoService::seed`], for an explicit plan (its `now` included).
    pub async fn seed_plan(
        &self,
        plan: DemoPlan,
        mut progress: impl FnMut(&SeedCounts),
    ) -> Result<SeedCounts, ServiceError> {
        let generator = Generator::new(plan).map_err(error)?;
        self.ports
            .demo
            .insert_reference(generator.missions(), generator.service_types(), generator.staff())
            .await?;
        let mut counts = SeedCounts {
            missions: generator.missions().len() as u64,
            service_types: generator.service_types().len() as u64,
            staff: generator.staff().len() as u64,
            ..SeedCounts::default()
        };
        progress(&counts);
        for citizens in generator.citizens(BATCH) {
            self.ports.demo.insert_citizens(&citizens).await?;
            counts.citizens += citizens.len() as u64;
            progress(&counts);
        }
        for requests in generator.requests(BATCH) {
            let requests = requests.map_err(error)?;
            self.ports.demo.insert_requests(&requests).await?;
            counts.requests += requests.len() as u64;
            counts.history_entries += requests.iter().map(|r| r.history.len() as u64).sum::<u64>();
            progress(&counts);
        }
        self.ports.demo.finish_requests().await?;
        Ok(counts)
    }
}

fn error(error: DemoError) -> ServiceError {
    match error {
        DemoError::Plan(errors) => ServiceError::Validation(errors),
        other => ServiceError::Internal(other.to_string()),
    }
}
