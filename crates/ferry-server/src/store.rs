//! Where tasks live: the `TaskStore` trait and the bounded in-memory store.
//!
//! The in-memory store is sharded by task id, each shard behind its own lock, so requests for
//! different tasks never wait on each other. It is bounded twice: by capacity (only terminal
//! tasks are evicted to make room, oldest terminal first) and by a TTL that removes terminal
//! tasks some time after they ended. Active and interrupted tasks are never evicted.

use crate::record::TaskRecord;
use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

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

#[derive(Default)]
struct Shard {
    tasks: HashMap<String, Arc<TaskRecord>>,
    /// Terminal tasks in the order they ended: (when, id).
    terminal: VecDeque<(Instant, String)>,
}

/// The default store: bounded, sharded, in memory.
pub struct InMemoryTaskStore {
    shards: Box<[Mutex<Shard>]>,
    hasher: RandomState,
    shard_capacity: usize,
    capacity: usize,
    ttl: Duration,
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
        let capacity = capacity.max(1);
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            hasher: RandomState::new(),
            shard_capacity: capacity.div_ceil(SHARDS),
            capacity,
            ttl,
            len: AtomicUsize::new(0),
        }
    }

    fn shard(&self, id: &str) -> &Mutex<Shard> {
        let i = (self.hasher.hash_one(id) as usize) % SHARDS;
        &self.shards[i]
    }

    /// Removes terminal tasks from the front of a shard's queue while `pred` holds.
    fn evict_front(&self, shard: &mut Shard, mut pred: impl FnMut(&Instant, usize) -> bool) -> usize {
        let mut removed = 0;
        while let Some((when, id)) = shard.terminal.front() {
            if !pred(when, shard.tasks.len()) {
                break;
            }
            let id = id.clone();
            shard.terminal.pop_front();
            if shard.tasks.remove(&id).is_some() {
                removed += 1;
                self.len.fetch_sub(1, Ordering::Relaxed);
            }
        }
        removed
    }
}

impl TaskStore for InMemoryTaskStore {
    fn insert(&self, record: Arc<TaskRecord>) -> Result<(), StoreError> {
        let now = Instant::now();
        let ttl = self.ttl;
        let cap = self.shard_capacity;
        let mut shard = self.shard(&record.id).lock();
        self.evict_front(&mut shard, |when, len| len >= cap || now.duration_since(*when) >= ttl);
        if shard.tasks.len() >= cap {
            return Err(StoreError::Full { capacity: self.capacity });
        }
        if shard.tasks.insert(record.id.clone(), record).is_none() {
            self.len.fetch_add(1, Ordering::Relaxed);
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
            let shard = shard.lock();
            out.extend(shard.tasks.values().filter(|r| r.tenant == tenant).cloned());
        }
        out
    }

    fn mark_terminal(&self, record: &TaskRecord) {
        let mut shard = self.shard(&record.id).lock();
        if shard.tasks.contains_key(&record.id) {
            shard.terminal.push_back((Instant::now(), record.id.clone()));
        }
    }

    fn sweep(&self) -> usize {
        let now = Instant::now();
        let ttl = self.ttl;
        self.shards
            .iter()
            .map(|s| self.evict_front(&mut s.lock(), |when, _| now.duration_since(*when) >= ttl))
            .sum()
    }

    fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
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
        let store = InMemoryTaskStore::new(SHARDS, Duration::from_secs(3600));
        // One slot per shard: fill until some shard refuses, with nothing terminal.
        let mut refused = None;
        for i in 0..10 * SHARDS {
            let r = record(&format!("t{i}"));
            if store.insert(r.clone()).is_err() {
                refused = Some(r);
                break;
            }
        }
        let refused = refused.expect("an active-only store must refuse eventually");
        // Make every stored task terminal; now the insert evicts one and succeeds.
        for r in store.tasks_of("") {
            store.mark_terminal(&r);
        }
        let before = store.len();
        store.insert(refused.clone()).expect("a terminal task can be evicted");
        assert_eq!(store.len(), before, "one evicted, one added");
        assert!(store.get("", &refused.id).is_some());
    }

    #[test]
    fn ttl_removes_terminal_tasks_only_and_tenants_are_apart() {
        let store = InMemoryTaskStore::new(100, Duration::from_millis(0));
        let done = record("done");
        let open = record("open");
        store.insert(done.clone()).expect("insert");
        store.insert(open.clone()).expect("insert");
        assert!(store.get("other-tenant", "open").is_none());
        store.mark_terminal(&done);
        assert_eq!(store.sweep(), 1);
        assert!(store.get("", "done").is_none());
        assert!(store.get("", "open").is_some());
    }
}
