//! The crate's error types: [`BrowserError`] for everything a caller of this crate sees,
//! and [`CdpError`] for the DevTools transport underneath it.
//!
//! Both hold facts (paths, methods, codes, durations) rather than sentences, so a caller can
//! branch on the variant; the `Display` texts are lower-case and specific.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Why talking to a browser over the Chrome DevTools Protocol failed.
///
/// `Clone` so one failure (a closed socket) can be handed to every caller that was waiting.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum CdpError {
    /// The endpoint given to `connect_*` is not a URL this client can use.
    #[error("bad devtools endpoint {endpoint:?}: {reason}")]
    BadEndpoint {
        /// The endpoint as given.
        endpoint: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The HTTP discovery request (`/json/version`) failed.
    #[error("devtools discovery at {url} failed: {reason}")]
    Discovery {
        /// The URL that was asked.
        url: String,
        /// What went wrong (connection, status, body).
        reason: String,
    },
    /// The WebSocket handshake failed.
    #[error("devtools websocket {url} could not be opened: {source}")]
    Connect {
        /// The `ws://` URL.
        url: String,
        /// The handshake error.
        source: Arc<tokio_tungstenite::tungstenite::Error>,
    },
    /// The connection is gone (browser exited, socket closed); nothing more can be sent.
    #[error("devtools connection closed")]
    Closed,
    /// No reply to a command within its timeout.
    #[error("{method} got no reply within {after:?}")]
    Timeout {
        /// The CDP method.
        method: String,
        /// The timeout that elapsed.
        after: Duration,
    },
    /// The browser answered the command with a protocol error.
    #[error("{method} failed: {message} (code {code})")]
    Protocol {
        /// The CDP method.
        method: String,
        /// The JSON-RPC style error code (-32000 for most CDP failures).
        code: i64,
        /// The browser's message.
        message: String,
    },
    /// The reply did not have the shape this client expects.
    #[error("{method} returned an unexpected result: {reason}")]
    BadResponse {
        /// The CDP method.
        method: String,
        /// What was wrong with the result.
        reason: String,
    },
}

/// Why finding, starting or driving a browser failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum BrowserError {
    /// No usable Chromium binary; `tried` lists every candidate in the order checked.
    #[error("no chromium binary found (tried {})", display_paths(tried))]
    NotFound {
        /// Every path that was checked.
        tried: Vec<PathBuf>,
    },
    /// A filesystem operation on the temporary profile directory failed.
    #[error("profile directory {path}: {source}")]
    Profile {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        source: Arc<std::io::Error>,
    },
    /// The browser process could not be started.
    #[error("could not start {path}: {source}")]
    Spawn {
        /// The binary.
        path: PathBuf,
        /// The I/O error from `spawn`.
        source: Arc<std::io::Error>,
    },
    /// The browser exited before it announced its DevTools endpoint.
    #[error("chromium exited during start-up ({status}); last stderr lines: {stderr_tail:?}")]
    Exited {
        /// The exit status, as text (`exit status: 1`, `signal: 9`), or `unknown`.
        status: String,
        /// The last lines Chromium wrote to stderr.
        stderr_tail: Vec<String>,
    },
    /// The browser did not announce its DevTools endpoint in time.
    #[error("chromium did not open devtools within {after:?}; last stderr lines: {stderr_tail:?}")]
    StartupTimeout {
        /// The start-up timeout.
        after: Duration,
        /// The last lines Chromium wrote to stderr.
        stderr_tail: Vec<String>,
    },
    /// A DevTools command failed.
    #[error(transparent)]
    Cdp(#[from] CdpError),
    /// `Page.navigate` reported that the navigation failed (`net::ERR_…`).
    #[error("navigation to {url} failed: {error_text}")]
    NavigationFailed {
        /// The URL navigated to.
        url: String,
        /// Chromium's error text, such as `net::ERR_CONNECTION_REFUSED`.
        error_text: String,
    },
    /// The page did not fire its load event in time.
    #[error("{url} did not finish loading within {after:?}")]
    LoadTimeout {
        /// The URL navigated to.
        url: String,
        /// The navigation timeout.
        after: Duration,
    },
    /// The evaluated script threw.
    #[error("script threw: {description}")]
    Script {
        /// The exception's description (message and stack, as Chromium renders it).
        description: String,
    },
}

fn display_paths(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    names.join(", ")
}
