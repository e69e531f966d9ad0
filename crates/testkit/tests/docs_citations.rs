//! Every citation of the docs in the code names a file of `docs/` and a section of it.
//!
//! The code cites the docs as the path of a page followed by the title of a section in
//! double quotes, one title or several (separated by `, ` or ` and `), after a space, a
//! comma and a space, or a space and an opening parenthesis, in a comment or a string of
//! any `.rs` file of `crates/` and `tests/`; a comment may break a title over two lines.
//! A path without a title must name an existing page.
//!
//! A cited title matches a section of the page when it equals, case and punctuation
//! included:
//! - a heading (`#` to `######`, outside code fences), or the bold label a paragraph or
//!   list item opens with (`**Crash consistency.** The bytes…`, `- **Senders** claim…`,
//!   without its closing `.` or `:`), inline markup removed (backticks, `**`, a link's
//!   target), runs of white space as one space;
//! - or the short form of one: its text before the first `: `, ` (`, `, ` or ` — `, so
//!   that "Writes" names "Writes: change, audit, events and idempotency in one
//!   transaction".
//!
//! A path followed by `#anchor` instead is compared with GitHub's anchors of the page's
//! headings (lower case, punctuation but `-` and `_` dropped, spaces as `-`).
//!
//! It lives in `consular-testkit` because that crate builds in seconds (std only here):
//! the check reads files and needs nothing of the product.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_testkit::workspace;
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// Inline markup removed and white space collapsed.
fn plain(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    // `[text](target)` keeps its text.
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find("](").map(|i| open + i) else { break };
        let Some(end) = rest[close..].find(')').map(|i| close + i) else { break };
        out.push_str(&rest[..open]);
        out.push_str(&rest[open + 1..close]);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out.replace('`', "").replace("**", "").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// GitHub's anchor of a heading.
fn anchor(heading: &str) -> String {
    plain(heading)
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// What a page's sections may be cited as: titles and their short forms, and anchors.
#[derive(Default)]
struct Page {
    titles: Vec<String>,
    anchors: Vec<String>,
}

impl Page {
    fn read(path: &Path) -> Page {
        let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut page = Page::default();
        let mut fenced = false;
        for line in text.lines() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                continue;
            }
            if fenced {
                continue;
            }
            let hashes = line.chars().take_while(|c| *c == '#').count();
            let title = if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
                page.anchors.push(anchor(&line[hashes..]));
                plain(&line[hashes..])
            } else {
                let item = line.trim_start();
                let item = item
                    .strip_prefix("- ")
                    .or_else(|| item.strip_prefix("* "))
                    .or_else(|| {
                        let digits = item.chars().take_while(char::is_ascii_digit).count();
                        item[digits..].strip_prefix(". ").filter(|_| digits > 0)
                    })
                    .unwrap_or(item);
                let Some(label) = item.strip_prefix("**").and_then(|l| l.split("**").next()) else {
                    continue;
                };
                plain(label.trim_end_matches(['.', ':']))
            };
            for separator in [": ", " (", ", ", " — "] {
                if let Some((short, _)) = title.split_once(separator) {
                    page.titles.push(short.to_owned());
                }
            }
            page.titles.push(title);
        }
        page
    }
}

/// A citation: the page, the titles (or the anchor) cited, and where.
#[derive(Debug)]
struct Citation {
    page: String,
    titles: Vec<String>,
    anchor: Option<String>,
    line: usize,
}

/// The citations of one source file. Its lines are joined with a space after their
/// comment markers are taken off, so that a title may run over a line break.
fn citations(source: &str) -> Vec<Citation> {
    let mut text = String::new();
    let mut starts = Vec::new();
    for line in source.lines() {
        starts.push(text.len());
        let line = line.trim_start();
        let line = ["//!", "///", "//"].iter().find_map(|m| line.strip_prefix(m)).unwrap_or(line);
        text.push_str(&line.trim().replace("\\\"", "\""));
        text.push(' ');
    }
    let line_of = |offset: usize| starts.partition_point(|&s| s <= offset);
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("docs/").map(|i| from + i) {
        from = at + "docs/".len();
        let name_len = text[from..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')))
            .unwrap_or(text.len() - from);
        let name = text[from..from + name_len].trim_end_matches('.');
        let Some(stem) = name.strip_suffix(".md") else { continue };
        let mut rest = &text[from + name.len()..];
        let mut citation =
            Citation { page: format!("{stem}.md"), titles: Vec::new(), anchor: None, line: line_of(at) };
        if let Some(after) = rest.strip_prefix('#') {
            let end =
                after.find(|c: char| !(c.is_alphanumeric() || matches!(c, '-' | '_'))).unwrap_or(after.len());
            citation.anchor = Some(after[..end].to_owned());
        } else {
            let mut separators: &[&str] = &[" \"", ", \"", " (\""];
            while let Some(opening) = separators.iter().find(|s| rest.starts_with(**s)) {
                let title = &rest[opening.len()..];
                let Some(end) = title.find('"') else { break };
                citation.titles.push(title[..end].split_whitespace().collect::<Vec<_>>().join(" "));
                rest = &title[end + 1..];
                separators = &[", \"", " and \"", ", and \""];
            }
        }
        found.push(citation);
    }
    found
}

#[test]
fn every_cited_page_and_section_exists() {
    let root = workspace::root();
    let mut files = Vec::new();
    workspace::rust_sources(&root.join("crates"), &mut files);
    workspace::rust_sources(&root.join("tests"), &mut files);
    files.sort();
    let this = Path::new(file!()).file_name().map(ToOwned::to_owned);
    let mut pages: BTreeMap<String, Option<Page>> = BTreeMap::new();
    let (mut checked, mut wrong) = (0, Vec::new());
    for file in files.iter().filter(|f| f.file_name().map(ToOwned::to_owned) != this) {
        let source = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let shown = file.strip_prefix(&root).unwrap_or(file).display().to_string();
        for c in citations(&source) {
            let page = pages.entry(c.page.clone()).or_insert_with(|| {
                let path = root.join("docs").join(&c.page);
                path.is_file().then(|| Page::read(&path))
            });
            let Some(page) = page else {
                wrong.push(format!("{shown}:{}: docs/{} does not exist", c.line, c.page));
                continue;
            };
            checked += 1;
            if let Some(anchor) = &c.anchor
                && !page.anchors.contains(anchor)
            {
                wrong.push(format!("{shown}:{}: docs/{} has no heading #{anchor}", c.line, c.page));
            }
            for title in &c.titles {
                if !page.titles.contains(title) {
                    wrong.push(format!("{shown}:{}: docs/{} has no section \"{title}\"", c.line, c.page));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "citations of sections that do not exist:\n{}", wrong.join("\n"));
    assert!(checked > 100, "only {checked} citations found: is the scan still reading the sources?");
}

#[test]
fn citations_are_read_as_the_code_writes_them() {
    let source = [
        "//! A rule (docs/api.md \"Text\"; docs/operations.md \"Proxies\", \"Slow",
        "//! clients\" and \"Health\").",
        "let path = \"docs/api.md\";",
        "// docs/requests.md. See docs/documents.md, \"Re-upload\" or docs/api.md#endpoints.",
        "    /// (docs/appointments.md (\"The seat invariant\").",
        "msg(\"see docs/api.md \\\"Browsers\\\"\")",
    ]
    .join("\n");
    let read: Vec<(String, Vec<String>, Option<String>, usize)> =
        citations(&source).into_iter().map(|c| (c.page, c.titles, c.anchor, c.line)).collect();
    let titles = |t: &[&str]| t.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        read,
        [
            ("api.md".to_owned(), titles(&["Text"]), None, 1),
            ("operations.md".to_owned(), titles(&["Proxies", "Slow clients", "Health"]), None, 1),
            ("api.md".to_owned(), titles(&[]), None, 3),
            ("requests.md".to_owned(), titles(&[]), None, 4),
            ("documents.md".to_owned(), titles(&["Re-upload"]), None, 4),
            ("api.md".to_owned(), titles(&[]), Some("endpoints".to_owned()), 4),
            ("appointments.md".to_owned(), titles(&["The seat invariant"]), None, 5),
            ("api.md".to_owned(), titles(&["Browsers"]), None, 6),
        ]
    );
    let page = |text: &str| {
        let dir = std::env::temp_dir().join(format!("docs-citations-{}", uuid::Uuid::now_v7()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("page.md");
        fs::write(&path, text).unwrap();
        let page = Page::read(&path);
        fs::remove_dir_all(&dir).unwrap();
        page
    };
    let p = page(
        "# Title\n## Writes: change, audit\n```\n## Not a heading\n```\n**Crash consistency.** The bytes\n\
         - **Senders** claim\n## `now` and [links](x.md) (today)\n",
    );
    for cited in ["Title", "Writes", "Writes: change, audit", "Crash consistency", "Senders", "now and links"]
    {
        assert!(p.titles.iter().any(|t| t == cited), "{cited}: {:?}", p.titles);
    }
    for not_cited in ["Not a heading", "writes", "The bytes", "Crash consistency."] {
        assert!(!p.titles.iter().any(|t| t == not_cited), "{not_cited}: {:?}", p.titles);
    }
    assert_eq!(p.anchors, ["title", "writes-change-audit", "now-and-links-today"]);
}
