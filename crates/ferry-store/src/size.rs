//! What a task costs in memory, approximately: the byte budget of the memory store and the
//! per-task bounds of the server count with these.
//!
//! The estimate counts content (texts, bytes, URLs, JSON values, names) plus a fixed overhead
//! per part, message and value; it walks the data without serializing it.

use ferry_proto::{Artifact, Message, Part, PartContent, StreamResponse, Task};
use serde_json::Value;
use std::sync::Arc;

/// Overhead of one part (its struct and allocations), in bytes.
const PART_OVERHEAD: usize = 96;
/// Overhead of one message or artifact.
const ITEM_OVERHEAD: usize = 160;
/// Overhead of one JSON value.
const VALUE_OVERHEAD: usize = 32;

/// Approximate bytes held by `task`.
pub fn task_bytes(task: &Task) -> usize {
    shell_bytes(task)
        + task.history.iter().map(|m| message_bytes(m)).sum::<usize>()
        + task
            .artifacts
            .iter()
            .map(|a| artifact_bytes(a))
            .sum::<usize>()
}

/// [`task_bytes`] of `next`, given that of `previous`, the snapshot it was made from.
///
/// Successive snapshots share their messages and artifacts (`Arc`s): only the ones that are
/// not the same as at their place in `previous` are measured, so storing an event costs what
/// the event changed, not the whole task again.
pub fn task_bytes_after(previous: &Task, previous_bytes: usize, next: &Task) -> usize {
    let bytes = previous_bytes.saturating_sub(shell_bytes(previous)) + shell_bytes(next);
    let bytes = changed_bytes(bytes, &previous.history, &next.history, |m| {
        message_bytes(m)
    });
    changed_bytes(bytes, &previous.artifacts, &next.artifacts, |a| {
        artifact_bytes(a)
    })
}

/// A task without its history and artifacts.
fn shell_bytes(task: &Task) -> usize {
    ITEM_OVERHEAD
        + task.id.len()
        + task.context_id.len()
        + task.status.message.as_ref().map_or(0, |m| message_bytes(m))
        + task.metadata.as_ref().map_or(0, map_bytes)
}

/// `bytes` with the items of `previous` that `next` does not hold at the same place taken
/// out, and the ones `next` holds instead put in.
fn changed_bytes<T>(
    mut bytes: usize,
    previous: &[Arc<T>],
    next: &[Arc<T>],
    size: impl Fn(&T) -> usize,
) -> usize {
    for i in 0..previous.len().max(next.len()) {
        match (previous.get(i), next.get(i)) {
            (Some(p), Some(n)) if Arc::ptr_eq(p, n) => {}
            (p, n) => {
                bytes = bytes.saturating_sub(p.map_or(0, |p| size(p))) + n.map_or(0, |n| size(n));
            }
        }
    }
    bytes
}

/// Approximate bytes held by `event`.
pub fn event_bytes(event: &StreamResponse) -> usize {
    match event {
        StreamResponse::Task(task) => task_bytes(task),
        StreamResponse::Message(m) => message_bytes(m),
        StreamResponse::StatusUpdate(u) => {
            ITEM_OVERHEAD + u.status.message.as_ref().map_or(0, |m| message_bytes(m))
        }
        StreamResponse::ArtifactUpdate(u) => ITEM_OVERHEAD + artifact_bytes(&u.artifact),
    }
}

/// Approximate bytes of `message`.
pub fn message_bytes(message: &Message) -> usize {
    ITEM_OVERHEAD
        + message.message_id.len()
        + message.parts.iter().map(part_bytes).sum::<usize>()
        + message.metadata.as_ref().map_or(0, map_bytes)
}

/// Approximate bytes of `artifact`.
pub fn artifact_bytes(artifact: &Artifact) -> usize {
    ITEM_OVERHEAD
        + artifact.artifact_id.len()
        + artifact.name.len()
        + artifact.description.len()
        + parts_bytes(&artifact.parts)
        + artifact.metadata.as_ref().map_or(0, map_bytes)
}

/// Approximate bytes of `parts`.
pub fn parts_bytes(parts: &[Part]) -> usize {
    parts.iter().map(part_bytes).sum()
}

fn part_bytes(part: &Part) -> usize {
    let content = match &part.content {
        PartContent::Text(s) | PartContent::Url(s) => s.len(),
        PartContent::Raw(b) => b.len(),
        PartContent::Data(v) => value_bytes(v),
    };
    PART_OVERHEAD
        + content
        + part.filename.len()
        + part.media_type.len()
        + part.metadata.as_ref().map_or(0, map_bytes)
}

fn map_bytes(map: &serde_json::Map<String, Value>) -> usize {
    map.iter()
        .map(|(k, v)| k.len() + value_bytes(v))
        .sum::<usize>()
        + VALUE_OVERHEAD
}

fn value_bytes(value: &Value) -> usize {
    VALUE_OVERHEAD
        + match value {
            Value::String(s) => s.len(),
            Value::Array(items) => items.iter().map(value_bytes).sum(),
            Value::Object(map) => map_bytes(map),
            Value::Null | Value::Bool(_) | Value::Number(_) => 0,
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_dominates_large_tasks() {
        let big = "x".repeat(1 << 20);
        let mut task = Task::new(
            "t",
            "c",
            ferry_proto::TaskStatus::now(ferry_proto::TaskState::Working, None),
        );
        task.history
            .push(Message::user("m", vec![Part::text(big.clone())]).into());
        let bytes = task_bytes(&task);
        assert!(bytes >= big.len(), "counts the text: {bytes}");
        assert!(bytes < big.len() + 1024, "and little else: {bytes}");
    }

    #[test]
    fn measuring_what_changed_agrees_with_measuring_everything() {
        let text = |n: usize| Part::text("t".repeat(n));
        let artifact = |id: &str, n: usize| Arc::new(Artifact::new(id, "a", vec![text(n)]));
        let mut task = Task::new(
            "task",
            "ctx",
            ferry_proto::TaskStatus::now(ferry_proto::TaskState::Submitted, None),
        );
        task.history
            .push(Message::user("m1", vec![text(100)]).into());
        let mut bytes = task_bytes(&task);
        let mut step = |change: &dyn Fn(&mut Task)| {
            let mut next = task.clone();
            change(&mut next);
            bytes = task_bytes_after(&task, bytes, &next);
            assert_eq!(bytes, task_bytes(&next));
            task = next;
        };
        step(&|t| {
            t.status = ferry_proto::TaskStatus::now(
                ferry_proto::TaskState::Working,
                Some(Message::agent("m2", vec![text(7)]).into()),
            )
        });
        step(&|t| t.history.push(Message::agent("m2", vec![text(7)]).into()));
        step(&|t| t.artifacts.push(artifact("a1", 50)));
        step(&|t| t.artifacts.push(artifact("a2", 3000)));
        step(&|t| Arc::make_mut(&mut t.artifacts[0]).parts.push(text(20)));
        step(&|t| t.artifacts[1] = artifact("a2", 1));
        step(&|t| {
            t.artifacts.remove(0);
        });
        step(&|t| t.status = ferry_proto::TaskStatus::now(ferry_proto::TaskState::Completed, None));
    }
}
