//! Integration tests of ferry-browser against a real headless Chromium and pages served by
//! the tests on 127.0.0.1. Without Chromium they skip loudly, or fail under `CI=true`.

/// Launch, contexts, pages, navigation, evaluation, process-group cleanup.
mod browser;
/// Start-up failures with fake browser binaries.
mod launch;
/// The enforcing proxy, alone and in front of a browser context.
mod proxy;
/// Shared helpers: the test HTTP server, the Chromium prerequisite check, /proc probes.
mod support;
