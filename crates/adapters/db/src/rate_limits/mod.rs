//! Attempt counters shared by every node: the `rate_limits` table and
//! [`RateLimitRepository`] (docs/appointments.md "Attempt caps").

use crate::shared::repository;
use consular_domain::rate::RateKey;
use consular_ports::RateLimitRepository;
use time::OffsetDateTime;

diesel::table! {
    use diesel::sql_types::*;
    use crate::shared::sql_types::PortableTimestamp;

    rate_limits (key) {
        key -> Text,
        window_start -> PortableTimestamp,
        count -> Integer,
    }
}

/// The unique constraints of `rate_limits` (see `crate::error`): the key, which the
/// counting statement's `ON CONFLICT` resolves, so it never reaches a caller.
pub(crate) const UNIQUE_CONSTRAINTS: &[(&str, &str)] = &[("rate_limits_pkey", "rate_limits.key")];

repository! {
    impl RateLimitRepository for Database => rate_limits {
        fn count_attempt(keys: &[RateKey], window: OffsetDateTime) -> Vec<u32>;
    }
}
