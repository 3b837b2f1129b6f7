//! Agents that ship with ferry, each an [`ferry_agent::AgentExecutor`] and small enough to
//! read as an example of one. Agents only: no server code (they never see HTTP or the store).
//!
//! - [`EchoAgent`] completes each task with an artifact that echoes what it was sent;
//! - [`ConformanceAgent`] plays the scenarios the official conformance kit drives
//!   (`tck-complete-task`, `tck-input-required`, … as messageId prefixes) plus
//!   `ferry-turns-3`, and the behaviours ACTS drives (`tck-multi-turn`, `tck-cancel`, … as the
//!   first words of the message).
//! - [`ExecAgent`] runs any command once per turn: the message on its stdin, its stdout
//!   streamed back as the artifact, a marker line or exit status to ask for more input.
//! - [`ProxyAgent`] forwards each turn to a remote A2A agent whose card it verified against
//!   the configured pins, and relays the remote's events into the local task.
//!
//! ```
//! use ferry_agent::AgentExecutor;
//!
//! assert_eq!(ferry_agents::EchoAgent.describe().name, "echo");
//! ```

mod conformance;
mod echo;
mod exec;
mod proxy;

pub use conformance::{ConformanceAgent, PULSE_ARTIFACT};
pub use echo::EchoAgent;
pub use exec::{EXEC_BUSY, ExecAgent, ExecCommand, ExecConfig, ExecError};
pub use proxy::{Pin, PreferBinding, ProxyAgent, ProxyConfig, ProxyError};
