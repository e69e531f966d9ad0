//! The modules of every crate of the workspace must form layers: no import cycle between
//! them, and, in this crate, no route module depending on another (they share `wire`,
//! `respond`, `extract`, `problem` and `state` instead). This reads each member's
//! `src/**/*.rs` as text (a binary's `main.rs` and `src/bin/` are crates of their own, with
//! no modules, and are left out), collects every `crate::…`, `$crate::…` and `super::…` path
//! outside comments and test modules (`#[cfg(test)]`), plus each `mod child;` declaration,
//! and looks for cycles in the resulting graph of modules. A `mod child;` counts as a use
//! of the child, so a child using its parent's items closes a cycle: what children share
//! belongs in a sibling of theirs (as in the db adapter's `analytics/spells.rs`), the
//! parent declaring, re-exporting and implementing.
//!
//! A path names the module it reaches: `crate::a::b::Item` is module `a::b`, and a name a
//! module imports (`pub use database::Database;` in `lib.rs`, or a glob) is followed to
//! where it comes from, so `crate::Database` is module `database`, not the crate root. A
//! file included with `#[path]` (the db adapter compiles its queries once per database)
//! counts once, under its own file name; a path a macro builds from its arguments
//! (`crate::$area::…`) is not followed.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_testkit::workspace;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path (`crate`, `state`, `routes::clients`) → the modules it uses.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// The crates that still have an import cycle, each with its cycles, until they are
/// removed (issue 29). The test fails on a cycle in any other crate, and on an entry here
/// whose crate has none left.
const KNOWN_CYCLES: &[(&str, &str)] = &[];

fn module_name(src: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(src).unwrap_or(file).with_extension("");
    let mut parts: Vec<String> =
        relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    if parts.last().is_some_and(|last| last == "mod" || last == "lib") {
        parts.pop();
    }
    if parts.is_empty() { "crate".to_owned() } else { parts.join("::") }
}

/// The library's files: everything under `src/` but the roots of binaries.
fn rust_files(src: &Path, dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if path != src.join("bin") {
                rust_files(src, &path, files);
            }
        } else if path.extension().is_some_and(|e| e == "rs") && path != src.join("main.rs") {
            files.push(path);
        }
    }
}

/// The declaration of a test module at line `n`, if `#[cfg(test)]` is there: the first
/// line after it that is not an attribute, when it declares a module
/// (`pub(crate) mod tests {`, `mod tests;`).
fn test_module<'a>(lines: &[&'a str], n: usize) -> Option<&'a str> {
    if lines[n].trim() != "#[cfg(test)]" {
        return None;
    }
    let declaration = lines[n + 1..].iter().map(|l| l.trim()).find(|l| !l.starts_with("#["))?;
    declaration.split_whitespace().any(|w| w == "mod").then_some(declaration)
}

/// The name a test module declaration (`mod tests;`) declares.
fn declared_module(declaration: &str) -> Option<&str> {
    let mut words = declaration.trim_end_matches(';').split_whitespace();
    words.find(|w| *w == "mod")?;
    words.next()
}

/// The code that counts: without line comments, and without an inline test module
/// (`#[cfg(test)] mod … {`, by convention the last item of a file).
fn code(text: &str) -> String {
    let mut out = String::new();
    let lines: Vec<&str> = text.lines().collect();
    for (n, line) in lines.iter().enumerate() {
        if test_module(&lines, n).is_some_and(|d| d.ends_with('{')) {
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

/// One leaf of a path or `use` tree: its segments, and the name it is known by here
/// (the last segment, an `as` alias, `*` for a glob, the module itself for `self`).
struct Leaf {
    segments: Vec<String>,
    name: String,
}

/// Parses the rest of a path at `i` (after `prefix::`), groups included, pushing every
/// complete path into `out`; returns where it stopped.
fn parse_path(chars: &[char], mut i: usize, prefix: Vec<String>, out: &mut Vec<Leaf>) -> usize {
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
                // Skip to the separator (past an `as alias`, read by `alias` below).
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
        if chars.get(i) == Some(&'*') {
            out.push(Leaf { segments: path, name: "*".to_owned() });
            return i + 1;
        }
        let start = i;
        while i < chars.len() && is_ident(chars[i]) {
            i += 1;
        }
        let mut name = path.last().cloned().unwrap_or_default();
        if i > start {
            let ident: String = chars[start..i].iter().collect();
            if ident != "self" {
                name.clone_from(&ident);
                path.push(ident);
            }
        }
        if i > start && chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':') {
            i += 2;
            continue;
        }
        if let Some(alias) = alias(chars, i) {
            name = alias;
        }
        out.push(Leaf { segments: path, name });
        return i;
    }
}

/// The `as alias` at `i`, if there is one.
fn alias(chars: &[char], i: usize) -> Option<String> {
    let i = skip_ws(chars, i);
    if chars.get(i..i + 3)? != ['a', 's', ' '] {
        return None;
    }
    let start = skip_ws(chars, i + 3);
    let end = (start..chars.len()).find(|&j| !is_ident(chars[j])).unwrap_or(chars.len());
    (end > start).then(|| chars[start..end].iter().collect())
}

fn starts_word(chars: &[char], i: usize) -> bool {
    i == 0 || !is_ident(chars[i - 1])
}

fn word_at(chars: &[char], i: usize, word: &str) -> bool {
    let end = i + word.len();
    starts_word(chars, i)
        && chars.get(i..end).is_some_and(|w| w.iter().copied().eq(word.chars()))
        && chars.get(end).is_none_or(|c| !is_ident(*c))
}

/// Every path starting with `crate::` or `super::`, as segments (`super` kept).
fn paths(code: &str) -> Vec<Leaf> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let rest = || chars[i..].iter().take(7).collect::<String>();
        if starts_word(&chars, i) && rest().starts_with("crate::") {
            i = parse_path(&chars, i + 7, Vec::new(), &mut out);
        } else if starts_word(&chars, i) && rest().starts_with("super::") {
            i = parse_path(&chars, i + 7, vec!["super".to_owned()], &mut out);
        } else {
            i += 1;
        }
    }
    out
}

/// The leaves of every `use` declaration, relative paths included (`pub use a::B;`).
fn uses(code: &str) -> Vec<Leaf> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if word_at(&chars, i, "use") {
            i = parse_path(&chars, i + 3, Vec::new(), &mut out);
        } else {
            i += 1;
        }
    }
    out
}

/// The names a module defines itself.
fn defined(code: &str) -> BTreeSet<String> {
    const KEYWORDS: &[&str] =
        &["struct", "enum", "trait", "type", "fn", "const", "static", "union", "mod", "macro_rules"];
    let mut names = BTreeSet::new();
    let words: Vec<&str> = code.split(|c: char| !is_ident(c)).filter(|w| !w.is_empty()).collect();
    for pair in words.windows(2) {
        if KEYWORDS.contains(&pair[0]) {
            names.insert(pair[1].to_owned());
        }
    }
    names
}

fn parent(module: &str) -> String {
    match module.rsplit_once("::") {
        Some((parent, _)) => parent.to_owned(),
        None => "crate".to_owned(),
    }
}

fn child(module: &str, name: &str) -> String {
    if module == "crate" { name.to_owned() } else { format!("{module}::{name}") }
}

/// What the resolution needs to know of each module.
struct Modules {
    /// The modules found, as paths.
    known: BTreeSet<String>,
    /// The names each module imports, and the absolute path each stands for (`None`: an
    /// item of another crate).
    imports: BTreeMap<String, BTreeMap<String, Option<Vec<String>>>>,
    /// The modules each module imports every public name of (`use a::*;`).
    globs: BTreeMap<String, Vec<Vec<String>>>,
    /// The names each module defines.
    defines: BTreeMap<String, BTreeSet<String>>,
}

impl Modules {
    /// `segments` (as written in `module`) from the crate root: `super` and `self` replaced,
    /// a path starting with a child module made absolute. `None` for another crate's path.
    fn absolute(&self, module: &str, segments: &[String]) -> Option<Vec<String>> {
        let mut base = module.to_owned();
        let mut rest = segments;
        match rest.first().map(String::as_str) {
            Some("crate") => return Some(rest[1..].to_vec()),
            Some("super") => {
                while rest.first().is_some_and(|s| s == "super") {
                    base = parent(&base);
                    rest = &rest[1..];
                }
            }
            Some("self") => rest = &rest[1..],
            Some(first) if self.known.contains(&child(module, first)) => {}
            _ => return None,
        }
        let mut path: Vec<String> =
            if base == "crate" { Vec::new() } else { base.split("::").map(str::to_owned).collect() };
        path.extend(rest.iter().cloned());
        Some(path)
    }

    /// The module an absolute path reaches: the longest module prefix, following an
    /// imported name to where it comes from (`None`: to another crate).
    fn resolve(&self, segments: &[String], depth: usize) -> Option<String> {
        let mut module = "crate".to_owned();
        for segment in segments {
            let next = child(&module, segment);
            if self.known.contains(&next) {
                module = next;
                continue;
            }
            if depth < 16 && !self.defines.get(&module).is_some_and(|d| d.contains(segment)) {
                if let Some(target) = self.imports.get(&module).and_then(|i| i.get(segment)) {
                    return self.resolve(target.as_ref()?, depth + 1);
                }
                for glob in self.globs.get(&module).into_iter().flatten() {
                    let Some(from) = self.resolve(glob, depth + 1) else { continue };
                    let provides = self.defines.get(&from).is_some_and(|d| d.contains(segment))
                        || self.imports.get(&from).is_some_and(|i| i.contains_key(segment));
                    if provides {
                        let mut path = glob.clone();
                        path.push(segment.clone());
                        return self.resolve(&path, depth + 1);
                    }
                }
            }
            break;
        }
        Some(module)
    }
}

fn graph(src: &Path) -> Graph {
    let mut files = Vec::new();
    rust_files(src, src, &mut files);
    let mut texts: Vec<(String, String)> =
        files.iter().map(|f| (module_name(src, f), code(&std::fs::read_to_string(f).unwrap()))).collect();

    // `#[cfg(test)] mod tests;`: a test module, left out with everything under it.
    let mut tests = BTreeSet::new();
    for (module, code) in &texts {
        let lines: Vec<&str> = code.lines().collect();
        for n in 0..lines.len() {
            if let Some(declaration) = test_module(&lines, n)
                && declaration.ends_with(';')
                && let Some(name) = declared_module(declaration)
            {
                tests.insert(child(module, name));
            }
        }
    }
    texts.retain(|(module, _)| !tests.iter().any(|t| module == t || module.starts_with(&format!("{t}::"))));

    let mut modules = Modules {
        known: texts.iter().map(|(m, _)| m.clone()).collect(),
        imports: BTreeMap::new(),
        globs: BTreeMap::new(),
        defines: BTreeMap::new(),
    };
    for (module, code) in &texts {
        modules.defines.insert(module.clone(), defined(code));
        for leaf in uses(code) {
            let path = modules.absolute(module, &leaf.segments);
            match path {
                Some(path) if leaf.name == "*" => modules.globs.entry(module.clone()).or_default().push(path),
                _ if leaf.name == "*" || leaf.segments.is_empty() => {}
                path => {
                    modules.imports.entry(module.clone()).or_default().insert(leaf.name, path);
                }
            }
        }
    }

    let mut graph = Graph::new();
    for (module, code) in &texts {
        let edges = graph.entry(module.clone()).or_default();
        for line in code.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            if let [.., "mod", name] = words.as_slice()
                && let Some(name) = name.strip_suffix(';')
                && !tests.contains(&child(module, name))
            {
                edges.insert(child(module, name));
            }
        }
        for leaf in paths(code) {
            if leaf.segments.is_empty() {
                // `crate::$area::…`: a path a macro makes of its arguments, not followed.
                continue;
            }
            let segments = if leaf.segments.first().is_some_and(|s| s == "super") {
                leaf.segments
            } else {
                [vec!["crate".to_owned()], leaf.segments].concat()
            };
            let Some(path) = modules.absolute(module, &segments) else { continue };
            if let Some(target) = modules.resolve(&path, 0)
                && &target != module
            {
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

/// Every member of the workspace (the root `Cargo.toml`'s `members`) with a `src/`,
/// relative to the workspace.
fn members() -> Vec<String> {
    workspace::members()
        .unwrap()
        .into_iter()
        .filter(|m| m.join("src").is_dir())
        .filter_map(|m| m.strip_prefix(workspace::root()).ok().map(|m| m.display().to_string()))
        .collect()
}

fn src() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn module_graph_of_every_crate_has_no_cycle() {
    let members = members();
    assert!(members.len() >= 10, "too few members found: {members:?}");
    for (member, _) in KNOWN_CYCLES {
        assert!(members.iter().any(|m| m == member), "{member} is not a member");
    }
    let mut cycles = Vec::new();
    for member in &members {
        let graph = graph(&workspace::root().join(member).join("src"));
        let known = KNOWN_CYCLES.iter().any(|(m, _)| m == member);
        match find_cycle(&graph) {
            Some(cycle) if !known => cycles.push(format!("{member}: {}", cycle.join(" -> "))),
            None if known => cycles.push(format!("{member} has no cycle left: remove it from KNOWN_CYCLES")),
            _ => {}
        }
    }
    assert!(cycles.is_empty(), "import cycles between modules:\n{}", cycles.join("\n"));
}

#[test]
fn module_graph_follows_imported_names() {
    let http = graph(&src());
    assert!(http.len() > 10, "too few modules found: {http:?}");
    assert!(http["routes::requests"].contains("wire"), "{http:?}");
    let db = graph(&workspace::root().join("crates/adapters/db/src"));
    // `crate::Database` is the `database` module, re-exported by `lib.rs`.
    assert!(db["health"].contains("database"), "{:?}", db["health"]);
    assert!(!db["health"].contains("crate"), "{:?}", db["health"]);
}

#[test]
fn module_graph_has_no_route_module_using_another() {
    for (module, uses) in graph(&src()) {
        if module.starts_with("routes::") {
            let routes: Vec<&String> = uses.iter().filter(|u| u.starts_with("routes")).collect();
            assert!(routes.is_empty(), "{module} uses {routes:?}; share through `wire` or `respond` instead");
        }
    }
}

/// The check itself finds a cycle made of a `use` group, a `super::` path, a path inside an
/// attribute string and a name re-exported by the crate root, like the ones this crate and
/// the db adapter once had; and leaves out test modules, in their files or inline.
#[test]
fn module_graph_check_finds_a_cycle() {
    let dir = std::env::temp_dir().join(format!("module-graph-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("routes")).unwrap();
    std::fs::write(
        dir.join("lib.rs"),
        "pub mod metrics;\npub mod routes;\npub mod spec;\npub mod state;\n#[cfg(test)]\nmod tests;\n\
         pub use routes::a::Handler;\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("metrics.rs"),
        "pub struct M;\n#[cfg(test)]\n#[allow(unused)]\npub(crate) mod tests {\n    use crate::Handler;\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("state.rs"), "use crate::{metrics::M, spec::ApiSpec};\n").unwrap();
    std::fs::write(dir.join("spec.rs"), "#[serde(with = \"crate::Handler\")]\nstruct S;\n").unwrap();
    std::fs::write(dir.join("tests.rs"), "use crate::metrics::M;\nuse crate::Handler;\n").unwrap();
    std::fs::write(dir.join("routes/mod.rs"), "pub mod a;\n").unwrap();
    std::fs::write(
        dir.join("routes/a.rs"),
        "// crate::nothing\nuse super::super::state::AppState;\npub struct Handler;\n",
    )
    .unwrap();
    let graph = graph(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(!graph.contains_key("tests"), "{graph:?}");
    assert!(graph["metrics"].is_empty(), "{graph:?}");
    assert!(graph["spec"].contains("routes::a"), "{graph:?}");
    let cycle = find_cycle(&graph).unwrap();
    assert_eq!(cycle.len(), 4, "{cycle:?}");
    for module in ["routes::a", "spec", "state"] {
        assert!(cycle.iter().any(|m| m == module), "{module} not in {cycle:?}");
    }
}
