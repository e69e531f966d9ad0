//! A real clamd on loopback for the malware-scanning tests (docs/operations.md, "Document
//! storage and malware scanning"): Debian's `clamav-daemon`, started in the foreground on
//! a free port with a signature database made here with `sigtool --md5` (signatures
//! cannot be downloaded in CI; `freshclam` is never run). Stopped when dropped.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The EICAR anti-malware test file: harmless, and detected by every scanner.
pub const EICAR: &[u8] = br"X5O!P%@AP[4\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*";

const INSTALL: &str = "install them with `apt-get install -y clamav-daemon clamav` (.ci/run does)";

/// The EICAR string inside a file that starts like a PDF, so that it passes the type
/// check (magic bytes) and reaches the scanner. The test signature database names it
/// too (a `--md5` signature is the hash of a whole file).
pub fn eicar_pdf() -> Vec<u8> {
    let mut bytes = b"%PDF-1.4\n%".to_vec();
    bytes.extend_from_slice(EICAR);
    bytes.extend_from_slice(b"\n%%EOF\n");
    bytes
}

fn tool(env: &str, candidates: &[&str]) -> PathBuf {
    if let Some(path) = std::env::var_os(env) {
        return PathBuf::from(path);
    }
    candidates.iter().map(PathBuf::from).find(|p| p.is_file()).unwrap_or_else(|| {
        panic!(
            "{} not found (or set {env}): the scanning tests need clamd and sigtool; {INSTALL}",
            candidates[0]
        )
    })
}

/// A clamd process that knows [`EICAR`] and [`eicar_pdf`] as malware.
pub struct Clamd {
    child: Option<Child>,
    dir: tempfile::TempDir,
    /// `127.0.0.1:PORT`, the value of the `clamav_addr` setting.
    pub addr: String,
}

impl Clamd {
    /// Writes the signature database and a clamd.conf into a temporary directory, starts
    /// clamd and waits until it answers `PING`.
    pub async fn start() -> Clamd {
        tokio::task::spawn_blocking(Clamd::start_blocking).await.expect("the clamd start thread")
    }

    fn start_blocking() -> Clamd {
        let clamd = tool("CLAMD", &["/usr/sbin/clamd", "/usr/local/sbin/clamd"]);
        let sigtool = tool("SIGTOOL", &["/usr/bin/sigtool", "/usr/local/bin/sigtool"]);
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = |name: &str| dir.path().join(name);

        let mut database = Vec::new();
        for (name, bytes) in [("eicar.txt", EICAR.to_vec()), ("eicar.pdf", eicar_pdf())] {
            std::fs::write(path(name), bytes).expect("a sample file");
            let signature = Command::new(&sigtool)
                .arg("--md5")
                .arg(name)
                .current_dir(dir.path())
                .output()
                .expect("sigtool");
            assert!(signature.status.success(), "sigtool: {}", String::from_utf8_lossy(&signature.stderr));
            database.extend_from_slice(&signature.stdout);
            std::fs::remove_file(path(name)).expect("the sample file is removed");
        }
        std::fs::write(path("test.hdb"), database).expect("the signature database");

        let port =
            TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("an address").port();
        // No `User` line: clamd keeps the identity it is started with (root included).
        let conf = format!(
            "Foreground yes\nTCPSocket {port}\nTCPAddr 127.0.0.1\nDatabaseDirectory {d}\n\
             TemporaryDirectory {d}\nLogFile {d}/clamd.log\nPidFile {d}/clamd.pid\n",
            d = dir.path().display()
        );
        std::fs::write(path("clamd.conf"), conf).expect("clamd.conf");
        let child = Command::new(&clamd)
            .arg("-c")
            .arg(path("clamd.conf"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}; {INSTALL}", clamd.display()));
        let mut daemon = Clamd { child: Some(child), dir, addr: format!("127.0.0.1:{port}") };
        let started = Instant::now();
        while !daemon.pings() {
            if let Some(status) = daemon.child.as_mut().and_then(|c| c.try_wait().expect("clamd's status")) {
                panic!("clamd exited ({status}) before answering PING:\n{}", daemon.log());
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "clamd did not answer PING:\n{}",
                daemon.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        daemon
    }

    /// Whether clamd answers `PONG` to a `zPING`.
    fn pings(&self) -> bool {
        let Ok(mut socket) = TcpStream::connect(&self.addr) else { return false };
        let _ = socket.set_read_timeout(Some(Duration::from_secs(1)));
        let mut answer = Vec::new();
        socket.write_all(b"zPING\0").is_ok()
            && socket.read_to_end(&mut answer).is_ok()
            && answer.starts_with(b"PONG")
    }

    /// clamd's log (what it scanned and found), for failure messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("clamd.log")).unwrap_or_default()
    }

    /// Kills clamd; its port then refuses connections ("configured but unreachable").
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Clamd {
    fn drop(&mut self) {
        self.stop();
    }
}
