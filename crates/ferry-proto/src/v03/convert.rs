//! v0.3 ⇄ v1.0, value by value. The one place that knows how the two versions' shapes
//! correspond; the server's v0.3 binding and the client's v0.3 transport both translate here.
//!
//! Where the versions differ in meaning, not only in spelling:
//! - A v1.0 data part may hold any JSON value, a v0.3 one only an object: a non-object goes
//!   out as `{"value": …}` with `metadata.data_part_compat: true` and comes back unwrapped
//!   (the convention of the official Python SDK, so the three of us agree).
//! - `blocking` absent means blocking, as the official SDKs' v0.3 servers treat it (the v0.3
//!   text says the default is false, and no SDK follows it).
//! - `historyLength: 0` means all of the history in v0.3 and none of it in v1.0.
//! - `final` is true on the event that ends its stream: a terminal or interrupted status.
//! - A v0.3 webhook set without an id takes the task's id, so that a get without one (v0.3
//!   allows it) finds it.

use super::wire::{self, Object};
use crate::{
    Artifact, AuthenticationInfo, CancelTaskRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, Message, Part, PartContent, Role,
    SendMessageConfiguration, SendMessageRequest, SendMessageResponse, StreamResponse,
    SubscribeToTaskRequest, Task, TaskArtifactUpdateEvent, TaskPushNotificationConfig,
    TaskPushNotificationConfigRef, TaskState, TaskStatus, TaskStatusUpdateEvent, Timestamp,
};
use base64::Engine;
use serde_json::Value;
use std::sync::Arc;

/// The metadata key that marks a non-object v1.0 data value wrapped for v0.3.
pub const DATA_PART_COMPAT: &str = "data_part_compat";

/// A v0.3 value with no v1.0 meaning (or the other way round).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConvertError(pub String);

fn bad(what: impl Into<String>) -> ConvertError {
    ConvertError(what.into())
}

/// A state's v0.3 name (`TASK_STATE_UNSPECIFIED` is v0.3's `unknown`).
pub const fn state_name(state: TaskState) -> &'static str {
    match state {
        TaskState::Unspecified => "unknown",
        TaskState::Submitted => "submitted",
        TaskState::Working => "working",
        TaskState::Completed => "completed",
        TaskState::Failed => "failed",
        TaskState::Canceled => "canceled",
        TaskState::InputRequired => "input-required",
        TaskState::Rejected => "rejected",
        TaskState::AuthRequired => "auth-required",
    }
}

/// The state a v0.3 name stands for.
pub fn state_from_name(name: &str) -> Result<TaskState, ConvertError> {
    TaskState::ALL
        .iter()
        .copied()
        .find(|s| state_name(*s) == name)
        .ok_or_else(|| bad(format!("unknown v0.3 task state {name:?}")))
}

const fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Agent => "agent",
        Role::Unspecified => "unspecified",
    }
}

fn role_from_name(name: &str) -> Result<Role, ConvertError> {
    match name {
        "user" => Ok(Role::User),
        "agent" => Ok(Role::Agent),
        other => Err(bad(format!("unknown v0.3 role {other:?}"))),
    }
}

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

fn non_empty_vec(v: &[String]) -> Option<Vec<String>> {
    (!v.is_empty()).then(|| v.to_vec())
}

/// A v0.3 part in v1.0.
pub fn part_to_v1(part: wire::Part) -> Result<Part, ConvertError> {
    Ok(match part {
        wire::Part::Text { text, metadata } => Part {
            metadata,
            ..Part::text(text)
        },
        wire::Part::Data { data, metadata } => {
            let mut metadata = metadata;
            let wrapped = metadata
                .as_mut()
                .and_then(|m| m.remove(DATA_PART_COMPAT))
                .is_some_and(|v| v == Value::Bool(true));
            let metadata = metadata.filter(|m| !m.is_empty());
            let value = if wrapped {
                let mut data = data;
                data.remove("value").unwrap_or(Value::Null)
            } else {
                Value::Object(data)
            };
            Part {
                metadata,
                ..Part::data(value)
            }
        }
        wire::Part::File { file, metadata } => {
            let content = match (file.bytes, file.uri) {
                (Some(b64), None) => PartContent::Raw(
                    crate::de::decode_base64_lenient(&b64)
                        .map_err(|e| bad(format!("a file part's bytes are not base64: {e}")))?,
                ),
                (None, Some(uri)) => PartContent::Url(uri),
                _ => return Err(bad("a file part needs exactly one of bytes and uri")),
            };
            Part {
                content,
                metadata,
                filename: file.name.unwrap_or_default(),
                media_type: file.mime_type.unwrap_or_default(),
            }
        }
    })
}

/// A v1.0 part in v0.3.
pub fn part_from_v1(part: &Part) -> wire::Part {
    let metadata = part.metadata.clone();
    let file = |bytes, uri| wire::FileContent {
        bytes,
        uri,
        mime_type: non_empty(&part.media_type),
        name: non_empty(&part.filename),
    };
    match &part.content {
        PartContent::Text(text) => wire::Part::Text {
            text: text.clone(),
            metadata,
        },
        PartContent::Data(Value::Object(data)) => wire::Part::Data {
            data: data.clone(),
            metadata,
        },
        PartContent::Data(other) => {
            let mut data = Object::new();
            data.insert("value".into(), other.clone());
            let mut metadata = metadata.unwrap_or_default();
            metadata.insert(DATA_PART_COMPAT.into(), Value::Bool(true));
            wire::Part::Data {
                data,
                metadata: Some(metadata),
            }
        }
        PartContent::Raw(bytes) => wire::Part::File {
            file: file(
                Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
                None,
            ),
            metadata,
        },
        PartContent::Url(url) => wire::Part::File {
            file: file(None, Some(url.clone())),
            metadata,
        },
    }
}

fn parts_to_v1(parts: Vec<wire::Part>) -> Result<Vec<Part>, ConvertError> {
    parts.into_iter().map(part_to_v1).collect()
}

fn parts_from_v1(parts: &[Part]) -> Vec<wire::Part> {
    parts.iter().map(part_from_v1).collect()
}

/// A v0.3 message in v1.0.
pub fn message_to_v1(m: wire::Message) -> Result<Message, ConvertError> {
    Ok(Message {
        message_id: m.message_id,
        context_id: m.context_id.unwrap_or_default(),
        task_id: m.task_id.unwrap_or_default(),
        role: role_from_name(&m.role)?,
        parts: parts_to_v1(m.parts)?,
        metadata: m.metadata,
        extensions: m.extensions.unwrap_or_default(),
        reference_task_ids: m.reference_task_ids.unwrap_or_default(),
    })
}

/// A v1.0 message in v0.3.
pub fn message_from_v1(m: &Message) -> wire::Message {
    wire::Message {
        kind: wire::MessageKind,
        message_id: m.message_id.clone(),
        role: role_name(m.role).to_owned(),
        parts: parts_from_v1(&m.parts),
        context_id: non_empty(&m.context_id),
        task_id: non_empty(&m.task_id),
        reference_task_ids: non_empty_vec(&m.reference_task_ids),
        metadata: m.metadata.clone(),
        extensions: non_empty_vec(&m.extensions),
    }
}

fn status_from_v1(s: &TaskStatus) -> wire::TaskStatus {
    wire::TaskStatus {
        state: state_name(s.state).to_owned(),
        message: s.message.as_deref().map(message_from_v1),
        timestamp: s.timestamp.map(|t| t.to_string()),
    }
}

fn status_to_v1(s: wire::TaskStatus) -> Result<TaskStatus, ConvertError> {
    let timestamp = match s.timestamp {
        Some(t) => Some(
            t.parse::<Timestamp>()
                .map_err(|e| bad(format!("status timestamp {t:?}: {e}")))?,
        ),
        None => None,
    };
    Ok(TaskStatus {
        state: state_from_name(&s.state)?,
        message: s.message.map(message_to_v1).transpose()?.map(Arc::new),
        timestamp,
    })
}

/// A v1.0 artifact in v0.3.
pub fn artifact_from_v1(a: &Artifact) -> wire::Artifact {
    wire::Artifact {
        artifact_id: a.artifact_id.clone(),
        parts: parts_from_v1(&a.parts),
        name: non_empty(&a.name),
        description: non_empty(&a.description),
        metadata: a.metadata.clone(),
        extensions: non_empty_vec(&a.extensions),
    }
}

/// A v0.3 artifact in v1.0.
pub fn artifact_to_v1(a: wire::Artifact) -> Result<Artifact, ConvertError> {
    Ok(Artifact {
        artifact_id: a.artifact_id,
        name: a.name.unwrap_or_default(),
        description: a.description.unwrap_or_default(),
        parts: parts_to_v1(a.parts)?,
        metadata: a.metadata,
        extensions: a.extensions.unwrap_or_default(),
    })
}

/// A v1.0 task in v0.3.
pub fn task_from_v1(t: &Task) -> wire::Task {
    wire::Task {
        kind: wire::TaskKind,
        id: t.id.to_string(),
        context_id: t.context_id.to_string(),
        status: status_from_v1(&t.status),
        artifacts: (!t.artifacts.is_empty())
            .then(|| t.artifacts.iter().map(|a| artifact_from_v1(a)).collect()),
        history: (!t.history.is_empty())
            .then(|| t.history.iter().map(|m| message_from_v1(m)).collect()),
        metadata: t.metadata.clone(),
    }
}

/// A v0.3 task in v1.0.
pub fn task_to_v1(t: wire::Task) -> Result<Task, ConvertError> {
    let artifacts = t.artifacts.unwrap_or_default();
    let history = t.history.unwrap_or_default();
    Ok(Task {
        id: t.id.into(),
        context_id: t.context_id.into(),
        status: status_to_v1(t.status)?,
        artifacts: artifacts
            .into_iter()
            .map(|a| artifact_to_v1(a).map(Arc::new))
            .collect::<Result<_, _>>()?,
        history: history
            .into_iter()
            .map(|m| message_to_v1(m).map(Arc::new))
            .collect::<Result<_, _>>()?,
        metadata: t.metadata,
    })
}

/// True when an event with this state is the last of its stream (v0.3's `final`).
pub const fn ends_stream(state: TaskState) -> bool {
    state.is_terminal() || state.is_interrupted()
}

/// A v1.0 stream event (or push notification body) in v0.3.
pub fn event_from_v1(e: &StreamResponse) -> wire::Event {
    match e {
        StreamResponse::Task(t) => wire::Event::Task(task_from_v1(t)),
        StreamResponse::Message(m) => wire::Event::Message(message_from_v1(m)),
        StreamResponse::StatusUpdate(u) => wire::Event::StatusUpdate(wire::TaskStatusUpdateEvent {
            kind: wire::StatusUpdateKind,
            task_id: u.task_id.to_string(),
            context_id: u.context_id.to_string(),
            status: status_from_v1(&u.status),
            is_final: ends_stream(u.status.state),
            metadata: u.metadata.clone(),
        }),
        StreamResponse::ArtifactUpdate(u) => {
            wire::Event::ArtifactUpdate(wire::TaskArtifactUpdateEvent {
                kind: wire::ArtifactUpdateKind,
                task_id: u.task_id.to_string(),
                context_id: u.context_id.to_string(),
                artifact: artifact_from_v1(&u.artifact),
                append: u.append.then_some(true),
                last_chunk: u.last_chunk.then_some(true),
                metadata: u.metadata.clone(),
            })
        }
    }
}

/// A v0.3 stream event in v1.0 (`final` has no v1.0 member: the stream's end says it).
pub fn event_to_v1(e: wire::Event) -> Result<StreamResponse, ConvertError> {
    Ok(match e {
        wire::Event::Task(t) => StreamResponse::Task(Arc::new(task_to_v1(t)?)),
        wire::Event::Message(m) => StreamResponse::Message(message_to_v1(m)?),
        wire::Event::StatusUpdate(u) => StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: u.task_id.into(),
            context_id: u.context_id.into(),
            status: status_to_v1(u.status)?,
            metadata: u.metadata,
        }),
        wire::Event::ArtifactUpdate(u) => StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: u.task_id.into(),
            context_id: u.context_id.into(),
            artifact: Arc::new(artifact_to_v1(u.artifact)?),
            append: u.append.unwrap_or(false),
            last_chunk: u.last_chunk.unwrap_or(false),
            metadata: u.metadata,
        }),
    })
}

/// A v1.0 `SendMessage` result in v0.3 (a task or a message).
pub fn send_result_from_v1(r: &SendMessageResponse) -> wire::Event {
    match r {
        SendMessageResponse::Task(t) => wire::Event::Task(task_from_v1(t)),
        SendMessageResponse::Message(m) => wire::Event::Message(message_from_v1(m)),
    }
}

/// A v0.3 `message/send` result in v1.0.
pub fn send_result_to_v1(e: wire::Event) -> Result<SendMessageResponse, ConvertError> {
    match event_to_v1(e)? {
        StreamResponse::Task(t) => Ok(SendMessageResponse::Task(Arc::unwrap_or_clone(t))),
        StreamResponse::Message(m) => Ok(SendMessageResponse::Message(m)),
        _ => Err(bad("message/send answered with an update event")),
    }
}

/// v0.3 history length (0 or absent: everything) as v1.0's (absent: everything).
fn history_to_v1(len: Option<i32>) -> Option<i32> {
    len.filter(|n| *n > 0)
}

/// v1.0 history length as v0.3's; v1.0's 0 (no history) has no v0.3 spelling but 1, the
/// least v0.3 can ask for.
fn history_from_v1(len: Option<i32>) -> Option<i32> {
    len.map(|n| n.max(1))
}

fn authentication_to_v1(a: wire::PushAuthentication) -> AuthenticationInfo {
    AuthenticationInfo {
        scheme: a.schemes.into_iter().next().unwrap_or_default(),
        credentials: a.credentials.unwrap_or_default(),
    }
}

fn authentication_from_v1(a: &AuthenticationInfo) -> wire::PushAuthentication {
    wire::PushAuthentication {
        schemes: non_empty(&a.scheme).into_iter().collect(),
        credentials: non_empty(&a.credentials),
    }
}

/// A v0.3 webhook of `task_id` in v1.0 (its id the task's when it has none).
pub fn push_config_to_v1(
    tenant: &str,
    task_id: &str,
    c: wire::PushNotificationConfig,
) -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        tenant: tenant.to_owned(),
        id: c
            .id
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| task_id.to_owned()),
        task_id: task_id.to_owned(),
        url: c.url,
        token: c.token.unwrap_or_default(),
        authentication: c.authentication.map(authentication_to_v1),
    }
}

/// A v1.0 webhook in v0.3.
pub fn push_config_from_v1(c: &TaskPushNotificationConfig) -> wire::TaskPushNotificationConfig {
    wire::TaskPushNotificationConfig {
        task_id: c.task_id.clone(),
        push_notification_config: wire::PushNotificationConfig {
            id: non_empty(&c.id),
            url: c.url.clone(),
            token: non_empty(&c.token),
            authentication: c.authentication.as_ref().map(authentication_from_v1),
        },
    }
}

/// `message/send` / `message/stream` params in v1.0. The webhook, if any, is registered for
/// the task the message creates; its id is then the server's to choose.
pub fn send_params_to_v1(
    tenant: &str,
    p: wire::MessageSendParams,
) -> Result<SendMessageRequest, ConvertError> {
    let configuration = p.configuration.map(|c| SendMessageConfiguration {
        accepted_output_modes: c.accepted_output_modes.unwrap_or_default(),
        task_push_notification_config: c.push_notification_config.map(|w| {
            let mut config = push_config_to_v1(tenant, "", w);
            config.task_id.clear();
            config
        }),
        history_length: history_to_v1(c.history_length),
        return_immediately: !c.blocking.unwrap_or(true),
    });
    Ok(SendMessageRequest {
        tenant: tenant.to_owned(),
        message: message_to_v1(p.message)?,
        configuration,
        metadata: p.metadata,
    })
}

/// v1.0 `SendMessage` params in v0.3 (`blocking` always written: v0.3 servers differ on its
/// default).
pub fn send_params_from_v1(r: &SendMessageRequest) -> wire::MessageSendParams {
    let c = r.configuration.clone().unwrap_or_default();
    wire::MessageSendParams {
        message: message_from_v1(&r.message),
        configuration: Some(wire::MessageSendConfiguration {
            accepted_output_modes: non_empty_vec(&c.accepted_output_modes),
            blocking: Some(!c.return_immediately),
            history_length: history_from_v1(c.history_length),
            push_notification_config: c
                .task_push_notification_config
                .as_ref()
                .map(|w| push_config_from_v1(w).push_notification_config),
        }),
        metadata: r.metadata.clone(),
    }
}

/// `tasks/get` params in v1.0.
pub fn get_task_to_v1(tenant: &str, p: wire::TaskQueryParams) -> GetTaskRequest {
    GetTaskRequest {
        tenant: tenant.to_owned(),
        id: p.id,
        history_length: history_to_v1(p.history_length),
    }
}

/// v1.0 `GetTask` params in v0.3.
pub fn get_task_from_v1(r: &GetTaskRequest) -> wire::TaskQueryParams {
    wire::TaskQueryParams {
        id: r.id.clone(),
        history_length: history_from_v1(r.history_length),
        metadata: None,
    }
}

/// `tasks/cancel` params in v1.0.
pub fn cancel_to_v1(tenant: &str, p: wire::TaskIdParams) -> CancelTaskRequest {
    CancelTaskRequest {
        tenant: tenant.to_owned(),
        id: p.id,
        metadata: p.metadata,
    }
}

/// `tasks/resubscribe` params in v1.0.
pub fn resubscribe_to_v1(tenant: &str, p: wire::TaskIdParams) -> SubscribeToTaskRequest {
    SubscribeToTaskRequest {
        tenant: tenant.to_owned(),
        id: p.id,
    }
}

/// v1.0 task-id params (cancel, subscribe) in v0.3.
pub fn task_id_from_v1(id: &str) -> wire::TaskIdParams {
    wire::TaskIdParams {
        id: id.to_owned(),
        metadata: None,
    }
}

/// `tasks/pushNotificationConfig/set` params in v1.0.
pub fn set_push_config_to_v1(
    tenant: &str,
    p: wire::TaskPushNotificationConfig,
) -> TaskPushNotificationConfig {
    push_config_to_v1(tenant, &p.task_id, p.push_notification_config)
}

/// `tasks/pushNotificationConfig/get` and `…/delete` params in v1.0 (no config id: the one
/// named after the task, as a v0.3 set without an id made it).
pub fn push_config_ref_to_v1(
    tenant: &str,
    p: wire::PushConfigParams,
) -> TaskPushNotificationConfigRef {
    TaskPushNotificationConfigRef {
        tenant: tenant.to_owned(),
        id: p
            .push_notification_config_id
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| p.id.clone()),
        task_id: p.id,
    }
}

/// `tasks/pushNotificationConfig/list` params in v1.0 (v0.3 has no paging: one page of the
/// largest size).
pub fn list_push_configs_to_v1(
    tenant: &str,
    p: wire::TaskIdParams,
) -> ListTaskPushNotificationConfigsRequest {
    ListTaskPushNotificationConfigsRequest {
        tenant: tenant.to_owned(),
        task_id: p.id,
        page_size: 0,
        page_token: String::new(),
    }
}
