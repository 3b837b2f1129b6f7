//! ferry-forms: the forms agent.
//!
//! Another agent hands ferry a web form as an A2A task; ferry drives headless Chromium,
//! inspects the form, fills what it was given, reports what is `missing`, `unmatched`,
//! `ambiguous` or invalid, and submits only on `{"confirm": true}`.
//!
//! - [`request`] reads the caller's message; [`report`] is what comes back.
//! - [`FormsAgent`] is the `AgentExecutor`; [`pool`] keeps one [`Session`] (browser or
//!   browser context, enforcing proxy, one page) per contextId.
//! - `inspect.js` runs in an isolated world of each frame; [`matcher`] maps the caller's
//!   keys to the fields it found.

mod agent;
pub mod config;
pub mod inspection;
pub mod matcher;
pub mod pool;
pub mod report;
pub mod request;
pub mod session;
pub mod snapshot;
pub mod turn;

pub use agent::FormsAgent;
pub use config::{BrowserSource, FormsConfig, Isolation};
pub use session::Session;

/// The page-side script: evaluated in an isolated world, it defines `globalThis.__ferryForms`
/// with `inspect`, `fill`, `submit`, `element`, `focus` and `formIndex` (see the contract at
/// its top).
pub const INSPECT_JS: &str = include_str!("inspect.js");
