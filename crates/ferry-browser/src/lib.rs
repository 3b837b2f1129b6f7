//! ferry-browser: headless Chromium for ferry's agents.
//!
//! One job: get a browser nobody else shares and drive it. [`find_chromium`] discovers the
//! binary, [`Chromium::launch`] starts it with a throw-away profile in its own process group
//! (killed whole on drop), [`cdp`] is a thin Chrome DevTools Protocol client over one
//! WebSocket, and [`Browser`] / [`BrowserContext`] / [`Page`] build isolated contexts and
//! pages on it. [`proxy`] is the enforcing HTTP proxy (an [`Allowlist`] plus the `ferry-net`
//! IP policy) that a context sends all its traffic through.
//!
//! It must never know about A2A: the forms agent (`ferry-forms`) builds on it.
//!
//! ```no_run
//! use ferry_browser::{Browser, LaunchOptions};
//! use std::time::Duration;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let browser = Browser::launch(LaunchOptions::default()).await?;
//! let context = browser.new_context().await?;
//! let page = context.new_page().await?;
//! page.navigate("http://127.0.0.1:8000/form", Duration::from_secs(10)).await?;
//! let title = page.evaluate("document.title").await?;
//! println!("{title}");
//! context.dispose().await?;
//! browser.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! Unix only: process groups and the `kill` binary are how the browser is contained.

mod allowlist;
mod browser;
pub mod cdp;
mod discover;
mod endpoint;
mod error;
mod frame;
mod launch;
pub mod peer;
pub mod proxy;
mod targets;

pub use allowlist::{Allowlist, AllowlistError};
pub use browser::{Browser, BrowserContext, Clip, Page, RequestWatch, SentRequest};
pub use cdp::{CdpConnection, CdpEvent, CdpEvents};
pub use discover::{available, find_chromium};
pub use endpoint::{CdpEndpoint, CdpEndpoints, NoEndpoint};
pub use error::{BrowserError, CdpError};
pub use frame::Frame;
pub use launch::{
    Chromium, DevToolsTransport, GroupMemory, LaunchOptions, group_memory, live_group_members,
};
pub use proxy::{
    BlockReason, Blocked, ClientCheck, MAX_BLOCKED_KEPT, Proxy, ProxyConfig, ProxyError,
    ProxyHandle,
};
