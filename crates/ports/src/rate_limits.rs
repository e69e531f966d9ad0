//! Counters of attempts per window, shared by every node (docs/appointments.md "Attempt
//! caps"): the port that moves them.

use crate::RepoError;
use async_trait::async_trait;
use consular_domain::rate::RateKey;
use time::OffsetDateTime;

/// Fixed-window counters, one per key, kept where every node sees them.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait RateLimitRepository: Send + Sync {
    /// Counts one attempt under each of `keys` (distinct) in the window starting at
    /// `window` (`consular_domain::rate::window_of`), and returns each key's count after
    /// it, in the order of `keys`. A key whose stored window is older starts again at 1;
    /// one whose stored window is newer (a node whose clock is behind) is counted into
    /// that newer window, never resetting it. All keys are counted in one statement that
    /// commits on its own, whatever the caller does next: an attempt refused later still
    /// counts. Concurrent calls for one key each get a different count (no increment is
    /// lost). No keys: nothing is done.
    async fn count_attempt(&self, keys: &[RateKey], window: OffsetDateTime) -> Result<Vec<u32>, RepoError>;
}
