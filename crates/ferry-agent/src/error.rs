//! Errors an agent returns and errors the sink reports.

use ferry_proto::A2aError;

/// Why a turn failed.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// Refuse the request with a protocol error (for example `ContentTypeNotSupported`). Before
    /// the turn created a task, the caller gets this error; afterwards the task fails with it.
    #[error(transparent)]
    Protocol(A2aError),
    /// The agent could not do the work; the task becomes FAILED with this text as its status
    /// message.
    #[error("{0}")]
    Failed(String),
    /// An event could not be applied (see [`EmitError`]).
    #[error(transparent)]
    Emit(#[from] EmitError),
    /// The environment failed the turn, not the agent (for example no CDP endpoint was
    /// registered). The task becomes FAILED with a status message whose data part says
    /// `{"error":{"kind":"infra_error","code":…,"message":…}}`, so that benchmarks and
    /// orchestrators do not count it as the agent's own failure.
    #[error("{code}: {message}")]
    Infra {
        /// A stable dotted code, e.g. `cdp.no_endpoint`.
        code: &'static str,
        /// What is wrong and how to fix it.
        message: String,
    },
}

/// Why the server refused an event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmitError {
    /// The task is terminal; it takes no more events.
    #[error("task {task_id} is already {state} and takes no more events")]
    TaskTerminal {
        /// The task.
        task_id: String,
        /// Its terminal state.
        state: &'static str,
    },
    /// A direct message reply is only possible as the only event of a new request.
    #[error("a direct message reply is only allowed as the first and only event of a new request")]
    MessageAfterTask,
    /// The event is not valid (for example an artifact without parts).
    #[error("invalid event: {0}")]
    Invalid(String),
    /// The event would pass one of the task's limits (history messages, artifact bytes).
    #[error("{0}")]
    Limit(String),
    /// The task store could not take the event (it failed, or is full); nothing was stored.
    #[error("the event could not be stored: {0}")]
    Unavailable(String),
    /// The server is gone (shut down, or the task expired).
    #[error("the task is no longer served")]
    Closed,
}
