//! The real `consular` binary as a child process: what a test kills with SIGKILL and
//! starts again on the same database and storage (crash consistency, docs/documents.md),
//! and how a server gets S3 settings from the `AWS_*` environment without the test
//! process changing its own environment.
//!
//! The binary is built once per test process with `cargo build -p consular-app --bin
//! consular` into this target directory and profile (a binary of another package is not
//! reachable through `CARGO_BIN_EXE_*`); cargo makes the build a no-op when it is fresh.
//! Settings are handed over as `CONSULAR_*` variables, every other `CONSULAR_*` and `AWS_*`
//! variable of the test process is removed, and the working directory is the test's
//! temporary directory (no stray `consular.toml`).

use crate::http::http_client;
use crate::target::target_dir;
use consular_app::Settings;
use serde_json::Value;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The cargo profile this test binary was built with (`debug` or `release`), from its path
/// `target/<profile>/deps/<name>`.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.parent().and_then(Path::parent).expect("target/<profile>/deps/<binary>").to_path_buf()
}

/// Builds `consular` (once per process) and returns its path.
pub fn server_binary() -> PathBuf {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let profile = profile_dir();
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let mut command = Command::new(cargo);
            command
                .args(["build", "--quiet", "-p", "consular-app", "--bin", "consular", "--target-dir"])
                .arg(target_dir())
                .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
            if profile.file_name().is_some_and(|name| name == "release") {
                command.arg("--release");
            }
            let output = command.output().map_err(|e| format!("cannot run cargo: {e}"))?;
            if !output.status.success() {
                return Err(format!(
                    "building consular failed:\n{}",
                    String::from_utf8_lossy(&output.stderr)
                ));
            }
            let binary = profile.join("consular");
            binary
                .is_file()
                .then_some(binary.clone())
                .ok_or_else(|| format!("{} was not built", binary.display()))
        })
        .clone()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `CONSULAR_*` variables for every setting (its key in capitals). A value that is not
/// text is written as JSON, which figment's environment provider reads back (numbers,
/// lists). Panics when a setting cannot come from the environment (missing from
/// `Settings::KEYS`): the child would silently run without it.
pub fn settings_env(settings: &Settings) -> Vec<(String, String)> {
    let Value::Object(members) = serde_json::to_value(settings).expect("settings serialize") else {
        panic!("settings are not an object")
    };
    members
        .into_iter()
        .filter(|(_, value)| !value.is_null())
        .map(|(key, value)| {
            assert!(
                Settings::KEYS.contains(&key.as_str()),
                "setting `{key}` is not in Settings::KEYS, so CONSULAR_{} is ignored",
                key.to_uppercase()
            );
            let value = match value {
                Value::String(text) => text,
                other => other.to_string(),
            };
            (format!("CONSULAR_{}", key.to_uppercase()), value)
        })
        .collect()
}

/// The port a server's log says it serves on: its `serving` line (`port=N` in text,
/// `"port":N` in JSON).
fn served_port(log: &str) -> Option<u16> {
    logged_port(log, "serving", "port")
}

/// The port of the metrics listener (`metrics_bind`): its `metrics listening` line.
fn metrics_port(log: &str) -> Option<u16> {
    logged_port(log, "metrics listening", "metrics_port")
}

/// The number in field `field` of the first log line that contains `message`.
fn logged_port(log: &str, message: &str, field: &str) -> Option<u16> {
    let (text, json) = (format!(" {field}="), format!("\"{field}\":"));
    log.lines().filter(|line| line.contains(message)).find_map(|line| {
        let rest = line.split_once(text.as_str()).or_else(|| line.split_once(json.as_str()))?.1;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    })
}

/// One `consular serve` process.
pub struct ServerProcess {
    child: Mutex<Option<Child>>,
    pub pid: u32,
    pub port: u16,
    /// The metrics listener's port, when `metrics_bind` is set.
    pub metrics_port: Option<u16>,
    /// Its stdout and stderr.
    pub log: PathBuf,
}

/// The bootstrap admin a first start printed.
pub struct Bootstrap {
    pub client_id: String,
    pub secret: String,
}

impl ServerProcess {
    /// Starts `consular serve` in `dir` with `settings` (its `bind` replaced by a free
    /// port) and `extra_env`, waits until `/health/live` answers, and returns it with the
    /// bootstrap admin it printed (a first start on an empty database prints one).
    pub async fn start(
        settings: &Settings,
        extra_env: &[(String, String)],
        dir: &Path,
    ) -> (ServerProcess, Option<Bootstrap>) {
        let binary = tokio::task::spawn_blocking(server_binary).await.expect("the build thread");
        // The server binds port 0 and says which port it got: a port picked here and
        // released for it could be taken by another test's server in between, which would
        // then answer for this one.
        let log = dir.join(format!("server-{}.log", uuid::Uuid::now_v7().simple()));
        let out = File::create(&log).expect("a log file");
        let mut command = Command::new(binary);
        command.arg("serve").current_dir(dir).stdin(Stdio::null());
        command.stdout(out.try_clone().expect("a log handle")).stderr(out);
        for (name, _) in std::env::vars_os() {
            let text = name.to_string_lossy();
            if text.starts_with("CONSULAR_") || text.starts_with("AWS_") {
                command.env_remove(&name);
            }
        }
        command.envs(settings_env(settings));
        command.env("CONSULAR_BIND", "127.0.0.1:0");
        // The `serving` line is at info level.
        command.env("CONSULAR_LOG_LEVEL", format!("{},consular=info", settings.log_level));
        command.envs(extra_env.iter().map(|(k, v)| (k, v)));
        let child = command.spawn().expect("consular starts");
        let pid = child.id();
        let mut server =
            ServerProcess { child: Mutex::new(Some(child)), pid, port: 0, metrics_port: None, log };
        server.port = server.wait_for_port().await;
        if settings.metrics_bind.is_some() {
            server.metrics_port = Some(server.wait_for(async || metrics_port(&server.log_text())).await);
        }
        server.wait_until_live().await;
        let bootstrap = server.bootstrap();
        (server, bootstrap)
    }

    /// The port the server says it serves on, once it says so.
    async fn wait_for_port(&self) -> u16 {
        self.wait_for(async || served_port(&self.log_text())).await
    }

    async fn wait_until_live(&self) {
        let http = http_client();
        let url = format!("http://127.0.0.1:{}/health/live", self.port);
        self.wait_for(async || {
            let response = http.get(&url).send().await.ok()?;
            response.status().is_success().then_some(())
        })
        .await;
    }

    /// Polls `ready` until it gives a value; panics with the server's log if the server
    /// exits first or a minute passes.
    async fn wait_for<T>(&self, ready: impl AsyncFn() -> Option<T>) -> T {
        let started = Instant::now();
        loop {
            if let Some(value) = ready().await {
                return value;
            }
            if let Some(status) = self.exited() {
                panic!("consular exited ({status}) before serving:\n{}", self.log_text());
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "consular did not serve:\n{}",
                self.log_text()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn exited(&self) -> Option<std::process::ExitStatus> {
        let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
        child.as_mut().and_then(|c| c.try_wait().ok().flatten())
    }

    /// What the process wrote so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The client id and secret printed at a first start (`client_id: …`, `client_secret: …`).
    fn bootstrap(&self) -> Option<Bootstrap> {
        let log = self.log_text();
        let value = |label: &str| {
            log.lines().find_map(|line| line.trim().strip_prefix(label).map(|rest| rest.trim().to_owned()))
        };
        Some(Bootstrap { client_id: value("client_id:")?, secret: value("client_secret:")? })
    }

    /// SIGKILL: the process ends at once, in the middle of whatever it was doing.
    pub fn kill(&self) {
        if let Some(mut child) = self.child.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// SIGTERM, then waits for the graceful stop (SIGKILL after 35 s).
    pub fn terminate(&self) {
        let Some(mut child) = self.child.lock().unwrap_or_else(|p| p.into_inner()).take() else { return };
        let _ = Command::new("kill").args(["-TERM", &self.pid.to_string()]).status();
        let started = Instant::now();
        while child.try_wait().ok().flatten().is_none() {
            if started.elapsed() > Duration::from_secs(35) {
                let _ = child.kill();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits up to `timeout` for the process to end by itself (after a signal the test
    /// sent, [`ServerProcess::pid`]): its exit status, or `None` if it still runs.
    pub fn wait_for_exit(&self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let started = Instant::now();
        loop {
            if let Some(status) = self.exited() {
                return Some(status);
            }
            if started.elapsed() > timeout {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the process still runs.
    pub fn is_running(&self) -> bool {
        self.child.lock().unwrap_or_else(|p| p.into_inner()).is_some() && self.exited().is_none()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `(VmRSS, VmHWM)` of process `pid` in bytes, from `/proc/<pid>/status`: its resident
/// memory now and at its peak.
pub fn rss_of(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/<pid>/status");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kib| kib * 1024)
            .unwrap_or_else(|| panic!("no {name} in /proc/{pid}/status"))
    };
    (field("VmRSS:"), field("VmHWM:"))
}
