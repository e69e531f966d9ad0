//! A fresh, migrated PostgreSQL database for every test, in the style of crates.io's
//! test databases: the schema is set up once in a template database and each test gets
//! `CREATE DATABASE … TEMPLATE …`, which takes milliseconds.
//!
//! The server is `DATABASE_URL` when that is a PostgreSQL URL (the user must be allowed
//! to create databases; test databases are left behind there). Otherwise a throwaway cluster
//! is started from the PostgreSQL binaries (`/usr/lib/postgresql/15/bin`, or
//! `PG_BIN_DIR`), tuned for speed over durability, listening on 127.0.0.1 only with
//! trust authentication. cargo-nextest runs every test in its own process, so that
//! cluster is shared by all test processes of the user: its state lives in
//! `$TMPDIR/consular-testkit-pg-<uid>/`, start-up and template creation happen under a
//! file lock there, and a cluster that stopped answering is replaced. It keeps running
//! after the tests (each run drops the databases of the test processes that have ended);
//! [`stop_shared_cluster`] (the `pg-test-cluster stop` binary) stops it.

use std::fs::{self, File};
use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const DEFAULT_BIN_DIR: &str = "/usr/lib/postgresql/15/bin";
/// The OS user that owns the throwaway cluster when the tests run as root (initdb
/// refuses to run as root).
pub(crate) const CLUSTER_OWNER: &str = "postgres";
/// Test databases are named `consular_test_<pid>_<uuid>`.
const TEST_DATABASE_PREFIX: &str = "consular_test_";
/// How long to retry statements that fail because a template is still in use.
const BUSY_RETRY_FOR: Duration = Duration::from_secs(15);

/// The URL of a new, empty-but-migrated database. `setup(template_url)` runs once per
/// `template_key` and server (on its own thread, with no async runtime around it), to
/// migrate the template every later call clones; it must close its connections before
/// it returns. Use a key derived from the migrations (see [`crate::fingerprint`]) so that
/// a changed schema gets a new template.
pub fn fresh_database(
    template_key: &str,
    setup: impl FnOnce(&str) -> Result<(), String> + Send,
) -> Result<String, String> {
    let (server, template) = {
        let _lock = StateDir::open()?.lock()?;
        let server = Server::find_or_start()?;
        if server.throwaway {
            server.drop_abandoned_databases()?;
        }
        let template = server.ensure_template(template_key, setup)?;
        (server, template)
    };
    // The pid lets a later run drop the databases of test processes that have ended.
    let name = format!("{TEST_DATABASE_PREFIX}{}_{}", std::process::id(), uuid::Uuid::now_v7().simple());
    retry_while_busy(|| server.execute(&format!("CREATE DATABASE {name} TEMPLATE {template}")))?;
    Ok(server.url_for(&name))
}

/// The admin URL of the server tests use (`DATABASE_URL`, or the shared cluster, started
/// if needed).
pub fn server_url() -> Result<String, String> {
    let _lock = StateDir::open()?.lock()?;
    Ok(Server::find_or_start()?.admin_url)
}

/// Stops the shared throwaway cluster and deletes its files; `Ok(false)` when none was
/// running. A server given by `DATABASE_URL` is never touched.
pub fn stop_shared_cluster() -> Result<bool, String> {
    let state = StateDir::open()?;
    let _lock = state.lock()?;
    let data = state.data_dir();
    let stopped = data.exists()
        && ["fast", "immediate"].iter().any(|mode| {
            run(cluster_command("pg_ctl").arg("-D").arg(&data).args(["-m", mode, "-w", "stop"])).is_ok()
        });
    state.forget()?;
    Ok(stopped)
}

/// The per-user directory that coordinates the test processes.
struct StateDir {
    root: PathBuf,
}

/// Held while the state directory is being read or changed; released on drop.
struct Lock {
    _file: File,
}

impl StateDir {
    fn open() -> Result<StateDir, String> {
        let root = std::env::temp_dir().join(format!("consular-testkit-pg-{}", current_uid()));
        fs::create_dir_all(&root).map_err(|e| format!("cannot create {}: {e}", root.display()))?;
        Ok(StateDir { root })
    }

    fn lock(&self) -> Result<Lock, String> {
        let path = self.root.join("lock");
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        file.lock().map_err(|e| format!("cannot lock {}: {e}", path.display()))?;
        Ok(Lock { _file: file })
    }

    fn cluster_dir(&self) -> PathBuf {
        self.root.join("cluster")
    }

    fn data_dir(&self) -> PathBuf {
        self.cluster_dir().join("data")
    }

    fn socket_dir(&self) -> PathBuf {
        self.cluster_dir().join("run")
    }

    fn state_file(&self) -> PathBuf {
        self.root.join("state")
    }

    fn recorded_port(&self) -> Option<u16> {
        let text = fs::read_to_string(self.state_file()).ok()?;
        text.lines().find_map(|line| line.strip_prefix("port=")).and_then(|port| port.trim().parse().ok())
    }

    fn record_port(&self, port: u16) -> Result<(), String> {
        let path = self.state_file();
        let mut file = File::create(&path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        writeln!(file, "port={port}").map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// Deletes the recorded cluster (it must be stopped already).
    fn forget(&self) -> Result<(), String> {
        let _ = fs::remove_file(self.state_file());
        match fs::remove_dir_all(self.cluster_dir()) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(format!("cannot delete {}: {e}", self.cluster_dir().display()))
            }
            _ => Ok(()),
        }
    }
}

struct Server {
    /// A URL to a database of the server from which databases can be created.
    admin_url: String,
    /// The shared throwaway cluster (not `DATABASE_URL`).
    throwaway: bool,
}

impl Server {
    /// Call with the state lock held.
    fn find_or_start() -> Result<Server, String> {
        if let Ok(url) = std::env::var("DATABASE_URL")
            && (url.starts_with("postgres://") || url.starts_with("postgresql://"))
        {
            return Ok(Server { admin_url: url, throwaway: false });
        }
        let state = StateDir::open()?;
        if let Some(port) = state.recorded_port()
            && state.data_dir().join("postmaster.pid").exists()
            && is_ready(port)
        {
            return Ok(Server::local(port));
        }
        start_cluster(&state)
    }

    fn local(port: u16) -> Server {
        Server { admin_url: format!("postgres://postgres@127.0.0.1:{port}/postgres"), throwaway: true }
    }

    /// The URL of database `name` on this server.
    fn url_for(&self, name: &str) -> String {
        let (scheme, rest) = self.admin_url.split_once("://").unwrap_or(("postgres", &self.admin_url));
        let (authority, path_and_query) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let query = path_and_query.find('?').map_or("", |at| &path_and_query[at..]);
        format!("{scheme}://{authority}/{name}{query}")
    }

    fn execute(&self, sql: &str) -> Result<String, String> {
        run(Command::new(bin("psql"))
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d"])
            .arg(&self.admin_url)
            .arg("-c")
            .arg(sql))
    }

    /// Drops the test databases whose process has ended, so that a cluster left running
    /// between runs does not grow without bound. Only for the throwaway cluster: on a
    /// server shared with other hosts, a pid says nothing.
    fn drop_abandoned_databases(&self) -> Result<(), String> {
        let names = self.execute(&format!(
            "SELECT datname FROM pg_database WHERE datname LIKE '{}%'",
            TEST_DATABASE_PREFIX.replace('_', "\\_")
        ))?;
        for name in names.lines() {
            let pid = name.strip_prefix(TEST_DATABASE_PREFIX).and_then(|rest| rest.split('_').next());
            if let Some(pid) = pid.and_then(|pid| pid.parse::<u32>().ok())
                && !Path::new(&format!("/proc/{pid}")).exists()
            {
                self.execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))?;
            }
        }
        Ok(())
    }

    /// Creates template `consular_tpl_<key>` with `setup` unless it exists. Call with
    /// the state lock held. The template is built under a temporary name and renamed
    /// when complete, so a failed setup never leaves a half-migrated template.
    fn ensure_template(
        &self,
        key: &str,
        setup: impl FnOnce(&str) -> Result<(), String> + Send,
    ) -> Result<String, String> {
        let template = format!("consular_tpl_{}", identifier_part(key));
        let exists = self.execute(&format!("SELECT 1 FROM pg_database WHERE datname = '{template}'"))?;
        if exists.trim() == "1" {
            return Ok(template);
        }
        let building = format!("{template}_building");
        self.execute(&format!("DROP DATABASE IF EXISTS {building} WITH (FORCE)"))?;
        self.execute(&format!("CREATE DATABASE {building}"))?;
        let url = self.url_for(&building);
        std::thread::scope(|scope| scope.spawn(|| setup(&url)).join())
            .map_err(|_| format!("the setup of template {template} panicked"))?
            .map_err(|e| format!("the setup of template {template} failed: {e}"))?;
        retry_while_busy(|| self.execute(&format!("ALTER DATABASE {building} RENAME TO {template}")))?;
        Ok(template)
    }
}

/// Starts a new cluster in the state directory, replacing whatever was recorded there.
/// Call with the state lock held.
fn start_cluster(state: &StateDir) -> Result<Server, String> {
    if state.data_dir().exists() {
        // A cluster that no longer answers: stop what may be left of it.
        let _ =
            run(cluster_command("pg_ctl").arg("-D").arg(state.data_dir()).args(["-m", "immediate", "stop"]));
    }
    state.forget()?;
    for dir in [state.cluster_dir(), state.data_dir(), state.socket_dir()] {
        fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    give_to_owner(&state.cluster_dir())?;
    initdb(&state.data_dir(), &["-A", "trust"])?;

    let port = free_port()?;
    let settings = format!(
        "\n# consular-testkit: a throwaway cluster for tests, fast rather than durable.\n\
         listen_addresses = '127.0.0.1'\n\
         port = {port}\n\
         unix_socket_directories = '{}'\n\
         max_connections = 200\n\
         fsync = off\n\
         synchronous_commit = off\n\
         full_page_writes = off\n",
        state.socket_dir().display()
    );
    append(&state.data_dir().join("postgresql.conf"), &settings)?;
    let hba = "# consular-testkit: trust, on the loopback address only.\nhost all all 127.0.0.1/32 trust\n";
    fs::write(state.data_dir().join("pg_hba.conf"), hba)
        .map_err(|e| format!("cannot write pg_hba.conf: {e}"))?;

    // pg_ctl detaches the server (setsid), so it outlives this test process.
    run(cluster_command("pg_ctl")
        .arg("-D")
        .arg(state.data_dir())
        .arg("-l")
        .arg(state.cluster_dir().join("server.log"))
        .args(["-w", "-t", "60", "start"]))?;
    state.record_port(port)?;
    Ok(Server::local(port))
}

fn is_ready(port: u16) -> bool {
    Command::new(bin("pg_isready"))
        .args(["-q", "-h", "127.0.0.1", "-p", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Retries `statement` while PostgreSQL says a database is in use: a connection that
/// was just closed may still be ending on the server side.
fn retry_while_busy(statement: impl Fn() -> Result<String, String>) -> Result<String, String> {
    let deadline = Instant::now() + BUSY_RETRY_FOR;
    loop {
        match statement() {
            Err(e) if e.contains("is being accessed by other users") && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50));
            }
            result => return result,
        }
    }
}

pub(crate) fn bin(program: &str) -> PathBuf {
    let dir = std::env::var_os("PG_BIN_DIR").map_or_else(|| PathBuf::from(DEFAULT_BIN_DIR), PathBuf::from);
    let path = dir.join(program);
    if path.exists() { path } else { PathBuf::from(program) }
}

/// `program` run as the cluster's owner.
pub(crate) fn cluster_command(program: &str) -> Command {
    if running_as_root() {
        let mut command = Command::new("runuser");
        command.args(["-u", CLUSTER_OWNER, "--"]).arg(bin(program));
        command
    } else {
        Command::new(bin(program))
    }
}

/// `initdb` of a throwaway cluster in `data` (superuser `postgres`, UTF8, C locale, no
/// sync), with the authentication arguments in `auth`, run as the cluster's owner.
pub(crate) fn initdb(data: &Path, auth: &[&str]) -> Result<(), String> {
    let common = ["-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"];
    run(cluster_command("initdb").arg("-D").arg(data).args(common).args(auth)).map(drop)
}

/// Gives `dir` to the cluster's owner when the tests run as root: initdb, pg_basebackup
/// and the servers never run as root.
pub(crate) fn give_to_owner(dir: &Path) -> Result<(), String> {
    if running_as_root() {
        run(Command::new("chown").arg("-R").arg(format!("{CLUSTER_OWNER}:")).arg(dir))?;
    }
    Ok(())
}

/// Runs `command` to completion; its stdout, or its output as the error.
pub(crate) fn run(command: &mut Command) -> Result<String, String> {
    let output = command
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {:?}: {e}", command.get_program()))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if output.status.success() {
        Ok(stdout)
    } else {
        Err(format!(
            "{:?} {:?} failed ({}): {}{}",
            command.get_program(),
            command.get_args().collect::<Vec<_>>(),
            output.status,
            String::from_utf8_lossy(&output.stderr),
            stdout
        ))
    }
}

pub(crate) fn append(path: &Path, text: &str) -> Result<(), String> {
    let mut file = File::options()
        .append(true)
        .open(path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    file.write_all(text.as_bytes()).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

pub(crate) fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| format!("no free port: {e}"))
}

fn current_uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(u32::MAX)
}

pub(crate) fn running_as_root() -> bool {
    current_uid() == 0
}

/// `key` reduced to what an unquoted PostgreSQL identifier may hold, short enough for
/// the 63-byte limit with our prefixes and suffixes.
fn identifier_part(key: &str) -> String {
    let cleaned: String = key
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' })
        .take(32)
        .collect();
    if cleaned.is_empty() { "default".to_owned() } else { cleaned }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_urls_keep_the_server_and_options() {
        let server = Server {
            admin_url: "postgres://u:p@db:5432/postgres?sslmode=disable".to_owned(),
            throwaway: false,
        };
        assert_eq!(server.url_for("t1"), "postgres://u:p@db:5432/t1?sslmode=disable");
        let bare = Server { admin_url: "postgresql://db".to_owned(), throwaway: false };
        assert_eq!(bare.url_for("t1"), "postgresql://db/t1");
    }

    #[test]
    fn template_keys_become_identifiers() {
        assert_eq!(identifier_part("Ab-12/ç"), "ab_12__");
        assert_eq!(identifier_part(""), "default");
        assert_eq!(identifier_part(&"x".repeat(80)).len(), 32);
    }
}
