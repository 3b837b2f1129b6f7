//! The documentation, checked: README.md and the book under `docs/src`.
//!
//! - `transcripts`: the console transcripts print what the pages show;
//! - `reference`: the configuration reference is what the binary says of itself;
//! - `links`: every relative link leads to a file of the repository, and nothing names a
//!   path outside it.

#[path = "../support/mod.rs"]
mod support;

mod links;
mod reference;
mod transcripts;

use std::path::{Path, PathBuf};

/// The book's pages (`docs/src/**/*.md`), in order of their paths.
fn book_pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("docs/src").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut pages = Vec::new();
    walk(&support::workspace_root().join("docs/src"), &mut pages);
    pages.sort();
    pages
}
