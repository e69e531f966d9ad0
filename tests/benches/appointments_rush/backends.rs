//! The CPU of the bench database's own PostgreSQL backends (the nodes' connections), read
//! from `/proc`: the database's cost of the rush. The machine-wide "postgres" share of
//! `CpuSample` also counts the other databases of the shared test cluster (other tests
//! running beside the bench) and the cluster's background processes.

use consular_tests::bench::{Result, TICKS_PER_SECOND, psql, stat_ticks};
use std::collections::HashMap;

/// CPU ticks of each backend connected to the bench's database, but the sampling one.
pub(crate) struct Backends(HashMap<u32, u64>);

impl Backends {
    pub(crate) async fn sample(url: &str) -> Result<Backends> {
        let pids = psql(
            url,
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        .await?;
        let mut ticks = HashMap::new();
        for pid in pids.lines().filter_map(|l| l.trim().parse::<u32>().ok()) {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            if let Some((_, used)) = stat_ticks(&stat) {
                ticks.insert(pid, used);
            }
        }
        Ok(Backends(ticks))
    }

    /// Seconds of CPU the backends alive now used since `before`; one that connected in
    /// between counts whole (a pool's connections stay open, so none is lost by closing).
    pub(crate) fn since(&self, before: &Backends) -> f64 {
        let ticks: u64 =
            self.0.iter().map(|(pid, now)| now.saturating_sub(before.0.get(pid).copied().unwrap_or(0))).sum();
        ticks as f64 / TICKS_PER_SECOND
    }
}
