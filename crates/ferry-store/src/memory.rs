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

use crate::memory_outbox::Outbox;
use crate::push::{
    ClaimedDelivery, Delivery, DeliveryCounts, FinishedDelivery, PushConfig, PushConfigStore,
    PushStore,
};
use crate::size;
use crate::store::{Queued, StoreError, StoreFuture, TaskStore};
use crate::text;
use crate::types::{
    Event, ListQuery, Page, StoredEvent, StoredTask, TaskKey, TaskKeyHasher, visible_to,
};
use bytes::Bytes;
use ferry_proto::{StreamResponse, Task, TaskState};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

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

/// One task: what listing, expiry and eviction read (always at hand, never decoded), and
/// its snapshot and kept events.
#[derive(Debug)]
struct Entry {
    head: Head,
    body: Body,
    /// What this entry counts against the byte budget.
    bytes: usize,
    /// What its snapshot counts of that (so an append measures only what its event changed).
    snapshot_bytes: usize,
    /// Its push-notification configs, oldest first (they go with the entry).
    push: Vec<PushConfig>,
}

/// The parts of a stored task that filters and budgets look at.
#[derive(Debug)]
struct Head {
    context_id: Arc<str>,
    /// Who created the task (never changes). Its text is the caller's, shared by all of the
    /// caller's tasks, so the budget does not count it per task.
    owner: Option<Arc<str>>,
    state: TaskState,
    seq: u64,
    status_ms: u64,
    expires_ms: Option<u64>,
}

impl Head {
    fn of(task: &StoredTask) -> Head {
        Head {
            context_id: task.task.context_id.clone(),
            owner: task.owner.clone(),
            state: task.state(),
            seq: task.seq,
            status_ms: task.status_ms,
            expires_ms: task.expires_ms,
        }
    }
}

/// An event as kept: its sequence number, its value (shared with the snapshot and the live
/// fan-out, so this copies no payload) and a weak link to the live event it came with.
///
/// The link lets the seal share one serialization with the server's streams: it takes an
/// event's ProtoJSON when a stream made it first, and gives the live event the sealed text
/// otherwise (see [`Sealed::seal`]). Weak, so that the store never keeps that text alive
/// itself: what the budget counts is what the store holds.
#[derive(Debug)]
struct KeptEvent {
    seq: u64,
    value: Arc<StreamResponse>,
    live: Weak<Event>,
}

/// A task's snapshot and kept events.
#[derive(Debug)]
enum Body {
    /// A task that may still change: values, shared with the server's live view.
    Open {
        task: Arc<Task>,
        events: VecDeque<KeptEvent>,
    },
    /// A terminal task, sealed into the bytes it is served as (see [`Sealed`]).
    Sealed(Sealed),
}

/// A terminal task as one buffer: its snapshot's ProtoJSON, then each kept event's (the
/// events' text shared, where the server still holds them, with the live events).
///
/// A terminal task changes no more, and most are read rarely if ever before they expire or
/// are evicted; by then they are cold, and what freeing one costs grows with the number of
/// its allocations (a small task holds some thirty). Sealed, it holds two, and its
/// structured values were freed while still hot. Reads decode it (as a SQL store's would).
#[derive(Debug)]
struct Sealed {
    json: Bytes,
    /// Where the snapshot ends, then where each event ends.
    ends: Box<[u32]>,
    /// The sequence number of the first kept event.
    first_seq: u64,
}

impl Sealed {
    /// Seals `task` and `events`; `None` when they do not serialize (then they stay open).
    ///
    /// An event whose live twin has its ProtoJSON already (a stream sent it) is copied from
    /// it; the others are serialized here, and their live twins get that text, so that a
    /// stream sending them later does not serialize them again. Both are the bytes
    /// [`Event::json`] makes.
    fn seal(task: &Task, events: &VecDeque<KeptEvent>) -> Option<Sealed> {
        let mut json = Vec::with_capacity(1024);
        let mut ends = Vec::with_capacity(events.len() + 1);
        serde_json::to_writer(&mut json, task).ok()?;
        ends.push(u32::try_from(json.len()).ok()?);
        for e in events {
            match e.live.upgrade().filter(|live| live.is_serialized()) {
                Some(live) => json.extend_from_slice(live.json()),
                None => serde_json::to_writer(&mut json, &*e.value).ok()?,
            }
            ends.push(u32::try_from(json.len()).ok()?);
        }
        let sealed = Sealed {
            // Shrunk to its length first: the budget counts the length, and a `Vec` grown by
            // doubling may hold nearly twice that.
            json: Bytes::from(json.into_boxed_slice()),
            ends: ends.into_boxed_slice(),
            first_seq: events.front().map_or(0, |e| e.seq),
        };
        for (i, e) in events.iter().enumerate() {
            if let Some(live) = e.live.upgrade() {
                live.offer_json(sealed.text(i + 1));
            }
        }
        Some(sealed)
    }

    /// What it counts against the byte budget.
    fn bytes(&self) -> usize {
        self.json.len() + self.ends.len() * std::mem::size_of::<u32>()
    }

    fn slice(&self, i: usize) -> &[u8] {
        &self.json[self.range(i)]
    }

    /// Part `i` (0: the snapshot, then each kept event) as shared bytes.
    fn text(&self, i: usize) -> Bytes {
        self.json.slice(self.range(i))
    }

    fn range(&self, i: usize) -> std::ops::Range<usize> {
        let start = i.checked_sub(1).map_or(0, |j| self.ends[j] as usize);
        start..self.ends[i] as usize
    }

    fn task(&self) -> Result<Task, StoreError> {
        serde_json::from_slice(self.slice(0)).map_err(corrupt)
    }

    /// The number of kept events.
    fn len(&self) -> usize {
        self.ends.len() - 1
    }

    /// Kept event `i` (0: the oldest kept).
    fn event(&self, i: usize) -> Result<StoredEvent, StoreError> {
        let json = self.text(i + 1);
        let value = serde_json::from_slice(&json).map_err(corrupt)?;
        // The text it was read from is its ProtoJSON: a stream sends it as it is.
        let event = Event::with_json(Arc::new(value), json);
        Ok(StoredEvent {
            seq: self.first_seq + i as u64,
            event: Arc::new(event),
        })
    }

    /// Back to values (a terminal task written again).
    fn open(&self) -> Result<(Arc<Task>, VecDeque<KeptEvent>), StoreError> {
        let events = (0..self.len())
            .map(|i| {
                self.event(i).map(|e| KeptEvent {
                    seq: e.seq,
                    value: e.event.value().clone(),
                    live: Weak::new(),
                })
            })
            .collect::<Result<_, _>>()?;
        Ok((Arc::new(self.task()?), events))
    }
}

/// A sealed task that does not read back: a bug of this store, not the caller's.
fn corrupt(e: serde_json::Error) -> StoreError {
    StoreError::Unavailable(format!("a sealed task does not read back: {e}"))
}

impl Entry {
    /// A new entry of `bytes` (its tenant's length included, `tenant_len`).
    fn new(task: StoredTask, bytes: usize, tenant_len: usize) -> Entry {
        let mut entry = Entry {
            head: Head::of(&task),
            body: Body::Open {
                task: task.task,
                events: VecDeque::new(),
            },
            bytes,
            snapshot_bytes: bytes,
            push: Vec::new(),
        };
        if entry.head.state.is_terminal() {
            entry.seal(tenant_len);
        }
        entry
    }

    /// The stored task, with its snapshot (decoded when sealed).
    fn stored(&self, tenant: &str) -> Result<StoredTask, StoreError> {
        let task = match &self.body {
            Body::Open { task, .. } => task.clone(),
            Body::Sealed(sealed) => Arc::new(sealed.task()?),
        };
        Ok(StoredTask {
            tenant: tenant.to_owned(),
            owner: self.head.owner.clone(),
            task,
            seq: self.head.seq,
            status_ms: self.head.status_ms,
            expires_ms: self.head.expires_ms,
            lease: None,
        })
    }

    /// Seals a terminal task (its tenant `tenant_len` bytes long, counted with its
    /// snapshot); its byte count becomes what the sealed bytes take.
    fn seal(&mut self, tenant_len: usize) {
        if let Body::Open { task, events } = &self.body
            && let Some(sealed) = Sealed::seal(task, events)
        {
            self.bytes = sealed.bytes() + tenant_len;
            self.snapshot_bytes = sealed.slice(0).len() + tenant_len;
            self.body = Body::Sealed(sealed);
        }
    }
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
    /// The push deliveries of tasks that have configs (see [`crate::memory_outbox`]).
    outbox: Mutex<Outbox>,
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
            outbox: Mutex::new(Outbox::default()),
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
                self.release(key, &entry);
                true
            }
            None => false,
        }
    }

    /// Gives back what a removed entry counted, and forgets its deliveries.
    fn release(&self, key: &TaskKey, entry: &Entry) {
        self.count.fetch_sub(1, Ordering::AcqRel);
        self.bytes.fetch_sub(entry.bytes, Ordering::AcqRel);
        if !entry.push.is_empty() {
            lock(&self.outbox).forget_task(key);
        }
    }

    /// Evicts the terminal task of `shard` that ended first; false when it has none.
    ///
    /// A task whose push deliveries are still pending is passed over (it keeps its place):
    /// evicting it would drop events already acknowledged to their webhooks' owners. When
    /// only such tasks are left, nothing is evicted and the store is full until the
    /// deliverer catches up.
    fn evict_from(&self, shard: &mut Shard) -> bool {
        let mut waiting = Vec::new();
        let evicted = loop {
            let Some((at, key)) = shard.ended.pop_front() else {
                break false;
            };
            // One lookup: an entry here is terminal unless its task went and a new one took
            // its key since (then it goes back).
            let Some(entry) = shard.tasks.remove(&key) else {
                continue;
            };
            if !entry.head.state.is_terminal() {
                shard.tasks.insert(key, entry);
                continue;
            }
            if !entry.push.is_empty() && lock(&self.outbox).has_pending(&key) {
                shard.tasks.insert(key.clone(), entry);
                waiting.push((at, key));
                continue;
            }
            self.release(&key, &entry);
            break true;
        };
        for passed in waiting.into_iter().rev() {
            shard.ended.push_front(passed);
        }
        evicted
    }

    /// Evicts the terminal task that ended first, of any shard: the shards are tried in the
    /// order their oldest ended (one lock at a time); false when none has a task it may
    /// evict (a shard's oldest may be waiting for its deliveries, so the next shard is tried
    /// rather than that one again).
    fn evict_oldest(&self) -> bool {
        let mut oldest: Vec<(u64, usize)> = self
            .shards
            .iter()
            .enumerate()
            .filter_map(|(i, s)| lock(s).ended.front().map(|(at, _)| (*at, i)))
            .collect();
        oldest.sort_unstable();
        oldest
            .into_iter()
            .any(|(_, i)| self.evict_from(&mut lock(&self.shards[i])))
    }

    /// Evicts the oldest ended tasks, sparing `just_ended`, while the store is over its byte
    /// budget: an event that ends a task is taken even then (see the module docs), and its
    /// sealed form may be larger than the values it replaced (JSON escapes, base64).
    fn trim(&self, just_ended: &TaskKey) {
        while self.bytes() > self.limits.max_bytes {
            let oldest = self
                .shards
                .iter()
                .enumerate()
                .filter_map(|(i, s)| {
                    let shard = lock(s);
                    let (at, key) = shard.ended.front()?;
                    (key != just_ended).then_some((*at, i))
                })
                .min();
            let Some((_, i)) = oldest else {
                return;
            };
            if !self.evict_from(&mut lock(&self.shards[i])) {
                return;
            }
        }
    }

    fn create_now(&self, task: StoredTask, push: Vec<PushConfig>) -> Result<(), StoreError> {
        let key = task.key();
        let bytes = size::task_bytes(&task.task)
            + key.tenant.len()
            + push.iter().map(config_bytes).sum::<usize>();
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
            let tenant_len = key.tenant.len();
            let mut entry = Entry::new(task, bytes, tenant_len);
            entry.push = push;
            crate::push::sort_configs(&mut entry.push);
            self.resize(bytes, entry.bytes);
            shard.tasks.insert(key, entry);
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
        event: Arc<Event>,
        snapshot: StoredTask,
    ) -> Result<u64, StoreError> {
        let event_bytes = size::event_bytes(event.value());
        let ends = snapshot.state().is_terminal();
        let tenant_len = key.tenant.len();
        loop {
            let mut guard = self.shard(key);
            let shard = &mut *guard;
            let entry = shard
                .tasks
                .get_mut(key)
                .ok_or_else(|| StoreError::NotFound(key.id.to_string()))?;
            if entry.head.seq != expected_seq {
                return Err(StoreError::Conflict {
                    task: key.id.to_string(),
                    expected: expected_seq,
                    actual: entry.head.seq,
                });
            }
            let was_terminal = entry.head.state.is_terminal();
            if let Body::Sealed(sealed) = &entry.body {
                // Written again after it ended: back to values (rare), measured as such.
                let (task, events) = sealed.open()?;
                let snapshot_bytes = size::task_bytes(&task) + tenant_len;
                let open_bytes = snapshot_bytes
                    + events
                        .iter()
                        .map(|e| size::event_bytes(&e.value))
                        .sum::<usize>();
                self.resize(entry.bytes, open_bytes);
                entry.snapshot_bytes = snapshot_bytes;
                entry.bytes = open_bytes;
                entry.body = Body::Open { task, events };
            }
            let old_snapshot_bytes = entry.snapshot_bytes;
            let Body::Open { task, events } = &mut entry.body else {
                unreachable!("opened above");
            };
            let new_snapshot_bytes = size::task_bytes_after(
                task,
                old_snapshot_bytes.saturating_sub(tenant_len),
                &snapshot.task,
            ) + tenant_len;
            let dropped_bytes = if events.len() >= self.limits.max_events_per_task {
                events.front().map_or(0, |e| size::event_bytes(&e.value))
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
            let seq = expected_seq + 1;
            entry.head = Head {
                seq,
                // The owner is the creation's, whatever a later snapshot says.
                owner: entry.head.owner.take(),
                ..Head::of(&snapshot)
            };
            *task = snapshot.task;
            if events.len() >= self.limits.max_events_per_task {
                events.pop_front();
            }
            // The value is kept, and only a weak link to the event: what the budget counts is
            // what the store holds, whatever text a stream made of it.
            events.push_back(KeptEvent {
                seq,
                value: event.value().clone(),
                live: Arc::downgrade(&event),
            });
            entry.bytes = entry.bytes + new_snapshot_bytes + event_bytes - before;
            entry.snapshot_bytes = new_snapshot_bytes;
            if !entry.push.is_empty() {
                lock(&self.outbox).add(key, &entry.push, seq, event.json());
            }
            if ends {
                let open_bytes = entry.bytes;
                entry.seal(tenant_len);
                self.resize(open_bytes, entry.bytes);
                if !was_terminal {
                    shard.ended.push_back((entry.head.status_ms, key.clone()));
                }
                drop(guard);
                self.trim(key);
            }
            return Ok(seq);
        }
    }

    /// Moves the byte count from `old` to `new` (a sealed or opened task; never refused).
    fn resize(&self, old: usize, new: usize) {
        if new > old {
            self.bytes.fetch_add(new - old, Ordering::AcqRel);
        } else {
            self.bytes.fetch_sub(old - new, Ordering::AcqRel);
        }
    }

    fn list_now(&self, query: &ListQuery) -> Result<Page, StoreError> {
        let after = match &query.page_token {
            Some(token) => Some(parse_token(token)?),
            None => None,
        };
        // Filter and sort on the heads; only the page's tasks are materialized (decoded when
        // sealed).
        let mut matching: Vec<(u64, TaskKey)> = Vec::new();
        for shard in &self.shards {
            for (key, entry) in lock(shard).tasks.iter() {
                let head = &entry.head;
                let keep = text::same(&key.tenant, &query.tenant)
                    && query
                        .context_id
                        .as_ref()
                        .is_none_or(|c| *head.context_id == **c)
                    && query.state.is_none_or(|s| head.state == s)
                    && query.status_since_ms.is_none_or(|t| head.status_ms >= t)
                    && visible_to(query.owner.as_deref(), head.owner.as_deref());
                if keep {
                    matching.push((head.status_ms, key.clone()));
                }
            }
        }
        matching.sort_by(|a, b| order(a).cmp(&order(b)));
        let total = matching.len();
        let start = match after {
            Some(position) => matching.partition_point(|m| order(m) <= position.as_order()),
            None => 0,
        };
        let size = query.page_size.max(1);
        let mut tasks = Vec::with_capacity(size.min(total));
        for (_, key) in matching.iter().skip(start).take(size) {
            // Gone meanwhile (expired, evicted): the page is one shorter.
            if let Some(entry) = self.shard(key).tasks.get(key) {
                tasks.push(entry.stored(&key.tenant)?);
            }
        }
        let next_page_token = (start + size < total)
            .then(|| tasks.last().map(token))
            .flatten();
        Ok(Page {
            tasks,
            next_page_token,
            total,
        })
    }

    fn events_now(
        &self,
        key: &TaskKey,
        seq: u64,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let shard = self.shard(key);
        let Some(entry) = shard.tasks.get(key) else {
            return Ok(Vec::new());
        };
        match &entry.body {
            Body::Open { events, .. } => {
                // Events are consecutive: skip straight to the first one after `seq`.
                let first = events.front().map_or(0, |e| e.seq);
                let skip =
                    usize::try_from(seq.saturating_sub(first.saturating_sub(1))).unwrap_or(0);
                Ok(events
                    .iter()
                    .skip(skip)
                    .filter(|e| e.seq > seq)
                    .take(limit)
                    .map(|e| StoredEvent {
                        seq: e.seq,
                        // The live event while the server holds it (with its text, if a
                        // stream made it), else the kept value.
                        event: e
                            .live
                            .upgrade()
                            .unwrap_or_else(|| Arc::new(Event::new(e.value.clone()))),
                    })
                    .collect())
            }
            Body::Sealed(sealed) => {
                let skip = usize::try_from(seq.saturating_sub(sealed.first_seq.saturating_sub(1)))
                    .unwrap_or(usize::MAX);
                (skip.min(sealed.len())..sealed.len())
                    .take(limit)
                    .map(|i| sealed.event(i))
                    .collect()
            }
        }
    }

    fn expire_now(&self, now_ms: u64) -> Vec<TaskKey> {
        let mut gone = Vec::new();
        for shard in &self.shards {
            let mut shard = lock(shard);
            let due: Vec<TaskKey> = shard
                .tasks
                .iter()
                .filter(|(_, e)| e.head.expires_ms.is_some_and(|at| at <= now_ms))
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
                        matches!(e.head.state, TaskState::Submitted | TaskState::Working)
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
                let state = entry.head.state;
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

/// The listing order of a task (its status time, its key): latest status first, then by id.
fn order((status_ms, key): &(u64, TaskKey)) -> (std::cmp::Reverse<u64>, &str) {
    (std::cmp::Reverse(*status_ms), &*key.id)
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
        let result = self.create_now(task, Vec::new());
        Box::pin(async move { result })
    }

    fn queue_create_with_push(
        &self,
        task: StoredTask,
        configs: Vec<PushConfig>,
    ) -> StoreFuture<'_, Queued<()>> {
        let result = self.create_now(task, configs);
        Box::pin(async move { Ok(Box::pin(async move { result }) as Queued<()>) })
    }

    fn push(&self) -> Option<&dyn PushStore> {
        Some(self)
    }

    fn append(
        &self,
        key: &TaskKey,
        expected_seq: u64,
        event: Arc<Event>,
        snapshot: StoredTask,
    ) -> StoreFuture<'_, u64> {
        let result = self.append_now(key, expected_seq, event, snapshot);
        Box::pin(async move { result })
    }

    fn get(&self, key: &TaskKey) -> StoreFuture<'_, Option<StoredTask>> {
        let task = self
            .shard(key)
            .tasks
            .get(key)
            .map(|e| e.stored(&key.tenant))
            .transpose();
        Box::pin(async move { task })
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
        Box::pin(async move { events })
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

/// What a config counts against the byte budget.
fn config_bytes(config: &PushConfig) -> usize {
    config.id.len() + config.config.len() + std::mem::size_of::<PushConfig>()
}

impl PushConfigStore for MemoryStore {
    fn put_push_config(
        &self,
        key: &TaskKey,
        config: PushConfig,
        max_per_task: usize,
    ) -> StoreFuture<'_, ()> {
        let outcome = (|| {
            let mut shard = self.shard(key);
            let entry = shard
                .tasks
                .get_mut(key)
                .ok_or_else(|| StoreError::NotFound(key.id.to_string()))?;
            let added = config_bytes(&config);
            let count = entry.push.len();
            match entry.push.iter_mut().find(|c| c.id == config.id) {
                Some(kept) => {
                    let removed = config_bytes(kept);
                    *kept = PushConfig {
                        created_ms: kept.created_ms,
                        ..config
                    };
                    entry.bytes = entry.bytes.saturating_sub(removed) + added;
                    self.bytes.fetch_sub(removed, Ordering::AcqRel);
                }
                None if count >= max_per_task => {
                    return Err(StoreError::PushConfigLimit {
                        limit: max_per_task,
                    });
                }
                None => {
                    entry.push.push(config);
                    entry.bytes += added;
                }
            }
            self.bytes.fetch_add(added, Ordering::AcqRel);
            crate::push::sort_configs(&mut entry.push);
            Ok(())
        })();
        Box::pin(async move { outcome })
    }

    fn get_push_config(&self, key: &TaskKey, id: &str) -> StoreFuture<'_, Option<PushConfig>> {
        let found = self
            .shard(key)
            .tasks
            .get(key)
            .and_then(|e| e.push.iter().find(|c| c.id == id).cloned());
        Box::pin(async move { Ok(found) })
    }

    fn list_push_configs(&self, key: &TaskKey) -> StoreFuture<'_, Vec<PushConfig>> {
        let all = self
            .shard(key)
            .tasks
            .get(key)
            .map(|e| e.push.clone())
            .unwrap_or_default();
        Box::pin(async move { Ok(all) })
    }

    fn delete_push_config(&self, key: &TaskKey, id: &str) -> StoreFuture<'_, bool> {
        let mut shard = self.shard(key);
        let removed = shard.tasks.get_mut(key).and_then(|entry| {
            let at = entry.push.iter().position(|c| c.id == id)?;
            let gone = entry.push.remove(at);
            let bytes = config_bytes(&gone);
            entry.bytes = entry.bytes.saturating_sub(bytes);
            Some(bytes)
        });
        if removed.is_some() {
            lock(&self.outbox).forget_config(key, id);
        }
        drop(shard);
        if let Some(bytes) = removed {
            self.bytes.fetch_sub(bytes, Ordering::AcqRel);
        }
        Box::pin(async move { Ok(removed.is_some()) })
    }
}

impl PushStore for MemoryStore {
    fn claim_deliveries(
        &self,
        now_ms: u64,
        lease: &str,
        lease_until_ms: u64,
        limit: usize,
    ) -> StoreFuture<'_, Vec<ClaimedDelivery>> {
        let claims = lock(&self.outbox).claim(now_ms, lease, lease_until_ms, limit);
        // The configs' text, read after the outbox's lock is let go (see its module docs).
        let claimed = claims
            .into_iter()
            .filter_map(|claim| {
                let config = self
                    .shard(&claim.key)
                    .tasks
                    .get(&claim.key)?
                    .push
                    .iter()
                    .find(|c| c.id == claim.delivery.config_id)?
                    .config
                    .clone();
                Some(ClaimedDelivery {
                    key: claim.key,
                    delivery: claim.delivery,
                    config,
                    event: claim.event,
                })
            })
            .collect();
        Box::pin(async move { Ok(claimed) })
    }

    fn finish_deliveries(
        &self,
        finished: Vec<FinishedDelivery>,
        now_ms: u64,
    ) -> StoreFuture<'_, ()> {
        lock(&self.outbox).finish(finished, now_ms);
        Box::pin(async move { Ok(()) })
    }

    fn list_deliveries(&self, key: &TaskKey) -> StoreFuture<'_, Vec<Delivery>> {
        let all = lock(&self.outbox).list(key);
        Box::pin(async move { Ok(all) })
    }

    fn redeliver(&self, key: &TaskKey, id: &str) -> StoreFuture<'_, bool> {
        let done = lock(&self.outbox).redeliver(key, id);
        Box::pin(async move { Ok(done) })
    }

    fn count_deliveries(&self) -> StoreFuture<'_, DeliveryCounts> {
        let counts = lock(&self.outbox).counts();
        Box::pin(async move { Ok(counts) })
    }
}
