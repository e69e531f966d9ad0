//! Optimistic concurrency shared by the changing use cases: the `If-Match` check, and the
//! retry of a change sent without one (docs/api.md "Concurrency").

use crate::ServiceError;

/// Checks an `If-Match`: `None` (`*`) matches any version, otherwise the stored version
/// must be one of those named.
pub fn require_version(expected_versions: Option<&[i64]>, stored_version: i64) -> Result<(), ServiceError> {
    if expected_versions.is_some_and(|versions| !versions.contains(&stored_version)) {
        Err(ServiceError::PreconditionFailed)
    } else {
        Ok(())
    }
}

/// How often a change without precondition is judged again after losing a race.
const RACE_RETRIES: usize = 3;

/// Runs `attempt`; when the caller named no version (`None`) and the write lost a race
/// to another change, runs it again on the new state instead of answering 412.
pub async fn retry_unconditional<T, F, Fut>(
    expected_versions: Option<&[i64]>,
    mut attempt: F,
) -> Result<T, ServiceError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, ServiceError>>,
{
    let mut tries = 0;
    loop {
        match attempt().await {
            Err(ServiceError::PreconditionFailed) if expected_versions.is_none() && tries < RACE_RETRIES => {
                tries += 1
            }
            result => return result,
        }
    }
}
