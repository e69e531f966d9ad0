//! What the rush printed: the polling before the release, the rush (bookings per second,
//! latencies, 304 share, CPU per booking), the bots, the database, and one summary line.

use super::Knobs;
use super::checks::After;
use super::crowd::{Answer, Rush, Tally, beyond_the_cap};
use super::seed::World;
use consular_tests::consular_app::Settings;
use std::collections::BTreeMap;

/// The settings the morning exercises, as the nodes run them (by configuration key).
pub(crate) fn settings(settings: &Settings) -> String {
    let values = consular_tests::serde_json::to_value(settings).unwrap_or_default();
    let key = |k: &str| values.get(k).map_or_else(|| "absent".to_owned(), ToString::to_string);
    super::PRODUCTION_DEFAULTS.iter().map(|k| format!("{k} {}", key(k))).collect::<Vec<_>>().join(", ")
}

/// The `q` quantile of `micros`, in ms (0 when empty).
fn quantile(micros: &mut [u32], q: f64) -> f64 {
    if micros.is_empty() {
        return 0.0;
    }
    micros.sort_unstable();
    f64::from(micros[((micros.len() - 1) as f64 * q) as usize]) / 1000.0
}

/// "p50 1.23 ms, p99 4.56 ms" of some answers.
fn latencies<'a>(answers: impl Iterator<Item = &'a Answer>) -> String {
    let mut micros: Vec<u32> = answers.map(|a| a.micros).collect();
    format!("p50 {:.2} ms, p99 {:.2} ms", quantile(&mut micros, 0.50), quantile(&mut micros, 0.99))
}

/// "201 480, 409 slot_full 1200, 429 too_many_requests 30": answers by status and code.
fn outcomes<'a>(answers: impl Iterator<Item = &'a Answer>) -> String {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for a in answers {
        let code: String = a.code.chars().take(40).collect();
        *counts.entry(format!("{} {code}", a.status).trim().to_owned()).or_default() += 1;
    }
    counts.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", ")
}

fn share_304<'a>(polls: impl Iterator<Item = &'a Answer>) -> (usize, f64) {
    let (mut all, mut not_modified) = (0usize, 0usize);
    for p in polls {
        all += 1;
        not_modified += usize::from(p.status == 304);
    }
    (all, 100.0 * not_modified as f64 / all.max(1) as f64)
}

pub(crate) fn print(world: &World, rush: &Rush, after: &After, knobs: &Knobs) {
    let citizens = &rush.citizens;
    let polls = || citizens.iter().flat_map(|t| &t.polls);
    let attempts = || citizens.iter().flat_map(|t| &t.bookings);

    let before_s = -rush.before_from_ms as f64 / 1000.0;
    let waiting = || polls().filter(|p| p.at_ms >= rush.before_from_ms && p.at_ms < 0);
    let (waiting_polls, waiting_304) = share_304(waiting());
    println!(
        "\nbefore the release ({before_s:.1} s, after everyone's first poll): {waiting_polls} polls by the citizens \
         ({:.0}/s), {waiting_304:.1}% answered 304, {}",
        waiting_polls as f64 / before_s.max(1e-9),
        latencies(waiting()),
    );
    println!("   cpu: {}", rush.before.per_unit(waiting_polls as f64, "poll"));

    let done_s = rush.done_ms as f64 / 1000.0;
    let spread = (after.last_s - after.first_s).max(1e-3);
    println!(
        "\nthe rush: the first seat {:.2} s after release_at, the last {:.2} s after it; {} seats: {:.0} bookings/s \
         from the release, {:.0} from the first to the last; the last citizen was done {done_s:.1} s after it",
        after.first_s,
        after.last_s,
        after.appointments,
        after.appointments as f64 / after.last_s.max(1e-3),
        after.appointments as f64 / spread,
    );
    let booked = |t: &Tally| t.bookings.iter().any(|a| a.status == 201);
    let capped = citizens.iter().filter(|t| t.bookings.iter().any(|a| a.status == 429)).count();
    let with_seat = citizens.iter().filter(|t| booked(t)).count();
    println!(
        "   citizens: {with_seat} booked, {} sold out without a seat, {capped} were answered 429 at least once",
        citizens.len() - with_seat
    );
    println!("   their {} booking attempts: {}", attempts().count(), outcomes(attempts()));
    println!(
        "   a booking (201): {}; every attempt: {}",
        latencies(attempts().filter(|a| a.status == 201)),
        latencies(attempts())
    );
    let during = || polls().filter(|p| p.at_ms >= 0);
    let (during_polls, during_304) = share_304(during());
    println!(
        "   their polls from the release on: {during_polls}, {during_304:.1}% answered 304, {}",
        latencies(during())
    );
    let requests = (during_polls + attempts().filter(|a| a.at_ms >= 0).count()) as f64;
    let bot_requests: usize = rush
        .bots
        .iter()
        .flat_map(|t| t.polls.iter().chain(&t.bookings))
        .filter(|a| a.at_ms >= 0 && a.at_ms <= rush.done_ms)
        .count();
    println!(
        "   served: {:.0} requests/s of the citizens and {:.0} of the bots until the last citizen was done; \
         a citizen made at most {} booking attempts",
        requests / done_s.max(1e-3),
        bot_requests as f64 / done_s.max(1e-3),
        citizens.iter().map(|t| t.bookings.len()).max().unwrap_or(0),
    );
    let seats = after.appointments as f64;
    println!("   cpu: {}", rush.during.per_unit(seats, "booking"));
    let database = rush.database_seconds * 1e6;
    println!(
        "   the database (its backends): {:.0} µs of CPU per booking, {:.0} per request of the citizens and bots; \
         {:.2} cores over the {done_s:.1} s (every postgres process of the machine: {:.0} µs per booking)",
        database / seats.max(1.0),
        database / (requests + bot_requests as f64).max(1.0),
        rush.database_seconds / done_s.max(1e-3),
        rush.during.per("postgres", seats),
    );

    for (name, beyond) in
        [("beyond the cap (ignore Retry-After)", true), ("at the cap (wait Retry-After)", false)]
    {
        let bots: Vec<&Tally> = rush
            .bots
            .iter()
            .enumerate()
            .filter(|(b, _)| beyond_the_cap(*b) == beyond)
            .map(|(_, t)| t)
            .collect();
        let tries = || bots.iter().flat_map(|t| &t.bookings);
        println!(
            "\nbots {name}: {} bots, {} polls, {} booking attempts: {}; seats won {}",
            bots.len(),
            bots.iter().map(|t| t.polls.len()).sum::<usize>(),
            tries().count(),
            outcomes(tries()),
            tries().filter(|a| a.status == 201).count(),
        );
    }

    println!(
        "\ndatabase after the rush: {} slots, {} seats, {} booked, {} appointments ({} of them the bots'); \
         seats overbooked {}, slots miscounted {}, requests booked twice {}, citizens booked twice {}, \
         bookings before release_at {}",
        after.slots,
        after.seats,
        after.booked,
        after.appointments,
        after.bot_seats,
        after.overbooked,
        after.miscounted,
        after.doubled,
        after.citizens_with_two,
        after.before_release,
    );
    let (all_polls, all_304) = share_304(polls());
    let bot_429 = rush.bots.iter().flat_map(|t| &t.bookings).filter(|a| a.status == 429).count();
    println!(
        "\nsummary ({} citizens, {} bots, {} seats, mission {}): {:.0} bookings/s (first to last seat), a booking {}, \
         {all_304:.1}% of {all_polls} polls answered 304, database CPU {:.0} µs per booking, every seat booked \
         {:.2} s after the release (bound {} s), bots {} seats and {bot_429} answers 429",
        knobs.citizens,
        knobs.bots,
        knobs.seats,
        world.mission,
        seats / spread,
        latencies(attempts().filter(|a| a.status == 201)),
        database / seats.max(1.0),
        after.last_s,
        knobs.within.as_secs(),
        after.bot_seats,
    );
}
