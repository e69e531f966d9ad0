//! The clamd adapter against a real clamd on loopback, started by each test with a
//! one-signature database made here for the EICAR test file (signatures cannot be
//! downloaded in CI; `freshclam` is never run). Needs Debian's `clamav-daemon` (clamd)
//! and `clamav` (sigtool); without them the tests fail and say how to install them.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use bytes::Bytes;
use consular_clamav::ClamdScanner;
use consular_ports::{HealthCheck, MalwareScanner, ScanError, ScanVerdict};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The EICAR anti-malware test file: harmless, and detected by every scanner.
const EICAR: &[u8] = br"X5O!P%@AP[4\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*";

const INSTALL: &str = "install them with `apt-get install -y clamav-daemon clamav` (.ci/run does)";

/// Step timeout the tests give the scanner: short, so that failures show quickly.
const TIMEOUT: Duration = Duration::from_secs(2);

fn tool(env: &str, candidates: &[&str]) -> PathBuf {
    if let Some(path) = std::env::var_os(env) {
        return PathBuf::from(path);
    }
    candidates.iter().map(PathBuf::from).find(|p| p.is_file()).unwrap_or_else(|| {
        panic!(
            "{} not found (or set {env}): the clamd tests need clamd and sigtool; {INSTALL}",
            candidates[0]
        )
    })
}

struct Clamd {
    child: Child,
    dir: tempfile::TempDir,
    addr: String,
}

impl Clamd {
    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("clamd.log")).unwrap_or_default()
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Clamd {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Writes the EICAR file, a signature database for it (`sigtool --md5`) and a clamd.conf
/// into a temporary directory, starts clamd in the foreground on a free loopback port and
/// waits until it answers `PING`.
async fn start_clamd() -> Clamd {
    let clamd = tool("CLAMD", &["/usr/sbin/clamd", "/usr/local/sbin/clamd"]);
    let sigtool = tool("SIGTOOL", &["/usr/bin/sigtool", "/usr/local/bin/sigtool"]);
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);

    std::fs::write(path("eicar.txt"), EICAR).unwrap();
    let signature =
        Command::new(&sigtool).arg("--md5").arg("eicar.txt").current_dir(dir.path()).output().unwrap();
    assert!(signature.status.success(), "sigtool failed: {}", String::from_utf8_lossy(&signature.stderr));
    std::fs::write(path("test.hdb"), &signature.stdout).unwrap();
    std::fs::remove_file(path("eicar.txt")).unwrap();

    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    // No `User` line: clamd keeps the identity it is started with (root included).
    let conf = format!(
        "Foreground yes\nTCPSocket {port}\nTCPAddr 127.0.0.1\nDatabaseDirectory {d}\n\
         TemporaryDirectory {d}\nLogFile {d}/clamd.log\nPidFile {d}/clamd.pid\n",
        d = dir.path().display()
    );
    std::fs::write(path("clamd.conf"), conf).unwrap();
    let child = Command::new(&clamd)
        .arg("-c")
        .arg(path("clamd.conf"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}; {INSTALL}", clamd.display()));
    let mut daemon = Clamd { child, dir, addr: format!("127.0.0.1:{port}") };

    let scanner = ClamdScanner::new(daemon.addr.clone()).with_timeout(TIMEOUT);
    let started = Instant::now();
    while scanner.check().await.is_err() {
        if let Some(status) = daemon.child.try_wait().unwrap() {
            panic!("clamd exited ({status}) before answering PING:\n{}", daemon.log());
        }
        assert!(started.elapsed() < Duration::from_secs(30), "clamd did not answer PING:\n{}", daemon.log());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    daemon
}

async fn scan(scanner: &ClamdScanner, bytes: &[u8], chunk: usize) -> Result<ScanVerdict, ScanError> {
    let mut session = scanner.start().await?;
    for piece in bytes.chunks(chunk) {
        session.write(Bytes::copy_from_slice(piece)).await?;
    }
    session.finish().await
}

/// Bytes that are not EICAR and look like a real upload (a PDF header, then noise).
fn clean_file(len: usize) -> Vec<u8> {
    let mut x: u32 = 0x1234_5678;
    let mut bytes = b"%PDF-1.7\n".to_vec();
    bytes.extend((bytes.len()..len).map(|_| {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x as u8
    }));
    bytes
}

#[tokio::test(flavor = "multi_thread")]
async fn verdicts_from_a_real_clamd() {
    let daemon = start_clamd().await;
    let scanner = ClamdScanner::new(daemon.addr.clone()).with_timeout(TIMEOUT);
    assert_eq!(scanner.name(), "clamav");
    scanner.check().await.unwrap();

    // EICAR, even split into tiny chunks, is found and its signature named.
    match scan(&scanner, EICAR, 7).await.unwrap() {
        ScanVerdict::Infected { signature } => {
            assert!(
                signature.starts_with("eicar.txt"),
                "signature named after the database entry: {signature}"
            )
        }
        other => panic!("EICAR: expected Infected, got {other:?}\n{}", daemon.log()),
    }

    // A clean 3 MiB file streamed in 64 KiB chunks.
    assert_eq!(scan(&scanner, &clean_file(3 * 1024 * 1024), 64 * 1024).await.unwrap(), ScanVerdict::Clean);
    // Empty chunks are skipped (one would end INSTREAM early), the file is still scanned.
    let mut session = scanner.start().await.unwrap();
    session.write(Bytes::new()).await.unwrap();
    session.write(Bytes::from_static(EICAR)).await.unwrap();
    assert!(matches!(session.finish().await.unwrap(), ScanVerdict::Infected { .. }));
    assert!(matches!(session.finish().await, Err(ScanError::Unavailable(_))), "finish twice");
    assert!(matches!(session.write(Bytes::from_static(b"x")).await, Err(ScanError::Unavailable(_))));

    // A session dropped mid-way leaves clamd serving others.
    let mut abandoned = scanner.start().await.unwrap();
    abandoned.write(Bytes::from_static(b"half a file")).await.unwrap();
    drop(abandoned);
    assert_eq!(scan(&scanner, b"hello", 64).await.unwrap(), ScanVerdict::Clean);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stopped_clamd_is_unavailable_quickly() {
    let mut daemon = start_clamd().await;
    let scanner = ClamdScanner::new(daemon.addr.clone()).with_timeout(TIMEOUT);

    // Killed in the middle of a scan: the session fails, it does not pass the file.
    let mut session = scanner.start().await.unwrap();
    session.write(Bytes::from(clean_file(64 * 1024))).await.unwrap();
    daemon.stop();
    let started = Instant::now();
    let mut outcome = Ok(());
    for _ in 0..64 {
        outcome = session.write(Bytes::from(clean_file(64 * 1024))).await;
        if outcome.is_err() {
            break;
        }
    }
    let result = match outcome {
        Err(e) => Err(e),
        Ok(()) => session.finish().await.map(drop),
    };
    assert!(matches!(result, Err(ScanError::Unavailable(_))), "{result:?}");
    assert!(started.elapsed() < 2 * TIMEOUT, "took {:?}", started.elapsed());

    // Stopped: a new scan and the health check fail at once.
    let started = Instant::now();
    match scanner.start().await {
        Err(ScanError::Unavailable(message)) => assert!(message.contains(&daemon.addr), "{message}"),
        Ok(_) => panic!("a scan started without clamd"),
    }
    assert!(scanner.check().await.is_err());
    assert!(started.elapsed() < TIMEOUT, "took {:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_clamd_that_never_answers_times_out() {
    // Accepts connections and reads nothing: the kernel buffers take the first bytes,
    // then writes block; the answer never comes.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            open.push(socket);
        }
    });
    let timeout = Duration::from_millis(500);
    let scanner = ClamdScanner::new(addr).with_timeout(timeout);

    let started = Instant::now();
    let result = scan(&scanner, b"a small file", 64).await;
    assert!(matches!(result, Err(ScanError::Unavailable(_))), "{result:?}");
    assert!(started.elapsed() < 4 * timeout, "finish took {:?}", started.elapsed());

    let started = Instant::now();
    let result = scan(&scanner, &clean_file(64 * 1024 * 1024), 64 * 1024).await;
    assert!(matches!(result, Err(ScanError::Unavailable(_))), "{result:?}");
    assert!(started.elapsed() < 4 * timeout, "writes took {:?}", started.elapsed());

    let started = Instant::now();
    assert!(scanner.check().await.is_err(), "no PONG, not healthy");
    assert!(started.elapsed() < 4 * timeout);
    held.abort();
}

#[test]
fn the_clamd_binary_path_is_where_debian_puts_it() {
    // Fails (instead of skipping) when clamd is missing, with the install command.
    let clamd = tool("CLAMD", &["/usr/sbin/clamd", "/usr/local/sbin/clamd"]);
    assert!(Path::new(&clamd).is_file(), "{} is not a file; {INSTALL}", clamd.display());
}
