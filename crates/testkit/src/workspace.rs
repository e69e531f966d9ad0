//! The workspace's own files, for the tests that read the code as text (the docs
//! citations, the files every module must declare).

use std::fs;
use std::path::{Path, PathBuf};

/// The workspace's root directory.
pub fn root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// The directory of every member of the workspace, as the root `Cargo.toml` lists them.
pub fn members() -> Result<Vec<PathBuf>, String> {
    let manifest = fs::read_to_string(root().join("Cargo.toml")).map_err(|e| e.to_string())?;
    let list = manifest
        .split("members = [")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .ok_or("the root Cargo.toml lists no members")?;
    Ok(list
        .split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(|m| root().join(m))
        .collect())
}

/// The `.rs` files under `dir` (none when it does not exist), build output and hidden
/// directories aside.
pub fn rust_sources(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target" && !n.to_string_lossy().starts_with('.')) {
                rust_sources(&path, found);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}
