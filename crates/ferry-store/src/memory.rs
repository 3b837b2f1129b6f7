//! The in-memory store: the default, bounded, lost on restart.
//!
//! Tasks live in shards by key, so writers of different tasks rarely meet on a lock; a
//! listing visits every shard (ListTasks is a scan, as any unindexed store's is).

use crate::store::{StoreError, StoreFuture, TaskStore};
use crate::types::{ListQuery, Page, StoredEvent, StoredTask, TaskKey};
use ferry_proto::StreamResponse;
use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Shards of the task map.
const SHARDS: usize = 16;

/// The memory store's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryLimits {
    /// Tasks kept at once; a new task beyond it is [`StoreError::Full`].
    pub max_tasks: usize,
    /// Events kept per task for resuming streams; older ones are dropped (a resume point
    /// before them starts from the snapshot).
    pub max_events_per_task: usize,
}

impl Default for MemoryLimits {
    fn default() -> Self {
        MemoryLimits {
            max_tasks: 10_000,
            max_events_per_task: 1_000,
        }
    }
}

#[derive(Debug)]
struct Entry {
    task: StoredTask,
    events: VecDeque<StoredEvent>,
}

/// Tasks in process memory.
#[derive(Debug)]
pub struct MemoryStore {
    limits: MemoryLimits,
    shards: Vec<Mutex<HashMap<TaskKey, Entry>>>,
    count: AtomicUsize,
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore::new(MemoryLimits::default())
    }
}

impl MemoryStore {
    /// An empty store with `limits`.
    pub fn new(limits: MemoryLimits) -> MemoryStore {
        MemoryStore {
            limits,
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            count: AtomicUsize::new(0),
        }
    }

    fn shard(&self, key: &TaskKey) -> MutexGuard<'_, HashMap<TaskKey, Entry>> {
        let mut hasher = DefaultHasher::new();
        key.hash(&mut hasher);
        // The modulo keeps the index below SHARDS: the cast cannot truncate it.
        let index = (hasher.finish() % SHARDS as u64) as usize;
        lock(&self.shards[index])
    }

    fn create_now(&self, task: StoredTask) -> Result<(), StoreError> {
        let key = task.key();
        let mut shard = self.shard(&key);
        if shard.contains_key(&key) {
            return Err(StoreError::Exists(key.id));
        }
        // Reserve a place first, so concurrent creators cannot pass the limit together.
        let reserved = self
            .count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.limits.max_tasks).then_some(n + 1)
            });
        if reserved.is_err() {
            return Err(StoreError::Full {
                limit: format!("{} tasks", self.limits.max_tasks),
                retry_after_secs: 1,
            });
        }
        shard.insert(
            key,
            Entry {
                task,
                events: VecDeque::new(),
            },
        );
        Ok(())
    }

    fn append_now(
        &self,
        key: &TaskKey,
        expected_seq: u64,
        event: StreamResponse,
        mut snapshot: StoredTask,
    ) -> Result<u64, StoreError> {
        let mut shard = self.shard(key);
        let entry = shard
            .get_mut(key)
            .ok_or_else(|| StoreError::NotFound(key.id.clone()))?;
        if entry.task.seq != expected_seq {
            return Err(StoreError::Conflict {
                task: key.id.clone(),
                expected: expected_seq,
                actual: entry.task.seq,
            });
        }
        let seq = expected_seq + 1;
        snapshot.seq = seq;
        entry.task = snapshot;
        if entry.events.len() == self.limits.max_events_per_task {
            entry.events.pop_front();
        }
        entry.events.push_back(StoredEvent { seq, event });
        Ok(seq)
    }

    fn list_now(&self, query: &ListQuery) -> Result<Page, StoreError> {
        let after = match &query.page_token {
            Some(token) => Some(parse_token(token)?),
            None => None,
        };
        let mut matching: Vec<StoredTask> = Vec::new();
        for shard in &self.shards {
            for entry in lock(shard).values() {
                let task = &entry.task;
                let keep = task.tenant == query.tenant
                    && query
                        .context_id
                        .as_ref()
                        .is_none_or(|c| &task.task.context_id == c)
                    && query.state.is_none_or(|s| task.state() == s)
                    && query.updated_since_ms.is_none_or(|t| task.updated_ms >= t);
                if keep {
                    matching.push(task.clone());
                }
            }
        }
        matching.sort_by(|a, b| order(a).cmp(&order(b)));
        let total = matching.len();
        let start = match after {
            Some(position) => matching.partition_point(|t| order(t) <= position.as_order()),
            None => 0,
        };
        let size = query.page_size.max(1);
        let tasks: Vec<StoredTask> = matching.into_iter().skip(start).take(size).collect();
        let next_page_token = (start + tasks.len() < total)
            .then(|| tasks.last().map(token))
            .flatten();
        Ok(Page {
            tasks,
            next_page_token,
            total,
        })
    }

    fn events_now(&self, key: &TaskKey, seq: u64, limit: usize) -> Vec<StoredEvent> {
        let shard = self.shard(key);
        let Some(entry) = shard.get(key) else {
            return Vec::new();
        };
        entry
            .events
            .iter()
            .filter(|e| e.seq > seq)
            .take(limit)
            .cloned()
            .collect()
    }

    fn expire_now(&self, now_ms: u64) -> usize {
        let mut gone = 0;
        for shard in &self.shards {
            let mut shard = lock(shard);
            let before = shard.len();
            shard.retain(|_, e| e.task.expires_ms.is_none_or(|at| at > now_ms));
            gone += before - shard.len();
        }
        self.count.fetch_sub(gone, Ordering::AcqRel);
        gone
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// The listing order: most recently updated first, then by id.
fn order(task: &StoredTask) -> (std::cmp::Reverse<u64>, &str) {
    (std::cmp::Reverse(task.updated_ms), task.task.id.as_str())
}

/// Where a page ended.
struct Position {
    updated_ms: u64,
    id: String,
}

impl Position {
    fn as_order(&self) -> (std::cmp::Reverse<u64>, &str) {
        (std::cmp::Reverse(self.updated_ms), self.id.as_str())
    }
}

fn token(task: &StoredTask) -> String {
    format!("{}:{}", task.updated_ms, task.task.id)
}

fn parse_token(token: &str) -> Result<Position, StoreError> {
    let (ms, id) = token.split_once(':').ok_or(StoreError::BadPageToken)?;
    let updated_ms = ms.parse().map_err(|_| StoreError::BadPageToken)?;
    Ok(Position {
        updated_ms,
        id: id.to_owned(),
    })
}

impl TaskStore for MemoryStore {
    fn create(&self, task: StoredTask) -> StoreFuture<'_, ()> {
        let result = self.create_now(task);
        Box::pin(async move { result })
    }

    fn append(
        &self,
        key: &TaskKey,
        expected_seq: u64,
        event: StreamResponse,
        snapshot: StoredTask,
    ) -> StoreFuture<'_, u64> {
        let result = self.append_now(key, expected_seq, event, snapshot);
        Box::pin(async move { result })
    }

    fn get(&self, key: &TaskKey) -> StoreFuture<'_, Option<StoredTask>> {
        let task = self.shard(key).get(key).map(|e| e.task.clone());
        Box::pin(async move { Ok(task) })
    }

    fn list(&self, query: &ListQuery) -> StoreFuture<'_, Page> {
        let result = self.list_now(query);
        Box::pin(async move { result })
    }

    fn events_after(
        &self,
        key: &TaskKey,
        seq: u64,
        limit: usize,
    ) -> StoreFuture<'_, Vec<StoredEvent>> {
        let events = self.events_now(key, seq, limit);
        Box::pin(async move { Ok(events) })
    }

    fn expire(&self, now_ms: u64) -> StoreFuture<'_, usize> {
        let gone = self.expire_now(now_ms);
        Box::pin(async move { Ok(gone) })
    }
}
