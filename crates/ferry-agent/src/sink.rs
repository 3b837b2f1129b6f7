//! How a turn reports progress: a cheap, cloneable handle whose every emit returns once the
//! event is applied and stored, so an agent that said "completed" knows it was kept.

use crate::EmitError;
use ferry_proto::{Artifact, Message, Part, TaskState};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// An emit in progress (boxed, so that `Arc<dyn EventTarget>` works).
pub type EmitFuture<'a> = Pin<Box<dyn Future<Output = Result<(), EmitError>> + Send + 'a>>;

/// One thing an agent reports.
#[derive(Debug, Clone)]
pub enum AgentEvent {
    /// A new status, optionally with a message for the client.
    Status {
        /// The new state.
        state: TaskState,
        /// What to tell the client (for example the question at INPUT_REQUIRED).
        message: Option<Message>,
    },
    /// A new artifact, a replacement, or a chunk of one.
    Artifact {
        /// The artifact or chunk (shared: the event that streams it and the task's snapshot
        /// hold this one copy).
        artifact: Arc<Artifact>,
        /// Append the parts to the artifact with the same id.
        append: bool,
        /// The last chunk of this artifact.
        last_chunk: bool,
    },
    /// A direct reply instead of a task (only as the first and only event of a new request).
    Message(Message),
}

/// Where events go: implemented by the server's task manager.
pub trait EventTarget: Send + Sync {
    /// Applies one event to the task, in order; resolves once the event is stored (durable,
    /// with a durable store) and visible to readers.
    fn emit(&self, event: AgentEvent) -> EmitFuture<'_>;
}

/// The handle a turn reports through. Cloning is cheap; every clone reports to the same task.
#[derive(Clone)]
pub struct EventSink {
    task_id: Arc<str>,
    context_id: Arc<str>,
    target: Arc<dyn EventTarget>,
}

impl fmt::Debug for EventSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventSink")
            .field("task_id", &self.task_id)
            .finish_non_exhaustive()
    }
}

impl EventSink {
    /// A sink for `task_id` in `context_id` that forwards to `target`.
    pub fn new(task_id: &str, context_id: &str, target: Arc<dyn EventTarget>) -> Self {
        Self {
            task_id: task_id.into(),
            context_id: context_id.into(),
            target,
        }
    }

    /// The task this sink reports for.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }

    /// The context this sink reports for.
    pub fn context_id(&self) -> &str {
        &self.context_id
    }

    /// Applies a raw event; returns once it is stored.
    pub async fn emit(&self, event: AgentEvent) -> Result<(), EmitError> {
        self.target.emit(event).await
    }

    /// An agent message with a fresh id, this task's ids and the given parts.
    pub fn agent_message(&self, parts: Vec<Part>) -> Message {
        let mut m = Message::agent(uuid::Uuid::new_v4().to_string(), parts);
        m.context_id = self.context_id.to_string();
        m.task_id = self.task_id.to_string();
        m
    }

    /// An agent message holding one text part.
    pub fn text_message(&self, text: impl Into<String>) -> Message {
        self.agent_message(vec![Part::text(text)])
    }

    /// Sets a state, with an optional message.
    pub async fn status(
        &self,
        state: TaskState,
        message: Option<Message>,
    ) -> Result<(), EmitError> {
        self.emit(AgentEvent::Status { state, message }).await
    }

    /// The task is being worked on.
    pub async fn working(&self, message: Option<Message>) -> Result<(), EmitError> {
        self.status(TaskState::Working, message).await
    }

    /// Adds, replaces or extends an artifact.
    pub async fn artifact(
        &self,
        artifact: Artifact,
        append: bool,
        last_chunk: bool,
    ) -> Result<(), EmitError> {
        self.emit(AgentEvent::Artifact {
            artifact: Arc::new(artifact),
            append,
            last_chunk,
        })
        .await
    }

    /// The agent needs more input; `message` says what.
    pub async fn input_required(&self, message: Message) -> Result<(), EmitError> {
        self.status(TaskState::InputRequired, Some(message)).await
    }

    /// The agent needs authorization; `message` says what.
    pub async fn auth_required(&self, message: Message) -> Result<(), EmitError> {
        self.status(TaskState::AuthRequired, Some(message)).await
    }

    /// The task finished successfully.
    pub async fn complete(&self, message: Option<Message>) -> Result<(), EmitError> {
        self.status(TaskState::Completed, message).await
    }

    /// The task failed; `message` says why.
    pub async fn fail(&self, message: Message) -> Result<(), EmitError> {
        self.status(TaskState::Failed, Some(message)).await
    }

    /// The agent declines the task; `message` says why.
    pub async fn reject(&self, message: Message) -> Result<(), EmitError> {
        self.status(TaskState::Rejected, Some(message)).await
    }

    /// Replies with a single message and no task (only as the first event of a new request).
    pub async fn message(&self, message: Message) -> Result<(), EmitError> {
        self.emit(AgentEvent::Message(message)).await
    }
}
