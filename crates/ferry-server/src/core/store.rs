//! Where tasks live: the `TaskStore` trait and the bounded in-memory store.
//!
//! The in-memory store is sharded by task id, each shard behind its own lock, so requests for
//! different tasks never wait on each other and no lock is shared by every request. It is
//! bounded twice: by capacity (one atomic count; only terminal tasks are evicted to make room)
//! and by a TTL that removes terminal tasks some time after they ended. Active and interrupted
//! tasks are never evicted. Each shard keeps its own queue of ended tasks: to make room, an
//! insert evicts the oldest ended task of the shard it goes into (one lock, the common case when
//! the store is full), else the oldest ended task of any shard.

use crate::clock::{Clock, TokioClock};
use crate::core::record::TaskRecord;
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::time::Instant;

/// Why a task could not be stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// Every slot holds an active task; nothing can be evicted.
    #[error("the task store is full ({capacity} tasks, none of them finished)")]
    Full {
        /// The configured capacity.
        capacity: usize,
    },
}

/// Storage of live tasks.
///
/// Synchronous on purpose: the in-memory store answers in nanoseconds and sits on the hot path.
/// Durable stores keep their own write-behind queue behind the same calls.
pub trait TaskStore: Send + Sync + 'static {
    /// Adds a task, evicting terminal tasks if needed.
    fn insert(&self, record: Arc<TaskRecord>) -> Result<(), StoreError>;
    /// The task `id` of `tenant`, if it exists (tasks of other tenants look missing).
    fn get(&self, tenant: &str, id: &str) -> Option<Arc<TaskRecord>>;
    /// Every task of `tenant` (in no particular order).
    fn tasks_of(&self, tenant: &str) -> Vec<Arc<TaskRecord>>;
    /// Every stored task, of every tenant (for shutdown and housekeeping).
    fn all_tasks(&self) -> Vec<Arc<TaskRecord>>;
    /// Records that a task became terminal (starts its TTL and makes it evictable).
    fn mark_terminal(&self, record: &TaskRecord);
    /// Removes terminal tasks whose TTL expired; returns how many.
    fn sweep(&self) -> usize;
    /// Number of stored tasks.
    fn len(&self) -> usize;
    /// True when no task is stored.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

const SHARDS: usize = 32;

/// One shard: tasks by id, and its terminal tasks in the order they ended.
#[derive(Default)]
struct Shard {
    tasks: HashMap<String, Arc<TaskRecord>>,
    ended: VecDeque<(Instant, String)>,
}

/// The default store: bounded, sharded, in memory.
pub struct InMemoryTaskStore {
    shards: Box<[Mutex<Shard>]>,
    hasher: RandomState,
    capacity: usize,
    ttl: Duration,
    clock: Arc<dyn Clock>,
    /// Stored tasks plus slots reserved by inserts in progress; never above `capacity`.
    len: AtomicUsize,
}

impl std::fmt::Debug for InMemoryTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InMemoryTaskStore")
            .field("capacity", &self.capacity)
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

impl InMemoryTaskStore {
    /// A store for at most `capacity` tasks whose terminal tasks expire after `ttl`.
    pub fn new(capacity: usize, ttl: Duration) -> Self {
        Self::with_clock(capacity, ttl, Arc::new(TokioClock))
    }

    /// [`InMemoryTaskStore::new`] measuring the TTL with `clock`.
    pub fn with_clock(capacity: usize, ttl: Duration, clock: Arc<dyn Clock>) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            hasher: RandomState::new(),
            capacity: capacity.max(1),
            ttl,
            clock,
            len: AtomicUsize::new(0),
        }
    }

    fn shard(&self, id: &str) -> &Mutex<Shard> {
        let i = (self.hasher.hash_one(id) as usize) % SHARDS;
        &self.shards[i]
    }

    /// Reserves a slot for one more task, or says there is none.
    fn try_reserve(&self) -> bool {
        self.len
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.capacity).then_some(n + 1)
            })
            .is_ok()
    }

    /// Pops the front of a shard's ended queue and removes that task; true when one was stored.
    fn pop_ended(&self, shard: &mut Shard) -> bool {
        while let Some((_, id)) = shard.ended.pop_front() {
            if shard.tasks.remove(&id).is_some() {
                self.len.fetch_sub(1, Ordering::AcqRel);
                return true;
            }
        }
        false
    }

    /// Evicts the terminal task that ended first; false when no terminal task is stored. Locks
    /// one shard at a time.
    fn evict_oldest_terminal(&self) -> bool {
        loop {
            let oldest = self
                .shards
                .iter()
                .enumerate()
                .filter_map(|(i, s)| s.lock().ended.front().map(|(when, _)| (*when, i)))
                .min();
            let Some((when, i)) = oldest else {
                return false;
            };
            let mut shard = self.shards[i].lock();
            // Another insert may have taken it meanwhile: look again.
            if shard.ended.front().is_some_and(|(w, _)| *w == when) && self.pop_ended(&mut shard) {
                return true;
            }
        }
    }
}

impl TaskStore for InMemoryTaskStore {
    fn insert(&self, record: Arc<TaskRecord>) -> Result<(), StoreError> {
        let mut shard = self.shard(&record.id).lock();
        while !self.try_reserve() {
            if self.pop_ended(&mut shard) {
                continue;
            }
            // Nothing ended in this shard: look in the others, one lock at a time.
            drop(shard);
            if !self.evict_oldest_terminal() {
                return Err(StoreError::Full {
                    capacity: self.capacity,
                });
            }
            shard = self.shard(&record.id).lock();
        }
        let replaced = shard.tasks.insert(record.id.clone(), record).is_some();
        if replaced {
            // Replaced a task with the same id: the count did not grow.
            self.len.fetch_sub(1, Ordering::AcqRel);
        }
        Ok(())
    }

    fn get(&self, tenant: &str, id: &str) -> Option<Arc<TaskRecord>> {
        let shard = self.shard(id).lock();
        shard.tasks.get(id).filter(|r| r.tenant == tenant).cloned()
    }

    fn tasks_of(&self, tenant: &str) -> Vec<Arc<TaskRecord>> {
        let mut out = Vec::new();
        for shard in self.shards.iter() {
            out.extend(
                shard
                    .lock()
                    .tasks
                    .values()
                    .filter(|r| r.tenant == tenant)
                    .cloned(),
            );
        }
        out
    }

    fn all_tasks(&self) -> Vec<Arc<TaskRecord>> {
        let mut out = Vec::with_capacity(self.len());
        for shard in self.shards.iter() {
            out.extend(shard.lock().tasks.values().cloned());
        }
        out
    }

    fn mark_terminal(&self, record: &TaskRecord) {
        let mut shard = self.shard(&record.id).lock();
        if shard.tasks.contains_key(&record.id) {
            shard.ended.push_back((self.clock.now(), record.id.clone()));
        }
    }

    fn sweep(&self) -> usize {
        let now = self.clock.now();
        let mut removed = 0;
        for shard in self.shards.iter() {
            let mut shard = shard.lock();
            while shard
                .ended
                .front()
                .is_some_and(|(when, _)| now.duration_since(*when) >= self.ttl)
            {
                removed += usize::from(self.pop_ended(&mut shard));
            }
        }
        removed
    }

    fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_proto::{Message, Part};

    fn record(id: &str) -> Arc<TaskRecord> {
        let m = Message::user("m", vec![Part::text("x")]);
        Arc::new(TaskRecord::new(id.into(), "c".into(), String::new(), m, 8))
    }

    #[test]
    fn full_store_evicts_only_terminal_tasks() {
        // 3 tasks in 32 shards: a per-shard bound would let far more in, so this checks that the
        // bound is global.
        let store = InMemoryTaskStore::new(3, Duration::from_secs(3600));
        let tasks: Vec<_> = (0..3).map(|i| record(&format!("t{i}"))).collect();
        for r in &tasks {
            store.insert(r.clone()).expect("room for three");
        }
        assert_eq!(
            store.insert(record("t3")),
            Err(StoreError::Full { capacity: 3 }),
            "all active"
        );
        assert_eq!(store.len(), 3);
        store.mark_terminal(&tasks[1]);
        store.mark_terminal(&tasks[0]);
        store
            .insert(record("t3"))
            .expect("a terminal task can be evicted");
        assert_eq!(store.len(), 3, "one evicted, one added");
        let gone: Vec<_> = ["t0", "t1"]
            .into_iter()
            .filter(|id| store.get("", id).is_none())
            .collect();
        assert_eq!(
            gone.len(),
            1,
            "exactly one of the two terminal tasks was evicted: {gone:?}"
        );
        assert!(store.get("", "t2").is_some(), "the active task stays");
        store
            .insert(record("t4"))
            .expect("the other terminal task makes room");
        for id in ["t0", "t1"] {
            assert!(store.get("", id).is_none(), "{id} evicted");
        }
        for id in ["t2", "t3", "t4"] {
            assert!(store.get("", id).is_some(), "{id}");
        }
        assert_eq!(
            store.insert(record("t5")),
            Err(StoreError::Full { capacity: 3 })
        );
    }

    #[test]
    fn the_oldest_ended_task_goes_first_across_shards() {
        let store = InMemoryTaskStore::new(64, Duration::from_secs(3600));
        let tasks: Vec<_> = (0..64).map(|i| record(&format!("t{i}"))).collect();
        for r in &tasks {
            store.insert(r.clone()).expect("room");
        }
        // End every task, oldest first; a new task evicts the oldest of its own shard, which is
        // never younger than a task of that shard that ended later.
        for r in &tasks {
            store.mark_terminal(r);
        }
        store.insert(record("new")).expect("evicts one");
        let gone: Vec<_> = tasks
            .iter()
            .filter(|r| store.get("", &r.id).is_none())
            .collect();
        assert_eq!(gone.len(), 1);
        let shard_of = |id: &str| store.hasher.hash_one(id) as usize % SHARDS;
        let evicted = &gone[0].id;
        let first_in_shard = tasks
            .iter()
            .find(|r| shard_of(&r.id) == shard_of("new"))
            .map(|r| r.id.clone());
        match first_in_shard {
            Some(first) => assert_eq!(*evicted, first, "the oldest of the new task's shard"),
            None => assert_eq!(*evicted, "t0", "the oldest overall when its shard had none"),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn ttl_removes_terminal_tasks_only_and_tenants_are_apart() {
        let store = InMemoryTaskStore::new(100, Duration::from_secs(3600));
        let done = record("done");
        let open = record("open");
        store.insert(done.clone()).expect("insert");
        store.insert(open.clone()).expect("insert");
        assert!(store.get("other-tenant", "open").is_none());
        store.mark_terminal(&done);
        tokio::time::advance(Duration::from_secs(3599)).await;
        assert_eq!(store.sweep(), 0, "kept for the whole ttl");
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(store.sweep(), 1);
        assert!(store.get("", "done").is_none());
        assert!(store.get("", "open").is_some());
    }
}
