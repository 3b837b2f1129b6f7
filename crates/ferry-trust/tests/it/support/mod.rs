//! Test support: the shared test vectors, and a local HTTPS server ([`https`]).
//!
//! The vectors live in `shared/testvectors/`, a sibling of the repository folder (as on the
//! development machines and in CI). They are the ground truth, so a missing folder is a
//! failure, never a skip.

/// A tiny HTTPS/1.1 server on 127.0.0.1 with a test CA, for the fetcher.
pub(crate) mod https;

use std::path::PathBuf;

/// The path of a file under `shared/testvectors/`.
pub(crate) fn vector_path(rel: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/testvectors/"
    ))
    .join(rel)
}

/// The bytes of a vector file; panics with the path when it is missing.
pub(crate) fn read(rel: &str) -> Vec<u8> {
    let path = vector_path(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading test vector {}: {e}", path.display()))
}

/// A vector file parsed as JSON (with serde_json: the vectors are trusted input).
pub(crate) fn read_json(rel: &str) -> serde_json::Value {
    serde_json::from_slice(&read(rel)).unwrap_or_else(|e| panic!("parsing {rel}: {e}"))
}
