//! The shape of the house, checked (DESIGN.md "Crates and who may import whom", "Inside the
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
    (
        "ferry-server",
        &["ferry-proto", "ferry-agent", "ferry-trust", "ferry-store"],
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
    ("ferry-testkit", &["ferry-agent", "ferry-server"]),
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
                "{name} depends on {dep}, which DESIGN.md's crate map does not allow"
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

/// The `crate::…` paths a file's `use` items name, outside its tests.
fn crate_paths(text: &str) -> Vec<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    let mut paths = Vec::new();
    for (i, _) in code.match_indices("use crate::") {
        let rest = &code[i + "use crate::".len()..];
        let end = rest.find(';').unwrap_or(rest.len());
        let item = &rest[..end];
        // `a::{b, c::d}` → `a::b`, `a::c::d`.
        match item.split_once('{') {
            Some((prefix, group)) => {
                for member in group.trim_end_matches('}').split(',') {
                    let member = member.trim();
                    if !member.is_empty() {
                        paths.push(format!("{prefix}{member}"));
                    }
                }
            }
            None => paths.push(item.trim().to_owned()),
        }
    }
    paths
}

#[test]
fn ferry_server_has_no_module_cycle() {
    let src = workspace().join("crates/ferry-server/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let from = module_of(&src, file);
        if from.is_empty() {
            continue; // lib.rs re-exports everything; it is the root, not a layer
        }
        let text = std::fs::read_to_string(file).expect("read");
        for path in crate_paths(&text) {
            // The longest prefix of the path that is a module is what it imports.
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
    // The core knows no HTTP.
    for (from, to) in &edges {
        if from.starts_with("core") {
            for t in to {
                assert!(!t.starts_with("http"), "{from} (core) imports {t}");
            }
        }
    }
    // No cycle: depth-first search with colours.
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
    ) {
        match state.get(node) {
            Some(2) => return,
            Some(1) => {
                let start = stack.iter().position(|n| n == node).unwrap_or(0);
                panic!("module cycle: {} -> {node}", stack[start..].join(" -> "));
            }
            _ => {}
        }
        state.insert(node.to_owned(), 1);
        stack.push(node.to_owned());
        for next in edges.get(node).into_iter().flatten() {
            visit(next, edges, state, stack);
        }
        stack.pop();
        state.insert(node.to_owned(), 2);
    }
    let mut state = BTreeMap::new();
    for node in edges.keys() {
        visit(node, &edges, &mut state, &mut Vec::new());
    }
    assert!(
        edges.len() > 15,
        "only {} modules import others",
        edges.len()
    );
}
