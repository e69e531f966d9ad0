//! Waiting for what the server does in the background.

use std::future::Future;
use std::time::{Duration, Instant};

/// Polls `check` every 50 ms until it holds; panics with `what` after `timeout`. Returns
/// how long it took.
pub async fn eventually<F, Fut>(timeout: Duration, what: &str, mut check: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let started = Instant::now();
    loop {
        if check().await {
            return started.elapsed();
        }
        if started.elapsed() > timeout {
            panic!("{what}: still not the case after {timeout:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
