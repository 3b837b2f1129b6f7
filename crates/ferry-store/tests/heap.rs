//! The memory store's byte budget against the heap it really holds.
//!
//! This binary's global allocator counts the bytes live on the heap. Tasks of 1 MB messages
//! flood a store with a small budget, each through the events an echo turn writes (the task,
//! working, its artifact in two chunks, completed), for each shape of part (text, a JSON
//! value, raw bytes), ended and left open. What the store then holds stays within 1.5 times
//! its budget: the budget counts what a task really holds. One test, so that nothing else
//! allocates while it measures.

use ferry_proto::{
    Artifact, Message, Part, PartContent, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState,
    TaskStatus, TaskStatusUpdateEvent,
};
use ferry_store::{Event, MemoryLimits, MemoryStore, StoreError, StoredTask, TaskStore};
use serde_json::{Map, Value};
use std::alloc::System;
use std::sync::Arc;

/// The system allocator, counting the bytes it has handed out and not taken back.
#[global_allocator]
static ALLOCATOR: cap::Cap<System> = cap::Cap::new(System, usize::MAX);

/// The bytes live on the heap now.
fn live() -> usize {
    ALLOCATOR.allocated()
}

/// The budget of each flood.
const BUDGET: usize = 24 << 20;
/// The size of each message.
const MESSAGE: usize = 1 << 20;
/// Tasks per flood: several budgets' worth.
const TASKS: usize = 40;

/// The shapes of part a message may have.
#[derive(Debug, Clone, Copy)]
enum Shape {
    Text,
    Data,
    Raw,
}

/// A part of about `MESSAGE` bytes in `shape`.
fn part(shape: Shape, n: usize) -> Part {
    match shape {
        Shape::Text => Part::text("t".repeat(n)),
        Shape::Raw => Part::new(PartContent::Raw(vec![7u8; n])),
        Shape::Data => {
            // Many small members, as a large JSON document has.
            let mut map = Map::new();
            for i in 0..n / 48 {
                map.insert(
                    format!("field-{i:08}"),
                    Value::String(format!("value {i:024}")),
                );
            }
            Part::data(Value::Object(map))
        }
    }
}

/// A status update of task `id`.
fn status(id: &str, status: TaskStatus) -> StreamResponse {
    StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: id.into(),
        context_id: "ctx".into(),
        status,
        metadata: None,
    })
}

/// The events an echo turn writes for one message, applied to the store one by one.
async fn echo_turn(
    store: &MemoryStore,
    id: &str,
    shape: Shape,
    end: bool,
) -> Result<(), StoreError> {
    let message: Arc<Message> = Message::user(format!("m-{id}"), vec![part(shape, MESSAGE)]).into();
    let mut task = Task::new(id, "ctx", TaskStatus::now(TaskState::Submitted, None));
    task.history.push(message);
    let mut snapshot = StoredTask {
        tenant: String::new(),
        owner: None,
        task: Arc::new(task),
        seq: 0,
        status_ms: 1,
        expires_ms: None,
        lease: None,
    };
    store.create(snapshot.clone()).await?;
    let write = async |event: StreamResponse, next: StoredTask| {
        let seq = next.seq;
        store
            .append(
                &next.key(),
                seq,
                Arc::new(Event::new(Arc::new(event))),
                next,
            )
            .await
    };
    let first = StreamResponse::Task(snapshot.task.clone());
    snapshot.seq = write(first, snapshot.clone()).await?;
    let working = TaskStatus::now(TaskState::Working, None);
    Arc::make_mut(&mut snapshot.task).status = working.clone();
    snapshot.seq = write(status(id, working), snapshot.clone()).await?;
    // The artifact: the echo of the message, in two chunks for text and bytes.
    let halves = match shape {
        Shape::Data => vec![part(shape, MESSAGE)],
        _ => vec![part(shape, MESSAGE / 2), part(shape, MESSAGE / 2)],
    };
    for (i, half) in halves.into_iter().enumerate() {
        let chunk = Arc::new(Artifact::new("echo", "echo", vec![half.clone()]));
        let task = Arc::make_mut(&mut snapshot.task);
        match task.artifacts.first_mut() {
            Some(artifact) => Arc::make_mut(artifact).parts.push(half),
            None => task.artifacts.push(chunk.clone()),
        }
        let update = TaskArtifactUpdateEvent {
            task_id: id.into(),
            context_id: "ctx".into(),
            artifact: chunk,
            append: i > 0,
            last_chunk: i > 0,
            metadata: None,
        };
        snapshot.seq = write(StreamResponse::ArtifactUpdate(update), snapshot.clone()).await?;
    }
    if end {
        let completed = TaskStatus::now(TaskState::Completed, None);
        Arc::make_mut(&mut snapshot.task).status = completed.clone();
        write(status(id, completed), snapshot.clone()).await?;
    }
    Ok(())
}

/// Floods a fresh store with `TASKS` turns of `shape`; the live heap it holds after, and how
/// many turns it took.
async fn flood(shape: Shape, end: bool) -> (usize, usize) {
    let before = live();
    let store = MemoryStore::new(MemoryLimits {
        max_bytes: BUDGET,
        ..MemoryLimits::default()
    });
    let mut taken = 0;
    for i in 0..TASKS {
        match echo_turn(&store, &format!("t-{i}"), shape, end).await {
            Ok(()) => taken += 1,
            // A store full of open tasks refuses more: what it holds is what counts.
            Err(StoreError::Full { .. }) if !end => {}
            Err(e) => panic!("{shape:?}: turn {i}: {e}"),
        }
    }
    let held = live().saturating_sub(before);
    drop(store);
    (held, taken)
}

#[tokio::test(flavor = "current_thread")]
async fn what_the_store_holds_stays_within_one_and_a_half_budgets() {
    let mut report = Vec::new();
    let mut over = Vec::new();
    for shape in [Shape::Text, Shape::Data, Shape::Raw] {
        for end in [true, false] {
            let (held, taken) = flood(shape, end).await;
            let ratio = held as f64 / BUDGET as f64;
            let line = format!(
                "{shape:?}, {}: {taken} turns taken, {} MiB held, {ratio:.2} budgets",
                if end { "ended" } else { "open" },
                held >> 20
            );
            if ratio > 1.5 {
                over.push(line.clone());
            }
            report.push(line);
        }
    }
    println!("{}", report.join("\n"));
    assert!(over.is_empty(), "over 1.5 budgets:\n{}", over.join("\n"));
}
