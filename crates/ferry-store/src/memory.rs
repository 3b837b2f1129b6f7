//! The in-memory store: the default, bounded, lost on restart.
//!
//! Tasks live in shards by key, so writers of different tasks rarely meet on a lock; a
//! listing visits every shard (ListTasks is a scan, as any unindexed store's is).
//!
//! Two budgets bound it: a number of tasks and an (approximate, see [`crate::size`]) number
//! of bytes, snapshots and kept events together. Snapshots and events are shared `Arc`s, so a
//! task costs what it holds, not a copy per reader. When a new task or an event would pass a
//! budget, the terminal tasks that ended first are evicted to make room; when none is left to
//! evict the store is [`StoreError::Full`]. An event that ends a task is always accepted, so
//! that a full store can still finish (and then evict) what it holds.

use crate::size;
use crate::store::{StoreError, StoreFuture, TaskStore};
use crate::types::{ListQuery, Page, StoredEvent, StoredTask, TaskKey, TaskKeyHasher};
use ferry_proto::{StreamResponse, TaskState};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Shards of the task map.
const SHARDS: usize = 16;
/// What a full store suggests waiting before a retry, in seconds.
const RETRY_AFTER_SECS: u64 = 1;

/// The memory store's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryLimits {
    /// Tasks kept at once. Default 10 000.
    pub max_tasks: usize,
    /// Approximate bytes of snapshots and kept events together. Default 1 GiB.
    pub max_bytes: usize,
    /// Events kept per task for resuming streams; older ones are dropped (a resume point
    /// before them starts from the snapshot). Default 1 000.
    pub max_events_per_task: usize,
}

impl Default for MemoryLimits {
    fn default() -> Self {
        MemoryLimits {
            max_tasks: 10_000,
            max_bytes: 1 << 30,
            max_events_per_task: 1_000,
        }
    }
}

#[derive(Debug)]
struct Entry {
    task: StoredTask,
    events: VecDeque<StoredEvent>,
    /// What this entry counts against the byte budget.
    bytes: usize,
    /// What its snapshot counts of that (so an append measures only what its event changed).
    snapshot_bytes: usize,
}

/// One shard: its tasks, and its terminal tasks in the order they ended (some may be gone
/// already; eviction skips those).
#[derive(Debug, Default)]
struct Shard {
    tasks: HashMap<TaskKey, Entry, TaskKeyHasher>,
    ended: VecDeque<(u64, TaskKey)>,
}

/// Tasks in process memory.
#[derive(Debug)]
pub struct MemoryStore {
    limits: MemoryLimits,
    shards: Vec<Mutex<Shard>>,
    count: AtomicUsize,
    bytes: AtomicUsize,
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore::new(MemoryLimits::default())
    }
}

/// How a write asks for room.
enum Room {
    /// Room was reserved.
    Reserved,
    /// No room: evict something, then try again.
    Evict,
}

impl MemoryStore {
    /// An empty store with `limits`.
    pub fn new(limits: MemoryLimits) -> MemoryStore {
        MemoryStore {
            limits,
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            count: AtomicUsize::new(0),
            bytes: AtomicUsize::new(0),
        }
    }

    /// Tasks stored now.
    pub fn len(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    /// True when no task is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Approximate bytes stored now (what the byte budget counts).
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Acquire)
    }

    fn shard(&self, key: &TaskKey) -> MutexGuard<'_, Shard> {
        lock(&self.shards[key.shard(SHARDS)])
    }

    fn full(&self, what: &str) -> StoreError {
        StoreError::Full {
            limit: what.to_owned(),
            retry_after_secs: RETRY_AFTER_SECS,
        }
    }

    /// Reserves `bytes` more (and a task more when `task`), or says that room must be made.
    fn reserve(&self, task: bool, bytes: usize) -> Room {
        if task
            && self
                .count
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                    (n < self.limits.max_tasks).then_some(n + 1)
                })
                .is_err()
        {
            return Room::Evict;
        }
        let got_bytes = self
            .bytes
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                n.checked_add(bytes).filter(|&t| t <= self.limits.max_bytes)
            })
            .is_ok();
        if got_bytes {
            return Room::Reserved;
        }
        if task {
            self.count.fetch_sub(1, Ordering::AcqRel);
        }
        Room::Evict
    }

    /// Removes a task's entry and gives back what it counted.
    fn remove(&self, shard: &mut Shard, key: &TaskKey) -> bool {
        match shard.tasks.remove(key) {
            Some(entry) => {
                self.release(&entry);
                true
            }
            None => false,
        }
    }

    /// Gives back what a removed entry counted.
    fn release(&self, entry: &Entry) {
        self.count.fetch_sub(1, Ordering::AcqRel);
        self.bytes.fetch_sub(entry.bytes, Ordering::AcqRel);
    }

    /// Evicts the terminal task of `shard` that ended first; false when it has none.
    fn evict_from(&self, shard: &mut Shard) -> bool {
        while let Some((_, key)) = shard.ended.pop_front() {
            // One lookup: an entry here is terminal unless its task went and a new one took
            // its key since (then it goes back).
            let Some(entry) = shard.tasks.remove(&key) else {
                continue;
            };
            if !entry.task.state().is_terminal() {
                shard.tasks.insert(key, entry);
                continue;
            }
            self.release(&entry);
            return true;
        }
        false
    }

    /// Evicts the terminal task that ended first, of any shard (one lock at a time); false
    /// when no task is terminal.
    fn evict_oldest(&self) -> bool {
        loop {
            let oldest = self
                .shards
                .iter()
                .enumerate()
                .filter_map(|(i, s)| lock(s).ended.front().map(|(at, _)| (*at, i)))
                .min();
            let Some((at, i)) = oldest else {
                return false;
            };
            let mut shard = lock(&self.shards[i]);
            // Another writer may have taken it meanwhile: look again.
            if shard.ended.front().is_some_and(|(a, _)| *a == at) && self.evict_from(&mut shard) {
                return true;
            }
        }
    }

    fn create_now(&self, task: StoredTask) -> Result<(), StoreError> {
        let key = task.key();
        let bytes = size::task_bytes(&task.task) + key.tenant.len();
        let mut shard = self.shard(&key);
        loop {
            if shard.tasks.contains_key(&key) {
                return Err(StoreError::Exists(key.id.to_string()));
            }
            match self.reserve(true, bytes) {
                Room::Reserved => {}
                Room::Evict => {
                    if self.evict_from(&mut shard) {
                        continue;
                    }
                    drop(shard);
                    if self.evict_oldest() {
                        shard = self.shard(&key);
                        continue;
                    }
                    return Err(self.full_reason(bytes));
                }
            }
            if task.state().is_terminal() {
                shard.ended.push_back((task.status_ms, key.clone()));
            }
            shard.tasks.insert(
                key,
                Entry {
                    task,
                    events: VecDeque::new(),
                    bytes,
                    snapshot_bytes: bytes,
                },
            );
            return Ok(());
        }
    }

    /// Which budget a refused write of `bytes` would have passed.
    fn full_reason(&self, bytes: usize) -> StoreError {
        if self.len() >= self.limits.max_tasks {
            self.full(&format!("{} tasks", self.limits.max_tasks))
        } else {
            self.full(&format!(
                "{} bytes, {} in use, {bytes} more asked",
                self.limits.max_bytes,
                self.bytes()
            ))
        }
    }

    fn append_now(
        &self,
        key: &TaskKey,
        expected_seq: u64,
        event: Arc<StreamResponse>,
        mut snapshot: StoredTask,
    ) -> Result<u64, StoreError> {
        let event_bytes = size::event_bytes(&event);
        let ends = snapshot.state().is_terminal();
        loop {
            let mut guard = self.shard(key);
            let shard = &mut *guard;
            let entry = shard
                .tasks
                .get_mut(key)
                .ok_or_else(|| StoreError::NotFound(key.id.to_string()))?;
            if entry.task.seq != expected_seq {
                return Err(StoreError::Conflict {
                    task: key.id.to_string(),
                    expected: expected_seq,
                    actual: entry.task.seq,
                });
            }
            let old_snapshot_bytes = entry.snapshot_bytes;
            let new_snapshot_bytes = size::task_bytes_after(
                &entry.task.task,
                old_snapshot_bytes.saturating_sub(key.tenant.len()),
                &snapshot.task,
            ) + key.tenant.len();
            let dropped_bytes = if entry.events.len() >= self.limits.max_events_per_task {
                entry
                    .events
                    .front()
                    .map_or(0, |e| size::event_bytes(&e.event))
            } else {
                0
            };
            let after = entry.bytes + new_snapshot_bytes + event_bytes;
            let before = old_snapshot_bytes + dropped_bytes;
            let growth = after.saturating_sub(before + entry.bytes);
            if growth > 0 && !ends {
                if let Room::Evict = self.reserve(false, growth) {
                    if self.evict_from(shard) {
                        continue;
                    }
                    drop(guard);
                    if self.evict_oldest() {
                        continue;
                    }
                    return Err(self.full_reason(growth));
                }
            } else if growth > 0 {
                // An event that ends a task is always taken (see the module docs).
                self.bytes.fetch_add(growth, Ordering::AcqRel);
            }
            let shrink = (before + entry.bytes).saturating_sub(after);
            if shrink > 0 {
                self.bytes.fetch_sub(shrink, Ordering::AcqRel);
            }
            let was_terminal = entry.task.state().is_terminal();
            let seq = expected_seq + 1;
            snapshot.seq = seq;
            let status_ms = snapshot.status_ms;
            entry.task = snapshot;
            if entry.events.len() >= self.limits.max_events_per_task {
                entry.events.pop_front();
            }
            entry.events.push_back(StoredEvent { seq, event });
            entry.bytes = entry.bytes + new_snapshot_bytes + event_bytes - before;
            entry.snapshot_bytes = new_snapshot_bytes;
            if ends && !was_terminal {
                shard.ended.push_back((status_ms, key.clone()));
            }
            return Ok(seq);
        }
    }

    fn list_now(&self, query: &ListQuery) -> Result<Page, StoreError> {
        let after = match &query.page_token {
            Some(token) => Some(parse_token(token)?),
            None => None,
        };
        let mut matching: Vec<StoredTask> = Vec::new();
        for shard in &self.shards {
            for entry in lock(shard).tasks.values() {
                let task = &entry.task;
                let keep = task.tenant == query.tenant
                    && query
                        .context_id
                        .as_ref()
                        .is_none_or(|c| *task.task.context_id == **c)
                    && query.state.is_none_or(|s| task.state() == s)
                    && query.status_since_ms.is_none_or(|t| task.status_ms >= t);
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
        let Some(entry) = shard.tasks.get(key) else {
            return Vec::new();
        };
        // Events are consecutive: skip straight to the first one after `seq`.
        let first = entry.events.front().map_or(0, |e| e.seq);
        let skip = usize::try_from(seq.saturating_sub(first.saturating_sub(1))).unwrap_or(0);
        entry
            .events
            .iter()
            .skip(skip)
            .filter(|e| e.seq > seq)
            .take(limit)
            .cloned()
            .collect()
    }

    fn expire_now(&self, now_ms: u64) -> Vec<TaskKey> {
        let mut gone = Vec::new();
        for shard in &self.shards {
            let mut shard = lock(shard);
            let due: Vec<TaskKey> = shard
                .tasks
                .iter()
                .filter(|(_, e)| e.task.expires_ms.is_some_and(|at| at <= now_ms))
                .map(|(k, _)| k.clone())
                .collect();
            for key in due {
                self.remove(&mut shard, &key);
                gone.push(key);
            }
        }
        gone
    }

    fn unfinished_now(&self) -> Vec<TaskKey> {
        let mut out = Vec::new();
        for shard in &self.shards {
            out.extend(
                lock(shard)
                    .tasks
                    .iter()
                    .filter(|(_, e)| {
                        matches!(e.task.state(), TaskState::Submitted | TaskState::Working)
                    })
                    .map(|(k, _)| k.clone()),
            );
        }
        out
    }
}

impl MemoryStore {
    fn counts_now(&self) -> Vec<(TaskState, u64)> {
        let mut counts: Vec<(TaskState, u64)> = Vec::new();
        for shard in &self.shards {
            for entry in lock(shard).tasks.values() {
                let state = entry.task.state();
                match counts.iter_mut().find(|(s, _)| *s == state) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((state, 1)),
                }
            }
        }
        counts
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// The listing order: latest status first, then by id.
fn order(task: &StoredTask) -> (std::cmp::Reverse<u64>, &str) {
    (std::cmp::Reverse(task.status_ms), &*task.task.id)
}

/// Where a page ended.
struct Position {
    status_ms: u64,
    id: String,
}

impl Position {
    fn as_order(&self) -> (std::cmp::Reverse<u64>, &str) {
        (std::cmp::Reverse(self.status_ms), self.id.as_str())
    }
}

fn token(task: &StoredTask) -> String {
    format!("{}:{}", task.status_ms, task.task.id)
}

fn parse_token(token: &str) -> Result<Position, StoreError> {
    let (ms, id) = token.split_once(':').ok_or(StoreError::BadPageToken)?;
    let status_ms = ms.parse().map_err(|_| StoreError::BadPageToken)?;
    Ok(Position {
        status_ms,
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
        event: Arc<StreamResponse>,
        snapshot: StoredTask,
    ) -> StoreFuture<'_, u64> {
        let result = self.append_now(key, expected_seq, event, snapshot);
        Box::pin(async move { result })
    }

    fn get(&self, key: &TaskKey) -> StoreFuture<'_, Option<StoredTask>> {
        let task = self.shard(key).tasks.get(key).map(|e| e.task.clone());
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

    fn expire(&self, now_ms: u64) -> StoreFuture<'_, Vec<TaskKey>> {
        let gone = self.expire_now(now_ms);
        Box::pin(async move { Ok(gone) })
    }

    fn unfinished(&self) -> StoreFuture<'_, Vec<TaskKey>> {
        let keys = self.unfinished_now();
        Box::pin(async move { Ok(keys) })
    }

    fn count_by_state(&self) -> StoreFuture<'_, Vec<(TaskState, u64)>> {
        let counts = self.counts_now();
        Box::pin(async move { Ok(counts) })
    }
}
