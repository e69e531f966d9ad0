//! Temporary files that interrupted uploads left in a local store.
//!
//! object_store's local backend writes an upload to `<key>#<n>` and renames it to `<key>`
//! on completion; a process killed in between leaves the `#<n>` file, which object_store
//! neither lists nor deletes. Keys cannot contain `#` (see `validate_key`), so such a name
//! is always a staging file.

use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// True for `<name>#<digits>`, object_store's staging file name.
fn is_staging_file(name: &str) -> bool {
    match name.rsplit_once('#') {
        Some((base, n)) => !base.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()),
        None => false,
    }
}

/// Removes staging files under `root` last modified before `cutoff`; returns how many.
/// Symbolic links are neither followed nor removed. Blocking: run it off the async runtime.
pub(crate) fn remove_stale_staging_files(root: &Path, cutoff: SystemTime) -> io::Result<u64> {
    let mut removed = 0;
    let mut dirs: Vec<PathBuf> = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            // Removed meanwhile (object_store prunes empty directories).
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        for entry in entries {
            let entry = entry?;
            let kind = entry.file_type()?;
            if kind.is_dir() {
                dirs.push(entry.path());
                continue;
            }
            if !kind.is_file() || !entry.file_name().to_str().is_some_and(is_staging_file) {
                continue;
            }
            let modified = entry.metadata()?.modified()?;
            if modified < cutoff {
                match std::fs::remove_file(entry.path()) {
                    Ok(()) => removed += 1,
                    // Completed or aborted meanwhile.
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                }
            }
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staging_names() {
        assert!(is_staging_file("passport.pdf#1"));
        assert!(is_staging_file("a#12"));
        assert!(!is_staging_file("a#"));
        assert!(!is_staging_file("#1"));
        assert!(!is_staging_file("a#1x"));
        assert!(!is_staging_file("passport.pdf"));
    }
}
