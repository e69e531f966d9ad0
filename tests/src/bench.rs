//! What the benchmarks in `tests/benches/` share (docs/benchmarks.md): environment knobs,
//! where the machine's CPU time went during a measured window (`/proc`), and the
//! PostgreSQL tools and test cluster (psql, pgbench, the bench's database, stopping the
//! cluster a run started).

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub type Result<T, E = String> = std::result::Result<T, E>;

/// A positive number from the environment variable `name`, else `default`.
pub fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).filter(|&n| n > 0).unwrap_or(default)
}

/// `pg_temp.uuid7(at, n)` for a seed script (its `{UUID7}`): a UUIDv7 of instant `at`
/// (48 bits of Unix milliseconds, version 7, variant 10) whose rest is derived from the
/// row number `n`, so that ids made from timestamps sort as production's do.
pub const SEED_UUID7: &str = r#"CREATE FUNCTION pg_temp.uuid7(at timestamptz, n bigint) RETURNS uuid LANGUAGE sql IMMUTABLE AS $$
    SELECT (lpad(to_hex(floor(extract(epoch FROM at) * 1000)::bigint), 12, '0')
        || '7' || lpad(to_hex(n % 4096), 3, '0')
        || to_hex(8 + n % 4) || lpad(to_hex((n * 2654435761) % 281474976710656), 15, '0'))::uuid
$$;"#;

// ------------------------------------------------------------------------------- CPU

/// CPU time (user + system, in clock ticks) of the whole machine, of every process by
/// kind, and of this process's threads by role: where the cores went during a window.
pub struct CpuSample {
    at: Instant,
    /// Busy, total and interrupt (irq + softirq: loopback TCP, mostly) ticks of the
    /// machine (`/proc/stat`); interrupt time is charged to no process.
    busy: u64,
    total: u64,
    interrupts: u64,
    /// pid -> (kind, ticks) for every process but this one.
    processes: HashMap<u32, (&'static str, u64)>,
    /// This process's threads: role -> ticks.
    threads: BTreeMap<&'static str, u64>,
}

/// Seconds of CPU per kind over a window.
pub struct CpuSplit {
    pub seconds: f64,
    /// server, client, other in-process, postgres, pgbench, other processes, interrupts;
    /// "unattributed" is what processes that started or ended within the window used.
    pub kinds: BTreeMap<&'static str, f64>,
    pub busy: f64,
}

pub const TICKS_PER_SECOND: f64 = 100.0; // USER_HZ on Linux

/// `(comm, utime + stime)` of a `/proc/.../stat` line.
pub fn stat_ticks(stat: &str) -> Option<(&str, u64)> {
    let (head, rest) = stat.rsplit_once(')')?;
    let comm = head.split_once('(')?.1;
    // After the name: state (field 3) ... utime and stime (fields 14 and 15).
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some((comm, fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?))
}

impl CpuSample {
    pub fn take() -> CpuSample {
        let mut sample = CpuSample {
            at: Instant::now(),
            busy: 0,
            total: 0,
            interrupts: 0,
            processes: HashMap::new(),
            threads: BTreeMap::new(),
        };
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        if let Some(line) = stat.lines().next() {
            let fields: Vec<u64> = line.split_whitespace().skip(1).filter_map(|f| f.parse().ok()).collect();
            // user nice system idle iowait irq softirq steal (guest time is inside user)
            sample.total = fields.iter().take(8).sum();
            let idle = fields.get(3).copied().unwrap_or(0) + fields.get(4).copied().unwrap_or(0);
            sample.busy = sample.total.saturating_sub(idle);
            sample.interrupts = fields.get(5).copied().unwrap_or(0) + fields.get(6).copied().unwrap_or(0);
        }
        let own = std::process::id();
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
            if pid == own {
                continue;
            }
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            if let Some((comm, ticks)) = stat_ticks(&stat) {
                let kind = match comm {
                    "postgres" => "postgres",
                    "pgbench" => "pgbench",
                    _ => "other processes",
                };
                sample.processes.insert(pid, (kind, ticks));
            }
        }
        for task in std::fs::read_dir("/proc/self/task").into_iter().flatten().flatten() {
            let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
            if let Some((name, ticks)) = stat_ticks(&stat) {
                // actix-server names its workers "actix-server worker N"; the bench's
                // runtime (the load, and the app's background tasks) is "bench-client".
                let role = if name.starts_with("actix-server") {
                    "server"
                } else if name.starts_with("bench-client") {
                    "client"
                } else {
                    "other in-process"
                };
                *sample.threads.entry(role).or_default() += ticks;
            }
        }
        sample
    }

    pub fn since(&self, before: &CpuSample) -> CpuSplit {
        let seconds = self.at.duration_since(before.at).as_secs_f64();
        let ticks = |t: u64| t as f64 / TICKS_PER_SECOND;
        let busy = ticks(self.busy.saturating_sub(before.busy));
        let mut kinds: BTreeMap<&'static str, f64> = BTreeMap::new();
        for (role, now) in &self.threads {
            *kinds.entry(role).or_default() +=
                ticks(now.saturating_sub(*before.threads.get(role).unwrap_or(&0)));
        }
        for (pid, (kind, now)) in &self.processes {
            if let Some((_, then)) = before.processes.get(pid) {
                *kinds.entry(kind).or_default() += ticks(now.saturating_sub(*then));
            }
        }
        kinds.insert("interrupts", ticks(self.interrupts.saturating_sub(before.interrupts)));
        let attributed: f64 = kinds.values().sum();
        kinds.insert("unattributed", (busy - attributed).max(0.0));
        CpuSplit { seconds, kinds, busy }
    }
}

impl CpuSplit {
    pub fn cores(&self, kind: &str) -> f64 {
        self.kinds.get(kind).copied().unwrap_or(0.0) / self.seconds.max(1e-9)
    }

    /// Microseconds of `kind` per unit of work.
    pub fn per(&self, kind: &str, units: f64) -> f64 {
        self.kinds.get(kind).copied().unwrap_or(0.0) / units.max(1.0) * 1e6
    }

    /// "server 120 µs, client 60 µs, postgres 150 µs per request; ..." over `units`.
    pub fn per_unit(&self, units: f64, what: &str) -> String {
        let per = |kind: &str| self.per(kind, units);
        let parts: Vec<String> =
            ["server", "client", "other in-process", "postgres", "pgbench", "interrupts"]
                .into_iter()
                .filter(|kind| per(kind) >= 0.5)
                .map(|kind| format!("{kind} {:.0} µs", per(kind)))
                .collect();
        format!(
            "{} per {what}; cores busy {:.2} (other processes {:.2}, unattributed {:.2})",
            parts.join(", "),
            self.busy / self.seconds.max(1e-9),
            self.cores("other processes"),
            self.cores("unattributed"),
        )
    }

    /// Cores used by what is not this benchmark: other processes and short-lived ones.
    pub fn noise(&self) -> f64 {
        self.cores("other processes") + self.cores("unattributed")
    }
}

/// The cores busy over `window` with nothing of the bench running.
pub async fn machine_noise(window: Duration) -> f64 {
    let before = CpuSample::take();
    tokio::time::sleep(window).await;
    CpuSample::take().since(&before).busy / window.as_secs_f64()
}

pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .and_then(|rest| rest.split_once(':'))
                .map(|(_, m)| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned())
}

// ---------------------------------------------------------------- PostgreSQL tools, cluster

/// The index names of a plan, in order.
pub fn indexes(plan: &str) -> Vec<String> {
    plan.split(" using ")
        .skip(1)
        .filter_map(|rest| rest.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// `program` from `PG_BIN_DIR` or /usr/lib/postgresql/15/bin (as the testkit), else PATH.
pub fn pg_bin(program: &str) -> PathBuf {
    let dir = std::env::var_os("PG_BIN_DIR")
        .map_or_else(|| PathBuf::from("/usr/lib/postgresql/15/bin"), PathBuf::from);
    let path = dir.join(program);
    if path.exists() { path } else { PathBuf::from(program) }
}

/// Runs `sql` (one or more statements, psql meta-commands allowed) in one psql session;
/// unaligned, tuples only. Its output, or an error with psql's.
pub async fn psql(url: &str, sql: &str) -> Result<String> {
    let dir = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let file = dir.path().join("script.sql");
    std::fs::write(&file, sql).map_err(|e| format!("psql script: {e}"))?;
    let output = tokio::process::Command::new(pg_bin("psql"))
        .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", url, "-f"])
        .arg(&file)
        .output()
        .await
        .map_err(|e| format!("cannot run psql: {e}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!("psql failed ({}): {}", output.status, String::from_utf8_lossy(&output.stderr)))
    }
}

/// Drops the bench's database (`postgres://.../consular_test_...`), connected to `postgres`.
pub async fn drop_database(url: &str) -> Result<()> {
    let Some((server, name)) = url.rsplit_once('/') else { return Ok(()) };
    let name = name.split('?').next().unwrap_or(name);
    if !name.starts_with("consular_test_") {
        return Ok(());
    }
    psql(&format!("{server}/postgres"), &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await
        .map(drop)
}

/// `postgres://user@HOST:port/db`: is HOST this machine?
pub fn is_loopback(url: &str) -> bool {
    let authority = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = authority.split(['/', '?']).next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let host = host.strip_prefix('[').map_or_else(
        || host.split(':').next().unwrap_or_default(),
        |v6| v6.split(']').next().unwrap_or_default(),
    );
    matches!(host, "127.0.0.1" | "localhost" | "::1" | "")
}

/// Stops the shared test cluster at the end if this run started it (as `make test` does
/// with `pg-test-cluster stop`); a cluster that was already running, or a `DATABASE_URL`
/// server, is left alone.
pub struct ClusterGuard {
    started_here: bool,
}

impl ClusterGuard {
    pub fn before_start() -> ClusterGuard {
        let external = std::env::var("DATABASE_URL").is_ok_and(|u| u.starts_with("postgres"));
        ClusterGuard { started_here: !external && !shared_cluster_pid_file().exists() }
    }
}

/// Also on a panic (the harness panics when the server cannot start).
impl Drop for ClusterGuard {
    fn drop(&mut self) {
        if !self.started_here {
            return;
        }
        match consular_testkit::postgres::stop_shared_cluster() {
            Ok(true) => println!("\nstopped the PostgreSQL test cluster this run started"),
            Ok(false) => {}
            Err(e) => eprintln!("\ncould not stop the PostgreSQL test cluster: {e}; run `make pg-stop`"),
        }
    }
}

/// The pid file of the shared cluster (`consular_testkit::postgres` keeps its state in
/// `$TMPDIR/consular-testkit-pg-<uid>/`).
pub fn shared_cluster_pid_file() -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    let uid = std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(u32::MAX);
    std::env::temp_dir().join(format!("consular-testkit-pg-{uid}")).join("cluster/data/postmaster.pid")
}

// ------------------------------------------------------------------------------- main

/// The `main` of a PostgreSQL benchmark: refuses a `DATABASE_URL` off this machine (the
/// server binds 127.0.0.1 and the database is the testkit's local cluster unless one is
/// named), runs `run` on a 2-thread runtime (the CPU split counts its threads as the load
/// generator), stops the cluster if the run started it, and says how it went.
pub fn bench_main<F>(name: &str, run: impl FnOnce() -> F) -> std::process::ExitCode
where
    F: std::future::Future<Output = Result<()>>,
{
    use std::process::ExitCode;
    if let Ok(url) = std::env::var("DATABASE_URL")
        && url.starts_with("postgres")
        && !is_loopback(&url)
    {
        eprintln!("{name} bench FAILED: DATABASE_URL is not on 127.0.0.1/localhost; unset it");
        return ExitCode::FAILURE;
    }
    let cluster = ClusterGuard::before_start();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("bench-client")
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("{name} bench FAILED: no tokio runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let started = Instant::now();
    let outcome = runtime.block_on(run());
    runtime.shutdown_timeout(Duration::from_secs(2));
    drop(cluster);
    match outcome {
        Ok(()) => {
            println!("{name}: done in {:.0?}", started.elapsed());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{name} bench FAILED: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Prints `title` with the machine: cores, CPU model, load, and a warning when it is not
/// idle (more than 0.2 cores busy over one second before the run).
pub async fn print_machine(title: &str) {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "{title}\nmachine: nproc {cores}, {}, load average {}",
        cpu_model(),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
    );
    let noise = machine_noise(Duration::from_secs(1)).await;
    if noise > 0.2 {
        println!(
            "WARNING: the machine is not idle ({noise:.2} cores busy before the run): the numbers are noisy"
        );
    }
}

/// Prints `title` with the machine ([`print_machine`]), then starts the server as every
/// PostgreSQL benchmark runs it (2 HTTP workers, a pool of 10, log level `warn`) and
/// prints it; returns it with its database URL.
pub async fn bench_server(title: &str) -> Result<(crate::app::TestApp, String)> {
    print_machine(title).await;
    let app = crate::app::TestApp::spawn_with(crate::backend::Backend::Postgres, |settings| {
        settings.workers = 2;
        settings.db_max_connections = 10;
        settings.log_level = "warn".to_owned();
        // The token scenario measures issuance, not the limiter (60 a minute by default).
        settings.token_rate_limit_per_minute = 100_000_000;
        // Availability is measured as the database answers it; the cache in front of it
        // has its own bench (availability_stampede).
        settings.availability_cache_ms = 0;
        // The booking throughput runs book hundreds of times a second through a few staff
        // clients, far past the per-client cap (120 a minute): the caps are off, unless
        // BENCH_BOOKING_CAPS sets both to a value (one never reached measures what
        // counting costs; docs/benchmarks.md "What the attempt caps cost").
        let caps = u32::try_from(env_number("BENCH_BOOKING_CAPS", 0)).unwrap_or(u32::MAX);
        settings.booking_attempts_per_citizen_per_minute = caps;
        settings.booking_attempts_per_client_per_minute = caps;
    })
    .await;
    let url = app.settings.database_url.clone();
    let server_version = psql(&url, "SHOW server_version").await?;
    println!("server: {} (2 HTTP workers, pool of 10), PostgreSQL {}", app.base_url, server_version.trim());
    Ok((app, url))
}

// ------------------------------------------------------------------------------- HTTP load

/// What one HTTP load run measured.
pub struct HttpRun {
    pub clients: usize,
    pub requests: u64,
    pub per_second: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub cpu: CpuSplit,
}

/// Builds request number `i` (numbers are shared by all clients of a run).
pub type MakeRequest = Arc<dyn Fn(&reqwest::Client, usize) -> Result<reqwest::RequestBuilder> + Send + Sync>;

/// `clients` tasks, each with its own keep-alive connection, sending requests back to
/// back for `duration`; every answer must have status `expected` (else the run fails).
pub async fn load(
    clients: usize,
    make: &MakeRequest,
    next: &Arc<AtomicUsize>,
    expected: u16,
    duration: Duration,
) -> Result<HttpRun> {
    let http = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(clients)
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| format!("HTTP client: {e}"))?;
    let before = CpuSample::take();
    let started = Instant::now();
    let deadline = started + duration;
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (http, make, next) = (http.clone(), make.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            let mut latencies: Vec<u32> = Vec::with_capacity(65_536);
            while Instant::now() < deadline {
                let request = make(&http, next.fetch_add(1, Ordering::Relaxed))?;
                let sent = Instant::now();
                let response = request.send().await.map_err(|e| format!("request: {e}"))?;
                let status = response.status();
                let body = response.bytes().await.map_err(|e| format!("response: {e}"))?;
                if status.as_u16() != expected {
                    return Err(format!("{status}: {}", String::from_utf8_lossy(&body)));
                }
                latencies.push(u32::try_from(sent.elapsed().as_micros()).unwrap_or(u32::MAX));
            }
            Ok::<_, String>(latencies)
        }));
    }
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.map_err(|e| format!("a load task failed: {e}"))??);
    }
    let elapsed = started.elapsed();
    let cpu = CpuSample::take().since(&before);
    if latencies.is_empty() {
        return Err("no request completed".to_owned());
    }
    latencies.sort_unstable();
    let at = |q: f64| f64::from(latencies[((latencies.len() - 1) as f64 * q) as usize]) / 1000.0;
    Ok(HttpRun {
        clients,
        requests: latencies.len() as u64,
        per_second: latencies.len() as f64 / elapsed.as_secs_f64(),
        p50_ms: at(0.50),
        p99_ms: at(0.99),
        cpu,
    })
}

/// The CPU split of scenarios run over HTTP and through pgbench, names `width` wide: µs of
/// the server, the load generator and PostgreSQL per request, of PostgreSQL and pgbench
/// per transaction, and the cores other processes used during each (noise).
pub fn cpu_table(out: &mut String, width: usize, rows: &[(&str, &HttpRun, &DbRun)]) {
    use std::fmt::Write as _;
    let _ = writeln!(
        out,
        "\nCPU per request (HTTP) and per transaction (pgbench), µs; noise: cores used by other processes"
    );
    let _ = writeln!(
        out,
        "{:<width$} {:>7} {:>7} {:>9} {:>10} {:>8} {:>12}",
        "scenario", "server", "client", "PG (HTTP)", "PG (bench)", "pgbench", "noise cores"
    );
    for (name, http, db) in rows {
        let (requests, transactions) = (http.requests as f64, db.tps * db.cpu.seconds);
        let _ = writeln!(
            out,
            "{name:<width$} {:>7.0} {:>7.0} {:>9.0} {:>10.0} {:>8.0} {:>7.2}/{:.2}",
            http.cpu.per("server", requests),
            http.cpu.per("client", requests),
            http.cpu.per("postgres", requests),
            db.cpu.per("postgres", transactions),
            db.cpu.per("pgbench", transactions),
            http.cpu.noise(),
            db.cpu.noise(),
        );
    }
}

// ------------------------------------------------------------------------------- pgbench

/// What one pgbench run measured.
pub struct DbRun {
    pub clients: usize,
    pub transactions: u64,
    pub tps: f64,
    pub latency_ms: f64,
    /// Average latency of each command of the script (`pgbench -r`), in ms, with its text.
    pub commands: Vec<(f64, String)>,
    pub cpu: CpuSplit,
}

/// `pgbench -n -r -M prepared -c clients -j 2 -T seconds -f script` with `-D name=value`s
/// and the environment `env` (e.g. `PGOPTIONS`), its CPU split sampled inside the run.
pub async fn pgbench(
    url: &str,
    script: &str,
    defines: &[(&str, String)],
    env: &[(&str, &str)],
    clients: usize,
    seconds: u64,
) -> Result<DbRun> {
    let dir = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let file = dir.path().join("script.sql");
    std::fs::write(&file, script).map_err(|e| format!("pgbench script: {e}"))?;
    let mut command = tokio::process::Command::new(pg_bin("pgbench"));
    command.args(["-n", "-r", "-M", "prepared", "-j", "2"]);
    command.args(["-c", &clients.to_string(), "-T", &seconds.to_string()]).arg("-f").arg(&file);
    for (name, value) in defines {
        command.arg("-D").arg(format!("{name}={value}"));
    }
    command.envs(env.iter().copied());
    command.arg(url).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let child = command.spawn().map_err(|e| format!("cannot run pgbench: {e}"))?;
    // CPU is sampled inside the run, while its connections (and their backends) live.
    let margin = Duration::from_millis(if seconds >= 4 { 1000 } else { 500 });
    tokio::time::sleep(margin).await;
    let before = CpuSample::take();
    tokio::time::sleep(Duration::from_secs(seconds).saturating_sub(2 * margin)).await;
    let cpu = CpuSample::take().since(&before);
    let output = child.wait_with_output().await.map_err(|e| format!("pgbench: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let failed =
        format!("pgbench failed ({}):\n{stdout}{}", output.status, String::from_utf8_lossy(&output.stderr));
    if !output.status.success() {
        return Err(failed);
    }
    let value = |prefix: &str| -> Option<f64> {
        stdout.lines().find_map(|l| l.trim().strip_prefix(prefix))?.split_whitespace().next()?.parse().ok()
    };
    let (Some(tps), Some(latency_ms), Some(transactions)) =
        (value("tps = "), value("latency average = "), value("number of transactions actually processed: "))
    else {
        return Err(failed);
    };
    if value("number of failed transactions: ").is_some_and(|n| n > 0.0) {
        return Err(failed);
    }
    // After "statement latencies in milliseconds...": "  0.123  0  UPDATE ..." per command.
    let commands = stdout
        .lines()
        .skip_while(|l| !l.starts_with("statement latencies"))
        .skip(1)
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let ms = words.next()?.parse::<f64>().ok()?;
            let rest: Vec<&str> = words.skip_while(|w| w.parse::<f64>().is_ok()).collect();
            Some((ms, rest.join(" ")))
        })
        .collect();
    Ok(DbRun { clients, transactions: transactions as u64, tps, latency_ms, commands, cpu })
}
