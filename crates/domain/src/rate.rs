//! Caps on attempts per minute, counted across nodes in the database
//! (docs/appointments.md "Attempt caps"): the keys an attempt counts under, the window an
//! instant falls in, and the decision on the counts the database returns. Pure: the
//! counting itself is `consular_ports::RateLimitRepository`'s.

use crate::{ClientId, Principal, PrincipalKind};
use std::fmt;
use time::{Duration, OffsetDateTime, UtcOffset};

/// The length of a counting window: one clock minute.
pub const WINDOW: Duration = Duration::minutes(1);

/// The window `now` falls in: its start, `now` in UTC truncated to the minute. Every
/// node computes the same window for the same instant; a node whose clock is behind
/// computes an older one (the repository then counts into the newer stored one).
pub fn window_of(now: OffsetDateTime) -> OffsetDateTime {
    let utc = now.to_offset(UtcOffset::UTC);
    utc - Duration::seconds(i64::from(utc.second())) - Duration::nanoseconds(i64::from(utc.nanosecond()))
}

/// Whole seconds from `now` to the end of its window, rounded up, at least 1: the
/// `Retry-After` of a refused attempt.
pub fn retry_after(now: OffsetDateTime) -> u64 {
    let left = window_of(now) + WINDOW - now;
    let nanos = u128::try_from(left.whole_nanoseconds()).unwrap_or(0);
    u64::try_from(nanos.div_ceil(1_000_000_000)).unwrap_or(1).max(1)
}

/// What is counted, and for whom: the stored key of a counter row. Namespaced
/// (`<what>:<whose kind>:<id>`) so that one table can count other things later.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RateKey(String);

impl RateKey {
    /// The booking attempts (books and reschedules) of citizen `subject`.
    pub fn booking_by_citizen(subject: &Principal) -> RateKey {
        RateKey(format!("booking:citizen:{}", subject.subject.id))
    }

    /// The booking attempts sent through API client `client`, whoever they are for.
    pub fn booking_by_client(client: ClientId) -> RateKey {
        RateKey(format!("booking:client:{client}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Which cap an attempt is counted against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapKind {
    /// Per citizen booking themself (the caller's subject).
    Citizen,
    /// Per API client (the token's `client_id`), whoever the caller is.
    Client,
}

impl fmt::Display for CapKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CapKind::Citizen => "citizen",
            CapKind::Client => "client",
        })
    }
}

/// The booking attempts allowed per minute (`booking_attempts_per_citizen_per_minute`,
/// `booking_attempts_per_client_per_minute`); 0 disables a cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BookingCaps {
    pub per_citizen: u32,
    pub per_client: u32,
}

impl BookingCaps {
    pub const DEFAULT: BookingCaps = BookingCaps { per_citizen: 10, per_client: 120 };
    pub const OFF: BookingCaps = BookingCaps { per_citizen: 0, per_client: 0 };

    /// The counters an attempt by `actor` moves, each with its cap, citizen first (also
    /// the keys' text order): the citizen's own when the caller is a citizen (staff and
    /// admins booking for a citizen are not capped per citizen), the client's for every
    /// caller; none for a disabled cap.
    pub fn counters(&self, actor: &Principal) -> Vec<Counter> {
        let mut counters = Vec::with_capacity(2);
        if self.per_citizen > 0 && actor.subject.kind == PrincipalKind::Citizen {
            counters.push(Counter {
                key: RateKey::booking_by_citizen(actor),
                kind: CapKind::Citizen,
                cap: self.per_citizen,
            });
        }
        if self.per_client > 0 {
            counters.push(Counter {
                key: RateKey::booking_by_client(actor.client_id),
                kind: CapKind::Client,
                cap: self.per_client,
            });
        }
        counters
    }
}

impl Default for BookingCaps {
    fn default() -> Self {
        BookingCaps::DEFAULT
    }
}

/// One counter an attempt moves and the most it may reach in a window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counter {
    pub key: RateKey,
    pub kind: CapKind,
    pub cap: u32,
}

/// An attempt over a cap: which one, and when the window ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("at most {cap} booking attempts a minute per {kind}; retry in {retry_after} s")]
pub struct Capped {
    pub kind: CapKind,
    pub cap: u32,
    /// Seconds until the window ends (rounded up, at least 1).
    pub retry_after: u64,
}

/// Allows the attempt at `now` whose counters now read `counts` (the count of each of
/// `counters` after this attempt, in the same order), or refuses it with the first cap
/// it went over. A counter without a count (none returned) is not judged.
pub fn decide(counters: &[Counter], counts: &[u32], now: OffsetDateTime) -> Result<(), Capped> {
    match counters.iter().zip(counts).find(|(counter, count)| **count > counter.cap) {
        Some((counter, _)) => {
            Err(Capped { kind: counter.kind, cap: counter.cap, retry_after: retry_after(now) })
        }
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MissionId, PrincipalId, ScopeSet, Subject};
    use time::macros::datetime;

    #[test]
    fn the_window_is_the_clock_minute_in_utc() {
        for (now, window) in [
            (datetime!(2026-11-27 09:00:00 UTC), datetime!(2026-11-27 09:00:00 UTC)),
            (datetime!(2026-11-27 09:00:00.000001 UTC), datetime!(2026-11-27 09:00:00 UTC)),
            (datetime!(2026-11-27 09:00:59.999999 UTC), datetime!(2026-11-27 09:00:00 UTC)),
            (datetime!(2026-11-27 09:01:00 UTC), datetime!(2026-11-27 09:01:00 UTC)),
            (datetime!(2026-11-27 23:59:30 UTC), datetime!(2026-11-27 23:59:00 UTC)),
            // Another offset: the same instant, the same window.
            (datetime!(2026-11-27 10:30:15 +01:30), datetime!(2026-11-27 09:00:00 UTC)),
        ] {
            assert_eq!(window_of(now), window, "{now}");
            assert_eq!(window_of(now).offset(), UtcOffset::UTC, "{now}");
        }
    }

    #[test]
    fn retry_after_is_the_rest_of_the_window_rounded_up_and_at_least_one_second() {
        for (now, seconds) in [
            (datetime!(2026-11-27 09:00:00 UTC), 60),
            (datetime!(2026-11-27 09:00:00.5 UTC), 60),
            (datetime!(2026-11-27 09:00:01 UTC), 59),
            (datetime!(2026-11-27 09:00:58.2 UTC), 2),
            (datetime!(2026-11-27 09:00:59 UTC), 1),
            (datetime!(2026-11-27 09:00:59.999999 UTC), 1),
        ] {
            assert_eq!(retry_after(now), seconds, "{now}");
        }
    }

    fn caller(kind: PrincipalKind) -> Principal {
        Principal {
            subject: Subject { kind, id: PrincipalId(uuid::Uuid::from_u128(7)) },
            client_id: ClientId(uuid::Uuid::from_u128(9)),
            mission: Some(MissionId(uuid::Uuid::from_u128(1))),
            scopes: ScopeSet::default(),
            address: None,
            acting_for: None,
        }
    }

    #[test]
    fn a_citizen_counts_per_citizen_and_per_client_staff_and_admins_per_client_only() {
        let citizen_key = "booking:citizen:00000000-0000-0000-0000-000000000007";
        let client_key = "booking:client:00000000-0000-0000-0000-000000000009";
        for (kind, caps, expected) in [
            (
                PrincipalKind::Citizen,
                BookingCaps::DEFAULT,
                vec![(citizen_key, CapKind::Citizen, 10), (client_key, CapKind::Client, 120)],
            ),
            (PrincipalKind::Staff, BookingCaps::DEFAULT, vec![(client_key, CapKind::Client, 120)]),
            (PrincipalKind::Admin, BookingCaps::DEFAULT, vec![(client_key, CapKind::Client, 120)]),
            (
                PrincipalKind::Citizen,
                BookingCaps { per_citizen: 0, per_client: 5 },
                vec![(client_key, CapKind::Client, 5)],
            ),
            (
                PrincipalKind::Citizen,
                BookingCaps { per_citizen: 3, per_client: 0 },
                vec![(citizen_key, CapKind::Citizen, 3)],
            ),
            (PrincipalKind::Staff, BookingCaps { per_citizen: 3, per_client: 0 }, vec![]),
            (PrincipalKind::Citizen, BookingCaps::OFF, vec![]),
        ] {
            let counters = caps.counters(&caller(kind));
            let got: Vec<_> = counters.iter().map(|c| (c.key.as_str(), c.kind, c.cap)).collect();
            assert_eq!(got, expected, "{kind:?} {caps:?}");
            // Citizen first is also text order: the repository locks rows in that order.
            assert!(counters.windows(2).all(|w| w[0].key < w[1].key), "{counters:?}");
        }
    }

    #[test]
    fn an_attempt_over_a_cap_is_refused_naming_the_first_cap_it_went_over() {
        let now = datetime!(2026-11-27 09:00:45.25 UTC);
        let counters = BookingCaps::DEFAULT.counters(&caller(PrincipalKind::Citizen));
        let capped = |kind, cap| Err(Capped { kind, cap, retry_after: 15 });
        for (counts, expected) in [
            (vec![1, 1], Ok(())),
            (vec![10, 120], Ok(())),
            (vec![11, 5], capped(CapKind::Citizen, 10)),
            (vec![3, 121], capped(CapKind::Client, 120)),
            (vec![11, 121], capped(CapKind::Citizen, 10)),
            (vec![u32::MAX, 1], capped(CapKind::Citizen, 10)),
            // Nothing counted (every cap disabled): nothing to refuse.
            (vec![], Ok(())),
        ] {
            assert_eq!(decide(&counters, &counts, now), expected, "{counts:?}");
        }
        assert_eq!(decide(&[], &[], now), Ok(()));
    }

    #[test]
    fn the_refusal_names_the_cap() {
        let capped = Capped { kind: CapKind::Client, cap: 120, retry_after: 7 };
        assert_eq!(capped.to_string(), "at most 120 booking attempts a minute per client; retry in 7 s");
    }
}
