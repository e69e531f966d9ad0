//! Measurement 3 (see `main.rs`): read-your-writes under a steady write load. Writers add a
//! note over HTTP on the replicated node (which marks it before answering) and read the
//! requests list through the ports as themselves, each on a `Database` of their own, so
//! that its counts say which server served each read. The alternative the issue names, a
//! fixed window after each write during which the writer's reads go to the primary, is
//! computed from the same reads' times since their writer's last write answer.

use crate::Knobs;
use crate::measure::{list_as, served};
use crate::world::{Caller, Submissions, World, on_pair};
use consular_testkit::replication::Role;
use consular_tests::bench::Result;
use consular_tests::consular_db::Database;
use consular_tests::serde_json::json;
use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The gaps between a write's answer and its writer's next read.
const GAPS_MS: [u64; 3] = [0, 5, 50];
/// Writers of the gap runs and of the sessions.
const GAP_WRITERS: usize = 4;
const SESSION_WRITERS: usize = 8;
/// A session's reads after its write: one at once, then one every READ_EVERY until the
/// session's length (uniform in SESSION_MIN..SESSION_MAX).
const READ_EVERY: Duration = Duration::from_millis(200);
const SESSION_MIN_MS: u64 = 200;
const SESSION_MAX_MS: u64 = 4000;
/// The windows of the alternative.
const WINDOWS_MS: [u64; 2] = [1000, 2000];
/// How often `pg_stat_replication.replay_lag` is sampled.
const LAG_EVERY: Duration = Duration::from_millis(250);

/// One tolerant read of a writer.
#[derive(Clone, Copy)]
struct Read {
    /// From its writer's last write answer to the read's start.
    since_write: Duration,
    /// Served by the replica (else the primary).
    replica: bool,
    /// How long the read took, µs.
    micros: f64,
}

/// A writer with its own `Database` (pools of 2 on each server, its own counts).
struct Writer {
    caller: Caller,
    db: Database,
    /// `POST /api/v1/requests/{id}/notes` on the replicated node.
    notes: String,
}

impl Writer {
    /// Adds a note; the instant its answer arrived.
    async fn write(&self, http: &reqwest::Client) -> Result<Instant> {
        let response = http
            .post(&self.notes)
            .bearer_auth(&self.caller.token)
            .json(&json!({ "body": "Read-your-writes bench note." }))
            .send()
            .await
            .map_err(|e| format!("note: {e}"))?;
        let status = response.status();
        let body = response.bytes().await.map_err(|e| format!("note: {e}"))?;
        if status != 201 {
            return Err(format!("note: {status} {}", String::from_utf8_lossy(&body)));
        }
        Ok(Instant::now())
    }

    /// Reads the list as this writer; which server served it.
    async fn read(&self, world: &World, answered: Instant) -> Result<Read> {
        let before = served(&self.db)?;
        let started = Instant::now();
        list_as(&self.db, world, self.caller.subject).await?;
        let micros = started.elapsed().as_secs_f64() * 1e6;
        let after = served(&self.db)?;
        if after.replica + after.primary != before.replica + before.primary + 1 {
            return Err("a read counted other than once".to_owned());
        }
        Ok(Read {
            since_write: started.duration_since(answered),
            replica: after.replica > before.replica,
            micros,
        })
    }
}

/// A tiny deterministic generator (xorshift64*) for the session lengths.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }
}

/// Write, wait `gap`, read, until `deadline`.
async fn gap_loop(world: &World, writer: &Writer, gap: Duration, deadline: Instant) -> Result<Vec<Read>> {
    let http = consular_tests::http_client();
    let mut reads = Vec::new();
    while Instant::now() < deadline {
        let answered = writer.write(&http).await?;
        if !gap.is_zero() {
            tokio::time::sleep(gap).await;
        }
        reads.push(writer.read(world, answered).await?);
    }
    Ok(reads)
}

/// Sessions until `deadline`: a write, a read at once and one every READ_EVERY until the
/// session's length, again.
async fn sessions(world: &World, writer: &Writer, seed: u64, deadline: Instant) -> Result<Vec<Read>> {
    let http = consular_tests::http_client();
    let mut rng = Rng(seed);
    let mut reads = Vec::new();
    while Instant::now() < deadline {
        let answered = writer.write(&http).await?;
        let length = Duration::from_millis(SESSION_MIN_MS + rng.below(SESSION_MAX_MS - SESSION_MIN_MS));
        let mut at = answered;
        while at.duration_since(answered) < length && Instant::now() < deadline {
            tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await;
            reads.push(writer.read(world, answered).await?);
            at += READ_EVERY;
        }
    }
    Ok(reads)
}

/// Samples `pg_stat_replication.replay_lag` (ms; `None` when the primary shows none, as
/// when nothing is in flight) until stopped.
struct LagSampler {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<Result<Vec<Option<f64>>>>,
}

impl LagSampler {
    fn start(world: &World) -> LagSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let (flag, pair) = (Arc::clone(&stop), Arc::clone(&world.pair));
        let task = tokio::spawn(async move {
            let mut samples = Vec::new();
            let mut ticker = tokio::time::interval(LAG_EVERY);
            while !flag.load(Ordering::Relaxed) {
                ticker.tick().await;
                let lag = on_pair(&pair, |p| {
                    p.query(
                        Role::Primary,
                        "postgres",
                        "SELECT EXTRACT(epoch FROM replay_lag) * 1000 FROM pg_stat_replication",
                    )
                })
                .await?;
                samples.push(lag.trim().parse::<f64>().ok());
            }
            Ok(samples)
        });
        LagSampler { stop, task }
    }

    async fn stop(self) -> Result<Vec<Option<f64>>> {
        self.stop.store(true, Ordering::Relaxed);
        self.task.await.map_err(|e| format!("the lag sampler: {e}"))?
    }
}

fn share(count: usize, of: usize) -> f64 {
    100.0 * count as f64 / of.max(1) as f64
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * q) as usize]
}

fn sorted(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    values
}

/// Runs `run` for each writer concurrently; all their reads.
async fn all_writers<'a, F>(writers: &'a [Writer], run: impl Fn(&'a Writer, u64) -> F) -> Result<Vec<Read>>
where
    F: std::future::Future<Output = Result<Vec<Read>>> + 'a,
{
    let runs = futures_util::future::join_all(writers.iter().zip(1u64..).map(|(w, seed)| run(w, seed))).await;
    Ok(runs.into_iter().collect::<Result<Vec<_>>>()?.concat())
}

/// Measurement 3: the gap runs and the sessions under the citizens' steady submissions.
pub async fn read_your_writes(world: &World, knobs: Knobs, out: &mut String) -> Result<()> {
    println!("3. read-your-writes: write, then read at a gap of 0/5/50 ms, then sessions ...");
    let writers = world
        .staff
        .iter()
        .take(SESSION_WRITERS)
        .zip(world.requests.iter())
        .map(|(caller, request)| {
            Ok(Writer {
                caller: caller.clone(),
                db: world.replicated_database(2)?,
                notes: world.replicated.url(&format!("/api/v1/requests/{request}/notes")),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    world.caught_up().await?;
    let load = Submissions::start(&world.replicated, &world.citizens, &world.service, knobs.write_rate);
    let lag = LagSampler::start(world);
    let started = Instant::now();
    let outcome: Result<(Vec<Vec<Read>>, Vec<Read>)> = async {
        let mut gaps = Vec::new();
        for gap in GAPS_MS {
            let deadline = Instant::now() + knobs.ryw_seconds;
            let gap = Duration::from_millis(gap);
            let gap_writers = &writers[..GAP_WRITERS.min(writers.len())];
            gaps.push(all_writers(gap_writers, |w, _| gap_loop(world, w, gap, deadline)).await?);
        }
        let deadline = Instant::now() + knobs.ryw_seconds;
        Ok((gaps, all_writers(&writers, |w, seed| sessions(world, w, seed, deadline)).await?))
    }
    .await;
    let elapsed = started.elapsed().as_secs_f64();
    let lags = lag.stop().await;
    let submitted = load.stop().await;
    for writer in &writers {
        writer.db.close();
    }
    let ((gaps, session), lags, submitted) = (outcome?, lags?, submitted?);

    let _ = writeln!(
        out,
        "\n3. Read-your-writes: staff add a note over HTTP on the replicated node (marked), then read the \
         requests list as themselves through the ports; citizens submit {:.0}/s meanwhile",
        submitted as f64 / elapsed
    );
    let _ = writeln!(
        out,
        "  {:<10} {:>6} {:>10} {:>11} {:>11} {:>12} {:>12}",
        "gap", "reads", "gap p50", "replica %", "primary %", "read µs rep", "read µs prim"
    );
    for (gap, reads) in GAPS_MS.iter().zip(&gaps) {
        let replica = reads.iter().filter(|r| r.replica).count();
        let actual = sorted(reads.iter().map(|r| r.since_write.as_secs_f64() * 1000.0));
        let rep = sorted(reads.iter().filter(|r| r.replica).map(|r| r.micros));
        let prim = sorted(reads.iter().filter(|r| !r.replica).map(|r| r.micros));
        let _ = writeln!(
            out,
            "  {:<10} {:>6} {:>7.2} ms {:>10.1}% {:>10.1}% {:>12.0} {:>12.0}",
            format!("{gap} ms"),
            reads.len(),
            quantile(&actual, 0.5),
            share(replica, reads.len()),
            share(reads.len() - replica, reads.len()),
            quantile(&rep, 0.5),
            quantile(&prim, 0.5),
        );
    }
    let _ = writeln!(
        out,
        "  (a fixed window of 1 s or 2 s after each write would send 100% of these reads to the primary)"
    );

    let total = session.len();
    let by_marks = session.iter().filter(|r| r.replica).count();
    let mut line = format!(
        "  sessions ({SESSION_WRITERS} staff, a read at once then every {} ms for {:.1}-{:.1} s after each write): \
         {total} reads; replica served {:.1}% by WAL marks",
        READ_EVERY.as_millis(),
        SESSION_MIN_MS as f64 / 1000.0,
        SESSION_MAX_MS as f64 / 1000.0,
        share(by_marks, total)
    );
    for window in WINDOWS_MS {
        let outside = session.iter().filter(|r| r.since_write >= Duration::from_millis(window)).count();
        let _ = write!(line, "; a {} s window would leave it {:.1}%", window / 1000, share(outside, total));
    }
    let _ = writeln!(out, "{line}");
    let late = session.iter().filter(|r| !r.replica && r.since_write >= Duration::from_millis(50)).count();
    let _ =
        writeln!(out, "  session reads sent to the primary 50 ms or more after their writer's write: {late}");

    let measured = sorted(lags.iter().flatten().copied());
    let _ = writeln!(
        out,
        "  pg_stat_replication.replay_lag every {} ms: {} samples, {} empty (nothing in flight); \
         p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        LAG_EVERY.as_millis(),
        lags.len(),
        lags.len() - measured.len(),
        quantile(&measured, 0.5),
        quantile(&measured, 0.99),
        measured.last().copied().unwrap_or(f64::NAN),
    );
    Ok(())
}
