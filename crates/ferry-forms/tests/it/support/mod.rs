//! Helpers shared by the forms tests.

pub mod agent;
pub mod site;

use std::io::Write;
use std::time::Duration;

/// Whether Chromium is here. Outside CI a missing browser skips the test with a loud
/// message; under `CI=true` it fails the run.
pub fn chromium_or_skip(test: &str) -> bool {
    if ferry_browser::available() {
        return true;
    }
    let tried = ferry_browser::find_chromium(None)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("chromium is required in CI ({tried}); install Debian's `chromium` package");
    }
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED: {test}: {tried}; install `chromium` or set FERRY_CHROME"
    );
    false
}

/// An upper bound for every test, so a hung browser fails the test instead of the suite.
pub const TEST_TIMEOUT: Duration = Duration::from_secs(60);
