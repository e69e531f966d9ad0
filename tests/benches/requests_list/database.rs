//! The same SQL and the same plan as the adapter's, and pgbench on it.

use super::*;

/// The statement the server's connections last ran (`pg_stat_activity.query`, with its
/// `$n` placeholders) must be this file's, so that pgbench measures the very same thing.
pub(crate) async fn same_sql_as_the_adapter(url: &str, scenario: &Scenario) -> Result<()> {
    let seen = psql(
        url,
        "SELECT DISTINCT regexp_replace(query, '\\s+', ' ', 'g') FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'SELECT %service_requests%'",
    )
    .await?;
    let ours = scenario.sql.split_whitespace().collect::<Vec<_>>().join(" ");
    if seen.lines().any(|line| line.trim() == ours) {
        println!("   SQL    the server ran exactly the bench's statement (pg_stat_activity)");
        Ok(())
    } else {
        Err(format!(
            "the server's SQL is not the bench's (update `sql` in tests/benches/requests_list.rs)\n\
             bench:  {ours}\nserver: {}",
            seen.trim().replace('\n', "\n        ")
        ))
    }
}

/// The adapter's EXPLAIN (seq scans and sorts disabled, custom plan) and ours under the
/// same settings must use the same indexes; then the plans PostgreSQL really runs: the
/// custom plan (with EXPLAIN ANALYZE) and the generic plan that a prepared statement
/// switches to after five executions (both the server and pgbench -M prepared use them).
pub(crate) async fn same_plan_as_the_adapter(url: &str, scenario: &Scenario) -> Result<Plan> {
    let db = consular_db::Database::connect(&consular_db::DbConfig::new(url.to_owned()))
        .map_err(|e| format!("database handle: {e}"))?;
    let adapter =
        db.explain_request_list(scenario.filter.clone(), PageRequest { limit: 20, after: None }).await;
    db.close();
    let adapter = adapter.map_err(|e| format!("the adapter's EXPLAIN: {e}"))?.join("\n");

    let values = scenario.params.iter().map(|v| format!("'{v}'")).collect::<Vec<_>>().join(", ");
    let script = format!(
        "PREPARE list AS {sql};\n\
         BEGIN;\nSET LOCAL enable_seqscan = off;\nSET LOCAL enable_sort = off;\n\
         EXPLAIN EXECUTE list({values});\nCOMMIT;\n\\echo ====\n\
         EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY OFF) EXECUTE list({values});\n\\echo ====\n\
         EXPLAIN EXECUTE list({values});\n\\echo ====\n\
         SET plan_cache_mode = force_generic_plan;\n\
         EXPLAIN EXECUTE list({values});\n",
        sql = scenario.sql
    );
    let out = psql(url, &script).await?;
    let parts: Vec<&str> = out.split("====\n").collect();
    let [ours, analyzed, custom, generic] = parts.as_slice() else {
        return Err(format!("unexpected EXPLAIN output: {out}"));
    };
    let (adapter_indexes, our_indexes) = (indexes(&adapter), indexes(ours));
    if adapter_indexes.is_empty() || adapter_indexes != our_indexes {
        return Err(format!(
            "not the same plan as the adapter's query:\nadapter:\n{adapter}\nbench:\n{ours}"
        ));
    }
    let (custom_indexes, generic_indexes) = (indexes(custom), indexes(generic));
    println!(
        "   plan   adapter and bench: {}; as run (custom plan, EXPLAIN ANALYZE):\n            {}",
        adapter_indexes.join(", "),
        analyzed.trim().replace('\n', "\n            ")
    );
    if generic_indexes != custom_indexes {
        println!(
            "   NOTE   the generic plan uses {} instead:\n            {}",
            if generic_indexes.is_empty() { "no index".to_owned() } else { generic_indexes.join(", ") },
            generic.trim().replace('\n', "\n            ")
        );
    }
    let (custom_cost, generic_cost) = (total_cost(custom)?, total_cost(generic)?);
    // PostgreSQL keeps a prepared statement's generic plan once it is no dearer than the
    // custom plans' average cost plus an estimate of planning (1000 cpu_operator_cost per
    // relation + 1: 5 here); otherwise it plans again at every execution.
    let replanned = generic_cost > custom_cost + 5.0;
    if replanned {
        println!(
            "   NOTE   generic plan cost {generic_cost:.0} vs custom {custom_cost:.2}: PostgreSQL plans this prepared \
             statement again at every execution (the LIMIT is a bind parameter, estimated at 10% of the rows)"
        );
    }
    let scan = analyzed.lines().find(|l| l.contains(" using ")).map_or("", str::trim);
    Ok(Plan { scan: scan.trim_start_matches("->").trim().to_owned(), custom_cost, generic_cost, replanned })
}

/// The plan of a scenario's statement as PostgreSQL runs it.
pub(crate) struct Plan {
    /// The index scan line of EXPLAIN ANALYZE.
    pub(crate) scan: String,
    pub(crate) custom_cost: f64,
    pub(crate) generic_cost: f64,
    /// The generic plan looks dearer: every execution is planned anew.
    pub(crate) replanned: bool,
}

/// The total cost of a plan's top node: `cost=0.42..4.97` -> 4.97.
fn total_cost(plan: &str) -> Result<f64> {
    plan.lines()
        .next()
        .and_then(|line| line.split("cost=").nth(1))
        .and_then(|cost| cost.split_once(".."))
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(|total| total.parse().ok())
        .ok_or_else(|| format!("no cost in the plan:\n{plan}"))
}

// ----------------------------------------------------------------------------- pgbench

/// What pgbench runs besides the scenario's statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Variant {
    /// The statement alone.
    Plain,
    /// `SELECT $1` first, as the server's pool does when it hands out a connection
    /// (diesel-async `RecyclingMethod::Verified`): the database work of one request.
    PoolCheck,
    /// The statement alone with `plan_cache_mode = force_generic_plan`: planned once per
    /// connection instead of at every execution.
    GenericPlan,
}

/// `pgbench -n -M prepared -c N -j 2 -T seconds` on the scenario's statement; its
/// placeholders become pgbench variables, sent as bind parameters like diesel-async does.
pub(crate) async fn pgbench(url: &str, scenario: &Scenario, seconds: u64, variant: Variant) -> Result<DbRun> {
    let pool_check = variant == Variant::PoolCheck;
    let mut script = scenario.sql.clone();
    for n in (1..=scenario.params.len()).rev() {
        script = script.replace(&format!("${n}"), &format!(":p{n}"));
    }
    let check = if pool_check { "SELECT :one;\n" } else { "" };
    let mut defines: Vec<(String, String)> =
        scenario.params.iter().enumerate().map(|(n, value)| (format!("p{}", n + 1), value.clone())).collect();
    if pool_check {
        defines.push(("one".to_owned(), "1".to_owned()));
    }
    let defines: Vec<(&str, String)> =
        defines.iter().map(|(name, value)| (name.as_str(), value.clone())).collect();
    let env: &[(&str, &str)] = if variant == Variant::GenericPlan {
        &[("PGOPTIONS", "-c plan_cache_mode=force_generic_plan")]
    } else {
        &[]
    };
    bench::pgbench(url, &format!("{check}{script};\n"), &defines, env, clients(), seconds).await
}
