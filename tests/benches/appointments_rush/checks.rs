//! What must hold after the rush, read from the database (the seats, the bookings per
//! request, when they were made) and from what the crowd saw (statuses); any failure
//! fails the bench.

use super::Knobs;
use super::crowd::{Rush, Tally, beyond_the_cap};
use super::seed::World;
use consular_tests::bench::{Result, psql};
use time::format_description::well_known::Rfc3339;

/// The database after the rush.
pub(crate) struct After {
    pub(crate) slots: usize,
    pub(crate) seats: usize,
    /// `sum(slots.booked)`.
    pub(crate) booked: usize,
    /// `booked` appointments of the mission.
    pub(crate) appointments: usize,
    /// Appointments beyond their slot's capacity, summed over the slots.
    pub(crate) overbooked: usize,
    /// Slots whose `booked` is not their count of appointments holding a seat.
    pub(crate) miscounted: usize,
    /// (citizen, request) pairs with more than one active booking.
    pub(crate) doubled: usize,
    /// Citizens (not bots) with more than one active booking.
    pub(crate) citizens_with_two: usize,
    pub(crate) bot_seats: usize,
    /// Appointments made before `release_at`.
    pub(crate) before_release: usize,
    /// The first and the last booking, seconds after `release_at` (the server's clock).
    pub(crate) first_s: f64,
    pub(crate) last_s: f64,
}

pub(crate) async fn database(url: &str, world: &World, rush: &Rush, knobs: &Knobs) -> Result<After> {
    let release = rush.release_at.format(&Rfc3339).map_err(|e| e.to_string())?;
    let sql = AFTER_SQL
        .replace("{MISSION}", &world.mission)
        .replace("{RELEASE}", &release)
        .replace("{CITIZENS}", &knobs.citizens.to_string());
    let out = psql(url, &sql).await?;
    let fields: Vec<&str> = out.trim().split('|').collect();
    let number = |i: usize| -> Result<usize> {
        fields.get(i).and_then(|f| f.parse().ok()).ok_or_else(|| format!("the checks' row: {out}"))
    };
    let seconds = |i: usize| -> Result<f64> {
        fields.get(i).and_then(|f| f.parse().ok()).ok_or_else(|| format!("no booking was made: {out}"))
    };
    Ok(After {
        slots: number(0)?,
        seats: number(1)?,
        booked: number(2)?,
        appointments: number(3)?,
        overbooked: number(4)?,
        miscounted: number(5)?,
        doubled: number(6)?,
        citizens_with_two: number(7)?,
        bot_seats: number(8)?,
        before_release: number(9)?,
        first_s: seconds(10)?,
        last_s: seconds(11)?,
    })
}

/// One row; `{MISSION}`, `{RELEASE}` and `{CITIZENS}` are replaced. A seat is held by
/// every appointment but a cancelled one (docs/appointments.md "The seat invariant").
const AFTER_SQL: &str = r#"
WITH held AS (
    SELECT slot_id, count(*) AS n FROM appointments WHERE status <> 'cancelled' GROUP BY slot_id
), mine AS (
    SELECT s.id, s.capacity, s.booked, coalesce(h.n, 0) AS n
    FROM slots s LEFT JOIN held h ON h.slot_id = s.id WHERE s.mission_id = '{MISSION}'
), booked AS (
    SELECT a.*, p.n < {CITIZENS} AS citizen
    FROM appointments a JOIN rush_people p ON p.citizen_id = a.citizen_id
    WHERE a.mission_id = '{MISSION}' AND a.status = 'booked'
)
SELECT (SELECT count(*) FROM mine), (SELECT coalesce(sum(capacity), 0) FROM mine),
    (SELECT coalesce(sum(booked), 0) FROM mine),
    (SELECT count(*) FROM appointments WHERE mission_id = '{MISSION}' AND status = 'booked'),
    (SELECT coalesce(sum(greatest(n - capacity, 0)), 0) FROM mine),
    (SELECT count(*) FROM mine WHERE booked <> n),
    (SELECT count(*) FROM (SELECT 1 FROM booked WHERE request_id IS NOT NULL
        GROUP BY citizen_id, request_id HAVING count(*) > 1) d),
    (SELECT count(*) FROM (SELECT 1 FROM booked WHERE citizen GROUP BY citizen_id HAVING count(*) > 1) d),
    (SELECT count(*) FROM booked WHERE NOT citizen),
    (SELECT count(*) FROM appointments WHERE mission_id = '{MISSION}' AND created_at < '{RELEASE}'),
    (SELECT extract(epoch FROM min(created_at) - '{RELEASE}'::timestamptz) FROM booked),
    (SELECT extract(epoch FROM max(created_at) - '{RELEASE}'::timestamptz) FROM booked)
"#;

/// The bench's verdict: every failed check, or Ok.
pub(crate) fn verdict(rush: &Rush, after: &After, knobs: &Knobs) -> Result<()> {
    let mut failed = Vec::new();
    let everyone: Vec<&Tally> = rush.citizens.iter().chain(&rush.bots).collect();
    let all = || everyone.iter().flat_map(|t| t.polls.iter().chain(&t.bookings));
    if after.overbooked != 0 || after.miscounted != 0 {
        failed.push(format!(
            "{} seats overbooked, {} slots whose seat count is not their appointments",
            after.overbooked, after.miscounted
        ));
    }
    if after.doubled != 0 || after.citizens_with_two != 0 {
        failed.push(format!(
            "{} requests with two bookings, {} citizens with two bookings",
            after.doubled, after.citizens_with_two
        ));
    }
    if after.booked != after.seats || after.seats != knobs.seats {
        failed.push(format!("{} of {} seats booked ({} expected)", after.booked, after.seats, knobs.seats));
    }
    if after.last_s > knobs.within.as_secs_f64() {
        failed.push(format!(
            "the last seat was booked {:.1} s after the release, not within {} s",
            after.last_s,
            knobs.within.as_secs()
        ));
    }
    if after.before_release != 0 {
        failed.push(format!("{} bookings made before release_at", after.before_release));
    }
    let server_errors = all().filter(|a| a.status >= 500).count();
    let transport = all().filter(|a| a.status == 0).count();
    if server_errors != 0 || transport != 0 {
        let example =
            all().find(|a| a.status >= 500 || a.status == 0).map(|a| format!("{} {}", a.status, a.code));
        failed.push(format!(
            "{server_errors} 5xx and {transport} requests without an answer (e.g. {example:?})"
        ));
    }
    let unexpected: Vec<&str> = everyone.iter().filter_map(|t| t.unexpected.as_deref()).collect();
    if !unexpected.is_empty() {
        failed.push(format!("{} unexpected answers, the first: {}", unexpected.len(), unexpected[0]));
    }
    let timed_out = everyone.iter().filter(|t| t.timed_out).count();
    if timed_out != 0 {
        failed.push(format!(
            "{timed_out} citizens still trying {} s after the release",
            knobs.timeout.as_secs()
        ));
    }
    let created = everyone.iter().flat_map(|t| &t.bookings).filter(|a| a.status == 201).count();
    if created != after.appointments {
        failed.push(format!("{created} bookings answered 201 for {} appointments", after.appointments));
    }
    let bot_429 = rush
        .bots
        .iter()
        .enumerate()
        .filter(|(b, _)| beyond_the_cap(*b))
        .flat_map(|(_, t)| &t.bookings)
        .filter(|a| a.status == 429)
        .count();
    if knobs.bots > 0 && bot_429 == 0 {
        failed.push("no bot beyond the per-citizen cap was answered 429".to_owned());
    }
    let missing: usize = everyone.iter().map(|t| t.retry_after_missing).sum();
    if missing != 0 {
        failed.push(format!("{missing} answers 429 without a Retry-After in seconds"));
    }
    if failed.is_empty() {
        println!("\nchecks: PASS");
        Ok(())
    } else {
        Err(format!("\n  - {}", failed.join("\n  - ")))
    }
}
