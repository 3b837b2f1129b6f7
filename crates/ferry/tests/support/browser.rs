//! Tests that run Chromium through the `ferry` binary: finding Chromium (a loud skip, a
//! failure in CI), the server's scratch TMPDIR that outlives the browser, and the JSON
//! summary line the Python drivers print last.

use serde_json::Value;
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The Chromium binary, or `None` after a loud skip (a failure in CI).
pub(crate) fn chromium_or_skip(test: &str) -> Option<PathBuf> {
    if !ferry_testkit::chromium_or_skip(test) {
        return None;
    }
    ferry_browser::find_chromium(None).ok()
}

/// How long the browser may take to exit once the server is killed.
const BROWSER_EXIT_TIMEOUT: Duration = Duration::from_secs(10);

/// The server's TMPDIR, where Chromium keeps its profile directories. Dropped after the
/// server: waits for every process started with a path inside it (the browser and its
/// helpers, which exit once the DevTools pipe closes) and removes it, so that no profile
/// is left behind and no browser outlives the test unnoticed.
pub(crate) struct ServerTmp(pub(crate) PathBuf);

impl Drop for ServerTmp {
    fn drop(&mut self) {
        let deadline = Instant::now() + BROWSER_EXIT_TIMEOUT;
        while processes_using(&self.0) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
        if processes_using(&self.0) {
            // Not a failure of this test, but worth seeing (real stderr, not captured).
            let _ = writeln!(
                std::io::stderr(),
                "WARNING: processes under {} still run {BROWSER_EXIT_TIMEOUT:?} after the server was killed",
                self.0.display()
            );
        }
        // Best effort: it lives under cargo's target tmpdir anyway.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// True when a live process has `dir` in its command line (Linux `/proc`; false elsewhere).
fn processes_using(dir: &Path) -> bool {
    let needle = dir.as_os_str().as_bytes();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .any(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| c.windows(needle.len()).any(|w| w == needle))
        })
}

/// The last line of `stdout` that parses as a JSON object: the script's summary.
pub(crate) fn summary(stdout: &str) -> Option<Value> {
    stdout
        .lines()
        .rev()
        .filter_map(|line| serde_json::from_str::<Value>(line.trim()).ok())
        .find(Value::is_object)
}

/// The forms agent's flags for the interop scripts' site (`shop_site.py`): `shop.test`
/// allowed and mapped to loopback, and the browser `chromium`.
pub(crate) fn shop_flags(chromium: &Path) -> Vec<OsString> {
    let mut flags: Vec<OsString> = [
        "--allow-domain",
        "shop.test",
        "--allow-private-networks",
        "--resolve",
        "shop.test=127.0.0.1",
        "--chrome-path",
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    flags.push(chromium.as_os_str().to_owned());
    flags
}
