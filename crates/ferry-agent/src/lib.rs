#![doc = include_str!("../README.md")]
mod context;
mod description;
mod error;
mod sink;
mod turn_data;

pub use context::{LOCAL_CALLER, RequestContext};
pub use description::{AgentDescription, ConversationMoved};
pub use error::{AgentError, EmitError};
pub use sink::{AgentEvent, EmitFuture, EventSink, EventTarget};
pub use turn_data::TurnData;

use std::future::Future;
use std::pin::Pin;

/// The future an executor returns: boxed so that executors can be used as trait objects.
pub type AgentFuture<'a> = Pin<Box<dyn Future<Output = Result<(), AgentError>> + Send + 'a>>;

/// An agent: the one trait agent authors implement.
///
/// The server calls `execute` once per turn, on its own tokio task, and keeps the task's state:
/// the agent only reports events through the [`EventSink`]. A turn ends when the future
/// resolves; a task that is still active then is left as it is (the agent may finish it later
/// through a sink it kept), and blocking callers get the task in its current state.
pub trait AgentExecutor: Send + Sync + 'static {
    /// What the agent card says about this agent.
    fn describe(&self) -> AgentDescription;

    /// Runs one turn.
    fn execute(&self, ctx: RequestContext, events: EventSink) -> AgentFuture<'_>;

    /// Asks the agent to stop working on a task. The default does nothing: the server then marks
    /// the task canceled and aborts a running turn. An agent that needs to clean up (close a
    /// browser page, release a lock) overrides this; it may emit a final status itself.
    fn cancel(&self, ctx: RequestContext, events: EventSink) -> AgentFuture<'_> {
        let _ = (ctx, events);
        Box::pin(async { Ok(()) })
    }

    /// Whether the agent can take work now (readiness probes ask this).
    fn ready(&self) -> bool {
        true
    }
}
