//! The memory store passes the conformance suite, and keeps its own limits.

use ferry_proto::{Message, Part, TaskState};
use ferry_store::conformance::{self, event, task, with_state};
use ferry_store::{MemoryLimits, MemoryStore, StoreError, StoredTask, TaskStore};
use std::sync::Arc;

#[tokio::test]
async fn the_memory_store_passes_the_conformance_suite() {
    conformance::run_all(&MemoryStore::default()).await;
}

#[tokio::test]
async fn memory_push_configs_pass_the_push_checks() {
    conformance::run_push_checks(&MemoryStore::default()).await;
    conformance::run_outbox_checks(&MemoryStore::default()).await;
}

#[tokio::test]
async fn memory_profiles_pass_the_profile_checks() {
    conformance::run_profile_checks(&ferry_store::profiles::MemoryProfiles::new()).await;
}

/// A finished task whose push deliveries are pending is not evicted (its events were
/// acknowledged; they must reach the webhook): the store is full until they are delivered.
#[tokio::test]
async fn a_task_with_pending_deliveries_is_not_evicted_until_they_are_delivered() {
    use ferry_store::push::{DeliveryOutcome, FinishedDelivery, PushConfigStore, PushStore};
    let store = MemoryStore::new(MemoryLimits {
        max_tasks: 1,
        ..MemoryLimits::default()
    });
    let t = task("", "t-1", "ctx", TaskState::Working, 10);
    store.create(t.clone()).await.expect("create");
    store
        .put_push_config(&t.key(), conformance::push_config("a", "https://x", 1), 8)
        .await
        .expect("config");
    let done = with_state(&t, TaskState::Completed);
    store
        .append(&t.key(), 0, event(&done), done)
        .await
        .expect("complete");
    let next = || task("", "t-2", "ctx", TaskState::Submitted, 20);
    let refused = store.create(next()).await;
    assert!(
        matches!(refused, Err(StoreError::Full { .. })),
        "the undelivered task stays: {refused:?}"
    );
    let claimed = store
        .claim_deliveries(100, "L", 10_000, 10)
        .await
        .expect("claim");
    assert_eq!(claimed.len(), 1);
    let delivered = claimed
        .into_iter()
        .map(|c| FinishedDelivery {
            key: c.key,
            id: c.delivery.id,
            lease: "L".to_owned(),
            outcome: DeliveryOutcome::Delivered,
        })
        .collect();
    store
        .finish_deliveries(delivered, 200)
        .await
        .expect("finish");
    store.create(next()).await.expect("delivered: evicted now");
    assert_eq!(store.get(&t.key()).await, Ok(None));
}

#[tokio::test]
async fn a_full_store_refuses_new_tasks_until_something_expires() {
    let store = MemoryStore::new(MemoryLimits {
        max_tasks: 2,
        ..MemoryLimits::default()
    });
    let mut first = task("", "t-1", "ctx", TaskState::InputRequired, 10);
    first.expires_ms = Some(100);
    store.create(first.clone()).await.expect("first");
    store
        .create(task("", "t-2", "ctx", TaskState::Working, 10))
        .await
        .expect("second");
    let refused = store
        .create(task("", "t-3", "ctx", TaskState::Submitted, 10))
        .await;
    assert!(
        matches!(refused, Err(StoreError::Full { .. })),
        "interrupted and working tasks are never evicted: {refused:?}"
    );
    assert_eq!(store.expire(100).await, Ok(vec![first.key()]));
    store
        .create(task("", "t-3", "ctx", TaskState::Submitted, 10))
        .await
        .expect("room again after expiry");
}

#[tokio::test]
async fn a_full_store_evicts_the_terminal_task_that_ended_first() {
    let store = MemoryStore::new(MemoryLimits {
        max_tasks: 3,
        ..MemoryLimits::default()
    });
    let tasks: Vec<StoredTask> = (0..3)
        .map(|i| task("", &format!("t-{i}"), "ctx", TaskState::Working, 10))
        .collect();
    for t in &tasks {
        store.create(t.clone()).await.expect("create");
    }
    // t-2 ends first, then t-0; t-1 keeps working.
    for (t, at) in [(&tasks[2], 20), (&tasks[0], 30)] {
        let mut done = with_state(t, TaskState::Completed);
        done.status_ms = at;
        store
            .append(&t.key(), 0, event(&done), done)
            .await
            .expect("complete");
    }
    store
        .create(task("", "new-1", "ctx", TaskState::Submitted, 40))
        .await
        .expect("evicts one terminal task");
    assert_eq!(
        store.get(&tasks[2].key()).await,
        Ok(None),
        "the first to end"
    );
    assert!(store.get(&tasks[0].key()).await.expect("get").is_some());
    store
        .create(task("", "new-2", "ctx", TaskState::Submitted, 50))
        .await
        .expect("evicts the other");
    assert_eq!(store.get(&tasks[0].key()).await, Ok(None));
    assert!(
        store.get(&tasks[1].key()).await.expect("get").is_some(),
        "working stays"
    );
    let refused = store
        .create(task("", "new-3", "ctx", TaskState::Submitted, 60))
        .await;
    assert!(
        matches!(refused, Err(StoreError::Full { .. })),
        "{refused:?}"
    );
    assert_eq!(store.len(), 3);
}

/// A task with `bytes` of text in its history.
fn holding(id: &str, bytes: usize) -> StoredTask {
    let mut t = task("", id, "ctx", TaskState::Working, 10);
    Arc::make_mut(&mut t.task)
        .history
        .push(Message::user("m", vec![Part::text("x".repeat(bytes))]).into());
    t
}

#[tokio::test]
async fn the_byte_budget_counts_snapshots_and_events_and_is_given_back() {
    let store = MemoryStore::new(MemoryLimits {
        max_bytes: 3 << 20,
        ..MemoryLimits::default()
    });
    let big = holding("big", 1 << 20);
    store.create(big.clone()).await.expect("1 MiB fits");
    let one = store.bytes();
    assert!((1 << 20..(1 << 20) + 4096).contains(&one), "{one}");
    // The event carries the snapshot again: the task now counts about twice.
    store
        .append(&big.key(), 0, event(&big), big.clone())
        .await
        .expect("append");
    let two = store.bytes();
    assert!((2 << 20..(2 << 20) + 8192).contains(&two), "{two}");
    let refused = store.create(holding("more", 1 << 20)).await;
    assert!(
        matches!(&refused, Err(StoreError::Full { limit, .. }) if limit.contains("bytes")),
        "a task that does not fit is refused, nothing evictable: {refused:?}"
    );
    let mut done = with_state(&big, TaskState::Completed);
    done.expires_ms = Some(5);
    store
        .append(&big.key(), 1, event(&done), done)
        .await
        .expect("an event that ends a task is taken even past the budget");
    store
        .create(holding("more", 1 << 20))
        .await
        .expect("the ended task is evicted to make room");
    let left = store.bytes();
    assert!(
        left < (1 << 20) + 4096,
        "the evicted task's bytes came back: {left}"
    );
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
            .append(&t.key(), seq, event(&t), t.clone())
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
    let after_four: Vec<u64> = store
        .events_after(&t.key(), 4, 10)
        .await
        .expect("events")
        .iter()
        .map(|e| e.seq)
        .collect();
    assert_eq!(after_four, vec![5]);
}

#[tokio::test]
async fn a_terminal_task_reads_back_the_same_once_sealed() {
    let store = MemoryStore::default();
    let t = holding("t-1", 100);
    store.create(t.clone()).await.expect("create");
    let working = with_state(&t, TaskState::Working);
    store
        .append(&t.key(), 0, event(&working), working.clone())
        .await
        .expect("working");
    let open_events = store.events_after(&t.key(), 0, 10).await.expect("events");
    let mut done = with_state(&t, TaskState::Completed);
    done.status_ms = 20;
    done.expires_ms = Some(1_000);
    let seq = store
        .append(&t.key(), 1, event(&done), done.clone())
        .await
        .expect("completed");
    assert_eq!(seq, 2);

    // Sealed now: every read decodes exactly what was written.
    let got = store.get(&t.key()).await.expect("get").expect("kept");
    assert_eq!(*got.task, *done.task);
    assert_eq!(
        (got.seq, got.status_ms, got.expires_ms),
        (2, 20, Some(1_000))
    );
    let events = store.events_after(&t.key(), 0, 10).await.expect("events");
    assert_eq!(events.len(), 2);
    assert_eq!(events[0], open_events[0], "the event kept before sealing");
    assert_eq!(*events[1].event, *event(&done));
    assert_eq!(
        store
            .events_after(&t.key(), 1, 10)
            .await
            .expect("after 1")
            .iter()
            .map(|e| e.seq)
            .collect::<Vec<_>>(),
        vec![2]
    );
    assert!(
        store
            .events_after(&t.key(), 2, 10)
            .await
            .expect("after 2")
            .is_empty(),
        "nothing after the last"
    );
    let page = store
        .list(&ferry_store::ListQuery::all("", 10))
        .await
        .expect("list");
    assert_eq!(page.tasks, vec![got.clone()]);
    assert_eq!(
        store
            .list(&ferry_store::ListQuery {
                state: Some(TaskState::Completed),
                ..ferry_store::ListQuery::all("", 10)
            })
            .await
            .expect("by state")
            .total,
        1
    );

    // What a sealed task counts is about its JSON, not the estimate of its values.
    let json = serde_json::to_vec(&*done.task).expect("json").len()
        + events
            .iter()
            .map(|e| serde_json::to_vec(&**e.event.value()).expect("json").len())
            .sum::<usize>();
    let bytes = store.bytes();
    assert!(
        (json..json + 64).contains(&bytes),
        "{bytes} bytes counted, {json} of JSON"
    );

    // A terminal task written again (a store allows it; the server never does) opens up.
    let mut again = done.clone();
    again.status_ms = 30;
    assert_eq!(
        store
            .append(&t.key(), 2, event(&again), again.clone())
            .await,
        Ok(3)
    );
    let events = store.events_after(&t.key(), 0, 10).await.expect("events");
    assert_eq!(events.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 2, 3]);
    let got = store.get(&t.key()).await.expect("get").expect("kept");
    assert_eq!((got.seq, got.status_ms), (3, 30));
}

/// The seal and the server's streams serialize each event once between them: an event a
/// stream sent before the task ended is sealed from its text, and the others get the text
/// the seal made, so a stream that sends them later makes none.
#[tokio::test]
async fn a_sealed_task_shares_its_events_text_with_the_live_events() {
    let store = MemoryStore::default();
    let t = holding("t-1", 100);
    store.create(t.clone()).await.expect("create");
    let working = with_state(&t, TaskState::Working);
    let sent = event(&working);
    let sent_text = sent.json().clone();
    store
        .append(&t.key(), 0, sent.clone(), working)
        .await
        .expect("working");
    let later = event(&with_state(&t, TaskState::Working));
    store
        .append(
            &t.key(),
            1,
            later.clone(),
            with_state(&t, TaskState::Working),
        )
        .await
        .expect("working again");
    let done = with_state(&t, TaskState::Completed);
    let last = event(&done);
    store
        .append(&t.key(), 2, last.clone(), done)
        .await
        .expect("completed");

    assert!(
        later.is_serialized() && last.is_serialized(),
        "given the sealed text"
    );
    for live in [&sent, &later, &last] {
        let made = serde_json::to_vec(&**live.value()).expect("json");
        assert_eq!(live.json()[..], made[..], "the bytes a stream would make");
    }
    assert_eq!(sent.json(), &sent_text, "a stream's text is kept");
    let sealed = store.events_after(&t.key(), 0, 10).await.expect("events");
    let texts: Vec<_> = sealed.iter().map(|e| e.event.json().clone()).collect();
    assert_eq!(
        texts,
        [sent_text, later.json().clone(), last.json().clone()]
    );

    // An event the server no longer holds is sealed from its value alone.
    let u = holding("t-2", 100);
    store.create(u.clone()).await.expect("create");
    let working = with_state(&u, TaskState::Working);
    store
        .append(&u.key(), 0, event(&working), working.clone())
        .await
        .expect("working, its event dropped");
    let done = with_state(&u, TaskState::Completed);
    store
        .append(&u.key(), 1, event(&done), done)
        .await
        .expect("completed");
    let sealed = store.events_after(&u.key(), 0, 10).await.expect("events");
    assert_eq!(*sealed[0].event, *event(&working));
    let made = serde_json::to_vec(&**sealed[0].event.value()).expect("json");
    assert_eq!(sealed[0].event.json()[..], made[..]);
}

/// An ending is taken over the byte budget; the store then evicts older ended tasks to get
/// back within it, never the task that just ended.
#[tokio::test]
async fn an_ending_over_the_budget_evicts_older_ended_tasks_not_itself() {
    let store = MemoryStore::new(MemoryLimits {
        max_bytes: 10_000,
        ..MemoryLimits::default()
    });
    let old = task("", "old", "ctx", TaskState::Working, 10);
    store.create(old.clone()).await.expect("create");
    let old_done = with_state(&old, TaskState::Completed);
    store
        .append(&old.key(), 0, event(&old_done), old_done)
        .await
        .expect("the old task ends");
    let big = task("", "big", "ctx", TaskState::Working, 20);
    store.create(big.clone()).await.expect("create");
    let mut big_done = with_state(&big, TaskState::Completed);
    Arc::make_mut(&mut big_done.task)
        .artifacts
        .push(ferry_proto::Artifact::new("a", "a", vec![Part::text("x".repeat(20_000))]).into());
    store
        .append(&big.key(), 0, event(&big_done), big_done)
        .await
        .expect("an ending is always taken");
    assert_eq!(store.get(&old.key()).await.expect("get"), None, "evicted");
    assert!(
        store.get(&big.key()).await.expect("get").is_some(),
        "the task that just ended stays"
    );
}
