//! Finding a Chromium binary.
//!
//! Order: an explicit path (`--chrome-path`), then the `FERRY_CHROME` environment variable,
//! then the usual install locations. An explicit choice is never silently replaced by
//! another binary: when a path was given (argument or environment) only that path is tried.
//!
//! The Debian/Ubuntu `/usr/bin/chromium` is a shell wrapper that sources `/etc/chromium.d/*`
//! (Google API keys, `--enable-remote-extensions`, `--load-extension=`), so the real binary
//! `/usr/lib/chromium/chromium` comes first.

use crate::BrowserError;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The environment variable that names the Chromium binary when no explicit path is given.
pub(crate) const CHROME_ENV: &str = "FERRY_CHROME";

/// The install locations checked when neither an explicit path nor [`CHROME_ENV`] is set,
/// in order. The real Debian binary comes before any wrapper script.
pub(crate) const STANDARD_PATHS: &[&str] = &[
    "/usr/lib/chromium/chromium",
    "/usr/lib/chromium-browser/chromium-browser",
    "/opt/google/chrome/chrome",
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome-stable",
    "/usr/bin/google-chrome",
    "/snap/bin/chromium",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
];

/// Finds the Chromium binary to launch: `explicit` if given, else `FERRY_CHROME` if set,
/// else the first executable file among [`STANDARD_PATHS`].
///
/// ```no_run
/// let chrome = ferry_browser::find_chromium(None)?;
/// println!("using {}", chrome.display());
/// # Ok::<(), ferry_browser::BrowserError>(())
/// ```
pub fn find_chromium(explicit: Option<&Path>) -> Result<PathBuf, BrowserError> {
    let env = std::env::var_os(CHROME_ENV).filter(|v| !v.is_empty());
    let standard: Vec<&Path> = STANDARD_PATHS.iter().map(Path::new).collect();
    find_in(explicit, env, &standard)
}

/// Whether a Chromium binary can be found right now (for readiness probes).
pub fn available() -> bool {
    find_chromium(None).is_ok()
}

/// [`find_chromium`] with the environment and the standard list passed in, for tests.
fn find_in(
    explicit: Option<&Path>,
    env: Option<OsString>,
    standard: &[&Path],
) -> Result<PathBuf, BrowserError> {
    let candidates: Vec<PathBuf> = match (explicit, env) {
        (Some(path), _) => vec![path.to_path_buf()],
        (None, Some(path)) => vec![PathBuf::from(path)],
        (None, None) => standard.iter().map(|p| p.to_path_buf()).collect(),
    };
    match candidates.iter().find(|p| is_executable_file(p)) {
        Some(found) => Ok(found.clone()),
        None => Err(BrowserError::NotFound { tried: candidates }),
    }
}

/// A regular file (after following symlinks) with at least one execute bit.
fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A scratch directory holding one executable and one plain file.
    struct Scratch {
        dir: PathBuf,
    }

    impl Scratch {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir().join(format!(
                "ferry-browser-discover-{name}-{}",
                std::process::id()
            ));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).expect("scratch dir");
            let exe = dir.join("chrome");
            fs::write(&exe, "#!/bin/sh\n").expect("write exe");
            fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).expect("chmod");
            fs::write(dir.join("plain"), "not a program").expect("write plain");
            Self { dir }
        }
        fn path(&self, name: &str) -> PathBuf {
            self.dir.join(name)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }

    #[test]
    fn explicit_path_wins_over_env_and_standard() {
        let s = Scratch::new("explicit");
        let exe = s.path("chrome");
        let found = find_in(Some(&exe), Some("/nonexistent".into()), &[]).expect("found");
        assert_eq!(found, exe);
    }

    #[test]
    fn a_wrong_explicit_path_is_an_error_not_a_fallback() {
        let s = Scratch::new("wrong");
        let plain = s.path("plain");
        let exe = s.path("chrome");
        let err = find_in(Some(&plain), None, &[exe.as_path()]).expect_err("not executable");
        assert!(
            matches!(err, BrowserError::NotFound { ref tried } if tried == std::slice::from_ref(&plain))
        );
    }

    #[test]
    fn env_is_used_when_no_explicit_path() {
        let s = Scratch::new("env");
        let exe = s.path("chrome");
        let found = find_in(None, Some(exe.clone().into()), &[]).expect("found");
        assert_eq!(found, exe);
    }

    #[test]
    fn standard_paths_are_tried_in_order_and_listed_on_failure() {
        let s = Scratch::new("standard");
        let (missing, plain, exe) = (s.path("missing"), s.path("plain"), s.path("chrome"));
        let found = find_in(None, None, &[&missing, &plain, &exe]).expect("found");
        assert_eq!(found, exe);

        let err = find_in(None, None, &[&missing, &plain]).expect_err("none usable");
        let BrowserError::NotFound { tried } = &err else {
            panic!("unexpected error {err:?}");
        };
        assert_eq!(tried, &[missing.clone(), plain]);
        assert!(err.to_string().contains(&missing.display().to_string()));
    }

    #[test]
    fn the_debian_binary_comes_before_its_wrapper_script() {
        let real = STANDARD_PATHS
            .iter()
            .position(|p| *p == "/usr/lib/chromium/chromium");
        let wrapper = STANDARD_PATHS
            .iter()
            .position(|p| *p == "/usr/bin/chromium");
        assert_eq!(real, Some(0));
        assert!(wrapper > real);
    }
}
