//! The relay against a recording sink: what each remote event becomes locally.

use super::*;
use ferry_agent::{AgentEvent, EmitFuture, EventTarget};
use ferry_proto::{TaskStatusUpdateEvent, Timestamp};
use serde_json::json;
use std::sync::{Arc, Mutex};

#[derive(Default)]
struct Recorded(Mutex<Vec<AgentEvent>>);

impl EventTarget for Recorded {
    fn emit(&self, event: AgentEvent) -> EmitFuture<'_> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(event);
        Box::pin(async { Ok::<(), EmitError>(()) })
    }
}

impl Recorded {
    fn take(&self) -> Vec<AgentEvent> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

const LOCAL: LocalIds<'static> = LocalIds {
    tenant: "",
    caller: None,
    task_id: "local-task",
    context_id: "local-ctx",
};

fn sink() -> (Arc<Recorded>, EventSink) {
    let recorded = Arc::new(Recorded::default());
    let sink = EventSink::new(LOCAL.task_id, LOCAL.context_id, recorded.clone());
    (recorded, sink)
}

fn status(state: TaskState, message: Option<Message>) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: "remote-task".into(),
        context_id: "remote-ctx".into(),
        status: TaskStatus {
            state,
            message: message.map(Arc::new),
            timestamp: Some(Timestamp::now()),
        },
        metadata: None,
    })
}

fn snapshot(state: TaskState, artifacts: Vec<Artifact>) -> StreamResponse {
    let mut task = Task::new("remote-task", "remote-ctx", TaskStatus::now(state, None));
    task.artifacts = artifacts.into_iter().map(Arc::new).collect();
    StreamResponse::Task(Arc::new(task))
}

fn chunk(text: &str, append: bool, last_chunk: bool) -> StreamResponse {
    StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: "remote-task".into(),
        context_id: "remote-ctx".into(),
        artifact: Arc::new(Artifact::new("a", "a", vec![Part::text(text)])),
        append,
        last_chunk,
        metadata: None,
    })
}

fn remote_message(id: &str, text: &str, metadata: serde_json::Value) -> Message {
    let mut m = Message::agent(id, vec![Part::text(text)]);
    m.context_id = "remote-ctx".into();
    m.task_id = "remote-task".into();
    m.metadata = metadata.as_object().cloned();
    m
}

fn meta(event: &AgentEvent) -> Struct {
    match event {
        AgentEvent::Status {
            message: Some(m), ..
        }
        | AgentEvent::Message(m) => m.metadata.clone().unwrap_or_default(),
        AgentEvent::Artifact { artifact, .. } => artifact.metadata.clone().unwrap_or_default(),
        other => panic!("no metadata on {other:?}"),
    }
}

#[tokio::test]
async fn a_status_message_is_carried_over_marked_and_with_the_remote_ids() {
    let (recorded, sink) = sink();
    let ids = IdMap::default();
    let mut relay = Relay::new(&sink, &ids, LOCAL, None, None);
    relay
        .apply(snapshot(TaskState::Submitted, Vec::new()))
        .await
        .expect("snapshot");
    assert!(
        recorded.take().is_empty(),
        "SUBMITTED is the local task's own"
    );
    let forged = json!({"ferry.proxy/remoteTaskId": "someone-elses", "ext/x": 1});
    relay
        .apply(status(
            TaskState::Working,
            Some(remote_message("rm-1", "on it", forged)),
        ))
        .await
        .expect("working");
    assert!(!relay.ended());
    let events = recorded.take();
    let [
        AgentEvent::Status {
            state,
            message: Some(m),
        },
    ] = events.as_slice()
    else {
        panic!("{events:?}");
    };
    assert_eq!(*state, TaskState::Working);
    assert_eq!(m.text(), "on it");
    assert_eq!(m.role, ferry_proto::Role::Agent);
    assert_ne!(m.message_id, "rm-1", "a fresh local id");
    let metadata = meta(&events[0]);
    assert_eq!(metadata[REMOTE_MESSAGE_ID], "rm-1");
    assert_eq!(metadata[super::super::ids::REMOTE_TASK_ID], "remote-task");
    assert_eq!(metadata[REMOTE_CONTEXT_ID], "remote-ctx");
    assert_eq!(metadata[UNTRUSTED], true);
    assert_eq!(metadata["ext/x"], 1, "the remote's own metadata stays");
    assert_eq!(
        ids.task("", "local-task").map(|r| r.task_id).as_deref(),
        Some("remote-task")
    );
    assert_eq!(
        ids.context("", None, "local-ctx").as_deref(),
        Some("remote-ctx")
    );
}

#[tokio::test]
async fn an_interrupted_state_without_a_message_gets_one_that_keeps_the_ids() {
    let (recorded, sink) = sink();
    let ids = IdMap::default();
    let mut relay = Relay::new(&sink, &ids, LOCAL, None, None);
    relay
        .apply(status(TaskState::InputRequired, None))
        .await
        .expect("input required");
    assert!(relay.ended());
    let events = recorded.take();
    let metadata = meta(&events[0]);
    assert_eq!(metadata[SYNTHESIZED], true);
    let mut task = Task::new(
        "local-task",
        "local-ctx",
        TaskStatus::now(TaskState::InputRequired, None),
    );
    if let AgentEvent::Status { message, .. } = &events[0] {
        task.status.message = message.clone().map(Arc::new);
    }
    assert_eq!(
        RemoteIds::recover(&task).map(|r| r.task_id).as_deref(),
        Some("remote-task")
    );
}

#[tokio::test]
async fn a_follow_ups_opening_snapshot_does_not_end_the_turn() {
    let (recorded, sink) = sink();
    let ids = IdMap::default();
    let remote = RemoteIds {
        task_id: "remote-task".into(),
        context_id: "remote-ctx".into(),
    };
    let mut before = Task::new(
        "local-task",
        "local-ctx",
        TaskStatus::now(TaskState::InputRequired, None),
    );
    before.artifacts.push(Arc::new(Artifact::new(
        "turn-1",
        "turn-1",
        vec![Part::text("one")],
    )));
    let mut relay = Relay::new(&sink, &ids, LOCAL, Some(remote), Some(&before));
    relay.skip_first_snapshot_status();
    let earlier = Artifact::new("turn-1", "turn-1", vec![Part::text("one")]);
    relay
        .apply(snapshot(TaskState::InputRequired, vec![earlier]))
        .await
        .expect("stale snapshot");
    assert!(!relay.ended(), "the state before this turn");
    assert!(
        recorded.take().is_empty(),
        "nothing new: the artifact is held already"
    );
    relay
        .apply(status(TaskState::Working, None))
        .await
        .expect("working");
    relay
        .apply(status(
            TaskState::Completed,
            Some(remote_message("done", "done", json!({}))),
        ))
        .await
        .expect("completed");
    assert!(relay.ended());
    let states: Vec<TaskState> = recorded
        .take()
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Status { state, .. } => Some(*state),
            _ => None,
        })
        .collect();
    assert_eq!(states, [TaskState::Working, TaskState::Completed]);
}

#[tokio::test]
async fn a_snapshot_after_a_lost_stream_completes_a_half_sent_artifact_once() {
    let (recorded, sink) = sink();
    let ids = IdMap::default();
    let mut relay = Relay::new(&sink, &ids, LOCAL, None, None);
    relay
        .apply(chunk("hel", false, false))
        .await
        .expect("chunk");
    let whole = Artifact::new("a", "a", vec![Part::text("hel"), Part::text("lo")]);
    relay
        .apply(snapshot(TaskState::Completed, vec![whole.clone()]))
        .await
        .expect("snapshot");
    relay
        .apply(snapshot(TaskState::Completed, vec![whole]))
        .await
        .expect("the same snapshot again");
    let events = recorded.take();
    let shapes: Vec<String> = events
        .iter()
        .map(|e| match e {
            AgentEvent::Artifact {
                artifact,
                append,
                last_chunk,
            } => format!(
                "artifact {} parts append={append} last={last_chunk}",
                artifact.parts.len()
            ),
            AgentEvent::Status { state, .. } => format!("status {state}"),
            AgentEvent::Message(_) => "message".into(),
        })
        .collect();
    assert_eq!(
        shapes,
        [
            "artifact 1 parts append=false last=false",
            "artifact 2 parts append=false last=true",
            "status TASK_STATE_COMPLETED",
        ]
    );
    assert_eq!(meta(&events[1])[UNTRUSTED], true);
}

#[tokio::test]
async fn a_direct_message_is_the_reply_and_only_as_the_first_event() {
    let (recorded, sink) = sink();
    let ids = IdMap::default();
    let mut relay = Relay::new(&sink, &ids, LOCAL, None, None);
    relay
        .apply(StreamResponse::Message(remote_message(
            "rm",
            "hi",
            json!({}),
        )))
        .await
        .expect("message");
    assert!(relay.ended());
    let events = recorded.take();
    assert!(matches!(&events[..], [AgentEvent::Message(m)] if m.text() == "hi"));
    assert_eq!(meta(&events[0])[REMOTE_CONTEXT_ID], "remote-ctx");
    assert_eq!(
        ids.context("", None, "local-ctx").as_deref(),
        Some("remote-ctx")
    );

    let mut relay = Relay::new(&sink, &ids, LOCAL, None, None);
    relay.apply(chunk("x", false, true)).await.expect("chunk");
    relay
        .apply(StreamResponse::Message(remote_message(
            "rm",
            "late",
            json!({}),
        )))
        .await
        .expect("a message inside a task is dropped");
    assert_eq!(recorded.take().len(), 1);
}

#[tokio::test]
async fn events_of_another_remote_task_are_ignored() {
    let (recorded, sink) = sink();
    let ids = IdMap::default();
    let mut relay = Relay::new(&sink, &ids, LOCAL, None, None);
    relay.apply(chunk("x", false, true)).await.expect("chunk");
    let mut other = status(TaskState::Failed, None);
    if let StreamResponse::StatusUpdate(u) = &mut other {
        u.task_id = "another".into();
    }
    relay.apply(other).await.expect("ignored");
    assert!(!relay.ended());
    assert_eq!(recorded.take().len(), 1);
}
