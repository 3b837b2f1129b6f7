//! Tasks, messages, artifacts and the events that change them (spec §4.1–§4.8).

use crate::de;
use crate::message::proto_messages;
use crate::{Part, Role, TaskState, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;

/// A `google.protobuf.Struct`: a JSON object.
pub type Struct = Map<String, Value>;

/// The unit of work: a status, its artifacts and its history (spec §4.1).
///
/// Artifacts and history messages are shared (`Arc`): a server keeps a snapshot of the task
/// after every event, and the next snapshot copies pointers to what did not change instead
/// of every message and part. Change one with `Arc::make_mut`; on the wire they are plain
/// objects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct Task {
    /// Server-generated id.
    pub id: Arc<str>,
    /// The conversation this task belongs to.
    #[serde(default, skip_serializing_if = "str::is_empty")]
    pub context_id: Arc<str>,
    /// Current status.
    pub status: TaskStatus,
    /// Outputs; omitted when empty.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "de::vec_or_null"
    )]
    pub artifacts: Vec<Arc<Artifact>>,
    /// Messages exchanged, oldest first.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "de::vec_or_null"
    )]
    pub history: Vec<Arc<Message>>,
    /// Custom metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

/// A task's state with the message and time that came with it (spec §4.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
pub struct TaskStatus {
    /// The state.
    pub state: TaskState,
    /// A message about the state (for example the agent's question at INPUT_REQUIRED).
    /// Shared: the task's history holds the same message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Arc<Message>>,
    /// When the status was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
}

impl Task {
    /// A task with no artifacts, history or metadata yet.
    pub fn new(
        id: impl Into<Arc<str>>,
        context_id: impl Into<Arc<str>>,
        status: TaskStatus,
    ) -> Self {
        Self {
            id: id.into(),
            context_id: context_id.into(),
            status,
            artifacts: Vec::new(),
            history: Vec::new(),
            metadata: None,
        }
    }
}

impl TaskStatus {
    /// A status in `state`, stamped now.
    pub fn now(state: TaskState, message: Option<Arc<Message>>) -> Self {
        Self {
            state,
            message,
            timestamp: Some(Timestamp::now()),
        }
    }
}

/// One unit of communication (spec §4.4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct Message {
    /// Sender-chosen id. Read as empty when absent (ProtoJSON omits an empty string); the
    /// server refuses a message from a client without one, a client accepts it in history.
    #[serde(default)]
    pub message_id: String,
    /// The conversation.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub context_id: String,
    /// The task this message is about.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub task_id: String,
    /// Who sent it.
    pub role: Role,
    /// The content (at least one part).
    #[serde(deserialize_with = "de::vec_or_null")]
    pub parts: Vec<Part>,
    /// Custom metadata; extension data keyed by extension URI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
    /// Extensions that contributed to this message.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "de::vec_or_null"
    )]
    pub extensions: Vec<String>,
    /// Related tasks.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "de::vec_or_null"
    )]
    pub reference_task_ids: Vec<String>,
}

impl Message {
    /// A message from the agent with the given parts.
    pub fn agent(message_id: impl Into<String>, parts: Vec<Part>) -> Self {
        Self::new(message_id, Role::Agent, parts)
    }

    /// A message from the user with the given parts.
    pub fn user(message_id: impl Into<String>, parts: Vec<Part>) -> Self {
        Self::new(message_id, Role::User, parts)
    }

    fn new(message_id: impl Into<String>, role: Role, parts: Vec<Part>) -> Self {
        Self {
            message_id: message_id.into(),
            context_id: String::new(),
            task_id: String::new(),
            role,
            parts,
            metadata: None,
            extensions: Vec::new(),
            reference_task_ids: Vec::new(),
        }
    }

    /// All text parts joined with newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self.parts.iter().filter_map(Part::as_text).collect();
        texts.join("\n")
    }
}

/// An output of a task (spec §4.6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct Artifact {
    /// Unique within the task.
    pub artifact_id: String,
    /// Human-readable name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Human-readable description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The content (at least one part).
    #[serde(deserialize_with = "de::vec_or_null")]
    pub parts: Vec<Part>,
    /// Custom metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
    /// Extensions that contributed to this artifact.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "de::vec_or_null"
    )]
    pub extensions: Vec<String>,
}

impl Artifact {
    /// An artifact with an id, a name and parts.
    pub fn new(artifact_id: impl Into<String>, name: impl Into<String>, parts: Vec<Part>) -> Self {
        Self {
            artifact_id: artifact_id.into(),
            name: name.into(),
            description: String::new(),
            parts,
            metadata: None,
            extensions: Vec::new(),
        }
    }
}

/// A change of a task's status (spec §4.7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// The task.
    pub task_id: Arc<str>,
    /// The task's context.
    pub context_id: Arc<str>,
    /// The new status.
    pub status: TaskStatus,
    /// Custom metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

/// A new artifact or a chunk of one (spec §4.8).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    /// The task.
    pub task_id: Arc<str>,
    /// The task's context.
    pub context_id: Arc<str>,
    /// The artifact or chunk (shared: the task's snapshot holds the same one).
    pub artifact: Arc<Artifact>,
    /// Append these parts to the artifact with the same id.
    #[serde(default, skip_serializing_if = "de::is_false")]
    pub append: bool,
    /// This is the artifact's last chunk.
    #[serde(default, skip_serializing_if = "de::is_false")]
    pub last_chunk: bool,
    /// Custom metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Struct>,
}

/// One event of a stream, and the body of a push notification (spec §3): exactly one member.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub enum StreamResponse {
    /// A task snapshot (shared: a stored snapshot and the event that carries it are one).
    Task(Arc<Task>),
    /// A message (the only event of a message-only stream).
    Message(Message),
    /// A status change.
    StatusUpdate(TaskStatusUpdateEvent),
    /// An artifact or chunk.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

/// The result of `SendMessage`: a task or a direct message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub enum SendMessageResponse {
    /// The task the message created or continued.
    Task(Task),
    /// A direct reply without a task.
    Message(Message),
}

proto_messages!(
    SendMessageResponse,
    StreamResponse,
    Task,
    TaskStatus,
    Message,
    Artifact,
    TaskStatusUpdateEvent,
    TaskArtifactUpdateEvent,
);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spec_send_result_round_trips() {
        // shared/spec/a2a-v1.md §2.2 example result.
        let wire = json!({"task":{"id":"t-1","contextId":"c-1",
          "status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-01-01T00:00:00.000Z"},
          "artifacts":[{"artifactId":"a-1","parts":[{"text":"hello"}]}]}});
        let r: SendMessageResponse = serde_json::from_value(wire.clone()).expect("parse");
        assert_eq!(serde_json::to_value(&r).expect("ser"), wire);
    }

    #[test]
    fn spec_stream_events_round_trip() {
        // shared/spec/a2a-v1.md §3 SSE example (ProtoJSON form: lastChunk:false omitted).
        for wire in [
            json!({"task":{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_SUBMITTED"}}}),
            json!({"statusUpdate":{"taskId":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}}),
            json!({"artifactUpdate":{"taskId":"t-1","contextId":"c-1","artifact":{"artifactId":"a-1","parts":[{"text":"chunk1"}]}}}),
            json!({"artifactUpdate":{"taskId":"t-1","contextId":"c-1","artifact":{"artifactId":"a-1","parts":[{"text":"chunk2"}]},"append":true,"lastChunk":true}}),
            json!({"statusUpdate":{"taskId":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-01-01T00:00:01.000Z"}}}),
        ] {
            let e: StreamResponse = serde_json::from_value(wire.clone()).expect("parse");
            assert_eq!(serde_json::to_value(&e).expect("ser"), wire);
        }
        let e: StreamResponse = serde_json::from_value(
            json!({"artifact_update":{"task_id":"t","context_id":"c","artifact":{"artifact_id":"a","parts":[{"text":"x"}]},"last_chunk":false}}),
        )
        .expect("snake_case in");
        assert_eq!(
            serde_json::to_value(&e).expect("ser"),
            json!({"artifactUpdate":{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"x"}]}}})
        );
    }

    #[test]
    fn message_requires_role_and_parts_and_reads_a_missing_id_as_empty() {
        // Other ProtoJSON writers omit an empty messageId (a history entry of a Python SDK
        // task); the server refuses a client's message without one, above serde.
        let m: Message = serde_json::from_value(json!({"role":"ROLE_USER","parts":[]}))
            .expect("a missing messageId is empty");
        assert_eq!(m.message_id, "");
        assert!(serde_json::from_value::<Message>(json!({"messageId":"m","parts":[]})).is_err());
        assert!(
            serde_json::from_value::<Message>(json!({"messageId":"m","role":"ROLE_USER"})).is_err()
        );
        let m: Message = serde_json::from_value(
            json!({"messageId":"m","role":1,"parts":[{"text":"hi"}],"kind":"message","extra":{"x":1}}),
        )
        .expect("unknown fields ignored, role as number");
        assert_eq!(m.role, Role::User);
        assert_eq!(
            serde_json::to_value(&m).expect("ser"),
            json!({"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]})
        );
    }
}
