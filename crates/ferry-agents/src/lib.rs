//! Agents that ship with ferry, each an [`ferry_agent::AgentExecutor`] and small enough to
//! read as an example of one. Agents only: no server code (they never see HTTP or the store).
//!
//! - [`EchoAgent`] completes each task with an artifact that echoes what it was sent;
//! - [`ConformanceAgent`] plays the scenarios the official conformance kit drives
//!   (`tck-complete-task`, `tck-input-required`, … as messageId prefixes) plus
//!   `ferry-turns-3`, and the behaviours ACTS drives (`tck-multi-turn`, `tck-cancel`, … as the
//!   first words of the message).
//!
//! ```
//! use ferry_agent::AgentExecutor;
//!
//! assert_eq!(ferry_agents::EchoAgent.describe().name, "echo");
//! ```

mod conformance;
mod echo;

pub use conformance::ConformanceAgent;
pub use echo::EchoAgent;
