//! A PostgreSQL cluster of one test's own, for the tests of TLS to PostgreSQL: the shared
//! cluster of [`crate::postgres`] speaks plain TCP to every other test and stays as it is.
//!
//! [`TlsCluster::start`] turns `ssl = on` with the certificate and key the test made and
//! accepts TCP connections through `hostssl` lines only, so a plain connection is refused;
//! [`TlsCluster::start_without_tls`] is the same cluster with `ssl = off`. Both listen on
//! 127.0.0.1 and a free port, authenticate with a password (SCRAM, so that the password
//! is really sent and a test can look for it in error messages), and are stopped and
//! deleted on drop, also when the test fails.

use crate::postgres::{append, cluster_command, free_port, give_to_owner, initdb, run};
use std::fs;
use std::path::PathBuf;
use std::process::Command;

/// A running throwaway cluster; stopped and deleted on drop.
#[derive(Debug)]
pub struct TlsCluster {
    root: PathBuf,
    port: u16,
    password: String,
}

impl TlsCluster {
    /// A cluster whose server presents `certificate_pem` (the server certificate, then any
    /// intermediates) with `private_key_pem`, and refuses connections without TLS. The
    /// superuser is `postgres` with `password` (URL-safe characters only).
    pub fn start(certificate_pem: &str, private_key_pem: &str, password: &str) -> Result<TlsCluster, String> {
        TlsCluster::create(Some((certificate_pem, private_key_pem)), password)
    }

    /// The same cluster with `ssl = off`: it answers a TLS request with "no".
    pub fn start_without_tls(password: &str) -> Result<TlsCluster, String> {
        TlsCluster::create(None, password)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `postgres://postgres:PASSWORD@HOST:PORT/postgres?QUERY` (no `?` when `query` is empty).
    pub fn url(&self, host: &str, query: &str) -> String {
        let separator = if query.is_empty() { "" } else { "?" };
        format!("postgres://postgres:{}@{host}:{}/postgres{separator}{query}", self.password, self.port)
    }

    fn create(tls: Option<(&str, &str)>, password: &str) -> Result<TlsCluster, String> {
        let root = std::env::temp_dir().join(format!(
            "consular-testkit-pg-tls-{}-{}",
            std::process::id(),
            uuid::Uuid::now_v7().simple()
        ));
        // Built before start-up so that a failure half way still deletes what was made.
        let mut cluster = TlsCluster { root, port: 0, password: password.to_owned() };
        let data = cluster.data_dir();
        let socket = cluster.root.join("run");
        fs::create_dir_all(&socket).map_err(|e| format!("cannot create {}: {e}", socket.display()))?;
        let password_file = cluster.root.join("password");
        fs::write(&password_file, format!("{password}\n"))
            .map_err(|e| format!("cannot write the password file: {e}"))?;
        give_to_owner(&cluster.root)?;
        let pwfile = format!("--pwfile={}", password_file.display());
        initdb(&data, &[&pwfile, "--auth-local=trust", "--auth-host=scram-sha-256"])?;

        cluster.port = free_port()?;
        let mut settings = format!(
            "\n# consular-testkit: one test's own cluster.\n\
             listen_addresses = '127.0.0.1'\n\
             port = {}\n\
             unix_socket_directories = '{}'\n\
             fsync = off\n\
             synchronous_commit = off\n\
             full_page_writes = off\n",
            cluster.port,
            socket.display()
        );
        // The socket (trust) is for pg_ctl's readiness check only: the tests use TCP.
        let hba = if let Some((certificate, key)) = tls {
            write(&data.join("server.crt"), certificate)?;
            write(&data.join("server.key"), key)?;
            settings.push_str("ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n");
            "local all all trust\nhostssl all all 127.0.0.1/32 scram-sha-256\n"
        } else {
            settings.push_str("ssl = off\n");
            "local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n"
        };
        append(&data.join("postgresql.conf"), &settings)?;
        write(&data.join("pg_hba.conf"), hba)?;
        give_to_owner(&cluster.root)?;
        if tls.is_some() {
            // PostgreSQL refuses a key that others may read.
            run(Command::new("chmod").arg("0600").arg(data.join("server.key")))?;
        }

        run(cluster_command("pg_ctl")
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(cluster.root.join("server.log"))
            .args(["-w", "-t", "60", "start"]))
        .map_err(|e| {
            format!(
                "{e}\nserver log:\n{}",
                fs::read_to_string(cluster.root.join("server.log")).unwrap_or_default()
            )
        })?;
        Ok(cluster)
    }

    fn data_dir(&self) -> PathBuf {
        self.root.join("data")
    }
}

impl Drop for TlsCluster {
    fn drop(&mut self) {
        if self.data_dir().join("postmaster.pid").exists() {
            let _ = run(cluster_command("pg_ctl").arg("-D").arg(self.data_dir()).args([
                "-m",
                "immediate",
                "-w",
                "stop",
            ]));
        }
        let _ = fs::remove_dir_all(&self.root);
    }
}

fn write(path: &std::path::Path, text: &str) -> Result<(), String> {
    fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
