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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Keeps every event; refuses any after `closed` (as a task that ended refuses them).
    #[derive(Default)]
    struct Recorder {
        events: Mutex<Vec<AgentEvent>>,
        closed: bool,
    }

    impl EventTarget for Recorder {
        fn emit(&self, event: AgentEvent) -> EmitFuture<'_> {
            let result = if self.closed {
                Err(EmitError::Closed)
            } else {
                self.events
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(event);
                Ok(())
            };
            Box::pin(async move { result })
        }
    }

    fn states(recorder: &Recorder) -> Vec<TaskState> {
        recorder
            .events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter_map(|e| match e {
                AgentEvent::Status { state, .. } => Some(*state),
                _ => None,
            })
            .collect()
    }

    #[tokio::test]
    async fn each_helper_emits_its_state_through_the_same_target() {
        let recorder = Arc::new(Recorder::default());
        let sink = EventSink::new("t-1", "c-1", recorder.clone());
        let other = sink.clone();
        sink.working(None).await.expect("working");
        other
            .input_required(sink.text_message("which one?"))
            .await
            .expect("input required");
        sink.auth_required(sink.text_message("sign in"))
            .await
            .expect("auth required");
        sink.complete(None).await.expect("complete");
        sink.fail(sink.text_message("no")).await.expect("fail");
        sink.reject(sink.text_message("not mine"))
            .await
            .expect("reject");
        assert_eq!(
            states(&recorder),
            [
                TaskState::Working,
                TaskState::InputRequired,
                TaskState::AuthRequired,
                TaskState::Completed,
                TaskState::Failed,
                TaskState::Rejected,
            ]
        );
    }

    #[tokio::test]
    async fn messages_carry_the_tasks_ids_and_a_fresh_id_each() {
        let sink = EventSink::new("t-1", "c-1", Arc::new(Recorder::default()));
        let one = sink.text_message("hi");
        let two = sink.agent_message(vec![Part::text("a"), Part::text("b")]);
        assert_eq!(
            (one.task_id.as_str(), one.context_id.as_str()),
            ("t-1", "c-1")
        );
        assert_eq!(one.parts, vec![Part::text("hi")]);
        assert_eq!(two.parts.len(), 2);
        assert_ne!(one.message_id, two.message_id);
        assert!(!one.message_id.is_empty());
        assert_eq!((sink.task_id(), sink.context_id()), ("t-1", "c-1"));
    }

    #[tokio::test]
    async fn artifacts_and_replies_go_as_given_and_refusals_come_back() {
        let recorder = Arc::new(Recorder::default());
        let sink = EventSink::new("t-1", "c-1", recorder.clone());
        let chunk = Artifact::new("a-1", "out", vec![Part::text("part")]);
        sink.artifact(chunk.clone(), true, false)
            .await
            .expect("artifact");
        sink.message(sink.text_message("reply"))
            .await
            .expect("message");
        {
            let events = recorder.events.lock().unwrap_or_else(|p| p.into_inner());
            assert!(matches!(
                &events[0],
                AgentEvent::Artifact { artifact, append: true, last_chunk: false } if **artifact == chunk
            ));
            assert!(
                matches!(&events[1], AgentEvent::Message(m) if m.parts == vec![Part::text("reply")])
            );
        }
        let closed = EventSink::new(
            "t-2",
            "c-1",
            Arc::new(Recorder {
                closed: true,
                ..Recorder::default()
            }),
        );
        assert!(matches!(
            closed.complete(None).await,
            Err(EmitError::Closed)
        ));
        assert!(format!("{closed:?}").contains("t-2"));
    }
}
