//! Helpers for the workspace's test suites: throwaway SQLite URLs, fresh PostgreSQL
//! databases cloned from a migrated template ([`postgres`]), a TLS-only cluster of one
//! test's own ([`postgres_tls`]), a primary with its synchronous standby ([`replication`]),
//! a PgBouncer of one test's own in front of a database ([`pgbouncer`]),
//! a fingerprint of a
//! migration directory to name templates by, and a real SMTP server on loopback
//! (aiosmtpd, [`smtp`]) with a MIME parser for what it received.
//!
//! std, uuid and mail-parser only: it must not depend on the crates it helps test, so the
//! schema step is passed in by the caller. Never used by production code.

pub mod pgbouncer;
pub mod postgres;
pub mod postgres_tls;
pub mod replication;
pub mod smtp;
pub mod workspace;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// The URL of a SQLite database file inside `dir` (typically a `tempfile::TempDir`).
pub fn sqlite_url(dir: &Path) -> String {
    format!("sqlite://{}", dir.join("consular.db").display())
}

/// A short hex digest of every file name and content under `dir`, so that a template
/// prepared from one migration set is never reused for another. Stable within one
/// toolchain, which is all a test cache needs.
pub fn fingerprint(dir: &Path) -> Result<String, String> {
    let mut files = Vec::new();
    collect_files(dir, &mut files)?;
    files.sort();
    let mut hasher = DefaultHasher::new();
    for file in &files {
        file.strip_prefix(dir).unwrap_or(file).hash(&mut hasher);
        std::fs::read(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?.hash(&mut hasher);
    }
    Ok(format!("{:016x}", hasher.finish()))
}

fn collect_files(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("cannot list {}: {e}", dir.display()))?.path();
        if path.is_dir() {
            collect_files(&path, files)?;
        } else {
            files.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_urls_point_into_the_directory() {
        assert_eq!(sqlite_url(Path::new("/tmp/x")), "sqlite:///tmp/x/consular.db");
    }

    #[test]
    fn the_fingerprint_follows_content() {
        let dir = std::env::temp_dir().join(format!("consular-testkit-fp-{}", uuid::Uuid::now_v7()));
        std::fs::create_dir_all(dir.join("a")).unwrap();
        std::fs::write(dir.join("a/up.sql"), "CREATE TABLE t ();").unwrap();
        let first = fingerprint(&dir).unwrap();
        assert_eq!(fingerprint(&dir).unwrap(), first);
        std::fs::write(dir.join("a/up.sql"), "CREATE TABLE u ();").unwrap();
        assert_ne!(fingerprint(&dir).unwrap(), first);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
