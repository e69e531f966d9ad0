//! The reference points for reading the table: the HTTP stack alone, the database work per
//! request, the JSON encoding of a page.

use super::*;

/// Two reference points for reading the table: the HTTP stack alone (an endpoint with
/// neither auth nor database) and the database work the server really asks for per
/// request (the pool's `SELECT $1` check, then the list statement).
pub(crate) struct Calibration {
    pub(crate) seconds: u64,
    pub(crate) scenario: String,
    pub(crate) floor: HttpRun,
    /// A request that only authenticates: a staff token asking for an admin view, refused
    /// (403) by the policy before anything is read.
    pub(crate) authenticated: HttpRun,
    /// The first scenario with `limit=1`: the same work with 2 rows instead of 21.
    pub(crate) one_row: HttpRun,
    pub(crate) pool_check: DbRun,
    /// The first scenario's statement, planned once per connection.
    pub(crate) generic: DbRun,
    /// Microseconds to serialize one page as a `serde_json::Value`, and its size.
    pub(crate) json_us: f64,
    pub(crate) page_bytes: usize,
}

pub(crate) async fn calibrate(
    app: &TestApp,
    url: &str,
    scenario: &Scenario,
    seeded: &Seeded,
    seconds: u64,
) -> Result<Calibration> {
    println!("\n== calibration");
    load_get(app, "/health/live", "", Duration::from_secs(1)).await?;
    let floor = load_get(app, "/health/live", "", Duration::from_secs(seconds)).await?;
    println!(
        "   HTTP   {:>8.0} req/s  p50 {:>7.2} ms  p99 {:>7.2} ms  GET /health/live (no auth, no database)",
        floor.per_second, floor.p50_ms, floor.p99_ms
    );
    println!("          CPU: {}", floor.cpu.per_unit(floor.requests as f64, "request"));
    let staff = app.principal_by(&seeded.admin_token, &["staff"], Some(&seeded.mission_id)).await.token;
    let overview = "/api/v1/analytics/overview";
    load_get_expecting(app, overview, &staff, 403, Duration::from_secs(1)).await?;
    let authenticated = load_get_expecting(app, overview, &staff, 403, Duration::from_secs(seconds)).await?;
    println!(
        "   HTTP   {:>8.0} req/s  p50 {:>7.2} ms  p99 {:>7.2} ms  GET {overview} as staff (bearer check, 403, no database)",
        authenticated.per_second, authenticated.p50_ms, authenticated.p99_ms
    );
    println!("          CPU: {}", authenticated.cpu.per_unit(authenticated.requests as f64, "request"));
    let one_row = scenario.path.replace("limit=20", "limit=1");
    load_get(app, &one_row, &scenario.token, Duration::from_secs(1)).await?;
    let one_row = load_get(app, &one_row, &scenario.token, Duration::from_secs(seconds)).await?;
    println!(
        "   HTTP   {:>8.0} req/s  p50 {:>7.2} ms  p99 {:>7.2} ms  the `{}` request with limit=1 (2 rows read)",
        one_row.per_second, one_row.p50_ms, one_row.p99_ms, scenario.name
    );
    println!("          CPU: {}", one_row.cpu.per_unit(one_row.requests as f64, "request"));
    let generic = pgbench(url, scenario, seconds, Variant::GenericPlan).await?;
    println!(
        "   pgbench{:>8.0} tps    avg {:>7.3} ms  the `{}` statement with plan_cache_mode = force_generic_plan",
        generic.tps, generic.latency_ms, scenario.name
    );
    println!("          CPU: {}", generic.cpu.per_unit(generic.tps * generic.cpu.seconds, "transaction"));
    let pool_check = pgbench(url, scenario, seconds, Variant::PoolCheck).await?;
    println!(
        "   pgbench{:>8.0} tps    avg {:>7.3} ms  SELECT $1, then the `{}` statement",
        pool_check.tps, pool_check.latency_ms, scenario.name
    );
    println!(
        "          CPU: {}",
        pool_check.cpu.per_unit(pool_check.tps * pool_check.cpu.seconds, "transaction")
    );
    let (json_us, page_bytes) = json_cost(app, scenario).await?;
    println!(
        "   JSON   {json_us:>8.1} µs to serialize one page ({page_bytes} bytes) from a serde_json::Value, on one core"
    );
    Ok(Calibration {
        seconds,
        scenario: scenario.name.clone(),
        floor,
        authenticated,
        one_row,
        pool_check,
        generic,
        json_us,
        page_bytes,
    })
}

/// Serializing a page of the scenario as a generic `serde_json::Value` (the server
/// serializes typed structs, which is somewhat cheaper): an upper bound of the JSON cost.
async fn json_cost(app: &TestApp, scenario: &Scenario) -> Result<(f64, usize)> {
    let body =
        app.get(&scenario.path, &scenario.token).await.text().await.map_err(|e| format!("GET: {e}"))?;
    let page: Value = consular_tests::serde_json::from_str(&body).map_err(|e| format!("not JSON: {e}"))?;
    let rounds = 2000;
    let started = Instant::now();
    let mut bytes = 0;
    for _ in 0..rounds {
        bytes +=
            consular_tests::serde_json::to_vec(std::hint::black_box(&page)).map_err(|e| e.to_string())?.len();
    }
    let per_page = started.elapsed().as_secs_f64() * 1e6 / f64::from(rounds);
    Ok((per_page, bytes / rounds as usize))
}
