use time::OffsetDateTime;

/// The source of "now" for the core, so that expiry and SLA rules can be tested.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait Clock: Send + Sync {
    /// The current instant in UTC, truncated to whole microseconds: both databases
    /// store microseconds, so a value read back equals the value written.
    fn now(&self) -> OffsetDateTime;
}

#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> OffsetDateTime {
        let now = OffsetDateTime::now_utc();
        now.replace_nanosecond(now.nanosecond() / 1_000 * 1_000).unwrap_or(now)
    }
}
