//! Document uploads over HTTP against the real server, beside the same bytes written
//! straight to the same store with object_store. Run with `make bench` (or
//! `cargo bench -p consular-tests --bench documents_upload`); see docs/benchmarks.md.
//!
//! 1. Starts the release `consular` binary as a child process (the test harness's
//!    `TestApp::spawn_process`) on 127.0.0.1, SQLite, local files (and, with
//!    `BENCH_S3=1`, a second run on PostgreSQL + S3 on moto); the upload limit is raised
//!    to 200 MiB; no scanner. The server is a separate process so that its memory
//!    (`/proc/<pid>/status`: `VmHWM`, the peak, reset through `clear_refs` before each
//!    measurement) is not mixed with the load generator's.
//! 2. One 100 MiB PDF, generated chunk by chunk as it is sent (the client never holds it
//!    either): time, throughput, server peak RSS growth (must stay under 16 MiB), and the
//!    SHA-256 the server computed (must equal the client's).
//! 3. The same 100 MiB written by this process to the same store with object_store
//!    multipart (5 MiB parts, at most one in flight, as the adapter does): the ratio of
//!    the two throughputs (goal: the upload at least half as fast).
//! 4. 50 concurrent uploads of 1 MiB (50 citizens, uploaded by their mission's staff):
//!    errors (must be 0), wall time, server peak RSS growth.
//!
//! Knobs (environment): `BENCH_UPLOAD_MIB` (100), `BENCH_CONCURRENT` (50), `BENCH_S3`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_tests::child::rss_of;
use consular_tests::files::{
    MIB, file_part, form, generated_pdf_part, generated_pdf_pieces, pdf, sha256_hex,
};
use consular_tests::serde_json::{Value, json};
use consular_tests::{Stack, Storage, TestApp, citizen_body, set_setting};
use object_store::{ObjectStore, ObjectStoreExt, WriteMultipart};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

type Result<T, E = String> = std::result::Result<T, E>;

/// The server's peak RSS growth allowed during the large upload (issue 7, "Performance").
const RSS_LIMIT: u64 = 16 * MIB as u64;

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).filter(|&n| n > 0).unwrap_or(default)
}

fn main() -> ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("bench-client")
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let started = Instant::now();
    let mut stacks = vec![Stack { backend: consular_tests::Backend::Sqlite, s3: false }];
    if std::env::var_os("BENCH_S3").is_some() {
        stacks.push(Stack::POSTGRES_S3);
    }
    let mut failures = Vec::new();
    for stack in stacks {
        match runtime.block_on(run(stack)) {
            Ok(mut problems) => failures.append(&mut problems),
            Err(error) => failures.push(error),
        }
    }
    runtime.shutdown_timeout(Duration::from_secs(2));
    if failures.is_empty() {
        println!("documents_upload: done in {:.0?}", started.elapsed());
        ExitCode::SUCCESS
    } else {
        for failure in failures {
            eprintln!("documents_upload bench FAILED: {failure}");
        }
        ExitCode::FAILURE
    }
}

/// `/proc/<pid>/clear_refs` `5`: resets the peak RSS (`VmHWM`) to the current RSS.
fn reset_peak(pid: u32) {
    let _ = std::fs::write(format!("/proc/{pid}/clear_refs"), "5");
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / MIB as f64
}

/// One run on `stack`; the limits it broke.
async fn run(stack: Stack) -> Result<Vec<String>> {
    let size = env_number("BENCH_UPLOAD_MIB", 100) * MIB;
    let concurrent = env_number("BENCH_CONCURRENT", 50);
    let app = TestApp::spawn_process(stack, |settings| {
        settings.workers = 2;
        set_setting(settings, "max_upload_bytes", json!(200 * MIB));
    })
    .await;
    let name = if stack.s3 { "PostgreSQL + S3 (moto)" } else { "SQLite + local files" };
    let pid = app.server_pid();
    println!("documents_upload on {name}: server pid {pid} at {} (release, 2 HTTP workers)", app.base_url);
    let world = app.world().await;
    let mut problems = Vec::new();

    // Warm-up: the first upload allocates the server's pools and buffers.
    let warm = app
        .upload_ok(
            &world.citizen_b.token,
            &[("kind", "passport_photo")],
            pdf(MIB, 1),
            "warm.pdf",
            "application/pdf",
        )
        .await;
    assert_eq!(warm["status"], "uploaded");

    // 1. One large upload.
    let (before, _) = rss_of(pid);
    reset_peak(pid);
    let (part, sha) = generated_pdf_part(size, 42, "large.pdf");
    let started = Instant::now();
    let response = app.upload(&world.citizen_a.token, form(&[("kind", "passport_photo")], part)).await;
    let status = response.status();
    let body: Value = response.json().await.map_err(|e| format!("upload answer: {e}"))?;
    let upload_time = started.elapsed();
    let (after, peak) = rss_of(pid);
    if status != 201 || body["sha256"] != sha.as_str() || body["size_bytes"] != size {
        return Err(format!("the {} MiB upload: {status}: {body}", size / MIB));
    }
    let growth = peak.saturating_sub(before);
    let upload_rate = mib(size as u64) / upload_time.as_secs_f64();

    // 2. The same bytes straight to the same store.
    let direct_time = direct_write(&app, size).await?;
    let direct_rate = mib(size as u64) / direct_time.as_secs_f64();
    let ratio = upload_rate / direct_rate;

    println!(
        "  upload of {} MiB over HTTP        {:>8.0?}  {:>7.1} MiB/s   server RSS {:.1} MiB before, peak {:.1} MiB (+{:.1} MiB), {:.1} MiB after",
        size / MIB,
        upload_time,
        upload_rate,
        mib(before),
        mib(peak),
        mib(growth),
        mib(after)
    );
    println!(
        "  same bytes with object_store       {direct_time:>8.0?}  {direct_rate:>7.1} MiB/s   (from the bench process)"
    );
    println!("  upload / direct                    {:>7.0}%   (goal: at least 50%)", ratio * 100.0);
    if growth >= RSS_LIMIT {
        problems.push(format!("{name}: server peak RSS grew by {:.1} MiB (limit 16 MiB)", mib(growth)));
    }
    if ratio < 0.5 {
        problems.push(format!("{name}: upload at {:.0}% of the direct write (goal 50%)", ratio * 100.0));
    }

    // 3. Concurrent uploads of 1 MiB, one per citizen.
    let mut citizens = Vec::new();
    for n in 0..concurrent {
        let created = app
            .create_at(consular_tests::CITIZENS, &world.admin, &citizen_body(&world.x, &format!("B{n:05}")))
            .await;
        citizens.push(created["id"].as_str().unwrap_or_default().to_owned());
    }
    let (before, _) = rss_of(pid);
    reset_peak(pid);
    let started = Instant::now();
    let uploads = citizens.iter().enumerate().map(|(n, citizen)| {
        let app = &app;
        let token = world.staff_x.token.clone();
        async move {
            let bytes = pdf(MIB, 1000 + n as u32);
            let sha = sha256_hex(&bytes);
            let fields = [("kind", "passport_photo"), ("citizen_id", citizen.as_str())];
            let response =
                app.upload(&token, form(&fields, file_part(bytes, "c.pdf", "application/pdf"))).await;
            let ok = response.status() == 201;
            let body: Value = response.json().await.unwrap_or(Value::Null);
            ok && body["sha256"] == sha.as_str()
        }
    });
    let results = futures_util::future::join_all(uploads).await;
    let wall = started.elapsed();
    let (_, peak) = rss_of(pid);
    let errors = results.iter().filter(|ok| !**ok).count();
    println!(
        "  {concurrent} concurrent uploads of 1 MiB   {wall:>8.0?}  {:>7.1} MiB/s   errors {errors}, server RSS peak +{:.1} MiB",
        concurrent as f64 / wall.as_secs_f64(),
        mib(peak.saturating_sub(before))
    );
    if errors > 0 {
        problems.push(format!("{name}: {errors} of {concurrent} concurrent uploads failed"));
    }
    if let Storage::S3(bucket) = &app.storage {
        println!("  (moto at {})", bucket.moto.endpoint);
    }
    Ok(problems)
}

/// Writes `size` bytes of the same generated PDF to the node's store with object_store
/// multipart (5 MiB parts, one in flight) under a key of its own; the time taken.
async fn direct_write(app: &TestApp, size: usize) -> Result<Duration> {
    let store: Arc<dyn ObjectStore> = match &app.storage {
        Storage::Local => {
            let root = app.settings.storage_url.trim_start_matches("file://");
            Arc::new(
                object_store::local::LocalFileSystem::new_with_prefix(root)
                    .map_err(|e| e.to_string())?
                    .with_fsync(true),
            )
        }
        Storage::S3(bucket) => {
            let mut builder = object_store::aws::AmazonS3Builder::new().with_bucket_name(&bucket.bucket);
            for (key, value) in bucket.options() {
                builder = builder.with_config(key.parse().map_err(|e| format!("{e}"))?, value);
            }
            Arc::new(builder.build().map_err(|e| e.to_string())?)
        }
    };
    let path = object_store::path::Path::from("bench/direct.pdf");
    let pieces = generated_pdf_pieces(size, 42);
    let started = Instant::now();
    let upload = store.put_multipart(&path).await.map_err(|e| e.to_string())?;
    let mut writer = WriteMultipart::new_with_chunk_size(upload, 5 * MIB);
    for piece in pieces {
        writer.wait_for_capacity(1).await.map_err(|e| e.to_string())?;
        writer.write(&piece);
    }
    writer.finish().await.map_err(|e| e.to_string())?;
    let elapsed = started.elapsed();
    store.delete(&path).await.map_err(|e| e.to_string())?;
    Ok(elapsed)
}
