//! The agent author's API: implement [`AgentExecutor`] and ferry serves it over A2A v1.0.
//!
//! Three roles, and nothing about HTTP, stores or browsers:
//!
//! - [`AgentExecutor`] is the one trait an agent implements: `execute` runs one turn of a task
//!   (the first message, or a follow-up after `INPUT_REQUIRED`), `cancel` stops it.
//! - [`RequestContext`] is what the turn is about: the incoming message, the task and context
//!   ids, the task as it was before this turn, the activated extensions, and whatever typed
//!   data the server's extensions hand the turn ([`TurnData`]).
//! - [`EventSink`] is how the turn reports: `working`, `artifact`, `input_required`,
//!   `complete`, `fail`, `reject`, or a single direct `message` instead of a task.
//!
//! ```
//! use ferry_agent::{AgentDescription, AgentExecutor, AgentFuture, EventSink, RequestContext};
//! use ferry_proto::{Artifact, Part};
//!
//! struct Shout;
//!
//! impl AgentExecutor for Shout {
//!     fn describe(&self) -> AgentDescription {
//!         AgentDescription::new("shout", "Answers in capitals")
//!     }
//!
//!     fn execute(&self, ctx: RequestContext, events: EventSink) -> AgentFuture<'_> {
//!         Box::pin(async move {
//!             let text = ctx.message.text().to_uppercase();
//!             events.artifact(Artifact::new("answer", "answer", vec![Part::text(text)]), false, true).await?;
//!             events.complete(None).await?;
//!             Ok(())
//!         })
//!     }
//! }
//! ```

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
