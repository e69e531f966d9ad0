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
    /// pgbench on every write statement of a booking, in one transaction.
    pub(crate) writes: DbRun,
}

/// The `booked_by` of pgbench's appointments, which the seat check sets apart.
pub(crate) const PGBENCH_ACTOR: &str = "00000000-0000-7000-8000-0000000b0b0b";

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
    let mut defines: Vec<(&'static str, String)> = vec![
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
    let writes = booking_writes_run(url, world, timing, hotness, defines).await?;
    Ok(Booking { http, db, http_booked, update_ms, writes })
}

/// pgbench on the write transaction of a booking, statement for statement
/// ([`booking_writes`]): the idempotency record (the expired one deleted first), the
/// audit entry, the outbox event, the guarded seat statement, the appointment and its
/// history entry. The values are a booking's: fresh ids, an outcome snapshot and an event
/// payload of a booking's size. On spread slots each transaction books another slot
/// (from the top of `bench_spread`, away from the HTTP run's) for a citizen of the last
/// mission, committed; on the hot slot it rolls back, as the UPDATE-only run does.
async fn booking_writes_run(
    url: &str,
    world: &World,
    timing: Timing,
    hotness: Hotness,
    mut defines: Vec<(&'static str, String)>,
) -> Result<DbRun> {
    let now = OffsetDateTime::now_utc();
    let owner = uuid::Uuid::now_v7().to_string();
    let outcome = json!({
        "appointment": {
            "booked_by": { "id": PGBENCH_ACTOR, "kind": "staff" },
            "cancelled_at": null, "cancelled_by": null, "citizen_id": world.hot_citizens[0],
            "created_at": [2026, 331, 6, 44, 40, 205_636_000, 0, 0, 0], "ends_at": [2026, 341, 9, 0, 0, 0, 0, 0, 0],
            "id": owner, "mission_id": owner, "request_id": null, "service_type_id": world.service, "slot_id": owner,
            "starts_at": [2026, 341, 8, 0, 0, 0, 0, 0, 0], "status": "booked",
            "updated_at": [2026, 331, 6, 44, 40, 205_636_000, 0, 0, 0], "version": 1
        },
        "mission_city": "Paris", "mission_name": "Embassy fr-bench01", "service_name": "Service passport_renewal",
        "timezone": "Europe/Paris"
    });
    let payload = json!({
        "slot_id": owner, "starts_at": "2026-12-07T08:00:00Z", "citizen_id": world.hot_citizens[0],
        "mission_id": owner, "request_id": null, "appointment_id": owner
    });
    defines.extend([
        ("n", "0".to_owned()),
        ("owner", owner.clone()),
        ("fingerprint", "6feeAkiNG_kKXXyjQJ2jVHYxzNjrDml7VyM6oPyyIV4".to_owned()),
        ("outcome", outcome.to_string()),
        ("expires", sql_time(now + time::Duration::days(1))?),
        ("staff", "staff".to_owned()),
        ("actor", PGBENCH_ACTOR.to_owned()),
        ("created", "created".to_owned()),
        ("resource", "appointment".to_owned()),
        ("fields", r#"["slot_id","citizen_id","service_type_id","request_id"]"#.to_owned()),
        ("address", "127.0.0.1".to_owned()),
        ("kind", "appointment.booked".to_owned()),
        ("payload", payload.to_string()),
        ("citizen", world.hot_citizens[0].clone()),
        ("booked", "booked".to_owned()),
    ]);
    let ids = "gen_random_uuid() AS appt, gen_random_uuid() AS audit, gen_random_uuid() AS event, \
               gen_random_uuid()::text AS key";
    let mut script = match hotness {
        // pgbench cannot make a uuid: the database makes the ids, and reads the slot of
        // the transaction's own key (the n-th of this client, counted down from the top).
        Hotness::Spread => format!(
            "\\set n :n + 1\n\\set k {} - (:n * {} + :client_id)\n\
             SELECT b.slot_id AS slot, s.mission_id AS mission, s.starts_at AS starts, s.ends_at AS ends, {ids} \
             FROM bench_spread b JOIN slots s ON s.id = b.slot_id WHERE b.k = :k \\gset\nBEGIN;\n",
            world.spread_slots,
            clients()
        ),
        Hotness::Hot => format!(
            "SELECT s.mission_id AS mission, s.starts_at AS starts, s.ends_at AS ends, {ids} \
             FROM slots s WHERE s.id = :slot \\gset\nBEGIN;\n"
        ),
    };
    for statement in booking_writes() {
        script.push_str(&statement.pgbench());
        script.push_str(";\n");
    }
    script.push_str(if hotness == Hotness::Spread { "COMMIT;\n" } else { "ROLLBACK;\n" });
    let booked_before = sum_booked(url).await?;
    let db = pgbench(url, &script, &defines, &[], clients(), timing.seconds).await?;
    let taken = sum_booked(url).await? - booked_before;
    print_db(&db, "every write of a booking in one transaction");
    let expected = if hotness == Hotness::Spread { db.transactions } else { 0 };
    if taken != expected {
        return Err(format!(
            "pgbench's booking writes took {taken} seats in {} transactions",
            db.transactions
        ));
    }
    Ok(db)
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
        &format!("SELECT (SELECT count(*) FROM appointments WHERE status = 'booked' AND booked_by_id <> '{PGBENCH_ACTOR}'), count(*) FILTER (WHERE s.booked < x.n \
         OR (s.id IN (SELECT slot_id FROM bench_hot) AND s.booked <> x.n)) \
         FROM (SELECT slot_id, count(*) AS n FROM appointments GROUP BY slot_id) x JOIN slots s ON s.id = x.slot_id"),
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
