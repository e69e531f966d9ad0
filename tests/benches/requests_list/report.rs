//! The printed tables.

use super::*;

/// The scenarios beside the list, each with what pgbench ran for it.
pub(crate) fn print_pairs(pairs: &[more::Pair]) {
    let mut out = String::new();
    let _ = writeln!(out, "\nthe other scenarios, each beside its database counterpart through pgbench:");
    let rows: Vec<Row> =
        pairs.iter().map(|p| (p.name.as_str(), &p.http, &p.db, p.counterpart.as_str())).collect();
    side_by_side(&mut out, 28, &rows);
    print!("{out}");
}

/// The detail read by its owner and by their representative (`acting.rs`): what
/// resolving the mandate at each call costs.
pub(crate) fn print_acting((own, acting): &(HttpRun, HttpRun)) {
    println!("\nacting for someone (GET /api/v1/requests/{{id}}, {} clients):", own.clients);
    for (who, run) in [("the owner", own), ("their guardian, On-Behalf-Of", acting)] {
        println!(
            "   {who:<30} {:>8.0} req/s  p50 {:>6.2} ms  p99 {:>6.2} ms  CPU {}",
            run.per_second,
            run.p50_ms,
            run.p99_ms,
            run.cpu.per_unit(run.requests as f64, "request")
        );
    }
}

/// A scenario's name, its HTTP and pgbench runs, and what pgbench ran (or nothing).
type Row<'a> = (&'a str, &'a HttpRun, &'a DbRun, &'a str);

/// Two tables of scenarios, names `width` wide: throughput and latency over HTTP beside
/// pgbench with their ratio, then the CPU split ([`bench::cpu_table`]).
fn side_by_side(out: &mut String, width: usize, rows: &[Row]) {
    let _ = writeln!(
        out,
        "{:<width$} {:>9} {:>8} {:>8} {:>9} {:>8} {:>7}",
        "scenario", "HTTP r/s", "p50 ms", "p99 ms", "DB tps", "DB ms", "HTTP/DB"
    );
    for (name, http, db, ran) in rows {
        let _ = writeln!(
            out,
            "{name:<width$} {:>9.0} {:>8.2} {:>8.2} {:>9.0} {:>8.3} {:>6.0}%  {ran}",
            http.per_second,
            http.p50_ms,
            http.p99_ms,
            db.tps,
            db.latency_ms,
            100.0 * http.per_second / db.tps,
        );
    }
    let cpu: Vec<_> = rows.iter().map(|&(name, http, db, _)| (name, http, db)).collect();
    bench::cpu_table(out, width, &cpu);
}

pub(crate) fn print_table(
    results: &[Measured],
    calibration: &Calibration,
    seconds: u64,
    warmup: u64,
    rows: usize,
) {
    let clients = clients();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nGET /api/v1/requests on PostgreSQL, {rows} service requests; {clients} keep-alive clients for {seconds} s \
         after {warmup} s of warm-up; pgbench -c {clients} -j 2 -T {seconds} -M prepared on the same statement"
    );
    let rows: Vec<Row> = results.iter().map(|r| (r.name.as_str(), &r.http, &r.db, "")).collect();
    side_by_side(&mut out, 40, &rows);
    let (floor, one_row, checked) = (&calibration.floor, &calibration.one_row, &calibration.pool_check);
    let _ = writeln!(
        out,
        "\ncalibration ({} s each; CPU in µs per request or transaction):",
        calibration.seconds
    );
    let mut http_line = |label: String, run: &HttpRun| {
        let requests = run.requests as f64;
        let _ = writeln!(
            out,
            "  {label:<48} {:>6.0} req/s  p50 {:>5.2} ms  server {:>3.0}  client {:>3.0}  postgres {:>3.0}",
            run.per_second,
            run.p50_ms,
            run.cpu.per("server", requests),
            run.cpu.per("client", requests),
            run.cpu.per("postgres", requests),
        );
    };
    http_line("GET /health/live (no auth, no database)".to_owned(), floor);
    http_line("bearer check only (403, no database)".to_owned(), &calibration.authenticated);
    http_line(format!("{}, limit=1 (2 rows)", calibration.scenario), one_row);
    let mut db_line = |label: String, run: &DbRun| {
        let _ = writeln!(
            out,
            "  {label:<48} {:>6.0} tps    avg {:>5.3} ms  postgres {:.0}",
            run.tps,
            run.latency_ms,
            run.cpu.per("postgres", run.tps * run.cpu.seconds),
        );
    };
    db_line(format!("pgbench: SELECT $1 (pool check) + {}", calibration.scenario), checked);
    db_line(format!("pgbench: {}, generic plan", calibration.scenario), &calibration.generic);
    let _ = writeln!(
        out,
        "  {:<48} {:>6.1} µs",
        format!("JSON of one page ({} bytes) from a serde_json::Value", calibration.page_bytes),
        calibration.json_us
    );
    let _ = writeln!(out, "\nplans (as run) and page sizes:");
    for r in results {
        let _ = writeln!(out, "  {:<40} {} ({} bytes/page)", r.name, r.plan.scan, r.page_bytes);
        if r.plan.replanned {
            let _ = writeln!(
                out,
                "  {:<40} planned again at every execution: generic plan cost {:.0} vs custom {:.2}",
                "", r.plan.generic_cost, r.plan.custom_cost
            );
        }
    }
    print!("{out}");
}
