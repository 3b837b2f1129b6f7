//! The v0.3 shapes as they travel: `kind` discriminators, lower-case states and roles, the
//! three part kinds, the nested push config. Values only; what they mean in v1.0 is
//! [`super::convert`]'s.
//!
//! Reading is tolerant where v0.3 peers differ: a missing `kind` is inferred from the members
//! present (some clients omit it on parts), unknown members are ignored (v0.3's schema allows
//! them). A `kind` that names another type is refused, so one object can never be read as
//! two things. Like every message of this crate they read only from objects (never
//! positionally from an array) and take member names in either spelling.

use crate::message::{ProtoMessage, proto_messages};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// A JSON object.
pub type Object = Map<String, Value>;

/// A `kind` member that must hold one literal: written always, read when present.
macro_rules! kind_literal {
    ($(#[$meta:meta])* $name:ident = $lit:literal) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
        pub struct $name;

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($lit)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let kind = String::deserialize(d)?;
                if kind == $lit {
                    Ok($name)
                } else {
                    Err(D::Error::custom(format!(
                        "kind {kind:?} where {:?} was expected",
                        $lit
                    )))
                }
            }
        }
    };
}

kind_literal!(
    /// `"kind": "message"`.
    MessageKind = "message"
);
kind_literal!(
    /// `"kind": "task"`.
    TaskKind = "task"
);
kind_literal!(
    /// `"kind": "status-update"`.
    StatusUpdateKind = "status-update"
);
kind_literal!(
    /// `"kind": "artifact-update"`.
    ArtifactUpdateKind = "artifact-update"
);

/// A file's content: inline base64 `bytes` or a `uri` (exactly one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct FileContent {
    /// Base64 content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<String>,
    /// Where the content is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// Its MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its file name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A v0.3 part: text, file or data (an object).
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// `{"kind":"text","text":…}`.
    Text {
        /// The text.
        text: String,
        /// Metadata.
        metadata: Option<Object>,
    },
    /// `{"kind":"file","file":{…}}`.
    File {
        /// The file.
        file: FileContent,
        /// Metadata.
        metadata: Option<Object>,
    },
    /// `{"kind":"data","data":{…}}`.
    Data {
        /// The data (v0.3 allows only an object).
        data: Object,
        /// Metadata.
        metadata: Option<Object>,
    },
}

impl Serialize for Part {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        let metadata = match self {
            Part::Text { text, metadata } => {
                m.serialize_entry("kind", "text")?;
                m.serialize_entry("text", text)?;
                metadata
            }
            Part::File { file, metadata } => {
                m.serialize_entry("kind", "file")?;
                m.serialize_entry("file", file)?;
                metadata
            }
            Part::Data { data, metadata } => {
                m.serialize_entry("kind", "data")?;
                m.serialize_entry("data", data)?;
                metadata
            }
        };
        if let Some(md) = metadata {
            m.serialize_entry("metadata", md)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Wire {
            #[serde(default)]
            kind: Option<String>,
            #[serde(default)]
            text: Option<String>,
            #[serde(default)]
            file: Option<FileContent>,
            #[serde(default)]
            data: Option<Value>,
            #[serde(default)]
            metadata: Option<Object>,
        }
        let w = Wire::deserialize(ProtoMessage(d))?;
        let kind = match w.kind.as_deref() {
            Some(kind) => kind,
            None if w.text.is_some() => "text",
            None if w.file.is_some() => "file",
            None if w.data.is_some() => "data",
            None => {
                return Err(D::Error::custom(
                    "a part needs a kind, or text, file or data",
                ));
            }
        };
        let missing = |member: &str| D::Error::custom(format!("a {kind} part needs {member}"));
        let metadata = w.metadata;
        match kind {
            "text" => Ok(Part::Text {
                text: w.text.ok_or_else(|| missing("text"))?,
                metadata,
            }),
            "file" => {
                let file = w.file.ok_or_else(|| missing("file"))?;
                if file.bytes.is_some() == file.uri.is_some() {
                    return Err(D::Error::custom(
                        "a file part needs exactly one of file.bytes and file.uri",
                    ));
                }
                Ok(Part::File { file, metadata })
            }
            "data" => match w.data.ok_or_else(|| missing("data"))? {
                Value::Object(data) => Ok(Part::Data { data, metadata }),
                _ => Err(D::Error::custom(
                    "a v0.3 data part's data must be an object",
                )),
            },
            other => Err(D::Error::custom(format!("unknown part kind {other:?}"))),
        }
    }
}

/// A v0.3 message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct Message {
    /// `"message"`.
    #[serde(default)]
    pub kind: MessageKind,
    /// The sender's id for it.
    pub message_id: String,
    /// `"user"` or `"agent"`.
    pub role: String,
    /// Its content.
    pub parts: Vec<Part>,
    /// The conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// The task it continues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Tasks it refers to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_task_ids: Option<Vec<String>>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
    /// Extension URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<String>>,
}

/// A v0.3 task status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct TaskStatus {
    /// `"submitted"`, `"working"`, `"input-required"`, … (see [`super::convert::state_name`]).
    pub state: String,
    /// The message that came with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// ISO 8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

/// A v0.3 artifact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct Artifact {
    /// Its id.
    pub artifact_id: String,
    /// Its content.
    pub parts: Vec<Part>,
    /// Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
    /// Extension URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<String>>,
}

/// A v0.3 task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct Task {
    /// `"task"`.
    #[serde(default)]
    pub kind: TaskKind,
    /// Its id.
    pub id: String,
    /// The conversation.
    pub context_id: String,
    /// Its status.
    pub status: TaskStatus,
    /// Outputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<Vec<Artifact>>,
    /// Messages, oldest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<Message>>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
}

/// A v0.3 status update; `final` marks the last event of its stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// `"status-update"`.
    #[serde(default)]
    pub kind: StatusUpdateKind,
    /// The task.
    pub task_id: String,
    /// The conversation.
    pub context_id: String,
    /// The new status.
    pub status: TaskStatus,
    /// True on the stream's last event.
    #[serde(default, rename = "final")]
    pub is_final: bool,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
}

/// A v0.3 artifact update.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    /// `"artifact-update"`.
    #[serde(default)]
    pub kind: ArtifactUpdateKind,
    /// The task.
    pub task_id: String,
    /// The conversation.
    pub context_id: String,
    /// The artifact or chunk.
    pub artifact: Artifact,
    /// Appends to an artifact of the same id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append: Option<bool>,
    /// The last chunk of the artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_chunk: Option<bool>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
}

/// What `message/send` answers and a stream carries: one of four objects, told apart by
/// `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Event {
    /// A task.
    Task(Task),
    /// A message.
    Message(Message),
    /// A status update.
    StatusUpdate(TaskStatusUpdateEvent),
    /// An artifact update.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

/// How a webhook call authenticates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct PushAuthentication {
    /// Schemes, e.g. `["Bearer"]`.
    #[serde(default)]
    pub schemes: Vec<String>,
    /// Credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

/// A webhook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct PushNotificationConfig {
    /// Its id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Where to post.
    pub url: String,
    /// A token the webhook checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// How to authenticate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<PushAuthentication>,
}

/// A task's webhook (`tasks/pushNotificationConfig/set` params and result).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    /// The task.
    pub task_id: String,
    /// The webhook.
    pub push_notification_config: PushNotificationConfig,
}

/// `message/send` and `message/stream` options.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct MessageSendConfiguration {
    /// Output types the client accepts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted_output_modes: Option<Vec<String>>,
    /// Wait for the task to end or be interrupted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocking: Option<bool>,
    /// Most recent history messages to return (0: all of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_length: Option<i32>,
    /// A webhook for the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notification_config: Option<PushNotificationConfig>,
}

/// `message/send` and `message/stream` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct MessageSendParams {
    /// The message.
    pub message: Message,
    /// Options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<MessageSendConfiguration>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
}

/// `tasks/get` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct TaskQueryParams {
    /// The task.
    pub id: String,
    /// Most recent history messages to return (0: all of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_length: Option<i32>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
}

/// `tasks/cancel`, `tasks/resubscribe` and `tasks/pushNotificationConfig/list` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct TaskIdParams {
    /// The task.
    pub id: String,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
}

/// `tasks/pushNotificationConfig/get` and `…/delete` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "camelCase")]
pub struct PushConfigParams {
    /// The task.
    pub id: String,
    /// The webhook (get: optional, the task's own id when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notification_config_id: Option<String>,
    /// Metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Object>,
}

proto_messages!(
    FileContent,
    Message,
    TaskStatus,
    Artifact,
    Task,
    TaskStatusUpdateEvent,
    TaskArtifactUpdateEvent,
    PushAuthentication,
    PushNotificationConfig,
    TaskPushNotificationConfig,
    MessageSendConfiguration,
    MessageSendParams,
    TaskQueryParams,
    TaskIdParams,
    PushConfigParams,
);
