//! Seeding: 50 missions, their staff and citizens through the API, then about a million
//! slots with SQL, as the adapter writes them.

use super::*;

/// What the seeding created that the scenarios need.
pub(crate) struct World {
    /// Mission ids, in the order of their codes (`fr-bench01`...): the SQL numbers them
    /// 1..=50 in that order.
    pub(crate) missions: Vec<String>,
    /// The staff member and the citizen of each mission.
    pub(crate) staff: Vec<Issued>,
    pub(crate) citizens: Vec<String>,
    /// The citizens of the last mission the hot run books for, one per booking of a slot.
    pub(crate) hot_citizens: Arc<Vec<String>>,
    /// The service type every slot serves.
    pub(crate) service: String,
    pub(crate) slots: usize,
    pub(crate) per_day: usize,
    /// Seats of the ordinary slots.
    pub(crate) capacity: usize,
    /// Spread slots (all missions but the last), `bench_spread.k` 1..=spread_slots.
    pub(crate) spread_slots: usize,
    /// The first `SPREAD_LOADED` of them: (mission index, slot id), in random order.
    pub(crate) spread: Arc<Vec<(usize, String)>>,
    /// The hot pool in start order (the last is pgbench's).
    pub(crate) hot: Arc<Vec<String>>,
    /// Instants of the run: the first day every mission has slots on (UTC midnight).
    pub(crate) first_day: OffsetDateTime,
}

pub(crate) async fn seed(app: &TestApp, target: usize, timing: Timing) -> Result<World> {
    let started = Instant::now();
    let admin_token = app.admin_token().await;
    let mut missions = Vec::new();
    for n in 0..MISSIONS {
        let body = json!({
            "code": format!("fr-bench{:02}", n + 1),
            "name": format!("Consulate {}", n + 1),
            "country": "FR",
            "city": "Paris",
            "timezone": TIMEZONES[n % TIMEZONES.len()],
        });
        missions.push(text(&app.create_at("/api/v1/missions", &admin_token, &body).await, "id"));
    }
    let service = text(&app.create_service(&admin_token, "bench_passport").await, "id");
    let second = text(&app.create_service(&admin_token, "bench_visa").await, "id");
    let mut staff = Vec::new();
    let mut citizens = Vec::new();
    for (n, mission) in missions.iter().enumerate() {
        staff.push(app.staff_with_client(&admin_token, staff_body(mission, &format!("Officer {n}"))).await);
        let citizen = citizen_body(mission, &format!("BENCH{n:04}"));
        citizens.push(text(&app.create_at(CITIZENS, &admin_token, &citizen).await, "id"));
    }
    let mut hot_citizens = Vec::with_capacity(HOT_PER_SLOT);
    for n in 0..HOT_PER_SLOT {
        let citizen = citizen_body(&missions[MISSIONS - 1], &format!("HOT{n:05}"));
        hot_citizens.push(text(&app.create_at(CITIZENS, &admin_token, &citizen).await, "id"));
    }
    let api_done = started.elapsed();

    // A day's slots from 08:00 local time, back to back, within 10 hours.
    let per_day = target.div_ceil(MISSIONS * DAYS).max(1);
    let minutes = (600 / per_day).clamp(5, 480);
    if per_day * minutes > 24 * 60 - 8 * 60 {
        return Err(format!("BENCH_SLOTS={target}: {per_day} slots a day do not fit in a day"));
    }
    let spread_slots = (MISSIONS - 1) * DAYS * per_day;
    // pgbench books a random spread slot per transaction: at 50 000 tps, over the whole
    // run, a few per slot at most; three times that, and a margin, never fills one.
    let expected = (50_000 * (timing.seconds + timing.warmup) as usize).div_ceil(spread_slots);
    let capacity = (6 + 3 * expected).min(HOT_CAPACITY);
    let sql = SEED_SQL
        .replace("{UUID7}", SEED_UUID7)
        .replace("{PER_DAY}", &per_day.to_string())
        .replace("{MINUTES}", &minutes.to_string())
        .replace("{CAPACITY}", &capacity.to_string())
        .replace("{HOT_CAPACITY}", &HOT_CAPACITY.to_string())
        .replace("{HOT_POOL}", &HOT_POOL.to_string())
        .replace("{DAYS}", &DAYS.to_string())
        .replace("{MISSIONS}", &MISSIONS.to_string())
        .replace("{TYPE_A}", &service)
        .replace("{TYPE_B}", &second);
    psql(&app.settings.database_url, &sql).await?;
    let url = &app.settings.database_url;
    let count = |sql: &'static str| async move {
        psql(url, sql).await?.trim().parse::<usize>().map_err(|e| format!("{sql}: {e}"))
    };
    let slots = count("SELECT count(*) FROM slots").await?;
    let served = count("SELECT count(*) FROM slot_service_types").await?;
    if slots != MISSIONS * DAYS * per_day || count("SELECT count(*) FROM bench_spread").await? != spread_slots
    {
        return Err(format!("seeded {slots} slots, expected {}", MISSIONS * DAYS * per_day));
    }
    let sizes = psql(
        url,
        "SELECT string_agg(format('%s %s (table %s + indexes %s)', t, pg_size_pretty(pg_total_relation_size(t)), \
         pg_size_pretty(pg_relation_size(t)), pg_size_pretty(pg_indexes_size(t))), '; ') \
         FROM unnest(ARRAY['slots', 'slot_service_types']::regclass[]) t",
    )
    .await?;
    println!(
        "seeded: {slots} slots ({MISSIONS} missions x {DAYS} days x {per_day} slots of {minutes} min from 08:00 local, \
         capacity {capacity}), {served} slot_service_types rows, {MISSIONS} staff and citizens in {:.1?} (API {:.1?})\n\
         \x20       {}",
        started.elapsed(),
        api_done,
        sizes.trim()
    );

    let spread =
        psql(url, &format!("SELECT m, slot_id FROM bench_spread WHERE k <= {SPREAD_LOADED} ORDER BY k"))
            .await?
            .lines()
            .map(|line| {
                let (m, slot) = line.split_once('|').ok_or_else(|| format!("bench_spread row: {line}"))?;
                let m: usize = m.parse().map_err(|e| format!("bench_spread row {line}: {e}"))?;
                Ok((m - 1, slot.to_owned()))
            })
            .collect::<Result<Vec<_>>>()?;
    let hot: Vec<String> =
        psql(url, "SELECT slot_id FROM bench_hot ORDER BY k").await?.lines().map(str::to_owned).collect();
    if spread.is_empty() || hot.len() < 2 {
        return Err("no spread or hot slots".to_owned());
    }
    let today = OffsetDateTime::now_utc().replace_time(time::Time::MIDNIGHT);
    Ok(World {
        missions,
        staff,
        citizens,
        hot_citizens: Arc::new(hot_citizens),
        service,
        slots,
        per_day,
        capacity,
        spread_slots,
        spread: Arc::new(spread),
        hot: Arc::new(hot),
        // Local tomorrow has begun everywhere by the day after tomorrow, UTC.
        first_day: today + time::Duration::days(2),
    })
}

/// The slots, in one psql session; `{NAME}`s are replaced. Slots are laid in each
/// mission's local time and stored in UTC (`AT TIME ZONE`), as the schedule expansion
/// does; ids are UUIDv7 increasing with the row number (so the primary key is filled in
/// order, as in production where ids are made at creation). The last mission is the hot
/// one: its slots are not spread slots, and `HOT_POOL` of them, from its 30th day, have
/// the largest capacity.
const SEED_SQL: &str = r#"
\set ON_ERROR_STOP 1
{UUID7}

BEGIN;
CREATE TABLE bench_missions AS
    SELECT row_number() OVER (ORDER BY code)::int AS m, id, timezone FROM missions WHERE code LIKE 'fr-bench%';

INSERT INTO slots (id, mission_id, starts_at, ends_at, capacity, booked, is_open, booking_cutoff_minutes,
    cancellation_cutoff_minutes, booking_closes_at, version, created_at, updated_at)
SELECT pg_temp.uuid7(now() - interval '1 hour' + n * interval '1 millisecond', n), mission_id, starts_at,
    starts_at + interval '{MINUTES} minutes', {CAPACITY}, 0, true, 60, 1440,
    starts_at - interval '60 minutes', 1, now(), now()
FROM (
    SELECT row_number() OVER (ORDER BY m.m, d, s) AS n, m.id AS mission_id,
        (d + interval '8 hours' + s * interval '{MINUTES} minutes') AT TIME ZONE m.timezone AS starts_at
    FROM bench_missions m
    -- Local days as `timestamp` (without time zone), so that `AT TIME ZONE` below reads
    -- the wall-clock time in the mission's zone and gives the UTC instant.
    CROSS JOIN LATERAL generate_series(((now() AT TIME ZONE m.timezone)::date + 1)::timestamp,
        ((now() AT TIME ZONE m.timezone)::date + {DAYS})::timestamp, interval '1 day') d
    CROSS JOIN generate_series(0, {PER_DAY} - 1) s
) g;

-- Every slot serves the first service type, every other one the second too.
INSERT INTO slot_service_types (slot_id, service_type_id, mission_id, starts_at)
SELECT id, '{TYPE_A}'::uuid, mission_id, starts_at FROM slots
UNION ALL
SELECT id, '{TYPE_B}'::uuid, mission_id, starts_at FROM slots WHERE hashtext(id::text) % 2 = 0;

CREATE TABLE bench_hot AS
    SELECT row_number() OVER (ORDER BY s.starts_at)::int AS k, s.id AS slot_id
    FROM slots s JOIN bench_missions m ON m.id = s.mission_id
    WHERE m.m = {MISSIONS}
    ORDER BY s.starts_at OFFSET 30 * {PER_DAY} LIMIT {HOT_POOL};
UPDATE slots SET capacity = {HOT_CAPACITY} WHERE id IN (SELECT slot_id FROM bench_hot);

-- The spread slots in random order: bench_spread.k 1..N names them for pgbench (which
-- cannot make a uuid) and for the HTTP clients.
CREATE TABLE bench_spread AS
    SELECT row_number() OVER (ORDER BY hashtext(s.id::text), s.id)::int AS k, s.id AS slot_id, m.m
    FROM slots s JOIN bench_missions m ON m.id = s.mission_id
    WHERE m.m < {MISSIONS};
ALTER TABLE bench_spread ADD PRIMARY KEY (k);
COMMIT;

VACUUM (ANALYZE) slots;
VACUUM (ANALYZE) slot_service_types;
VACUUM (ANALYZE) bench_spread;
"#;
