//! A test whose prerequisite (a browser, a database, an interpreter) is missing: outside CI it
//! says so loudly and returns early; in CI (`CI=true`) a missing prerequisite is a failure,
//! never a silent pass.

use std::io::Write as _;

/// True when the prerequisite is here (`missing` is `None`). Otherwise, under `CI=true` it
/// panics, and elsewhere it prints a `SKIPPED: {test}: {missing}` line straight to stderr
/// (libtest's capture would hide an `eprintln!`) and returns false, so the test can return.
pub fn required_or_skip(test: &str, missing: Option<String>) -> bool {
    let Some(missing) = missing else {
        return true;
    };
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{test}: a prerequisite is missing in CI: {missing}");
    }
    let _ = writeln!(std::io::stderr(), "SKIPPED: {test}: {missing}");
    false
}

/// [`required_or_skip`] for Chromium (found as the browser crate finds it: `FERRY_CHROME`, or
/// the standard paths).
#[cfg(feature = "browser")]
pub fn chromium_or_skip(test: &str) -> bool {
    let missing = ferry_browser::find_chromium(None)
        .err()
        .map(|e| format!("{e}; install Debian's `chromium` package or set FERRY_CHROME"));
    required_or_skip(test, missing)
}
