//! Two built-in agents, small enough to read as examples of [`ferry_agent::AgentExecutor`]:
//!
//! - [`EchoAgent`] completes each task with an artifact that echoes what it was sent;
//! - [`ConformanceAgent`] implements the messageId-prefix scenarios the official conformance
//!   kit drives (`tck-complete-task`, `tck-input-required`, …) plus `ferry-turns-3`.

mod conformance;
mod echo;

pub use conformance::ConformanceAgent;
pub use echo::EchoAgent;
