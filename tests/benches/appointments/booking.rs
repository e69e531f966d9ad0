//! Booking on spread slots and on one hot slot, over HTTP and through pgbench on the
//! guarded seat statement, and the seat invariant after the runs.

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hotness {
    /// Every booking on another slot, in random order over 49 missions.
    Spread,
    /// Every client on the same slot at any moment.
    Hot,
}

pub(crate) struct Booking {
    pub(crate) http: HttpRun,
    pub(crate) db: DbRun,
    /// The 201s of the run, its warm-up included.
    pub(crate) http_booked: usize,
    /// The average latency of the UPDATE alone in pgbench (`-r`).
    pub(crate) update_ms: f64,
}

pub(crate) async fn booking(
    app: &TestApp,
    url: &str,
    world: &World,
    timing: Timing,
    hotness: Hotness,
) -> Result<Booking> {
    let name = match hotness {
        Hotness::Spread => "spread slots",
        Hotness::Hot => "one hot slot",
    };
    println!(
        "\n== booking, {name}: POST /api/v1/appointments by the mission's staff, a fresh Idempotency-Key each"
    );
    let staff: Arc<Vec<String>> = Arc::new(world.staff.iter().map(|s| s.token.clone()).collect());
    let citizens = Arc::new(world.citizens.clone());
    let hot_citizens = world.hot_citizens.clone();
    let service = world.service.clone();
    let endpoint = app.url("/api/v1/appointments");
    let (spread, hot) = (world.spread.clone(), world.hot.clone());
    // The last hot slot is pgbench's.
    let hot_slots = hot.len() - 1;
    let make: MakeRequest = Arc::new(move |http: &Client, i: usize| {
        let (mission, slot, citizen) = match hotness {
            Hotness::Spread => {
                // The mission's citizen books each slot once.
                let (mission, slot) = spread.get(i).ok_or_else(|| {
                    format!("the {} spread slots loaded are used up: raise BENCH_SLOTS", spread.len())
                })?;
                (*mission, slot, &citizens[*mission])
            }
            Hotness::Hot => {
                let slot = hot.get(i / HOT_PER_SLOT).filter(|_| i / HOT_PER_SLOT < hot_slots).ok_or_else(|| {
                    format!("the hot pool ({hot_slots} slots of {HOT_PER_SLOT} bookings) is used up: raise HOT_POOL")
                })?;
                (MISSIONS - 1, slot, &hot_citizens[i % HOT_PER_SLOT])
            }
        };
        let body = json!({ "slot_id": slot, "service_type_id": service, "citizen_id": citizen });
        Ok(http
            .post(&endpoint)
            .bearer_auth(&staff[mission])
            .header("idempotency-key", uuid::Uuid::now_v7().to_string())
            .json(&body))
    });
    let next = Arc::new(AtomicUsize::new(0));
    load(clients(), &make, &next, 201, Duration::from_secs(timing.warmup)).await?;
    let sampler = (hotness == Hotness::Hot)
        .then(|| tokio::spawn(sample_statements(url.to_owned(), Duration::from_secs(timing.seconds.min(3)))));
    let http = load(clients(), &make, &next, 201, Duration::from_secs(timing.seconds)).await?;
    // Every number handed out was sent, and every one sent answered 201.
    let http_booked = next.load(Ordering::Relaxed);
    print_http(&http, "every answer 201");
    let take_seat = take_seat_statement();
    if let Some(sampler) = sampler {
        let seen = sampler.await.map_err(|e| format!("the sampler: {e}"))??;
        ran(&seen, &take_seat, "guarded seat statement")?;
    }

    let now = sql_time(OffsetDateTime::now_utc())?;
    let mut defines = vec![
        ("one", "1".to_owned()),
        ("yes", "true".to_owned()),
        ("now", now),
        ("service", world.service.clone()),
    ];
    let update = take_seat.pgbench();
    let script = match hotness {
        // pgbench cannot make a uuid: it reads the slot of a random key first.
        Hotness::Spread => format!(
            "\\set k random(1, {})\nSELECT slot_id AS slot FROM bench_spread WHERE k = :k \\gset\n{update};\n",
            world.spread_slots
        ),
        // One slot takes at most 1000 seats and pgbench books tens of thousands: each
        // transaction takes the seat and rolls back, holding the row lock until then.
        Hotness::Hot => {
            defines.push(("slot", world.hot[hot_slots].clone()));
            format!("BEGIN;\n{update};\nROLLBACK;\n")
        }
    };
    if hotness == Hotness::Hot {
        update_plan(url, &take_seat, &defines).await?;
    }
    let booked_before = sum_booked(url).await?;
    let db = pgbench(url, &script, &defines, &[], clients(), timing.seconds).await?;
    let taken = sum_booked(url).await? - booked_before;
    print_db(
        &db,
        match hotness {
            Hotness::Spread => "a random spread slot per transaction",
            Hotness::Hot => "one slot, BEGIN / UPDATE / ROLLBACK",
        },
    );
    // Every pgbench UPDATE must have taken a seat: one that found the slot full would
    // do less work than a booking.
    let expected = if hotness == Hotness::Spread { db.transactions } else { 0 };
    if taken != expected {
        return Err(format!("pgbench took {taken} seats in {} transactions", db.transactions));
    }
    let update_ms =
        db.commands.iter().find(|(_, c)| c.starts_with("UPDATE")).map_or(db.latency_ms, |(ms, _)| *ms);
    Ok(Booking { http, db, http_booked, update_ms })
}

async fn sum_booked(url: &str) -> Result<u64> {
    psql(url, "SELECT sum(booked) FROM slots").await?.trim().parse().map_err(|e| format!("sum(booked): {e}"))
}

/// The plan of the guarded seat statement: the slot by its primary key, the service
/// type by the primary key of `slot_service_types`.
async fn update_plan(url: &str, statement: &Statement, defines: &[(&str, String)]) -> Result<()> {
    let value = |var: &str| defines.iter().find(|(name, _)| *name == var).map(|(_, v)| format!("'{v}'"));
    let values = statement.vars.iter().filter_map(|var| value(var)).collect::<Vec<_>>().join(", ");
    let plan = psql(
        url,
        &format!(
            "PREPARE take AS {};\nBEGIN;\nEXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY OFF) EXECUTE take({values});\nROLLBACK;\n",
            statement.sql
        ),
    )
    .await?;
    if !indexes(&plan).iter().any(|i| i == "slots_pkey") {
        return Err(format!("the guarded seat statement does not find the slot by its key:\n{plan}"));
    }
    println!("   plan   {}", plan.trim().replace('\n', "\n            "));
    Ok(())
}

/// The seat invariant after the runs: one appointment per 201; every slot holds at least
/// its appointments' seats (pgbench took more on spread slots), the hot pool exactly.
pub(crate) async fn seats_match(url: &str, http_booked: usize) -> Result<()> {
    let out = psql(
        url,
        "SELECT (SELECT count(*) FROM appointments WHERE status = 'booked'), count(*) FILTER (WHERE s.booked < x.n \
         OR (s.id IN (SELECT slot_id FROM bench_hot) AND s.booked <> x.n)) \
         FROM (SELECT slot_id, count(*) AS n FROM appointments GROUP BY slot_id) x JOIN slots s ON s.id = x.slot_id",
    )
    .await?;
    let (appointments, wrong) = out.trim().split_once('|').ok_or_else(|| format!("seat check: {out}"))?;
    if appointments != http_booked.to_string() || wrong != "0" {
        return Err(format!(
            "{appointments} appointments for {http_booked} bookings answered 201; {wrong} slots with wrong seat counts"
        ));
    }
    println!("\nseats: {appointments} appointments, one per 201; every slot's seat count agrees");
    Ok(())
}
