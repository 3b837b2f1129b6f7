//! The forms agent's MCP face against a real headless Chromium: the leak matrix driven over
//! MCP (an rmcp client on an in-process stream, the same server code `ferry mcp` runs on
//! stdin/stdout), and whose session is whose. The official Python client's end-to-end runs
//! are the `ferry` crate's (`tests/mcp_cli.rs`). Without Chromium the tests skip loudly, or
//! fail under `CI=true`.

/// The leak matrix over MCP, in both isolation modes.
mod leaks;
/// Whose a session is, and that its browser closes when it ends (stdio and HTTP); the
/// confirmation before a submit, and auto-submit.
mod sessions;
/// The test site and the leak matrix, shared with ferry-forms' tests.
mod support;
