//! Links in the documentation (README.md, CONTRIBUTING.md, SECURITY.md, CHANGELOG.md,
//! `examples/README.md` and the book) and paths in doc comments: every relative link leads to
//! a file or directory of the repository, an anchor within a page names one of its
//! headings, and nothing points outside the repository (a clone has nothing beside it).

use crate::support::workspace_root;
use regex::Regex;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// `[text](target)`: the target (no spaces), with its optional `#anchor`.
static LINK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\]\(([^)\s]+)\)").expect("the pattern"));

/// Paths that name the project leads' tree beside the repository.
static OUTSIDE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\.\./shared\b|\bshared/DESIGN|\bDESIGN\.md").expect("the pattern")
});

fn pages() -> Vec<PathBuf> {
    let root = workspace_root();
    let mut pages: Vec<PathBuf> = [
        "README.md",
        "CONTRIBUTING.md",
        "SECURITY.md",
        "CHANGELOG.md",
        "examples/README.md",
    ]
    .iter()
    .map(|p| root.join(p))
    .collect();
    pages.extend(crate::book_pages());
    for entry in std::fs::read_dir(root.join("crates"))
        .expect("crates")
        .flatten()
    {
        let readme = entry.path().join("README.md");
        if readme.is_file() {
            pages.push(readme);
        }
    }
    pages
}

/// The anchor a heading gets (GitHub's and mdBook's rule: lowercase, spaces to `-`, other
/// punctuation dropped).
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(page: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(page).unwrap_or_default();
    let mut fenced = false;
    text.lines()
        .filter(|l| {
            if l.starts_with("```") {
                fenced = !fenced;
            }
            !fenced && l.starts_with('#')
        })
        .map(|l| anchor(l.trim_start_matches('#')))
        .collect()
}

/// What is wrong with the link `target` of `page`, if anything.
fn broken(page: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (file, fragment) = target.split_once('#').unwrap_or((target, ""));
    let dest = if file.is_empty() {
        page.to_path_buf()
    } else {
        page.parent()?.join(file)
    };
    let Ok(dest) = dest.canonicalize() else {
        return Some(format!("{target}: no such file"));
    };
    let root = workspace_root().canonicalize().ok()?;
    if !dest.starts_with(&root) {
        return Some(format!("{target}: outside the repository"));
    }
    let is_page = dest.extension().is_some_and(|e| e == "md");
    if !fragment.is_empty() && is_page && !anchors(&dest).iter().any(|a| a == fragment) {
        return Some(format!("{target}: no heading #{fragment}"));
    }
    None
}

#[test]
fn every_relative_link_leads_into_the_repository() {
    let mut problems = Vec::new();
    let mut links = 0;
    for page in pages() {
        let text =
            std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        for (n, line) in text.lines().enumerate() {
            for link in LINK.captures_iter(line) {
                links += 1;
                if let Some(problem) = broken(&page, &link[1]) {
                    problems.push(format!("{}:{}: {problem}", page.display(), n + 1));
                }
            }
            if OUTSIDE.is_match(line) {
                problems.push(format!(
                    "{}:{}: names a path outside the repository",
                    page.display(),
                    n + 1
                ));
            }
        }
    }
    assert!(
        links > 20,
        "only {links} links found: is the pattern right?"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Doc comments and crate docs cite nothing outside the repository either.
#[test]
fn no_source_cites_a_path_outside_the_repository() {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut sources = Vec::new();
    walk(&workspace_root().join("crates"), &mut sources);
    walk(&workspace_root().join("examples"), &mut sources);
    let mut problems = Vec::new();
    for source in sources {
        let text = std::fs::read_to_string(&source).unwrap_or_default();
        for (n, line) in text.lines().enumerate() {
            let comment = line.trim_start().starts_with("//");
            // This file names the pattern itself.
            if comment && OUTSIDE.is_match(line) && !source.ends_with("docs/links.rs") {
                problems.push(format!("{}:{}: {}", source.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "doc comments naming paths outside the repository:\n{}",
        problems.join("\n")
    );
}

#[test]
fn anchors_follow_the_renderers_rule() {
    assert_eq!(anchor(" In a config file"), "in-a-config-file");
    assert_eq!(
        anchor("Any command as an agent (`--exec`)"),
        "any-command-as-an-agent---exec"
    );
}
