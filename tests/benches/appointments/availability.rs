//! Availability: a week of a mission's slots over HTTP and through pgbench, on the same
//! plan as the adapter's.

use super::*;

pub(crate) struct Availability {
    pub(crate) http: HttpRun,
    pub(crate) db: DbRun,
    pub(crate) plan: String,
}

/// The week window of request `i`: missions in turn, then the next week.
pub(crate) fn week(world: &World, i: usize) -> (usize, OffsetDateTime, OffsetDateTime) {
    let mission = i % MISSIONS;
    // 51 weeks: every window ends before the last seeded day.
    let from = world.first_day + time::Duration::weeks(((i / MISSIONS) % 51) as i64);
    (mission, from, from + time::Duration::days(7))
}

fn availability_path(world: &World, i: usize) -> Result<String> {
    let (mission, from, to) = week(world, i);
    Ok(format!(
        "/api/v1/appointments/slots?mission_id={}&service_type_id={}&from={}&to={}",
        world.missions[mission],
        world.service,
        sql_time(from)?,
        sql_time(to)?
    ))
}

pub(crate) async fn availability(
    app: &TestApp,
    url: &str,
    world: &World,
    timing: Timing,
) -> Result<Availability> {
    println!("\n== availability: GET /api/v1/appointments/slots, a week, 50 missions x 51 weeks in turn");
    // One checked page: 20 open slots of the mission serving the type, in start order.
    let first = availability_path(world, 0)?;
    let response = app.get(&first, &world.staff[0].token).await;
    let status = response.status();
    let body = response.text().await.map_err(|e| format!("GET {first}: {e}"))?;
    let page: Value =
        consular_tests::serde_json::from_str(&body).map_err(|e| format!("{status}: {e}: {body}"))?;
    let items = page["items"].as_array().cloned().unwrap_or_default();
    let expected_items = 20.min(7 * world.per_day);
    let well_formed = items.iter().all(|s| {
        s["mission_id"] == world.missions[0].as_str()
            && s["remaining"].as_u64().is_some_and(|r| r > 0)
            && s["service_type_ids"].as_array().is_some_and(|t| t.contains(&json!(world.service)))
    });
    if status.as_u16() != 200 || items.len() != expected_items || !well_formed {
        return Err(format!("GET {first}: {status}: not a page of {expected_items} open slots: {body}"));
    }
    let ids: Vec<String> = items.iter().map(|s| text(s, "id")).collect();

    let make: MakeRequest = {
        let paths: Arc<Vec<(String, String)>> = Arc::new(
            (0..MISSIONS * 51)
                .map(|i| {
                    Ok((app.url(&availability_path(world, i)?), world.staff[i % MISSIONS].token.clone()))
                })
                .collect::<Result<_>>()?,
        );
        Arc::new(move |http: &Client, i: usize| {
            let (url, token) = &paths[i % paths.len()];
            Ok(http.get(url).bearer_auth(token))
        })
    };
    let next = Arc::new(AtomicUsize::new(0));
    load(clients(), &make, &next, 200, Duration::from_secs(timing.warmup)).await?;
    let sampler = tokio::spawn(sample_statements(url.to_owned(), Duration::from_secs(timing.seconds)));
    let http = load(clients(), &make, &next, 200, Duration::from_secs(timing.seconds)).await?;
    print_http(&http, "a different mission or week each");
    let seen = sampler.await.map_err(|e| format!("the sampler: {e}"))??;
    let (page_sql, types_sql) = (availability_statement(), service_types_statement());
    ran(&seen, &page_sql, "availability statement")?;
    ran(&seen, &types_sql, "service types statement")?;

    // The parameters of the checked page (the server uses max(from, now) as the lower
    // bound: `from` is in the future here).
    let (_, from, to) = week(world, 0);
    let now = OffsetDateTime::now_utc();
    let defines = vec![
        ("mission", world.missions[0].clone()),
        ("service", world.service.clone()),
        ("from", sql_time(from)?),
        ("to", sql_time(to)?),
        ("yes", "true".to_owned()),
        ("now", sql_time(now)?),
        ("limit", "21".to_owned()),
        ("ids", format!("{{{}}}", ids.join(","))),
    ];
    let plan = same_plan_as_the_adapter(url, world, &page_sql, &defines, (from, to, now)).await?;
    let script = format!("{};\n{};\n", page_sql.pgbench(), types_sql.pgbench());
    let db = pgbench(url, &script, &defines, &[], clients(), timing.seconds).await?;
    print_db(&db, "the page, then its slots' service types; one mission and week");
    Ok(Availability { http, db, plan })
}

/// The adapter's EXPLAIN (sequential scans and sorts disabled) and ours under the same
/// settings must use the same indexes, the availability index among them; then the plan
/// as run (EXPLAIN ANALYZE, custom plan) and the generic plan a prepared statement may
/// switch to after five executions.
async fn same_plan_as_the_adapter(
    url: &str,
    world: &World,
    statement: &Statement,
    defines: &[(&str, String)],
    (from, to, now): (OffsetDateTime, OffsetDateTime, OffsetDateTime),
) -> Result<String> {
    let db = consular_db::Database::connect(&consular_db::DbConfig::new(url.to_owned()))
        .map_err(|e| format!("database handle: {e}"))?;
    let mission: uuid::Uuid = world.missions[0].parse().map_err(|e| format!("mission id: {e}"))?;
    let service: uuid::Uuid = world.service.parse().map_err(|e| format!("service id: {e}"))?;
    let query = AvailabilityQuery {
        mission_id: MissionId(mission),
        service_type_id: ServiceTypeId(service),
        from,
        to,
        now,
    };
    let adapter = db.explain_availability(query, StartPageRequest { limit: 20, after: None }).await;
    db.close();
    let adapter = adapter.map_err(|e| format!("the adapter's EXPLAIN: {e}"))?.join("\n");

    let value = |var: &str| defines.iter().find(|(name, _)| *name == var).map(|(_, v)| format!("'{v}'"));
    let values = statement.vars.iter().filter_map(|var| value(var)).collect::<Vec<_>>().join(", ");
    let script = format!(
        "PREPARE page AS {sql};\n\
         BEGIN;\nSET LOCAL enable_seqscan = off;\nSET LOCAL enable_sort = off;\n\
         EXPLAIN EXECUTE page({values});\nCOMMIT;\n\\echo ====\n\
         EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY OFF) EXECUTE page({values});\n\\echo ====\n\
         SET plan_cache_mode = force_generic_plan;\n\
         EXPLAIN EXECUTE page({values});\n",
        sql = statement.sql
    );
    let out = psql(url, &script).await?;
    let parts: Vec<&str> = out.split("====\n").collect();
    let [ours, analyzed, generic] = parts.as_slice() else {
        return Err(format!("unexpected EXPLAIN output: {out}"));
    };
    let (adapter_indexes, our_indexes) = (indexes(&adapter), indexes(ours));
    if adapter_indexes != our_indexes
        || !adapter_indexes.iter().any(|i| i == "slot_service_types_availability_idx")
    {
        return Err(format!(
            "not the same plan as the adapter's query, or not on slot_service_types_availability_idx:\n\
             adapter:\n{adapter}\nbench:\n{ours}"
        ));
    }
    println!(
        "   plan   adapter and bench: {}; as run (custom plan, EXPLAIN ANALYZE):\n            {}",
        adapter_indexes.join(", "),
        analyzed.trim().replace('\n', "\n            ")
    );
    if indexes(generic) != indexes(analyzed) {
        println!(
            "   NOTE   the generic plan uses other indexes:\n            {}",
            generic.trim().replace('\n', "\n            ")
        );
    }
    let plan = analyzed.lines().map(str::trim).filter(|l| l.contains(" using ")).collect::<Vec<_>>();
    Ok(plan.join("; ").replace("-> ", ""))
}
