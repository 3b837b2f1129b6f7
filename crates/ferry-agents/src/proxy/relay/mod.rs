//! One turn's relay: the remote agent's `StreamResponse`s (from a stream, a blocking answer
//! or a poll) become events of the local task.
//!
//! - a `Task` snapshot: its artifacts the local task does not hold in full yet (as whole
//!   replacements), then its status;
//! - a status update: the same state, the remote status message's parts carried over in a
//!   local agent message (fresh `messageId`, the remote's kept as
//!   `ferry.proxy/remoteMessageId`; the role is always agent). An INPUT_REQUIRED or
//!   AUTH_REQUIRED without a message gets a short one the proxy writes, marked
//!   `ferry.proxy/synthesized`, so that the remote ids are kept where a follow-up finds them;
//! - an artifact update: the same artifact, `append` and `lastChunk`;
//! - a direct message: the local direct reply (only as the first and only event).
//!
//! Everything relayed carries `ferry.proxy/untrusted: true` and the remote ids in its
//! metadata; the remote's own metadata is kept beside them (extension data keyed by URI
//! stays usable), minus any `ferry.proxy/…` keys the remote wrote itself. Event-level
//! metadata of remote updates and a remote message's `referenceTaskIds` (remote ids) are
//! dropped.

use super::ids::{
    IdMap, LocalIds, REMOTE_CONTEXT_ID, REMOTE_MESSAGE_ID, RemoteIds, SYNTHESIZED, UNTRUSTED, strip,
};
use ferry_agent::{EmitError, EventSink};
use ferry_proto::{
    Artifact, Message, Part, StreamResponse, Struct, Task, TaskArtifactUpdateEvent, TaskState,
    TaskStatus,
};
use std::collections::HashMap;

/// A status as the relay compares them: the state and the remote message's id.
type StatusKey = (TaskState, Option<String>);

/// The state of one turn's relay.
#[derive(Debug)]
pub(super) struct Relay<'a> {
    events: &'a EventSink,
    ids: &'a IdMap,
    local: LocalIds<'a>,
    remote: Option<RemoteIds>,
    /// The last status applied in this turn.
    last_status: Option<StatusKey>,
    /// Artifacts the local task holds, by id: `true` once whole (the last chunk, or a
    /// replacement from a snapshot of an ended task).
    artifacts: HashMap<String, bool>,
    /// Skip the status of the first snapshot: on a follow-up, a remote's send stream may
    /// open with the task as it was before this turn (still INPUT_REQUIRED).
    skip_first_snapshot_status: bool,
    /// No event has arrived yet.
    first: bool,
    /// Something was emitted locally.
    emitted: bool,
    /// The turn reached its end: terminal, interrupted, or a direct reply.
    ended: bool,
}

impl<'a> Relay<'a> {
    /// A relay for the turn of `local`; `remote` is known on a follow-up, whose local task
    /// before this turn is `before`.
    pub(super) fn new(
        events: &'a EventSink,
        ids: &'a IdMap,
        local: LocalIds<'a>,
        remote: Option<RemoteIds>,
        before: Option<&Task>,
    ) -> Self {
        let artifacts = before
            .into_iter()
            .flat_map(|t| t.artifacts.iter())
            .map(|a| (a.artifact_id.clone(), true))
            .collect();
        Self {
            events,
            ids,
            local,
            remote,
            last_status: None,
            artifacts,
            skip_first_snapshot_status: false,
            first: true,
            emitted: false,
            ended: false,
        }
    }

    /// Skips the status of the first snapshot (see the field).
    pub(super) fn skip_first_snapshot_status(&mut self) {
        self.skip_first_snapshot_status = true;
    }

    /// The remote ids, once known.
    pub(super) fn remote(&self) -> Option<&RemoteIds> {
        self.remote.as_ref()
    }

    /// Whether the turn reached its end.
    pub(super) fn ended(&self) -> bool {
        self.ended
    }

    /// Relays one remote event. A local task that is already terminal (canceled meanwhile)
    /// ends the turn quietly.
    pub(super) async fn apply(&mut self, event: StreamResponse) -> Result<(), EmitError> {
        let first = std::mem::replace(&mut self.first, false);
        let outcome = match event {
            StreamResponse::Task(task) => {
                let skip_status = first && std::mem::take(&mut self.skip_first_snapshot_status);
                self.snapshot(&task, skip_status).await
            }
            StreamResponse::StatusUpdate(update) => {
                if !self.learn(&update.task_id, &update.context_id) {
                    return Ok(());
                }
                self.status(&update.status, false).await
            }
            StreamResponse::ArtifactUpdate(update) => {
                if !self.learn(&update.task_id, &update.context_id) {
                    return Ok(());
                }
                self.artifact(update).await
            }
            StreamResponse::Message(message) => self.message(message).await,
        };
        self.skip_first_snapshot_status = false;
        match outcome {
            Err(EmitError::TaskTerminal { .. }) => {
                self.ended = true;
                Ok(())
            }
            other => other,
        }
    }

    /// Notes the remote ids of an event; false when the event is about another remote task
    /// than this turn's (it is then ignored).
    fn learn(&mut self, task_id: &str, context_id: &str) -> bool {
        match &self.remote {
            Some(remote) => remote.task_id == task_id,
            None => {
                let remote = RemoteIds {
                    task_id: task_id.to_owned(),
                    context_id: context_id.to_owned(),
                };
                self.ids.remember(&self.local, &remote);
                self.remote = Some(remote);
                true
            }
        }
    }

    async fn snapshot(&mut self, task: &Task, skip_status: bool) -> Result<(), EmitError> {
        if !self.learn(&task.id, &task.context_id) {
            return Ok(());
        }
        let state = task.status.state;
        let settled = state.is_terminal() || state.is_interrupted();
        for artifact in &task.artifacts {
            if self.artifacts.get(&artifact.artifact_id) == Some(&true) {
                continue;
            }
            let local = self.local_artifact(artifact);
            self.events.artifact(local, false, settled).await?;
            self.emitted = true;
            self.artifacts.insert(artifact.artifact_id.clone(), settled);
        }
        if skip_status && !state.is_terminal() {
            return Ok(());
        }
        self.status(&task.status, true).await
    }

    /// Relays a status; a snapshot's repeats of the last one applied are skipped.
    async fn status(&mut self, status: &TaskStatus, from_snapshot: bool) -> Result<(), EmitError> {
        let state = status.state;
        if matches!(state, TaskState::Unspecified | TaskState::Submitted) {
            return Ok(());
        }
        let key: StatusKey = (
            state,
            status
                .message
                .as_ref()
                .map(|m| m.message_id.clone())
                .filter(|id| !id.is_empty()),
        );
        if from_snapshot && self.last_status.as_ref() == Some(&key) {
            return Ok(());
        }
        let message = match &status.message {
            Some(remote) => Some(self.local_message(remote)),
            None if state.is_interrupted() => Some(self.synthesized(state)),
            None => None,
        };
        self.events.status(state, message).await?;
        self.emitted = true;
        self.last_status = Some(key);
        if state.is_terminal() || state.is_interrupted() {
            self.ended = true;
        }
        Ok(())
    }

    async fn artifact(&mut self, update: TaskArtifactUpdateEvent) -> Result<(), EmitError> {
        let local = self.local_artifact(&update.artifact);
        self.events
            .artifact(local, update.append, update.last_chunk)
            .await?;
        self.emitted = true;
        self.artifacts
            .insert(update.artifact.artifact_id.clone(), update.last_chunk);
        Ok(())
    }

    async fn message(&mut self, remote: Message) -> Result<(), EmitError> {
        if self.emitted || self.remote.is_some() {
            // A2A allows a message only as the whole answer; mid-task it has no place.
            tracing::debug!(
                task = self.local.task_id,
                "the remote agent sent a message inside a task; dropped"
            );
            return Ok(());
        }
        self.ids.remember_context(&self.local, &remote.context_id);
        let mut local = self.events.agent_message(remote.parts.clone());
        local.extensions = remote.extensions.clone();
        let mut metadata = self.marked(remote.metadata.clone());
        if !remote.context_id.is_empty() {
            metadata.insert(REMOTE_CONTEXT_ID.into(), remote.context_id.clone().into());
        }
        if !remote.message_id.is_empty() {
            metadata.insert(REMOTE_MESSAGE_ID.into(), remote.message_id.clone().into());
        }
        local.metadata = Some(metadata);
        self.events.message(local).await?;
        self.emitted = true;
        self.ended = true;
        Ok(())
    }

    /// The remote's metadata, stripped of the proxy's keys, marked untrusted, with the
    /// remote ids.
    fn marked(&self, remote: Option<Struct>) -> Struct {
        let mut metadata = strip(remote).unwrap_or_default();
        metadata.insert(UNTRUSTED.into(), true.into());
        if let Some(ids) = &self.remote {
            ids.write(&mut metadata);
        }
        metadata
    }

    /// A local agent message carrying a remote one's parts.
    fn local_message(&self, remote: &Message) -> Message {
        let mut local = self.events.agent_message(remote.parts.clone());
        local.extensions = remote.extensions.clone();
        let mut metadata = self.marked(remote.metadata.clone());
        if !remote.message_id.is_empty() {
            metadata.insert(REMOTE_MESSAGE_ID.into(), remote.message_id.clone().into());
        }
        local.metadata = Some(metadata);
        local
    }

    /// The message of an interrupted state the remote gave none for.
    fn synthesized(&self, state: TaskState) -> Message {
        let text = match state {
            TaskState::AuthRequired => "the remote agent needs authorization",
            _ => "the remote agent needs more input",
        };
        let mut local = self.events.agent_message(vec![Part::text(text)]);
        let mut metadata = self.marked(None);
        metadata.insert(SYNTHESIZED.into(), true.into());
        local.metadata = Some(metadata);
        local
    }

    /// A local copy of a remote artifact (same id, name, parts), marked.
    fn local_artifact(&self, remote: &Artifact) -> Artifact {
        let mut local = remote.clone();
        local.metadata = Some(self.marked(remote.metadata.clone()));
        local
    }
}

#[cfg(test)]
mod tests;
