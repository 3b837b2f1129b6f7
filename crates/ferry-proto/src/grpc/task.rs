//! Tasks, messages, parts, artifacts, the two update events and the oneofs that carry them,
//! with the `Role` and `TaskState` enums.

use super::invalid::{Decode, Invalid, field, optional, repeated, required, try_from_pb};
use super::pb;
use super::value::{struct_to_pb, timestamp_to_pb, value_to_pb};
use crate::{
    Artifact, Message, Part, PartContent, Role, SendMessageResponse, StreamResponse, Task,
    TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent, TaskView,
};
use std::sync::Arc;

impl From<Role> for pb::Role {
    fn from(role: Role) -> Self {
        match role {
            Role::Unspecified => pb::Role::Unspecified,
            Role::User => pb::Role::User,
            Role::Agent => pb::Role::Agent,
        }
    }
}

impl From<&Role> for pb::Role {
    fn from(role: &Role) -> Self {
        pb::Role::from(*role)
    }
}

impl Decode for Role {
    type Pb = pb::Role;

    fn decode(pb: pb::Role) -> Result<Role, Invalid> {
        Ok(match pb {
            pb::Role::Unspecified => Role::Unspecified,
            pb::Role::User => Role::User,
            pb::Role::Agent => Role::Agent,
        })
    }
}

impl From<TaskState> for pb::TaskState {
    fn from(state: TaskState) -> Self {
        match state {
            TaskState::Unspecified => pb::TaskState::Unspecified,
            TaskState::Submitted => pb::TaskState::Submitted,
            TaskState::Working => pb::TaskState::Working,
            TaskState::Completed => pb::TaskState::Completed,
            TaskState::Failed => pb::TaskState::Failed,
            TaskState::Canceled => pb::TaskState::Canceled,
            TaskState::InputRequired => pb::TaskState::InputRequired,
            TaskState::Rejected => pb::TaskState::Rejected,
            TaskState::AuthRequired => pb::TaskState::AuthRequired,
        }
    }
}

impl From<&TaskState> for pb::TaskState {
    fn from(state: &TaskState) -> Self {
        pb::TaskState::from(*state)
    }
}

impl Decode for TaskState {
    type Pb = pb::TaskState;

    fn decode(pb: pb::TaskState) -> Result<TaskState, Invalid> {
        Ok(match pb {
            pb::TaskState::Unspecified => TaskState::Unspecified,
            pb::TaskState::Submitted => TaskState::Submitted,
            pb::TaskState::Working => TaskState::Working,
            pb::TaskState::Completed => TaskState::Completed,
            pb::TaskState::Failed => TaskState::Failed,
            pb::TaskState::Canceled => TaskState::Canceled,
            pb::TaskState::InputRequired => TaskState::InputRequired,
            pb::TaskState::Rejected => TaskState::Rejected,
            pb::TaskState::AuthRequired => TaskState::AuthRequired,
        })
    }
}

/// The role in enum field `name`: prost keeps the number, which may be one the protocol does
/// not define.
pub(super) fn role(number: i32, name: &'static str) -> Result<Role, Invalid> {
    let role = pb::Role::try_from(number)
        .map_err(|_| Invalid::new(format!("unknown Role number {number}")).at(name))?;
    field(role, name)
}

/// The task state in enum field `name` (see [`role`]).
pub(super) fn task_state(number: i32, name: &'static str) -> Result<TaskState, Invalid> {
    let state = pb::TaskState::try_from(number)
        .map_err(|_| Invalid::new(format!("unknown TaskState number {number}")).at(name))?;
    field(state, name)
}

impl From<&Part> for pb::Part {
    fn from(part: &Part) -> Self {
        let content = match &part.content {
            PartContent::Text(t) => pb::part::Content::Text(t.clone()),
            PartContent::Raw(b) => pb::part::Content::Raw(b.clone()),
            PartContent::Url(u) => pb::part::Content::Url(u.clone()),
            PartContent::Data(v) => pb::part::Content::Data(value_to_pb(v)),
        };
        pb::Part {
            content: Some(content),
            metadata: part.metadata.as_ref().map(struct_to_pb),
            filename: part.filename.clone(),
            media_type: part.media_type.clone(),
        }
    }
}

impl Decode for Part {
    type Pb = pb::Part;

    fn decode(pb: pb::Part) -> Result<Part, Invalid> {
        let content = match pb.content {
            Some(pb::part::Content::Text(t)) => PartContent::Text(t),
            Some(pb::part::Content::Raw(b)) => PartContent::Raw(b),
            Some(pb::part::Content::Url(u)) => PartContent::Url(u),
            Some(pb::part::Content::Data(v)) => PartContent::Data(field(v, "data")?),
            None => {
                return Err(Invalid::new(
                    "a part needs exactly one of text, raw, url or data",
                ));
            }
        };
        Ok(Part {
            content,
            metadata: optional(pb.metadata, "metadata")?,
            filename: pb.filename,
            media_type: pb.media_type,
        })
    }
}

impl From<&Message> for pb::Message {
    fn from(m: &Message) -> Self {
        pb::Message {
            message_id: m.message_id.clone(),
            context_id: m.context_id.clone(),
            task_id: m.task_id.clone(),
            role: pb::Role::from(m.role).into(),
            parts: m.parts.iter().map(pb::Part::from).collect(),
            metadata: m.metadata.as_ref().map(struct_to_pb),
            extensions: m.extensions.clone(),
            reference_task_ids: m.reference_task_ids.clone(),
        }
    }
}

impl Decode for Message {
    type Pb = pb::Message;

    fn decode(pb: pb::Message) -> Result<Message, Invalid> {
        Ok(Message {
            message_id: pb.message_id,
            context_id: pb.context_id,
            task_id: pb.task_id,
            role: role(pb.role, "role")?,
            parts: repeated::<Part, _>(pb.parts, "parts")?,
            metadata: optional(pb.metadata, "metadata")?,
            extensions: pb.extensions,
            reference_task_ids: pb.reference_task_ids,
        })
    }
}

impl From<&Artifact> for pb::Artifact {
    fn from(a: &Artifact) -> Self {
        pb::Artifact {
            artifact_id: a.artifact_id.clone(),
            name: a.name.clone(),
            description: a.description.clone(),
            parts: a.parts.iter().map(pb::Part::from).collect(),
            metadata: a.metadata.as_ref().map(struct_to_pb),
            extensions: a.extensions.clone(),
        }
    }
}

impl Decode for Artifact {
    type Pb = pb::Artifact;

    fn decode(pb: pb::Artifact) -> Result<Artifact, Invalid> {
        Ok(Artifact {
            artifact_id: pb.artifact_id,
            name: pb.name,
            description: pb.description,
            parts: repeated::<Part, _>(pb.parts, "parts")?,
            metadata: optional(pb.metadata, "metadata")?,
            extensions: pb.extensions,
        })
    }
}

impl From<&TaskStatus> for pb::TaskStatus {
    fn from(s: &TaskStatus) -> Self {
        pb::TaskStatus {
            state: pb::TaskState::from(s.state).into(),
            message: s.message.as_deref().map(pb::Message::from),
            timestamp: s.timestamp.map(timestamp_to_pb),
        }
    }
}

impl Decode for TaskStatus {
    type Pb = pb::TaskStatus;

    fn decode(pb: pb::TaskStatus) -> Result<TaskStatus, Invalid> {
        Ok(TaskStatus {
            state: task_state(pb.state, "state")?,
            message: optional::<Message>(pb.message, "message")?.map(Arc::new),
            timestamp: optional(pb.timestamp, "timestamp")?,
        })
    }
}

impl From<&Task> for pb::Task {
    fn from(t: &Task) -> Self {
        pb::Task::from(t.view(None, true))
    }
}

/// A task shaped for an answer ([`Task::view`]): what its JSON would hold, copied once.
impl From<TaskView<'_>> for pb::Task {
    fn from(view: TaskView<'_>) -> Self {
        let (t, history, artifacts) = view.shown();
        pb::Task {
            id: t.id.to_string(),
            context_id: t.context_id.to_string(),
            status: Some(pb::TaskStatus::from(&t.status)),
            artifacts: artifacts.iter().map(|a| pb::Artifact::from(&**a)).collect(),
            history: history.iter().map(|m| pb::Message::from(&**m)).collect(),
            metadata: t.metadata.as_ref().map(struct_to_pb),
        }
    }
}

impl From<&TaskView<'_>> for pb::Task {
    fn from(view: &TaskView<'_>) -> Self {
        pb::Task::from(*view)
    }
}

impl Decode for Task {
    type Pb = pb::Task;

    fn decode(pb: pb::Task) -> Result<Task, Invalid> {
        Ok(Task {
            id: pb.id.into(),
            context_id: pb.context_id.into(),
            status: required(pb.status, "status")?,
            artifacts: repeated::<Artifact, _>(pb.artifacts, "artifacts")?,
            history: repeated::<Message, _>(pb.history, "history")?,
            metadata: optional(pb.metadata, "metadata")?,
        })
    }
}

impl From<&TaskStatusUpdateEvent> for pb::TaskStatusUpdateEvent {
    fn from(e: &TaskStatusUpdateEvent) -> Self {
        pb::TaskStatusUpdateEvent {
            task_id: e.task_id.to_string(),
            context_id: e.context_id.to_string(),
            status: Some(pb::TaskStatus::from(&e.status)),
            metadata: e.metadata.as_ref().map(struct_to_pb),
        }
    }
}

impl Decode for TaskStatusUpdateEvent {
    type Pb = pb::TaskStatusUpdateEvent;

    fn decode(pb: pb::TaskStatusUpdateEvent) -> Result<TaskStatusUpdateEvent, Invalid> {
        Ok(TaskStatusUpdateEvent {
            task_id: pb.task_id.into(),
            context_id: pb.context_id.into(),
            status: required(pb.status, "status")?,
            metadata: optional(pb.metadata, "metadata")?,
        })
    }
}

impl From<&TaskArtifactUpdateEvent> for pb::TaskArtifactUpdateEvent {
    fn from(e: &TaskArtifactUpdateEvent) -> Self {
        pb::TaskArtifactUpdateEvent {
            task_id: e.task_id.to_string(),
            context_id: e.context_id.to_string(),
            artifact: Some(pb::Artifact::from(&*e.artifact)),
            append: e.append,
            last_chunk: e.last_chunk,
            metadata: e.metadata.as_ref().map(struct_to_pb),
        }
    }
}

impl Decode for TaskArtifactUpdateEvent {
    type Pb = pb::TaskArtifactUpdateEvent;

    fn decode(pb: pb::TaskArtifactUpdateEvent) -> Result<TaskArtifactUpdateEvent, Invalid> {
        Ok(TaskArtifactUpdateEvent {
            task_id: pb.task_id.into(),
            context_id: pb.context_id.into(),
            artifact: Arc::new(required(pb.artifact, "artifact")?),
            append: pb.append,
            last_chunk: pb.last_chunk,
            metadata: optional(pb.metadata, "metadata")?,
        })
    }
}

impl From<&StreamResponse> for pb::StreamResponse {
    fn from(r: &StreamResponse) -> Self {
        use pb::stream_response::Payload;
        let payload = match r {
            StreamResponse::Task(t) => Payload::Task(pb::Task::from(&**t)),
            StreamResponse::Message(m) => Payload::Message(pb::Message::from(m)),
            StreamResponse::StatusUpdate(e) => {
                Payload::StatusUpdate(pb::TaskStatusUpdateEvent::from(e))
            }
            StreamResponse::ArtifactUpdate(e) => {
                Payload::ArtifactUpdate(pb::TaskArtifactUpdateEvent::from(e))
            }
        };
        pb::StreamResponse {
            payload: Some(payload),
        }
    }
}

impl Decode for StreamResponse {
    type Pb = pb::StreamResponse;

    fn decode(pb: pb::StreamResponse) -> Result<StreamResponse, Invalid> {
        use pb::stream_response::Payload;
        Ok(match pb.payload {
            Some(Payload::Task(t)) => StreamResponse::Task(Arc::new(field(t, "task")?)),
            Some(Payload::Message(m)) => StreamResponse::Message(field(m, "message")?),
            Some(Payload::StatusUpdate(e)) => {
                StreamResponse::StatusUpdate(field(e, "statusUpdate")?)
            }
            Some(Payload::ArtifactUpdate(e)) => {
                StreamResponse::ArtifactUpdate(field(e, "artifactUpdate")?)
            }
            None => {
                return Err(Invalid::new(
                    "a stream response needs exactly one of task, message, statusUpdate or \
                     artifactUpdate",
                ));
            }
        })
    }
}

impl From<&SendMessageResponse> for pb::SendMessageResponse {
    fn from(r: &SendMessageResponse) -> Self {
        use pb::send_message_response::Payload;
        let payload = match r {
            SendMessageResponse::Task(t) => Payload::Task(pb::Task::from(t)),
            SendMessageResponse::Message(m) => Payload::Message(pb::Message::from(m)),
        };
        pb::SendMessageResponse {
            payload: Some(payload),
        }
    }
}

impl Decode for SendMessageResponse {
    type Pb = pb::SendMessageResponse;

    fn decode(pb: pb::SendMessageResponse) -> Result<SendMessageResponse, Invalid> {
        use pb::send_message_response::Payload;
        Ok(match pb.payload {
            Some(Payload::Task(t)) => SendMessageResponse::Task(field(t, "task")?),
            Some(Payload::Message(m)) => SendMessageResponse::Message(field(m, "message")?),
            None => {
                return Err(Invalid::new(
                    "a send message response needs exactly one of task or message",
                ));
            }
        })
    }
}

try_from_pb! {
    pb::Role => Role,
    pb::TaskState => TaskState,
    pb::Part => Part,
    pb::Message => Message,
    pb::Artifact => Artifact,
    pb::TaskStatus => TaskStatus,
    pb::Task => Task,
    pb::TaskStatusUpdateEvent => TaskStatusUpdateEvent,
    pb::TaskArtifactUpdateEvent => TaskArtifactUpdateEvent,
    pb::StreamResponse => StreamResponse,
    pb::SendMessageResponse => SendMessageResponse,
}
