//! Scenarios beyond the conformance suite that both SQL stores run: one serialization per
//! event, group commit under a burst, racing writers on several threads, and a batch whose
//! transaction fails.

use ferry_proto::TaskState;
use ferry_store::conformance::{event, owned_by, task, with_state};
use ferry_store::{StoreError, TaskStore};
use std::future::Future;
use std::sync::Arc;

/// An event is serialized once: the store keeps the ProtoJSON it made into the event it was
/// given (which the server's streams share), and reads events back with the text it kept.
pub(crate) async fn an_event_is_serialized_once_and_read_back_as_kept(store: &dyn TaskStore) {
    let t = task("one-json", "t-1", "ctx", TaskState::Working, 10);
    store.create(t.clone()).await.expect("create");
    let given = event(&t);
    assert!(!given.is_serialized(), "nothing made its JSON yet");
    store
        .append(&t.key(), 0, given.clone(), t.clone())
        .await
        .expect("append");
    assert!(given.is_serialized(), "the store made the event's JSON");
    let read = store.events_after(&t.key(), 0, 1).await.expect("events");
    let read = &read.first().expect("the event").event;
    assert!(read.is_serialized(), "read back with the text kept");
    assert_eq!(read.json(), given.json(), "the same bytes");
    assert_eq!(read.value(), given.value());
}

/// 200 appends to 50 tasks, all queued in order before the writer runs (on a current-thread
/// runtime, polled once each without tokio's cooperative budget, which would otherwise
/// postpone some sends and reorder them): the writer gets them in one batch with four
/// appends per task, which must apply as if one after the other.
pub(crate) async fn a_burst_of_appends_lands_with_consecutive_numbers(store: &dyn TaskStore) {
    let tasks: Vec<_> = (0..50)
        .map(|i| {
            task(
                "s-burst",
                &format!("t-{i:02}"),
                "ctx",
                TaskState::Working,
                10,
            )
        })
        .collect();
    for t in &tasks {
        store.create(t.clone()).await.expect("create");
    }
    let appends = (0..4u64).flat_map(|n| {
        tasks.iter().map(move |t| {
            let next = with_state(t, TaskState::Working);
            let key = t.key();
            async move { (n, store.append(&key, n, event(&next), next).await) }
        })
    });
    let results = tokio::task::unconstrained(futures_util::future::join_all(appends)).await;
    for (n, result) in &results {
        assert_eq!(
            *result,
            Ok(n + 1),
            "every append lands, in order: {results:?}"
        );
    }
    // New tasks too: each create queued with its first appends, in one batch. The creation
    // names an owner and the appends do not: the batch inserts the task with its creation's.
    let fresh: Vec<_> = (0..10)
        .map(|i| {
            owned_by(
                "ada",
                task(
                    "s-burst",
                    &format!("new-{i:02}"),
                    "ctx",
                    TaskState::Submitted,
                    10,
                ),
            )
        })
        .collect();
    let writes = fresh.iter().map(|t| async move {
        let creating = store.create(t.clone());
        let appends = (0..4u64).map(|n| {
            let mut next = with_state(t, TaskState::Working);
            next.owner = None;
            let key = t.key();
            async move { store.append(&key, n, event(&next), next).await }
        });
        let (created, appended) =
            futures_util::future::join(creating, futures_util::future::join_all(appends)).await;
        (created, appended)
    });
    let results = tokio::task::unconstrained(futures_util::future::join_all(writes)).await;
    for (created, appended) in &results {
        assert_eq!(*created, Ok(()), "{results:?}");
        assert_eq!(*appended, [Ok(1), Ok(2), Ok(3), Ok(4)], "{results:?}");
    }
    for t in tasks.iter().chain(&fresh) {
        let got = store.get(&t.key()).await.expect("get").expect("exists");
        assert_eq!(got.seq, 4, "four events on {}", t.task.id);
        let seqs: Vec<u64> = store
            .events_after(&t.key(), 0, 10)
            .await
            .expect("events")
            .iter()
            .map(|e| e.seq)
            .collect();
        assert_eq!(seqs, [1, 2, 3, 4], "consecutive events on {}", t.task.id);
        assert_eq!(got.owner, t.owner, "the creation's owner on {}", t.task.id);
    }
}

/// Four writers per task on 50 tasks, spawned on a multi-threaded runtime, each retrying on
/// a conflict until its append lands: every task ends with exactly four consecutive events.
pub(crate) async fn racing_writers_all_land(store: Arc<dyn TaskStore>) {
    let tasks: Vec<_> = (0..50)
        .map(|i| {
            task(
                "s-race",
                &format!("t-{i:02}"),
                "ctx",
                TaskState::Working,
                10,
            )
        })
        .collect();
    for t in &tasks {
        store.create(t.clone()).await.expect("create");
    }
    let mut writers = Vec::new();
    for t in &tasks {
        for _ in 0..4 {
            let store = Arc::clone(&store);
            let t = t.clone();
            writers.push(tokio::spawn(async move {
                for _ in 0..1_000 {
                    let seen = store.get(&t.key()).await.expect("get").expect("exists");
                    let next = with_state(&seen, TaskState::Working);
                    match store.append(&t.key(), seen.seq, event(&next), next).await {
                        Ok(seq) => return seq,
                        Err(StoreError::Conflict { .. }) => continue,
                        Err(other) => panic!("append failed: {other}"),
                    }
                }
                panic!("no append landed in 1000 tries");
            }));
        }
    }
    for writer in writers {
        let seq = writer.await.expect("writer");
        assert!((1..=4).contains(&seq), "{seq}");
    }
    for t in &tasks {
        let seqs: Vec<u64> = store
            .events_after(&t.key(), 0, 10)
            .await
            .expect("events")
            .iter()
            .map(|e| e.seq)
            .collect();
        assert_eq!(seqs, [1, 2, 3, 4], "consecutive events on {}", t.task.id);
    }
}

/// While `break_events` has made event inserts fail, an append is `Unavailable` and leaves
/// no trace (its snapshot update is rolled back with it); once `mend_events` has run, the
/// same append lands: the writer went on.
pub(crate) async fn a_failed_batch_writes_nothing_and_the_writer_goes_on<B, M>(
    store: &dyn TaskStore,
    break_events: B,
    mend_events: M,
) where
    B: Future<Output = ()>,
    M: Future<Output = ()>,
{
    let t = task("s-fail", "t-1", "ctx", TaskState::Working, 10);
    store.create(t.clone()).await.expect("create");
    break_events.await;
    let next = with_state(&t, TaskState::Completed);
    let refused = store.append(&t.key(), 0, event(&next), next.clone()).await;
    match &refused {
        Err(StoreError::Unavailable(reason)) => eprintln!("a failed batch says: {reason}"),
        other => panic!("expected Unavailable, got {other:?}"),
    }
    let got = store.get(&t.key()).await.expect("get").expect("exists");
    assert_eq!(
        (got.seq, got.state()),
        (0, TaskState::Working),
        "the failed batch left no trace"
    );
    mend_events.await;
    assert_eq!(
        store.append(&t.key(), 0, event(&next), next).await,
        Ok(1),
        "the writer goes on with a fresh transaction"
    );
    assert_eq!(
        store
            .events_after(&t.key(), 0, 10)
            .await
            .expect("events")
            .len(),
        1
    );
}
