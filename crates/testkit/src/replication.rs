//! A primary and its synchronous streaming standby, both of one test's own, for the
//! failover test (docs/operations.md "High availability"): the shared cluster of
//! [`crate::postgres`] is never stopped or promoted.
//!
//! [`ReplicatedPair::start`] makes the primary (`wal_level = replica`,
//! `synchronous_standby_names` naming the standby, `synchronous_commit = on`), copies it
//! with `pg_basebackup -R` into the standby (`primary_conninfo` with the standby's
//! `application_name`), starts the standby and waits until the primary reports it
//! streaming and synchronous (`pg_stat_replication.sync_state = 'sync'`). Both listen on
//! 127.0.0.1 and free ports with trust authentication, and are stopped and deleted on
//! drop, also when the test fails. [`ReplicatedPair::url`] is the libpq multi-host URL that
//! finds whichever of the two accepts writes.
//!
//! The standby also stands in for a lagging read replica:
//! [`ReplicatedPair::set_apply_delay`] holds back its replay of commits
//! (`recovery_min_apply_delay`) while it keeps confirming them, and
//! [`ReplicatedPair::wait_replayed`] waits until it has caught up.
//!
//! The standby runs with `synchronous_standby_names` empty: once promoted it has no
//! standby of its own, and a primary that waits for one that never comes would never
//! acknowledge a commit (a failover manager does the same when it promotes the last
//! server standing, docs/operations.md "High availability").

use crate::postgres::{append, bin, cluster_command, free_port, give_to_owner, initdb, run};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The standby's `application_name`, which the primary's `synchronous_standby_names` names.
pub const STANDBY_NAME: &str = "consular_standby";
/// The pair's directory in the temporary directory: `<prefix><pid>-<uuid>`.
const PAIR_PREFIX: &str = "consular-testkit-pg-pair-";
/// How long to wait for the standby to stream and be synchronous.
const SYNC_WAIT: Duration = Duration::from_secs(30);
/// The shortest nonzero apply delay [`ReplicatedPair::set_apply_delay`] can check.
const MIN_APPLY_DELAY: Duration = Duration::from_secs(1);

/// One of the two servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The server started as the primary.
    Primary,
    /// The server started as the standby (the primary after [`ReplicatedPair::promote`]).
    Standby,
}

/// A running primary and synchronous standby; stopped and deleted on drop.
#[derive(Debug)]
pub struct ReplicatedPair {
    root: PathBuf,
    primary_port: u16,
    standby_port: u16,
}

impl ReplicatedPair {
    /// Starts the primary, then the standby, and returns once the standby is streaming
    /// and synchronous.
    pub fn start() -> Result<ReplicatedPair, String> {
        stop_abandoned_pairs();
        let root = std::env::temp_dir().join(format!(
            "{PAIR_PREFIX}{}-{}",
            std::process::id(),
            uuid::Uuid::now_v7().simple()
        ));
        // Built before start-up so that a failure half way still deletes what was made.
        let mut pair = ReplicatedPair { root, primary_port: 0, standby_port: 0 };
        for role in [Role::Primary, Role::Standby] {
            let socket = pair.socket_dir(role);
            fs::create_dir_all(&socket).map_err(|e| format!("cannot create {}: {e}", socket.display()))?;
        }
        give_to_owner(&pair.root)?;
        pair.start_primary()?;
        pair.start_standby()?;
        pair.wait_until_synchronous()?;
        Ok(pair)
    }

    /// The port of `role`'s server.
    pub fn port(&self, role: Role) -> u16 {
        match role {
            Role::Primary => self.primary_port,
            Role::Standby => self.standby_port,
        }
    }

    /// `postgres://postgres@127.0.0.1:P1,127.0.0.1:P2/DATABASE?` with
    /// `target_session_attrs=read-write&connect_timeout=2`: libpq's multi-host form,
    /// connecting to the first of the two that accepts writes, as docs/operations.md
    /// "High availability" recommends it.
    pub fn url(&self, database: &str) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/{database}?target_session_attrs=read-write&connect_timeout=2",
            self.primary_port, self.standby_port
        )
    }

    /// The URL of `database` on `role`'s server alone.
    pub fn url_of(&self, role: Role, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port(role))
    }

    /// Runs `sql` with psql on `database` of `role`'s server: its unaligned, tuple-only
    /// output (`|` between columns, a line per row).
    pub fn query(&self, role: Role, database: &str, sql: &str) -> Result<String, String> {
        run(Command::new(bin("psql"))
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d"])
            .arg(self.url_of(role, database))
            .arg("-c")
            .arg(sql))
    }

    /// Stops the primary as a crash would: `pg_ctl stop -m immediate` (no checkpoint, the
    /// backends killed, nothing more sent to the standby).
    pub fn stop_primary_immediately(&self) -> Result<(), String> {
        run(cluster_command("pg_ctl").arg("-D").arg(self.data_dir(Role::Primary)).args([
            "-m",
            "immediate",
            "-w",
            "stop",
        ]))
        .map(drop)
    }

    /// Promotes the standby (`pg_ctl promote`) and returns once it accepts writes.
    pub fn promote(&self) -> Result<(), String> {
        run(cluster_command("pg_ctl")
            .arg("-D")
            .arg(self.data_dir(Role::Standby))
            .args(["-w", "-t", "60", "promote"]))?;
        let deadline = Instant::now() + SYNC_WAIT;
        loop {
            let state = self.query(Role::Standby, "postgres", "SELECT pg_is_in_recovery()")?;
            if state.trim() == "f" {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err("the promoted standby is still in recovery".to_owned());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Delays the standby's replay of each commit by `delay` (`recovery_min_apply_delay`,
    /// reloaded without a restart), so that it serves reads as stale as a lagging read
    /// replica; zero replays at once again, also the commits already held back (the
    /// standby recomputes the delay of the commit it waits on after a reload).
    ///
    /// A nonzero delay returns once the standby holds back a commit made after the change,
    /// so that every later commit is delayed too: it must be a second or more, to outlast
    /// that check. The pair stays synchronous: a commit waits for the standby to flush it,
    /// not to replay it, so writes are not held up.
    pub fn set_apply_delay(&self, delay: Duration) -> Result<(), String> {
        if !delay.is_zero() && delay < MIN_APPLY_DELAY {
            return Err(format!("an apply delay of {delay:?} is shorter than {MIN_APPLY_DELAY:?}"));
        }
        // ALTER SYSTEM runs outside a transaction block: one statement per call.
        let sql = format!("ALTER SYSTEM SET recovery_min_apply_delay = '{}ms'", delay.as_millis());
        self.query(Role::Standby, "postgres", &sql)?;
        self.query(Role::Standby, "postgres", "SELECT pg_reload_conf()")?;
        if delay.is_zero() {
            return Ok(());
        }
        // The reload only signals the standby's startup process: until it has read the
        // setting, a commit is replayed at once. Probe commits until one is held back.
        let deadline = Instant::now() + SYNC_WAIT;
        let waiting = "SELECT count(*) FROM pg_stat_activity \
                       WHERE backend_type = 'startup' AND wait_event = 'RecoveryApplyDelay'";
        loop {
            let probe = self.probe_commit()?;
            let replayed = format!("SELECT pg_last_wal_replay_lsn() >= '{probe}'::pg_lsn");
            loop {
                if self.query(Role::Standby, "postgres", waiting)?.trim() == "1" {
                    return Ok(());
                }
                if Instant::now() > deadline {
                    return Err(format!("the standby never held back a commit for {delay:?}"));
                }
                // Replayed without a wait: the setting was not read yet; probe again.
                if self.query(Role::Standby, "postgres", &replayed)?.trim() == "t" {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }

    /// Waits until the standby has replayed everything the primary had written when
    /// called, asynchronous commits too (`pg_last_wal_replay_lsn()` against the end of a
    /// commit made then).
    pub fn wait_replayed(&self, timeout: Duration) -> Result<(), String> {
        let written = self.probe_commit()?;
        let sql = format!("SELECT pg_last_wal_replay_lsn() >= '{written}'::pg_lsn");
        let deadline = Instant::now() + timeout;
        loop {
            if self.query(Role::Standby, "postgres", &sql)?.trim() == "t" {
                return Ok(());
            }
            if Instant::now() > deadline {
                let replayed = self.query(Role::Standby, "postgres", "SELECT pg_last_wal_replay_lsn()")?;
                return Err(format!(
                    "the standby replayed up to {} in {timeout:?}, not {written}",
                    replayed.trim()
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Commits a transaction on the primary that the standby must replay like any other
    /// (a transactional logical-decoding message, replayed as a no-op), and returns the
    /// primary's WAL write position after it: past its commit record and everything
    /// written before, asynchronous commits included (the commit wrote WAL, so it was
    /// flushed, with all before it, and confirmed by the synchronous standby).
    fn probe_commit(&self) -> Result<String, String> {
        self.query(
            Role::Primary,
            "postgres",
            "SELECT pg_logical_emit_message(true, 'consular-testkit', 'probe')",
        )?;
        Ok(self.query(Role::Primary, "postgres", "SELECT pg_current_wal_lsn()")?.trim().to_owned())
    }

    fn start_primary(&mut self) -> Result<(), String> {
        let data = self.data_dir(Role::Primary);
        initdb(&data, &["-A", "trust"])?;
        self.primary_port = free_port()?;
        // fsync stays off: the test stops a server, never the machine, and what a server
        // wrote survives its death in the kernel's cache. synchronous_commit = on is what
        // the test is about: a commit is acknowledged once the standby has it.
        let settings = format!(
            "\n# consular-testkit: a throwaway primary with one synchronous standby.\n\
             listen_addresses = '127.0.0.1'\n\
             port = {}\n\
             unix_socket_directories = '{}'\n\
             max_connections = 100\n\
             fsync = off\n\
             full_page_writes = off\n\
             wal_level = replica\n\
             max_wal_senders = 4\n\
             synchronous_standby_names = '{STANDBY_NAME}'\n\
             synchronous_commit = on\n",
            self.primary_port,
            self.socket_dir(Role::Primary).display()
        );
        append(&data.join("postgresql.conf"), &settings)?;
        let hba = "# consular-testkit: trust, on the loopback address only.\n\
                   local all all trust\n\
                   host all all 127.0.0.1/32 trust\n\
                   host replication all 127.0.0.1/32 trust\n";
        fs::write(data.join("pg_hba.conf"), hba).map_err(|e| format!("cannot write pg_hba.conf: {e}"))?;
        give_to_owner(&self.root)?;
        self.pg_ctl_start(Role::Primary)
    }

    fn start_standby(&mut self) -> Result<(), String> {
        let data = self.data_dir(Role::Standby);
        run(cluster_command("pg_basebackup")
            .arg("-D")
            .arg(&data)
            .arg("-d")
            .arg(format!("host=127.0.0.1 port={} user=postgres", self.primary_port))
            .args(["-R", "-X", "stream", "--no-sync", "-c", "fast"]))?;
        self.standby_port = free_port()?;
        // The copy has the primary's settings; these, appended, win.
        let settings = format!(
            "\n# consular-testkit: the standby of the pair.\n\
             port = {}\n\
             unix_socket_directories = '{}'\n\
             synchronous_standby_names = ''\n",
            self.standby_port,
            self.socket_dir(Role::Standby).display()
        );
        append(&data.join("postgresql.conf"), &settings)?;
        // pg_basebackup -R wrote standby.signal and a primary_conninfo; this one, later in
        // the same file, wins and names the standby as the primary expects it.
        let conninfo = format!(
            "primary_conninfo = 'host=127.0.0.1 port={} user=postgres application_name={STANDBY_NAME}'\n",
            self.primary_port
        );
        append(&data.join("postgresql.auto.conf"), &conninfo)?;
        give_to_owner(&self.root)?;
        self.pg_ctl_start(Role::Standby)
    }

    fn wait_until_synchronous(&self) -> Result<(), String> {
        let deadline = Instant::now() + SYNC_WAIT;
        let sql = format!(
            "SELECT state || ' ' || sync_state FROM pg_stat_replication WHERE application_name = '{STANDBY_NAME}'"
        );
        loop {
            let state = self.query(Role::Primary, "postgres", &sql)?;
            if state.trim() == "streaming sync" {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "the standby is not streaming synchronously ({:?})\nstandby log:\n{}",
                    state.trim(),
                    fs::read_to_string(self.log_file(Role::Standby)).unwrap_or_default()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn pg_ctl_start(&self, role: Role) -> Result<(), String> {
        run(cluster_command("pg_ctl")
            .arg("-D")
            .arg(self.data_dir(role))
            .arg("-l")
            .arg(self.log_file(role))
            .args(["-w", "-t", "60", "start"]))
        .map(drop)
        .map_err(|e| {
            format!("{e}\nserver log:\n{}", fs::read_to_string(self.log_file(role)).unwrap_or_default())
        })
    }

    fn dir(&self, role: Role) -> PathBuf {
        self.root.join(match role {
            Role::Primary => "primary",
            Role::Standby => "standby",
        })
    }

    fn data_dir(&self, role: Role) -> PathBuf {
        self.dir(role).join("data")
    }

    fn socket_dir(&self, role: Role) -> PathBuf {
        self.dir(role).join("run")
    }

    fn log_file(&self, role: Role) -> PathBuf {
        self.dir(role).join("server.log")
    }
}

impl Drop for ReplicatedPair {
    fn drop(&mut self) {
        stop_and_delete(&self.root);
    }
}

/// Stops the servers of the pair in `root` and deletes its files.
fn stop_and_delete(root: &Path) {
    for role in ["standby", "primary"] {
        let data = root.join(role).join("data");
        if data.join("postmaster.pid").exists() {
            let _ =
                run(cluster_command("pg_ctl").arg("-D").arg(&data).args(["-m", "immediate", "-w", "stop"]));
        }
    }
    let _ = fs::remove_dir_all(root);
}

/// The pairs of test processes that ended without dropping theirs (a test killed at its
/// timeout): their servers would otherwise run until the machine stops.
fn stop_abandoned_pairs() {
    let Ok(entries) = fs::read_dir(std::env::temp_dir()) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let pid = name.strip_prefix(PAIR_PREFIX).and_then(|rest| rest.split('-').next());
        if let Some(pid) = pid.and_then(|pid| pid.parse::<u32>().ok())
            && !Path::new(&format!("/proc/{pid}")).exists()
        {
            stop_and_delete(&entry.path());
        }
    }
}
