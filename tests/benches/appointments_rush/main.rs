//! Release morning on two nodes (docs/benchmarks.md "Release morning rush", docs/appointments.md
//! "Release morning"): a mission releases 500 seats at one instant, 5 000 citizens poll its
//! availability and try to book, 20 bots hammer bookings at and beyond the per-citizen cap.
//! Run with `make bench` (or `cargo bench -p consular-tests --bench appointments_rush`).
//!
//! 1. Two server nodes in this process on one fresh database of the throwaway PostgreSQL
//!    cluster, each as the other benches run one (2 HTTP workers, a pool of 10, log level
//!    `warn`) but with the production defaults of what the morning exercises: the
//!    availability cache (`availability_cache_ms` 1000) and the booking attempt caps
//!    (`booking_attempts_per_citizen_per_minute` 10, `..._per_client_per_minute` 120).
//! 2. The population ([`seed`]): a mission, a service type, one citizen with their own
//!    API client and one request through the API; then, with SQL, 5 019 copies of the
//!    three (every citizen and bot has their own client, as a portal's citizens do, so the
//!    per-client cap is the per-citizen one; and their own request). Tokens are signed
//!    with the server's key, with the claims the token endpoint gives a citizen's client.
//! 3. The release ([`crowd`]): 100 slots of 5 seats submitted with `release_at` a few
//!    seconds ahead. Every citizen polls the mission's availability from then on
//!    (`If-None-Match`, as a browser revalidating), thinks, books one slot of the page for
//!    their request, looks again after a `slot_full`, waits `Retry-After` after a 429, and
//!    stops once booked or when the page is empty after the release (sold out); one in ten
//!    double-clicks (two bookings at once). The citizens' requests go through at most
//!    `RUSH_CONNECTIONS` (300) connections at a time; the bots have one each.
//! 4. The measures: bookings per second, p50/p99 of a booking, the share of polls answered
//!    304, the CPU of each side per booking (the database's: its own backends', from
//!    `/proc`, [`backends`]), and what the bots got.
//! 5. The checks ([`checks`]), which fail the bench: no seat overbooked and every slot's
//!    count equal to its appointments, no citizen with two bookings for one request (nor
//!    two at all), every seat booked within `RUSH_WITHIN_SECONDS` of the release and none
//!    before it, no 5xx and no answer the scenario does not expect, one appointment per
//!    201, and 429 with `Retry-After` for the bots beyond the cap.
//!
//! Knobs (environment): `RUSH_CITIZENS` (5000), `RUSH_BOTS` (20), `RUSH_SEATS` (500),
//! `RUSH_CAPACITY` (5 seats a slot), `RUSH_CONNECTIONS` (300), `RUSH_PAGE` (20, the
//! `limit` of the citizens' availability page: the API's default), `RUSH_LEAD_SECONDS` (10,
//! from the submission to the release), `RUSH_POLL_MS` (1000, a citizen's polling period
//! while nothing is open), `RUSH_THINK_MIN_MS`/`RUSH_THINK_MAX_MS` (300/2000, a human's time
//! from seeing the page to booking), `RUSH_BOT_PAUSE_MS` (20, a hammering bot's pause),
//! `RUSH_WITHIN_SECONDS` (the checked bound; see `WITHIN_SECONDS`), `RUSH_TIMEOUT_SECONDS`
//! (120).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod backends;
mod checks;
mod crowd;
mod report;
mod seed;

use consular_tests::bench::{Result, bench_main, drop_database, env_number, print_machine, psql};
use consular_tests::consular_app::Settings;
use consular_tests::serde_json;
use consular_tests::{Backend, TestApp, set_setting};
use std::process::ExitCode;
use std::time::Duration;

/// Every seat must be booked within this many seconds of the release (the default of
/// `RUSH_WITHIN_SECONDS`); docs/benchmarks.md "Release morning rush" says why this bound.
const WITHIN_SECONDS: usize = 30;

/// The settings the morning exercises, run at their defaults (docs/operations.md).
pub(crate) const PRODUCTION_DEFAULTS: [&str; 4] = [
    "availability_cache_ms",
    "booking_attempts_per_citizen_per_minute",
    "booking_attempts_per_client_per_minute",
    "max_active_bookings_per_citizen",
];

fn main() -> ExitCode {
    bench_main("appointments_rush", run)
}

/// The scenario's knobs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Knobs {
    pub(crate) citizens: usize,
    pub(crate) bots: usize,
    pub(crate) seats: usize,
    pub(crate) capacity: usize,
    pub(crate) connections: usize,
    pub(crate) page: usize,
    pub(crate) lead: Duration,
    pub(crate) poll: Duration,
    pub(crate) think_min: Duration,
    pub(crate) think_max: Duration,
    pub(crate) bot_pause: Duration,
    pub(crate) within: Duration,
    pub(crate) timeout: Duration,
}

impl Knobs {
    fn from_env() -> Result<Knobs> {
        let ms = |name: &str, default: usize| Duration::from_millis(env_number(name, default) as u64);
        let knobs = Knobs {
            citizens: env_number("RUSH_CITIZENS", 5_000),
            bots: env_number("RUSH_BOTS", 20),
            seats: env_number("RUSH_SEATS", 500),
            capacity: env_number("RUSH_CAPACITY", 5),
            connections: env_number("RUSH_CONNECTIONS", 300),
            page: env_number("RUSH_PAGE", 20),
            lead: ms("RUSH_LEAD_SECONDS", 10) * 1000,
            poll: ms("RUSH_POLL_MS", 1_000),
            think_min: ms("RUSH_THINK_MIN_MS", 300),
            think_max: ms("RUSH_THINK_MAX_MS", 2_000),
            bot_pause: ms("RUSH_BOT_PAUSE_MS", 20),
            within: ms("RUSH_WITHIN_SECONDS", WITHIN_SECONDS) * 1000,
            timeout: ms("RUSH_TIMEOUT_SECONDS", 120) * 1000,
        };
        if !knobs.seats.is_multiple_of(knobs.capacity) || knobs.capacity > 1000 {
            return Err(format!(
                "RUSH_SEATS {} is not a multiple of RUSH_CAPACITY {}",
                knobs.seats, knobs.capacity
            ));
        }
        if knobs.page > 100 {
            return Err(format!("RUSH_PAGE {} is over the API's largest page (100)", knobs.page));
        }
        if knobs.think_max < knobs.think_min || knobs.lead < Duration::from_secs(4) {
            return Err(
                "RUSH_THINK_MAX_MS must be at least RUSH_THINK_MIN_MS, RUSH_LEAD_SECONDS at least 4".into()
            );
        }
        if knobs.citizens <= knobs.seats {
            return Err(format!("{} citizens for {} seats is no rush", knobs.citizens, knobs.seats));
        }
        Ok(knobs)
    }

    pub(crate) fn slots(&self) -> usize {
        self.seats / self.capacity
    }
}

async fn run() -> Result<()> {
    let knobs = Knobs::from_env()?;
    print_machine("appointments_rush: release morning on two nodes over one PostgreSQL").await;
    let defaults =
        serde_json::to_value(Settings::default()).map_err(|e| format!("the default settings: {e}"))?;
    let first = TestApp::spawn_with(Backend::Postgres, |settings| {
        settings.workers = 2;
        settings.db_max_connections = 10;
        settings.log_level = "warn".to_owned();
        // The test harness raises the caps (its tests book many times a minute as one
        // citizen): the morning runs with what production runs.
        for key in PRODUCTION_DEFAULTS {
            if let Some(value) = defaults.get(key) {
                set_setting(settings, key, value.clone());
            }
        }
    })
    .await;
    let second = first.spawn_node().await;
    let url = first.settings.database_url.clone();
    let outcome = async {
        let server_version = psql(&url, "SHOW server_version").await?;
        println!(
            "nodes: {} and {} in this process (2 HTTP workers and a pool of 10 each), PostgreSQL {}; {}",
            first.base_url,
            second.base_url,
            server_version.trim(),
            report::settings(&first.settings),
        );
        let world = seed::populate(&first, &url, &knobs).await?;
        let rush = crowd::rush(&[&first, &second], &url, &world, &knobs).await?;
        let after = checks::database(&url, &world, &rush, &knobs).await?;
        report::print(&world, &rush, &after, &knobs);
        checks::verdict(&rush, &after, &knobs)
    }
    .await;
    drop(second);
    drop(first);
    let dropped = drop_database(&url).await;
    outcome.and(dropped)
}
