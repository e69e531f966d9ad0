//! The concurrency sweep: the first scenario against the server in a process of its own.

use super::*;

/// The keep-alive connections of the sweep.
const SWEEP: [usize; 3] = [8, 64, 512];

/// The first scenario with 8, 64 and 512 keep-alive connections against the server in
/// a process of its own (the `consular` binary with the in-process server's settings, on
/// the same database): throughput, latency and the server process's resident memory at
/// each, now and at its peak (any error or non-200 fails the run, as everywhere).
pub(crate) async fn sweep(
    app: &TestApp,
    scenario: &Scenario,
    seconds: u64,
) -> Result<Vec<(HttpRun, (f64, f64))>> {
    println!("\n== concurrency sweep: {} (the server in its own process)", scenario.name);
    let dir = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let (server, _) = ServerProcess::start(&app.settings, &[], dir.path()).await;
    let url = format!("http://127.0.0.1:{}{}", server.port, scenario.path);
    let token = scenario.token.clone();
    let make: MakeRequest = Arc::new(move |http: &reqwest::Client, _| Ok(http.get(&url).bearer_auth(&token)));
    let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    let started = rss_of(server.pid);
    println!("   server pid {}, RSS {:.0} MiB after start", server.pid, mib(started.0));
    let mut runs = Vec::new();
    for clients in SWEEP {
        let run =
            load(clients, &make, &Arc::new(AtomicUsize::new(0)), 200, Duration::from_secs(seconds)).await?;
        let (rss, peak) = rss_of(server.pid);
        let rss = (mib(rss), mib(peak));
        println!(
            "   {clients:>4} connections  {:>7.0} req/s  p50 {:>6.2} ms  p99 {:>7.2} ms  server RSS {:.0} MiB (peak {:.0})",
            run.per_second, run.p50_ms, run.p99_ms, rss.0, rss.1
        );
        runs.push((run, rss));
    }
    server.terminate();
    Ok(runs)
}

pub(crate) fn print_sweep(scenario: &Scenario, runs: &[(HttpRun, (f64, f64))]) {
    println!(
        "\nconcurrency sweep, `{}` (errors: none, or the run would have failed; RSS: the server's own process):",
        scenario.name
    );
    println!(
        "  {:>11} {:>9} {:>8} {:>8} {:>9} {:>9}",
        "connections", "req/s", "p50 ms", "p99 ms", "RSS MiB", "peak MiB"
    );
    for (run, (rss, peak)) in runs {
        println!(
            "  {:>11} {:>9.0} {:>8.2} {:>8.2} {:>9.0} {:>9.0}",
            run.clients, run.per_second, run.p50_ms, run.p99_ms, rss, peak
        );
    }
}
