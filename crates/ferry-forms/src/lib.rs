//! ferry-forms: the forms agent.
//!
//! Another agent hands ferry a web form as an A2A task; ferry drives headless Chromium,
//! inspects the form, fills what it was given, reports what is `missing`, `unmatched`,
//! `ambiguous` or invalid, and submits only on `{"confirm": true}`.
//!
//! - [`request`] reads the caller's message; the report (`result` text and `data` JSON) is
//!   what comes back.
//! - [`FormsAgent`] is the `AgentExecutor`; its [`SessionPool`] keeps one [`Session`]
//!   (browser or browser context, enforcing proxy, one page) per contextId.
//! - `inspect.js` runs in an isolated world of each frame; the matcher maps the caller's keys
//!   to the fields it found.
//! - [`FormsAgent::converse`] is one turn of a conversation, whichever face asked for it (A2A
//!   here, MCP in `ferry-mcp`); `"auto": true` fills empty fields from the conversation's
//!   notes and the caller's saved [`profiles`], matched by their autofill purpose.
//!
//! The public surface is the agent, its configuration, the request model and the page
//! snapshot; everything else is the crate's own.

mod agent;
pub mod approval;
mod autofill;
pub mod config;
mod date_parts;
mod flow;
mod inspection;
mod matcher;
mod notes;
mod pool;
pub mod profiles;
mod report;
pub mod request;
pub mod screenshot;
mod session;
mod shown;
pub mod snapshot;
mod turn;
mod value;

pub use agent::{FormsAgent, Outcome, TurnRefused, TurnState};
pub use config::{Approval, BrowserSource, FormsConfig, HumanApproval, Isolation};
pub use pool::{AtCapacity, ConversationKey, PendingSubmit, SessionPool};
pub use profiles::{ProfileCommand, ProfileError};
pub use session::Session;

/// The page-side script: evaluated in an isolated world, it defines `globalThis.__ferryForms`
/// with `inspect`, `fill`, `submit`, `element`, `focus` and `formIndex` (see the contract at
/// its top).
pub const INSPECT_JS: &str = include_str!("inspect.js");
