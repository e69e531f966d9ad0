//! The modules of this crate must form layers: no import cycle between them, and no
//! route module depending on another (they share `wire`, `respond`, `extract`, `problem`
//! and `state` instead). This reads `src/**/*.rs` as text, collects every `crate::…` and
//! `super::…` path outside comments and `#[cfg(test)]` modules, plus each `mod child;`
//! declaration, and looks for cycles in the resulting graph of modules.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path (`crate`, `state`, `routes::clients`) → the modules it uses.
type Graph = BTreeMap<String, BTreeSet<String>>;

fn module_name(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> =
        relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|last| last == "mod" || last == "lib") {
        parts.pop();
    }
    if parts.is_empty() { "crate".to_owned() } else { parts.join("::") }
}

fn rust_files(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// The code that counts: without line comments, and without an inline test module
/// (`#[cfg(test)] mod … {`, by convention the last item of a file).
fn code(text: &str) -> String {
    let mut out = String::new();
    let lines: Vec<&str> = text.lines().collect();
    for (n, line) in lines.iter().enumerate() {
        let next = lines.get(n + 1).map_or("", |l| l.trim());
        if line.trim() == "#[cfg(test)]" && next.starts_with("mod ") && next.ends_with('{') {
            break;
        }
        out.push_str(line.split("//").next().unwrap_or(""));
        out.push('\n');
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn skip_ws(chars: &[char], mut i: usize) -> usize {
    while i < chars.len() && chars[i].is_whitespace() {
        i += 1;
    }
    i
}

/// Parses the rest of a path at `i` (after `prefix::`), groups included, pushing every
/// complete path into `out`; returns where it stopped.
fn parse_path(chars: &[char], mut i: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let mut path = prefix;
    loop {
        i = skip_ws(chars, i);
        if chars.get(i) == Some(&'{') {
            i += 1;
            loop {
                i = skip_ws(chars, i);
                if chars.get(i) == Some(&'}') {
                    return i + 1;
                }
                i = parse_path(chars, i, path.clone(), out);
                // Skip an `as alias` up to the separator.
                while i < chars.len() && chars[i] != ',' && chars[i] != '}' {
                    i += 1;
                }
                match chars.get(i) {
                    Some(',') => i += 1,
                    Some(_) => return i + 1,
                    None => return i,
                }
            }
        }
        let start = i;
        while i < chars.len() && is_ident(chars[i]) {
            i += 1;
        }
        if i > start {
            let ident: String = chars[start..i].iter().collect();
            if ident != "self" {
                path.push(ident);
            }
        }
        if i > start && chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':') {
            i += 2;
            continue;
        }
        out.push(path);
        return i;
    }
}

/// Every path starting with `crate::` or `super::`, as segments (`super` kept).
fn paths(code: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts_word = i == 0 || !is_ident(chars[i - 1]);
        let rest = || chars[i..].iter().take(7).collect::<String>();
        if starts_word && rest().starts_with("crate::") {
            i = parse_path(&chars, i + 7, Vec::new(), &mut out);
        } else if starts_word && rest().starts_with("super::") {
            i = parse_path(&chars, i + 7, vec!["super".to_owned()], &mut out);
        } else {
            i += 1;
        }
    }
    out
}

fn parent(module: &str) -> String {
    match module.rsplit_once("::") {
        Some((parent, _)) => parent.to_owned(),
        None => "crate".to_owned(),
    }
}

/// The longest known module that `segments` (relative to `base`) names.
fn resolve(modules: &BTreeSet<String>, base: &str, segments: &[String]) -> String {
    let mut best = base.to_owned();
    for n in 1..=segments.len() {
        let joined = segments[..n].join("::");
        let candidate = if base == "crate" { joined } else { format!("{base}::{joined}") };
        if modules.contains(&candidate) {
            best = candidate;
        }
    }
    best
}

fn graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let texts: Vec<(String, String)> =
        files.iter().map(|f| (module_name(src, f), code(&std::fs::read_to_string(f).unwrap()))).collect();
    let modules: BTreeSet<String> = texts.iter().map(|(m, _)| m.clone()).collect();
    let mut graph = Graph::new();
    for (module, code) in &texts {
        let edges = graph.entry(module.clone()).or_default();
        for line in code.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            if let [.., "mod", name] = words.as_slice()
                && let Some(name) = name.strip_suffix(';')
            {
                let child = if module == "crate" { name.to_owned() } else { format!("{module}::{name}") };
                edges.insert(child);
            }
        }
        for path in paths(code) {
            let (base, segments) = match path.first().map(String::as_str) {
                Some("super") => {
                    let mut base = module.clone();
                    let mut rest = &path[..];
                    while rest.first().is_some_and(|s| s == "super") {
                        base = parent(&base);
                        rest = &rest[1..];
                    }
                    (base, rest.to_vec())
                }
                _ => ("crate".to_owned(), path),
            };
            let target = resolve(&modules, &base, &segments);
            if &target != module {
                edges.insert(target);
            }
        }
    }
    graph
}

/// One cycle of `graph`, if there is any, as the modules along it.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        graph: &Graph,
        node: &str,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|n| n == node) {
            let mut cycle = stack[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(graph, next, stack, done) {
                return Some(cycle);
            }
        }
        stack.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(graph, node, &mut Vec::new(), &mut done))
}

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_modules_of_the_crate_form_no_cycle() {
    let graph = graph(&src());
    assert!(graph.len() > 10, "too few modules found: {graph:?}");
    assert!(graph["routes::requests"].contains("wire"), "{graph:?}");
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle between modules: {}\n{graph:#?}", cycle.join(" -> "));
    }
}

#[test]
fn route_modules_use_no_other_route_module() {
    for (module, uses) in graph(&src()) {
        if module.starts_with("routes::") {
            let routes: Vec<&String> = uses.iter().filter(|u| u.starts_with("routes")).collect();
            assert!(routes.is_empty(), "{module} uses {routes:?}; share through `wire` or `respond` instead");
        }
    }
}

/// The check itself finds a cycle made of a `use` group, a `super::` path and a path
/// inside an attribute string, like the one this crate once had.
#[test]
fn the_check_finds_a_cycle() {
    let dir = std::env::temp_dir().join(format!("module-graph-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("routes")).unwrap();
    std::fs::write(dir.join("lib.rs"), "pub mod metrics;\npub mod routes;\npub mod spec;\npub mod state;\n")
        .unwrap();
    std::fs::write(dir.join("metrics.rs"), "pub struct M;\n").unwrap();
    std::fs::write(dir.join("state.rs"), "use crate::{metrics::M, spec::ApiSpec};\n").unwrap();
    std::fs::write(dir.join("spec.rs"), "#[serde(with = \"crate::routes::x\")]\nstruct S;\n").unwrap();
    std::fs::write(dir.join("routes/mod.rs"), "pub mod a;\n").unwrap();
    std::fs::write(dir.join("routes/a.rs"), "// crate::nothing\nuse super::super::state::AppState;\n")
        .unwrap();
    let graph = graph(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    let cycle = find_cycle(&graph).unwrap();
    assert_eq!(cycle.len(), 5, "{cycle:?}");
    for module in ["routes", "routes::a", "spec", "state"] {
        assert!(cycle.iter().any(|m| m == module), "{module} not in {cycle:?}");
    }
}
