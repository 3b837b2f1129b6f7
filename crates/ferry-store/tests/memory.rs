//! The memory store passes the conformance suite, and keeps its own limits.

use ferry_proto::{StreamResponse, TaskState};
use ferry_store::conformance::{self, task};
use ferry_store::{MemoryLimits, MemoryStore, StoreError, TaskStore};

#[tokio::test]
async fn the_memory_store_passes_the_conformance_suite() {
    conformance::run_all(&MemoryStore::default()).await;
}

#[tokio::test]
async fn a_full_store_refuses_new_tasks_until_something_expires() {
    let store = MemoryStore::new(MemoryLimits {
        max_tasks: 2,
        ..MemoryLimits::default()
    });
    let mut first = task("", "t-1", "ctx", TaskState::InputRequired, 10);
    first.expires_ms = Some(100);
    store.create(first).await.expect("first");
    store
        .create(task("", "t-2", "ctx", TaskState::Working, 10))
        .await
        .expect("second");
    let refused = store
        .create(task("", "t-3", "ctx", TaskState::Submitted, 10))
        .await;
    assert!(
        matches!(refused, Err(StoreError::Full { .. })),
        "{refused:?}"
    );
    assert_eq!(store.expire(100).await, Ok(1));
    store
        .create(task("", "t-3", "ctx", TaskState::Submitted, 10))
        .await
        .expect("room again after expiry");
}

#[tokio::test]
async fn old_events_are_dropped_beyond_the_per_task_limit() {
    let store = MemoryStore::new(MemoryLimits {
        max_events_per_task: 3,
        ..MemoryLimits::default()
    });
    let t = task("", "t-1", "ctx", TaskState::Working, 10);
    store.create(t.clone()).await.expect("create");
    for seq in 0..5 {
        store
            .append(
                &t.key(),
                seq,
                StreamResponse::Task(t.task.clone()),
                t.clone(),
            )
            .await
            .expect("append");
    }
    let kept: Vec<u64> = store
        .events_after(&t.key(), 0, 10)
        .await
        .expect("events")
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(kept, vec![3, 4, 5], "the newest events are kept");
}
