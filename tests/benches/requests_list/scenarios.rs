//! The list scenarios, each measured over HTTP (every page checked) and through pgbench.

use super::*;

/// The columns of `RequestRow::as_select()`, as diesel writes them.
pub(crate) const SELECT: &str = r#"SELECT "service_requests"."id", "service_requests"."mission_id", "service_requests"."citizen_id", "service_requests"."service_type_id", "service_requests"."status", "service_requests"."stages", "service_requests"."current_stage", "service_requests"."assignee_id", "service_requests"."submitted_at", "service_requests"."sla_due_at", "service_requests"."closed_at", "service_requests"."version", "service_requests"."updated_at" FROM "service_requests""#;
const NEWEST_FIRST: &str = r#"ORDER BY "service_requests"."id" DESC"#;

pub(crate) struct Scenario {
    pub(crate) name: String,
    /// Path and query string.
    pub(crate) path: String,
    pub(crate) token: String,
    /// What the use case hands the adapter for this page (for its own EXPLAIN).
    pub(crate) filter: RequestFilter,
    /// The statement the adapter sends, with `$n` placeholders ...
    pub(crate) sql: String,
    /// ... and their values (LIMIT is the page size + 1: one more row tells whether a
    /// next page exists).
    pub(crate) params: Vec<String>,
    /// Checks one item of a page.
    pub(crate) item_check: Box<dyn Fn(&Value) -> bool>,
}

pub(crate) fn scenarios(seeded: &Seeded) -> Result<Vec<Scenario>> {
    let mission_admin = seeded.mission_admin_token.clone();
    let mission = seeded.mission_id.clone();
    let mission_uuid: uuid::Uuid = mission.parse().map_err(|e| format!("mission id: {e}"))?;
    Ok(vec![
        Scenario {
            name: "limit=20, global admin".to_owned(),
            path: "/api/v1/requests?limit=20".to_owned(),
            token: seeded.admin_token.clone(),
            filter: RequestFilter::default(),
            sql: format!("{SELECT} {NEWEST_FIRST} LIMIT $1"),
            params: vec!["21".to_owned()],
            item_check: Box::new(|_| true),
        },
        Scenario {
            name: "status=in_review&limit=20, global admin".to_owned(),
            path: "/api/v1/requests?status=in_review&limit=20".to_owned(),
            token: seeded.admin_token.clone(),
            filter: RequestFilter { statuses: vec![RequestStatus::InReview], ..RequestFilter::default() },
            sql: format!(r#"{SELECT} WHERE ("service_requests"."status" = $1) {NEWEST_FIRST} LIMIT $2"#),
            params: vec!["in_review".to_owned(), "21".to_owned()],
            item_check: Box::new(|item| item["status"] == "in_review"),
        },
        Scenario {
            name: "limit=20, mission admin".to_owned(),
            path: "/api/v1/requests?limit=20".to_owned(),
            token: mission_admin,
            filter: RequestFilter { mission_id: Some(MissionId(mission_uuid)), ..RequestFilter::default() },
            sql: format!(r#"{SELECT} WHERE ("service_requests"."mission_id" = $1) {NEWEST_FIRST} LIMIT $2"#),
            params: vec![mission.clone(), "21".to_owned()],
            item_check: Box::new(move |item| item["mission_id"] == mission.as_str()),
        },
    ])
}

/// The numbers of one scenario.
pub(crate) struct Measured {
    pub(crate) name: String,
    pub(crate) http: HttpRun,
    pub(crate) db: DbRun,
    pub(crate) page_bytes: usize,
    pub(crate) plan: Plan,
}

pub(crate) async fn measure(
    app: &TestApp,
    url: &str,
    scenario: &Scenario,
    warmup: u64,
    seconds: u64,
) -> Result<Measured> {
    println!("\n== {}: GET {}", scenario.name, scenario.path);
    let page_bytes = check_page(app, scenario).await?;

    load_get(app, &scenario.path, &scenario.token, Duration::from_secs(warmup)).await?;
    let http = load_get(app, &scenario.path, &scenario.token, Duration::from_secs(seconds)).await?;
    print_http(
        &http,
        &format!("{} requests, {} clients, page {page_bytes} bytes", http.requests, http.clients),
    );

    same_sql_as_the_adapter(url, scenario).await?;
    let plan = same_plan_as_the_adapter(url, scenario).await?;

    let db = pgbench(url, scenario, seconds, Variant::Plain).await?;
    print_pgbench(&db, &format!("{} transactions, {} clients, -M prepared", db.transactions, db.clients));
    Ok(Measured { name: scenario.name.clone(), http, db, page_bytes, plan })
}

/// The lines of an HTTP run as it is measured: throughput, latency, `note`, the CPU split.
pub(crate) fn print_http(run: &HttpRun, note: &str) {
    println!(
        "   HTTP   {:>8.0} req/s  p50 {:>7.2} ms  p99 {:>7.2} ms  ({note})",
        run.per_second, run.p50_ms, run.p99_ms
    );
    println!("          CPU: {}", run.cpu.per_unit(run.requests as f64, "request"));
}

/// The lines of a pgbench run as it is measured.
pub(crate) fn print_pgbench(run: &DbRun, note: &str) {
    println!("   pgbench{:>8.0} tps    avg {:>7.3} ms  ({note})", run.tps, run.latency_ms);
    println!("          CPU: {}", run.cpu.per_unit(run.tps * run.cpu.seconds, "transaction"));
}

/// One request: 200, 20 items that pass the scenario's check, a next cursor. The body size.
async fn check_page(app: &TestApp, scenario: &Scenario) -> Result<usize> {
    let response = app.get(&scenario.path, &scenario.token).await;
    let status = response.status();
    let body = response.text().await.map_err(|e| format!("GET {}: {e}", scenario.path))?;
    if status.as_u16() != 200 {
        return Err(format!("GET {}: {status}: {body}", scenario.path));
    }
    let page: Value = consular_tests::serde_json::from_str(&body).map_err(|e| format!("not JSON: {e}"))?;
    let items = page["items"].as_array().ok_or_else(|| format!("no items in {page}"))?;
    if items.len() != 20 || !page["next_cursor"].is_string() || !items.iter().all(&scenario.item_check) {
        return Err(format!("GET {}: not a full page of matching requests: {page}", scenario.path));
    }
    // Newest first by id and by submission alike: the seeded ids follow `submitted_at`.
    let newest_first = items.windows(2).all(|pair| {
        let key = |item: &Value| {
            let submitted = item["submitted_at"].as_str().and_then(|t| {
                time::OffsetDateTime::parse(t, &time::format_description::well_known::Rfc3339).ok()
            });
            (item["id"].as_str().and_then(|id| id.parse::<uuid::Uuid>().ok()), submitted)
        };
        let ((id0, at0), (id1, at1)) = (key(&pair[0]), key(&pair[1]));
        id0.is_some() && at0.is_some() && id0 > id1 && at0 >= at1
    });
    if !newest_first {
        return Err(format!("GET {}: the page is not newest first: {page}", scenario.path));
    }
    Ok(body.len())
}

// --------------------------------------------------------------------------- HTTP load

/// `clients()` keep-alive clients sending `GET path` (with `token`) back to back for
/// `duration`; any failure or non-200 ends the run with an error.
pub(crate) async fn load_get(app: &TestApp, path: &str, token: &str, duration: Duration) -> Result<HttpRun> {
    load_get_expecting(app, path, token, 200, duration).await
}

/// [`load_get`], every answer having `status`.
pub(crate) async fn load_get_expecting(
    app: &TestApp,
    path: &str,
    token: &str,
    status: u16,
    duration: Duration,
) -> Result<HttpRun> {
    let url = app.url(path);
    let token = token.to_owned();
    let make: MakeRequest = Arc::new(move |http: &reqwest::Client, _| {
        let request = http.get(&url);
        Ok(if token.is_empty() { request } else { request.bearer_auth(&token) })
    });
    load(clients(), &make, &Arc::new(AtomicUsize::new(0)), status, duration).await
}
