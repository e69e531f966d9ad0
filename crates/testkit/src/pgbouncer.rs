//! A PgBouncer of one test's own in front of a PostgreSQL database, on a free loopback
//! port: its configuration, log and pid file in a temporary directory, trust
//! authentication, one `[databases]` entry named `consular`, and the pooling mode, pool
//! size and `max_prepared_statements` the test asks for. Stopped (SIGTERM) and its
//! directory deleted on drop.
//!
//! The binary is `PGBOUNCER` when set, else Debian's `/usr/sbin/pgbouncer`, else
//! `pgbouncer` on the `PATH`. PgBouncer refuses to run as root: as root it runs as the
//! throwaway cluster's owner (`postgres`).

use crate::postgres::{CLUSTER_OWNER, free_port, running_as_root};
use std::fs;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const DEBIAN_BINARY: &str = "/usr/sbin/pgbouncer";

/// How PgBouncer hands its server connections to clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PoolMode {
    /// A server connection per client connection, for the client's whole session.
    Session,
    /// A server connection per transaction (and per statement outside one).
    Transaction,
}

impl PoolMode {
    fn name(self) -> &'static str {
        match self {
            PoolMode::Session => "session",
            PoolMode::Transaction => "transaction",
        }
    }
}

/// What the test chooses of PgBouncer's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    pub pool_mode: PoolMode,
    /// `default_pool_size`: the server connections per database and user.
    pub pool_size: u32,
    /// `max_prepared_statements` (PgBouncer 1.21 and later; 0 turns the tracking of
    /// protocol-level prepared statements off, and older versions do not know the key,
    /// so it is written only when set).
    pub max_prepared_statements: Option<u32>,
    /// `server_reset_query = SELECT pg_advisory_unlock_all()` with
    /// `server_reset_query_always = 1`: every server connection given back to the pool,
    /// in any mode, first releases the session advisory locks taken through it.
    pub release_advisory_locks: bool,
    /// `query_wait_timeout`: how long a client waits for a server connection before
    /// PgBouncer disconnects it (its default is 120 s).
    pub query_wait_timeout_secs: u32,
}

/// The PgBouncer binary, or `None` when none is installed.
pub fn binary() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("PGBOUNCER") {
        return Some(PathBuf::from(path));
    }
    if Path::new(DEBIAN_BINARY).is_file() {
        return Some(PathBuf::from(DEBIAN_BINARY));
    }
    std::env::var_os("PATH")
        .and_then(|path| std::env::split_paths(&path).map(|dir| dir.join("pgbouncer")).find(|p| p.is_file()))
}

/// `(major, minor)` of the binary, from `pgbouncer --version` (`PgBouncer 1.18.0`).
pub fn version(binary: &Path) -> Result<(u32, u32), String> {
    let output = Command::new(binary)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", binary.display()))?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let number = text
        .lines()
        .find_map(|line| line.strip_prefix("PgBouncer "))
        .ok_or_else(|| format!("no version in `{text}`"))?;
    let mut parts = number.trim().split('.').map(|part| part.parse::<u32>());
    match (parts.next(), parts.next()) {
        (Some(Ok(major)), Some(Ok(minor))) => Ok((major, minor)),
        _ => Err(format!("cannot read the version `{number}`")),
    }
}

/// A running PgBouncer.
pub struct PgBouncer {
    child: Child,
    dir: PathBuf,
    port: u16,
    user: String,
}

impl PgBouncer {
    /// Starts `binary` in front of the database of `upstream`
    /// (`postgres://user[:password]@host:port/db`, as [`crate::postgres::fresh_database`]
    /// gives it; PgBouncer logs in with the password, its own clients are trusted) and
    /// waits until it accepts connections.
    pub fn start(binary: &Path, upstream: &str, options: Options) -> Result<PgBouncer, String> {
        let target = Upstream::parse(upstream)?;
        let dir = std::env::temp_dir().join(format!("consular-pgbouncer-{}", uuid::Uuid::now_v7().simple()));
        fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let port = free_port()?;
        let prepared = options
            .max_prepared_statements
            .map_or_else(String::new, |n| format!("max_prepared_statements = {n}\n"));
        let reset = if options.release_advisory_locks {
            "server_reset_query = SELECT pg_advisory_unlock_all()\nserver_reset_query_always = 1\n"
        } else {
            ""
        };
        let config = format!(
            "[databases]\n\
             consular = host={host} port={upstream_port} dbname={db} user={user}{password}\n\
             [pgbouncer]\n\
             listen_addr = 127.0.0.1\n\
             listen_port = {port}\n\
             unix_socket_dir =\n\
             auth_type = trust\n\
             auth_file = {auth}\n\
             pool_mode = {mode}\n\
             default_pool_size = {size}\n\
             max_client_conn = 500\n\
             query_wait_timeout = {wait}\n\
             logfile = {log}\n\
             pidfile = {pid}\n\
             {prepared}{reset}",
            host = target.host,
            upstream_port = target.port,
            db = target.database,
            user = target.user,
            password = target.password.as_deref().map_or_else(String::new, |p| format!(" password={p}")),
            auth = dir.join("users.txt").display(),
            mode = options.pool_mode.name(),
            size = options.pool_size,
            wait = options.query_wait_timeout_secs,
            log = dir.join("pgbouncer.log").display(),
            pid = dir.join("pgbouncer.pid").display(),
        );
        let write = |name: &str, text: &str| {
            fs::write(dir.join(name), text).map_err(|e| format!("cannot write {name}: {e}"))
        };
        write("pgbouncer.ini", &config)?;
        write("users.txt", &format!("\"{}\" \"\"\n", target.user))?;
        let mut command = if running_as_root() {
            let chown = Command::new("chown")
                .arg("-R")
                .arg(format!("{CLUSTER_OWNER}:"))
                .arg(&dir)
                .status()
                .map_err(|e| format!("cannot run chown: {e}"))?;
            if !chown.success() {
                return Err(format!("chown of {} failed", dir.display()));
            }
            let mut command = Command::new("runuser");
            command.args(["-u", CLUSTER_OWNER, "--"]).arg(binary);
            command
        } else {
            Command::new(binary)
        };
        let child = command
            .arg(dir.join("pgbouncer.ini"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let mut bouncer = PgBouncer { child, dir, port, user: target.user };
        bouncer.wait_until_listening()?;
        Ok(bouncer)
    }

    fn wait_until_listening(&mut self) -> Result<(), String> {
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("pgbouncer exited ({status}):\n{}", self.log()));
            }
            if started.elapsed() > Duration::from_secs(10) {
                return Err(format!("pgbouncer did not listen within 10 s:\n{}", self.log()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of the pooled database, for a client of PgBouncer.
    pub fn url(&self) -> String {
        format!("postgres://{}@127.0.0.1:{}/consular", self.user, self.port)
    }

    /// What PgBouncer logged so far.
    pub fn log(&self) -> String {
        fs::read_to_string(self.dir.join("pgbouncer.log")).unwrap_or_default()
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        // SIGTERM through the pid PgBouncer wrote (the child may be `runuser`); kill the
        // child as well in case it never got that far.
        if let Ok(pid) = fs::read_to_string(self.dir.join("pgbouncer.pid")) {
            let _ = Command::new("kill").arg(pid.trim()).status();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// The parts of a `postgres://user@host:port/database` URL PgBouncer's entry needs.
struct Upstream {
    user: String,
    password: Option<String>,
    host: String,
    port: u16,
    database: String,
}

impl Upstream {
    fn parse(url: &str) -> Result<Upstream, String> {
        let rest = url
            .strip_prefix("postgres://")
            .or_else(|| url.strip_prefix("postgresql://"))
            .ok_or_else(|| "not a postgres:// URL".to_owned())?;
        let rest = rest.split('?').next().unwrap_or(rest);
        let (authority, database) =
            rest.split_once('/').ok_or_else(|| "the URL names no database".to_owned())?;
        let (user, address) = authority.rsplit_once('@').unwrap_or((CLUSTER_OWNER, authority));
        let (user, password) = match user.split_once(':') {
            Some((user, password)) => (user, Some(password.to_owned())),
            None => (user, None),
        };
        let (host, port) = address.rsplit_once(':').unwrap_or((address, "5432"));
        let port = port.parse().map_err(|_| format!("bad port `{port}`"))?;
        Ok(Upstream {
            user: user.to_owned(),
            password,
            host: host.to_owned(),
            port,
            database: database.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_upstream_url_is_read_into_its_parts() {
        let target = Upstream::parse("postgres://postgres@127.0.0.1:40123/consular_test_1_ab").unwrap();
        assert_eq!(
            (target.user.as_str(), target.host.as_str(), target.port, target.database.as_str()),
            ("postgres", "127.0.0.1", 40123, "consular_test_1_ab")
        );
        assert_eq!(
            Upstream::parse("postgres://u:secret@h:1/db").unwrap().password.as_deref(),
            Some("secret")
        );
        assert_eq!(target.password, None);
        assert!(Upstream::parse("sqlite://x").is_err());
    }
}
