//! Every `.rs` file of the workspace is compiled: each one is a crate root Cargo finds by
//! itself (`src/lib.rs`, `src/main.rs`, `src/bin/*`, `tests/*.rs`, `tests/*/main.rs`,
//! `benches/*.rs`, `benches/*/main.rs`, `build.rs`) or a module some other file declares
//! (`mod name;`, next to it or under its own name, or through `#[path = "…"]`).
//!
//! A file nobody declares is not compiled, and nothing says so: a test module left out of
//! its suite's `main.rs` would silently not run (docs/architecture.md "Adding an area").
//! This makes that list, like every other registration, one that fails when forgotten.
//! It lives in `consular-testkit` because that crate builds in seconds.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_testkit::workspace;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Whether Cargo compiles `file` as a crate root of the package in `package`.
fn is_crate_root(package: &Path, file: &Path) -> bool {
    let Ok(relative) = file.strip_prefix(package) else { return false };
    let parts: Vec<String> =
        relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    matches!(
        parts.as_slice(),
        ["build.rs"]
            | ["src", "lib.rs" | "main.rs"]
            | ["src", "bin", _]
            | ["src", "bin", _, "main.rs"]
            | ["tests" | "benches" | "examples", _]
            | ["tests" | "benches" | "examples", _, "main.rs"]
    )
}

/// The directory in which the modules `file` declares live: its own for a crate root
/// and `mod.rs`, otherwise the directory named after it.
fn children_dir(file: &Path, root: bool) -> PathBuf {
    let dir = file.parent().unwrap().to_path_buf();
    if root || file.file_name().is_some_and(|n| n == "mod.rs") {
        dir
    } else {
        dir.join(file.file_stem().unwrap())
    }
}

/// The `name` of a line declaring an out-of-line module (`pub(crate) mod name;`).
fn declared_module(line: &str) -> Option<&str> {
    let line = line.trim();
    let rest = line
        .strip_prefix("pub ")
        .or_else(|| line.strip_prefix("pub(").and_then(|r| r.split_once(')')).map(|(_, r)| r.trim_start()));
    let rest = rest.unwrap_or(line);
    let name = rest.strip_prefix("mod ")?.strip_suffix(';')?.trim();
    name.chars().all(|c| c.is_alphanumeric() || c == '_').then_some(name)
}

/// The `x` of `#[path = "x"]`.
fn path_attribute(line: &str) -> Option<&str> {
    let rest = line.trim().strip_prefix("#[path")?.trim_start().strip_prefix('=')?.trim_start();
    rest.strip_prefix('"')?.split_once('"').map(|(path, _)| path)
}

/// Removes `.` and `..` from a path without touching the file system.
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Every file the `mod` declarations of `file` name (both candidates of a plain `mod`).
fn declared_by(file: &Path, root: bool) -> Vec<PathBuf> {
    let text = fs::read_to_string(file).unwrap();
    let mut declared = Vec::new();
    let mut pending_path: Option<String> = None;
    for line in text.lines() {
        if let Some(path) = path_attribute(line) {
            pending_path = Some(path.to_owned());
            continue;
        }
        if let Some(name) = declared_module(line) {
            match pending_path.take() {
                Some(path) => declared.push(normal(&file.parent().unwrap().join(path))),
                None => {
                    let dir = children_dir(file, root);
                    declared.push(dir.join(format!("{name}.rs")));
                    declared.push(dir.join(name).join("mod.rs"));
                }
            }
        } else if !line.trim().starts_with("#[") {
            pending_path = None;
        }
    }
    declared
}

#[test]
fn every_source_file_is_compiled() {
    let mut orphans = Vec::new();
    let mut checked = 0;
    for package in workspace::members().unwrap() {
        let mut files = Vec::new();
        for dir in ["src", "tests", "benches", "examples"] {
            workspace::rust_sources(&package.join(dir), &mut files);
        }
        let declared: BTreeSet<PathBuf> =
            files.iter().flat_map(|f| declared_by(f, is_crate_root(&package, f))).collect();
        for file in &files {
            checked += 1;
            if !is_crate_root(&package, file) && !declared.contains(file) {
                orphans.push(file.strip_prefix(workspace::root()).unwrap_or(file).display().to_string());
            }
        }
    }
    assert!(checked > 300, "only {checked} files found: is the workspace where this test looks?");
    assert!(orphans.is_empty(), "files no module declares, so never compiled:\n{}", orphans.join("\n"));
}

#[test]
fn a_file_left_out_is_found() {
    let dir = std::env::temp_dir().join(format!("orphans-{}", std::process::id()));
    fs::create_dir_all(dir.join("tests/suite")).unwrap();
    fs::write(dir.join("tests/suite/main.rs"), "#[path = \"../common.rs\"]\nmod common;\nmod kept;\n")
        .unwrap();
    let declared = declared_by(&dir.join("tests/suite/main.rs"), true);
    assert!(declared.contains(&dir.join("tests/common.rs")));
    assert!(declared.contains(&dir.join("tests/suite/kept.rs")));
    assert!(!declared.contains(&dir.join("tests/suite/forgotten.rs")));
    assert!(is_crate_root(&dir, &dir.join("tests/suite/main.rs")));
    assert!(!is_crate_root(&dir, &dir.join("tests/suite/forgotten.rs")));
    assert_eq!(declared_module("pub(crate) mod wire;"), Some("wire"));
    assert_eq!(declared_module("mod tests {"), None);
    fs::remove_dir_all(&dir).unwrap();
}
