//! Running one turn of an agent and applying what it reports to its task.
//!
//! [`TurnTarget`] is the server side of an `EventSink`: it enforces the state machine (terminal
//! tasks take no events, a direct message only as the first and only event of a new request),
//! publishes a new task to the store on its first event, appends every event to the task's log
//! and wakes whoever waits.

use crate::core::record::{LiveItem, TaskRecord};
use crate::core::store::TaskStore;
use ferry_agent::{
    AgentError, AgentEvent, AgentExecutor, EmitError, EventSink, EventTarget, RequestContext,
};
use ferry_proto::{
    A2aError, ErrorKind, Message, Part, Role, StreamResponse, TaskArtifactUpdateEvent, TaskState,
    TaskStatus, TaskStatusUpdateEvent,
};
use futures_util::FutureExt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// Applies one task's events; one per turn (and one per cancel request).
pub(crate) struct TurnTarget {
    pub(crate) record: Arc<TaskRecord>,
    pub(crate) store: Arc<dyn TaskStore>,
}

impl TurnTarget {
    /// A sink for the task that reports through a new target.
    pub(crate) fn sink(record: &Arc<TaskRecord>, store: &Arc<dyn TaskStore>) -> EventSink {
        let target = Arc::new(TurnTarget {
            record: record.clone(),
            store: store.clone(),
        });
        EventSink::new(&record.id, &record.context_id, target)
    }

    /// Records a direct reply to a new request: the only event such a request gets.
    fn reply(&self, mut message: Message) {
        let record = &self.record;
        message.context_id.clone_from(&record.context_id);
        message.task_id.clear();
        if message.role == Role::Unspecified {
            message.role = Role::Agent;
        }
        let mut data = record.data.lock();
        data.reply = Some(message.clone());
        TaskRecord::broadcast_locked(&mut data, LiveItem::Reply(Arc::new(message)));
        drop(data);
        record.changed.notify_waiters();
    }

    fn fill_ids(&self, message: &mut Message) {
        message.context_id.clone_from(&self.record.context_id);
        message.task_id.clone_from(&self.record.id);
        if message.role == Role::Unspecified {
            message.role = Role::Agent;
        }
    }
}

impl EventTarget for TurnTarget {
    fn emit(&self, event: AgentEvent) -> Result<(), EmitError> {
        let record = &self.record;
        let mut data = record.data.lock();
        let state = data.task.status.state;
        if state.is_terminal() {
            return Err(EmitError::TaskTerminal {
                task_id: record.id.clone(),
                state: state.as_str(),
            });
        }
        if data.reply.is_some() {
            return Err(EmitError::MessageAfterTask);
        }
        // Validate before publishing anything.
        match &event {
            AgentEvent::Message(m) if m.parts.is_empty() => {
                return Err(EmitError::Invalid(
                    "a message needs at least one part".into(),
                ));
            }
            AgentEvent::Status {
                state: TaskState::Unspecified,
                ..
            } => {
                return Err(EmitError::Invalid(
                    "TASK_STATE_UNSPECIFIED is not a state to report".into(),
                ));
            }
            AgentEvent::Artifact { artifact, .. } if artifact.artifact_id.is_empty() => {
                return Err(EmitError::Invalid("an artifact needs an artifactId".into()));
            }
            AgentEvent::Artifact { artifact, .. } if artifact.parts.is_empty() => {
                return Err(EmitError::Invalid(
                    "an artifact needs at least one part".into(),
                ));
            }
            _ => {}
        }
        let change = match event {
            AgentEvent::Message(message) => {
                if data.published {
                    return Err(EmitError::MessageAfterTask);
                }
                drop(data);
                self.reply(message);
                return Ok(());
            }
            AgentEvent::Status { state, message } => Change::Status(state, message),
            AgentEvent::Artifact {
                artifact,
                append,
                last_chunk,
            } => Change::Artifact(artifact, append, last_chunk),
        };
        if !data.published {
            if let Err(e) = self.store.insert(record.clone()) {
                data.early_error = Some(
                    A2aError::new(ErrorKind::Unavailable, e.to_string())
                        .with_reason("TASK_STORE_FULL")
                        .with_meta("retryAfterSeconds", "1"),
                );
                drop(data);
                record.changed.notify_waiters();
                return Err(EmitError::Closed);
            }
            data.published = true;
            let snapshot = StreamResponse::Task(data.task.clone());
            record.append_locked(&mut data, snapshot);
        }
        let logged = match change {
            Change::Status(state, message) => {
                let message = message.map(|mut m| {
                    self.fill_ids(&mut m);
                    m
                });
                if let Some(m) = &message {
                    data.task.history.push(m.clone());
                }
                data.task.status = TaskStatus::now(state, message);
                StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                    task_id: record.id.clone(),
                    context_id: record.context_id.clone(),
                    status: data.task.status.clone(),
                    metadata: None,
                })
            }
            Change::Artifact(artifact, append, last_chunk) => {
                let artifacts = &mut data.task.artifacts;
                match artifacts
                    .iter_mut()
                    .find(|a| a.artifact_id == artifact.artifact_id)
                {
                    Some(existing) if append => {
                        existing.parts.extend(artifact.parts.iter().cloned())
                    }
                    Some(existing) => *existing = artifact.clone(),
                    None => artifacts.push(artifact.clone()),
                }
                StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                    task_id: record.id.clone(),
                    context_id: record.context_id.clone(),
                    artifact,
                    append,
                    last_chunk,
                    metadata: None,
                })
            }
        };
        record.append_locked(&mut data, logged);
        let terminal = data.task.status.state.is_terminal();
        drop(data);
        if terminal {
            self.store.mark_terminal(record);
        }
        record.changed.notify_waiters();
        Ok(())
    }
}

/// An event that changes the task (everything but a direct reply).
enum Change {
    Status(TaskState, Option<Message>),
    Artifact(ferry_proto::Artifact, bool, bool),
}

/// Runs `execute` for one turn and settles the task when it returns, errs or panics.
pub(crate) async fn run_turn(
    executor: Arc<dyn AgentExecutor>,
    ctx: RequestContext,
    record: Arc<TaskRecord>,
    store: Arc<dyn TaskStore>,
    turn: u64,
) {
    let sink = TurnTarget::sink(&record, &store);
    let outcome = AssertUnwindSafe(executor.execute(ctx, sink.clone()))
        .catch_unwind()
        .await;
    let failure = match outcome {
        Ok(Ok(())) => None,
        Ok(Err(AgentError::Protocol(e))) => {
            let published = record.data.lock().published;
            if published {
                Some(vec![Part::text(e.message)])
            } else {
                record.data.lock().early_error = Some(e);
                None
            }
        }
        Ok(Err(AgentError::Failed(text))) => Some(vec![Part::text(text)]),
        Ok(Err(AgentError::Infra { code, message })) => {
            tracing::warn!(task = %record.id, code, "turn failed by its environment");
            Some(error_parts("infra_error", code, &message))
        }
        Ok(Err(AgentError::Emit(e))) => {
            tracing::warn!(task = %record.id, error = %e, "agent event refused");
            Some(unhandled())
        }
        Err(_panic) => {
            tracing::error!(task = %record.id, "agent panicked");
            Some(unhandled())
        }
    };
    if let Some(parts) = failure {
        let message = sink.agent_message(parts);
        // A terminal task simply keeps its state.
        let _ = sink.fail(message);
    }
    finish_turn(&record, turn);
}

/// The parts of a failure that is not the agent's own answer: a line for people and a data
/// part `{"error":{"kind","code","message"}}` for programs (benchmarks tell an environment's
/// failure from an agent's by `kind`).
fn error_parts(kind: &str, code: &str, message: &str) -> Vec<Part> {
    vec![
        Part::text(format!("{kind} {code}: {message}")),
        Part::data(serde_json::json!({"error": {"kind": kind, "code": code, "message": message}}))
            .with_media_type("application/json"),
    ]
}

/// An executor's panic or misbehaviour, reported without its internals.
fn unhandled() -> Vec<Part> {
    error_parts(
        "framework_error",
        "framework.unhandled_exception",
        "the agent failed unexpectedly; the server log has details",
    )
}

/// Marks `turn` finished, explains a turn that produced nothing, and wakes everyone.
pub(crate) fn finish_turn(record: &TaskRecord, turn: u64) {
    let mut data = record.data.lock();
    if !data.published && data.reply.is_none() && data.early_error.is_none() {
        data.early_error = Some(A2aError::new(
            ErrorKind::InvalidAgentResponse,
            "the agent ended its turn without a reply or a task",
        ));
    }
    if data.turns_finished < turn {
        data.turns_finished = turn;
        TaskRecord::broadcast_locked(&mut data, LiveItem::TurnEnded(turn));
    }
    drop(data);
    record.changed.notify_waiters();
}
