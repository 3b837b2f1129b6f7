//! What an operation answers, typed. The core hands the bindings values, never bytes: each
//! binding encodes an answer once, in its own format, after every task lock is let go (a
//! task is shared, so taking it out from under its lock costs a reference count).

use crate::core::stream::TaskStream;
#[cfg(any(feature = "v03", test))]
use ferry_proto::SendMessageResponse;
use ferry_proto::{
    AgentCard, ListTaskPushNotificationConfigsResponse, ListTasksResponse, Message, Task,
    TaskPushNotificationConfig, TaskView,
};
use std::sync::Arc;

/// The answer of one operation.
#[derive(Debug)]
pub(crate) enum Answer {
    /// `SendMessage`: the task, or the agent's direct reply.
    Sent(Sent),
    /// `GetTask`, `CancelTask`.
    Task(Shaped),
    /// `ListTasks` (its tasks shaped as the request asked).
    Tasks(ListTasksResponse),
    /// `GetExtendedAgentCard`.
    Card(Arc<AgentCard>),
    /// `CreateTaskPushNotificationConfig`, `GetTaskPushNotificationConfig` (the token and
    /// credentials left out).
    PushConfig(TaskPushNotificationConfig),
    /// `ListTaskPushNotificationConfigs`.
    PushConfigs(ListTaskPushNotificationConfigsResponse),
    /// `DeleteTaskPushNotificationConfig`: nothing (`google.protobuf.Empty`).
    Deleted,
    /// `SendStreamingMessage`, `SubscribeToTask`: the task's events.
    Stream(TaskStream),
}

/// What `SendMessage` answers: a task, or a message without one.
#[derive(Debug, Clone)]
pub(crate) enum Sent {
    /// The task the message created or continued.
    Task(Shaped),
    /// A direct reply.
    Message(Arc<Message>),
}

/// A task and the shape its answer takes (`historyLength`, artifacts or not), applied when
/// it is encoded.
#[derive(Debug, Clone)]
pub(crate) struct Shaped {
    task: Arc<Task>,
    history_length: Option<i32>,
    with_artifacts: bool,
}

impl Shaped {
    /// `task`, to be shaped by `history_length` and `with_artifacts` (see [`Task::view`]).
    pub(crate) fn new(task: Arc<Task>, history_length: Option<i32>, with_artifacts: bool) -> Self {
        Self {
            task,
            history_length,
            with_artifacts,
        }
    }

    /// The task as the answer shows it (borrowed: nothing is copied).
    pub(crate) fn view(&self) -> TaskView<'_> {
        self.task.view(self.history_length, self.with_artifacts)
    }

    /// An owned copy of the shaped task, for encoders that convert owned values (v0.3).
    #[cfg(any(feature = "v03", test))]
    pub(crate) fn to_task(&self) -> Task {
        self.task.shaped(self.history_length, self.with_artifacts)
    }
}

impl Sent {
    /// The answer as the wire type (an owned copy, for encoders that convert it).
    #[cfg(any(feature = "v03", test))]
    pub(crate) fn to_response(&self) -> SendMessageResponse {
        match self {
            Sent::Task(task) => SendMessageResponse::Task(task.to_task()),
            Sent::Message(message) => SendMessageResponse::Message(Message::clone(message)),
        }
    }
}

impl serde::Serialize for Sent {
    /// `SendMessageResponse`'s ProtoJSON: `{"task": …}` or `{"message": …}`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = s.serialize_struct("SendMessageResponse", 1)?;
        match self {
            Sent::Task(task) => out.serialize_field("task", &task.view())?,
            Sent::Message(message) => out.serialize_field("message", &**message)?,
        }
        out.end()
    }
}

impl serde::Serialize for Shaped {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.view().serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_proto::{Part, TaskState, TaskStatus};

    fn task() -> Arc<Task> {
        let mut task = Task::new("t-1", "c-1", TaskStatus::now(TaskState::Completed, None));
        task.history = vec![
            Arc::new(Message::user("m-1", vec![Part::text("one")])),
            Arc::new(Message::user("m-2", vec![Part::text("two")])),
        ];
        Arc::new(task)
    }

    #[test]
    fn a_sent_task_writes_what_the_wire_type_writes() {
        let sent = Sent::Task(Shaped::new(task(), Some(1), true));
        let typed = serde_json::to_value(&sent).expect("serialize");
        let wire = serde_json::to_value(sent.to_response()).expect("serialize");
        assert_eq!(typed, wire);
        assert_eq!(typed["task"]["history"][0]["messageId"], "m-2");
        let reply = Sent::Message(Arc::new(Message::user("m-3", vec![Part::text("hi")])));
        let typed = serde_json::to_value(&reply).expect("serialize");
        assert_eq!(
            typed,
            serde_json::to_value(reply.to_response()).expect("wire")
        );
    }
}
