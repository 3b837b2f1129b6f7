//! The store trait and its errors.

use crate::push::{PushConfig, PushStore};
use crate::replicas::ReplicaStore;
use crate::types::{Event, ListQuery, Page, StoredEvent, StoredTask, TaskKey};
use ferry_proto::TaskState;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// A store operation in progress (boxed, so that `Arc<dyn TaskStore>` works).
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// The outcome of a queued write: resolves once the write is durable (or refused).
pub type Queued<T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'static>>;

/// Why a store operation did not happen. Nothing was written when one is returned. New
/// reasons may come (leases, ownership), so a match needs a wildcard arm.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A task with this key exists already.
    #[error("task {0} exists already")]
    Exists(String),
    /// No such task (or it expired).
    #[error("task {0} not found")]
    NotFound(String),
    /// The writer's view is stale: the task is at `actual`, the writer expected `expected`.
    #[error("task {task} changed meanwhile (at event {actual}, the writer expected {expected})")]
    Conflict {
        /// The task.
        task: String,
        /// The sequence number the writer last saw.
        expected: u64,
        /// The sequence number in the store.
        actual: u64,
    },
    /// The store is at one of its limits (tasks, bytes); nothing expired that could go.
    #[error("the task store is full ({limit}); retry in {retry_after_secs} s")]
    Full {
        /// Which limit, in words.
        limit: String,
        /// A hint for the caller.
        retry_after_secs: u64,
    },
    /// A saved profile changed (or was created or deleted) since the writer read it.
    #[error("profile {0:?} changed meanwhile; read it again")]
    Changed(String),
    /// A new profile was refused: its owner keeps `limit` profiles already.
    #[error("{limit} profiles are saved already, the most one owner may keep; delete one first")]
    ProfileLimit {
        /// The most profiles one owner may keep, as the writer asked.
        limit: usize,
    },
    /// A new push-notification config was refused: its task keeps `limit` configs already.
    #[error(
        "the task keeps {limit} push-notification configs already, the most it may; delete one first"
    )]
    PushConfigLimit {
        /// The most configs one task may keep, as the writer asked.
        limit: usize,
    },
    /// A write of a replica whose lease on the task is over: another replica took the task
    /// over (the writer froze past its lease). Nothing was written.
    #[error(
        "task {task} was taken over by another replica (lease {current}; this write held lease {held})"
    )]
    Fenced {
        /// The task.
        task: String,
        /// The lease epoch the writer held.
        held: u64,
        /// The task's lease epoch now.
        current: u64,
    },
    /// A page token this store did not issue.
    #[error("invalid page token")]
    BadPageToken,
    /// The store cannot be reached or failed; the operation may be retried.
    #[error("the task store is unavailable: {0}")]
    Unavailable(String),
}

/// Where task snapshots and their events live.
///
/// Every method is a whole operation: [`TaskStore::append`] writes the event and the new
/// snapshot together or not at all, so a reader never sees one without the other.
pub trait TaskStore: Send + Sync + std::fmt::Debug {
    /// Stores a new task (its `seq` is 0: no event yet).
    fn create(&self, task: StoredTask) -> StoreFuture<'_, ()>;

    /// Appends `event` to the task as event `expected_seq + 1` and replaces its snapshot with
    /// `snapshot`, if the task is still at `expected_seq`; returns the new sequence number.
    fn append(
        &self,
        key: &TaskKey,
        expected_seq: u64,
        event: Arc<Event>,
        snapshot: StoredTask,
    ) -> StoreFuture<'_, u64>;

    /// True when [`TaskStore::queue_append`] commits queued writes together, so that a writer
    /// gains by queueing several before it waits (default false: the manager then awaits each
    /// append).
    fn pipelines(&self) -> bool {
        false
    }

    /// [`TaskStore::create`] in two steps, like [`TaskStore::queue_append`]: appends queued
    /// after it may name the task. The default creates the task before it returns.
    fn queue_create(&self, task: StoredTask) -> StoreFuture<'_, Queued<()>> {
        let create = self.create(task);
        Box::pin(async move {
            let outcome = create.await;
            Ok(Box::pin(async move { outcome }) as Queued<()>)
        })
    }

    /// [`TaskStore::queue_create`] of a task that arrives with push configs (a send's inline
    /// config): they are stored in the same write as the task, so its first event already
    /// goes to them. A store without [`TaskStore::push`] refuses configs (`Unavailable`).
    fn queue_create_with_push(
        &self,
        task: StoredTask,
        configs: Vec<PushConfig>,
    ) -> StoreFuture<'_, Queued<()>> {
        if configs.is_empty() {
            return self.queue_create(task);
        }
        Box::pin(async {
            Err(StoreError::Unavailable(
                "this store keeps no push-notification configs".to_owned(),
            ))
        })
    }

    /// The store's push configs and delivery outbox, when it keeps them (the memory and SQL
    /// stores do); `None` (the default): the server offers no push notifications.
    fn push(&self) -> Option<&dyn PushStore> {
        None
    }

    /// What several server processes sharing this store need from it, when they can share
    /// it (the PostgreSQL store); `None` (the default): one process owns the store.
    fn replicas(&self) -> Option<&dyn ReplicaStore> {
        None
    }

    /// [`TaskStore::append`] in two steps: the returned future resolves once the write is
    /// queued, the [`Queued`] it yields once it is durable. Appends queued one after another
    /// for one task are applied in that order, each on top of the one before: the second may
    /// name the sequence number the first will produce. So a writer can have several events
    /// of a task in flight (committed together) without waiting for each; when one fails, the
    /// ones queued after it fail too (with a conflict). The default does the whole append
    /// before it returns.
    fn queue_append(
        &self,
        key: &TaskKey,
        expected_seq: u64,
        event: Arc<Event>,
        snapshot: StoredTask,
    ) -> StoreFuture<'_, Queued<u64>> {
        let append = self.append(key, expected_seq, event, snapshot);
        Box::pin(async move {
            let outcome = append.await;
            Ok(Box::pin(async move { outcome }) as Queued<u64>)
        })
    }

    /// The task, if it exists.
    fn get(&self, key: &TaskKey) -> StoreFuture<'_, Option<StoredTask>>;

    /// A page of the tasks matching `query`, latest status first.
    fn list(&self, query: &ListQuery) -> StoreFuture<'_, Page>;

    /// The task's events after `seq`, oldest first, at most `limit`; empty when there are
    /// none (or the task does not exist).
    fn events_after(
        &self,
        key: &TaskKey,
        seq: u64,
        limit: usize,
    ) -> StoreFuture<'_, Vec<StoredEvent>>;

    /// Forgets the tasks whose expiry is at or before `now_ms`, with their events; returns
    /// which (so that the server can end what still follows them).
    fn expire(&self, now_ms: u64) -> StoreFuture<'_, Vec<TaskKey>>;

    /// Whether the store answers now (the readiness probe asks): the default, for a store in
    /// memory, always does.
    fn ping(&self) -> StoreFuture<'_, ()> {
        Box::pin(async { Ok(()) })
    }

    /// The tasks of every tenant whose state is SUBMITTED or WORKING: after a restart, the
    /// ones whose turn died with the previous process.
    fn unfinished(&self) -> StoreFuture<'_, Vec<TaskKey>>;

    /// How many tasks of every tenant are in each state (states with none may be left out):
    /// what the server's metrics show.
    fn count_by_state(&self) -> StoreFuture<'_, Vec<(TaskState, u64)>>;
}
