//! The shape of the house, checked (docs/src/architecture.md "Crates and who may import whom", "Inside the
//! server"): a crate that gains a dependency arrow the table does not allow fails here, and
//! so does a module cycle inside ferry-server.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Which ferry crates each ferry crate may depend on (normal dependencies; dev-dependencies
/// are free). Arrows point down only.
const ALLOWED: &[(&str, &[&str])] = &[
    ("ferry-proto", &[]),
    ("ferry-net", &[]),
    ("ferry-trust", &["ferry-proto", "ferry-net"]),
    ("ferry-agent", &["ferry-proto"]),
    // The conformance agent reads ACTS's golden payloads with the client's own decoders; the
    // proxy agent calls other agents through the client and reads its card pins (keys, JWKS)
    // with ferry-trust.
    (
        "ferry-agents",
        &["ferry-proto", "ferry-agent", "ferry-client", "ferry-trust"],
    ),
    ("ferry-store", &["ferry-proto"]),
    ("ferry-store-sql", &["ferry-proto", "ferry-store"]),
    ("ferry-browser", &["ferry-net"]),
    // The forms agent keeps its callers' saved profiles in the store's ProfileStore (data
    // only; the binary picks memory, SQLite or PostgreSQL).
    (
        "ferry-forms",
        &[
            "ferry-proto",
            "ferry-agent",
            "ferry-browser",
            "ferry-net",
            "ferry-store",
        ],
    ),
    // The forms agent's MCP face knows the forms agent and MCP, not the A2A server.
    ("ferry-mcp", &["ferry-forms"]),
    // Push deliveries dial through ferry-net (DESIGN "Push": delivery dials through it). A
    // replica forwards the requests of a conversation another replica holds (the forms
    // agent's browser) to it as an A2A client.
    (
        "ferry-server",
        &[
            "ferry-proto",
            "ferry-agent",
            "ferry-trust",
            "ferry-store",
            "ferry-net",
            "ferry-client",
        ],
    ),
    (
        "ferry-cdp-config",
        &[
            "ferry-proto",
            "ferry-agent",
            "ferry-browser",
            "ferry-server",
        ],
    ),
    ("ferry-client", &["ferry-proto", "ferry-trust", "ferry-net"]),
    (
        "ferry-testkit",
        &["ferry-agent", "ferry-server", "ferry-browser"],
    ),
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("crates/ferry-testkit sits two levels below the workspace")
        .to_path_buf()
}

/// The ferry crates named in the `[dependencies]` table of a manifest.
fn normal_dependencies(manifest: &str) -> BTreeSet<String> {
    let mut in_deps = false;
    let mut deps = BTreeSet::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_deps = line == "[dependencies]";
            continue;
        }
        if in_deps
            && let Some(name) = line.split(['=', '.', ' ']).next()
            && name.starts_with("ferry")
        {
            deps.insert(name.to_owned());
        }
    }
    deps
}

#[test]
fn crates_depend_only_downwards() {
    let crates = workspace().join("crates");
    let mut checked = 0;
    for entry in std::fs::read_dir(&crates).expect("crates/") {
        let dir = entry.expect("entry").path();
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        if name == "ferry" {
            continue; // the binary wires everything together
        }
        let allowed = ALLOWED
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("{name} is not in the table of allowed dependencies"))
            .1;
        for dep in normal_dependencies(&manifest) {
            assert!(
                allowed.contains(&dep.as_str()),
                "{name} depends on {dep}, which the crate map (docs/src/architecture.md) does not allow"
            );
        }
        checked += 1;
    }
    assert!(checked >= 11, "only {checked} crates checked");
}

/// The module path of a source file under `src/` (`http/front_door/mod.rs` →
/// `http::front_door`).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("under src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
        .collect();
    if parts
        .last()
        .is_some_and(|p| p == "mod" || p == "lib" || p == "main")
    {
        parts.pop();
    }
    parts.join("::")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A file's code outside its tests, without comments (doc comments name paths that are no
/// imports) and without the text of string literals (a URL is no path).
fn code_of(text: &str) -> String {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    let mut out = String::with_capacity(code.len());
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '"' => {
                let mut escaped = false;
                for c in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == '"' {
                        break;
                    }
                }
                out.push_str("\"\"");
            }
            // A char literal of a quote (`'"'`) must not open a string.
            '\'' if chars.peek() == Some(&'"') => {
                chars.next();
                out.push_str("'\"");
            }
            c => out.push(c),
        }
    }
    out
}

/// Expands `a::{b, c::{d, e}}` (the text after `crate::` or `super::`) into full paths.
fn expand(item: &str, prefix: &str, out: &mut Vec<String>) {
    let item = item.trim();
    match item.find('{') {
        Some(open) => {
            let head = format!("{prefix}{}", &item[..open]);
            let inner = item[open + 1..].trim_end_matches('}');
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(&inner[start..i], &head, out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            expand(&inner[start..], &head, out);
        }
        None => {
            let path = item.split(" as ").next().unwrap_or_default().trim();
            if !path.is_empty() {
                out.push(format!("{prefix}{path}"));
            }
        }
    }
}

/// The module paths a file names, in `use` items and inline alike: `crate::a::b` and
/// `super::c` (resolved against `module`, the file's own module path).
fn named_paths(text: &str, module: &str) -> Vec<String> {
    let code = code_of(text);
    let bytes = code.as_bytes();
    let mut paths = Vec::new();
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let (skip, base) = if rest.starts_with("crate::") {
            ("crate::".len(), Vec::new())
        } else if rest.starts_with("super::") {
            let mut parent: Vec<&str> = module.split("::").filter(|s| !s.is_empty()).collect();
            let mut skip = 0;
            while code[at + skip..].starts_with("super::") {
                parent.pop();
                skip += "super::".len();
            }
            (skip, parent.into_iter().map(str::to_owned).collect())
        } else {
            at += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        // Only at the start of a path (`foo_crate::` is no `crate::`).
        let starts_path =
            at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        if !starts_path {
            at += skip;
            continue;
        }
        let tail = &code[at + skip..];
        // The path runs over identifiers, `::` and one balanced `{…}` group.
        let mut end = 0;
        let mut depth = 0;
        for (i, c) in tail.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth > 0 => depth -= 1,
                c if depth > 0 || c.is_alphanumeric() || c == '_' || c == ':' => {}
                _ if depth > 0 => {}
                _ => {
                    end = i;
                    break;
                }
            }
            end = i + c.len_utf8();
        }
        let prefix = if base.is_empty() {
            String::new()
        } else {
            format!("{}::", base.join("::"))
        };
        expand(&tail[..end], &prefix, &mut paths);
        at += skip + end.max(1);
    }
    paths
}

/// A crate's modules (by path, `""` for the root) and who imports whom: an edge runs from a
/// module to the longest module prefix of each path it names, except to itself and to its
/// own ancestors (a module may use what its parents hold).
fn module_graph(src: &Path) -> (BTreeSet<String>, BTreeMap<String, BTreeSet<String>>) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(src, f)).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let from = module_of(src, file);
        if from.is_empty() {
            continue; // the crate root re-exports; it is no layer
        }
        let text = std::fs::read_to_string(file).expect("read");
        for path in named_paths(&text, &from) {
            let segments: Vec<&str> = path.split("::").map(str::trim).collect();
            let target = (1..=segments.len())
                .rev()
                .map(|n| segments[..n].join("::"))
                .find(|m| modules.contains(m));
            if let Some(to) = target
                && to != from
                && !from.starts_with(&format!("{to}::"))
            {
                edges.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    (modules, edges)
}

/// The module cycles of a graph, each as the path that closes it.
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
        found: &mut Vec<String>,
    ) {
        match state.get(node) {
            Some(2) => return,
            Some(1) => {
                let start = stack.iter().position(|n| n == node).unwrap_or(0);
                found.push(format!("{} -> {node}", stack[start..].join(" -> ")));
                return;
            }
            _ => {}
        }
        state.insert(node.to_owned(), 1);
        stack.push(node.to_owned());
        for next in edges.get(node).into_iter().flatten() {
            visit(next, edges, state, stack, found);
        }
        stack.pop();
        state.insert(node.to_owned(), 2);
    }
    let mut state = BTreeMap::new();
    let mut found = Vec::new();
    for node in edges.keys() {
        visit(node, edges, &mut state, &mut Vec::new(), &mut found);
    }
    found
}

#[test]
fn the_path_reader_sees_inline_and_grouped_paths() {
    let text = r#"
use crate::a::{b, c::{d, e as f}};
use super::g;
// crate::in_a_comment
fn x() { let _ = crate::h::i(); let _ = "crate::in_a_string"; let _ = '"'; crate::j::k; }
"#;
    let paths = named_paths(text, "m::n");
    for want in ["a::b", "a::c::d", "a::c::e", "m::g", "h::i", "j::k"] {
        assert!(paths.iter().any(|p| p == want), "{want} not in {paths:?}");
    }
    assert!(!paths.iter().any(|p| p.contains("in_a")), "{paths:?}");
}

#[test]
fn no_crate_has_a_module_cycle() {
    let crates = workspace().join("crates");
    let mut found = Vec::new();
    let mut graphs = 0;
    for entry in std::fs::read_dir(&crates).expect("crates/") {
        let src = entry.expect("entry").path().join("src");
        if !src.is_dir() {
            continue;
        }
        let (_, edges) = module_graph(&src);
        let name = src
            .parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        found.extend(cycles(&edges).into_iter().map(|c| format!("{name}: {c}")));
        graphs += 1;
    }
    assert!(graphs >= 14, "only {graphs} crates read");
    assert!(found.is_empty(), "module cycles:\n{}", found.join("\n"));
}

/// ferry-server's layers, lowest first: each module may import its own layer and those below
/// (docs/src/architecture.md "Inside the server"). Modules not named here sit at the bottom with the core.
const SERVER_LAYERS: &[(&str, usize)] = &[
    ("core", 0),
    ("edge", 1),
    ("binding", 2),
    ("extension", 3),
    ("server", 4),
];

fn layer_of(module: &str) -> usize {
    let top = module.split("::").next().unwrap_or_default();
    SERVER_LAYERS
        .iter()
        .find(|(name, _)| *name == top)
        .map_or(0, |(_, layer)| *layer)
}

#[test]
fn ferry_server_layers_import_downwards() {
    let (modules, edges) = module_graph(&workspace().join("crates/ferry-server/src"));
    assert!(modules.len() > 30, "only {} modules", modules.len());
    let mut upward = Vec::new();
    for (from, to) in &edges {
        for t in to {
            if layer_of(t) > layer_of(from) {
                upward.push(format!("{from} imports {t}"));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports up the layers:\n{}",
        upward.join("\n")
    );
    assert!(
        edges.len() > 15,
        "only {} modules import others",
        edges.len()
    );
}
