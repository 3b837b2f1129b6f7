//! Live tasks: what exists of a task only while something in this process follows it (a
//! running turn, a subscriber, a blocked sender). The data lives in the store; a `LiveTask`
//! adds the things a store cannot hold: the broadcast channel to subscribers, the wake-up of
//! blocked senders, the running turn's abort handle and turn counters, and a cached view of
//! the latest snapshot.
//!
//! The map of live tasks is sharded and holds them weakly: when the last holder lets go, the
//! task's entry removes itself, so the map only ever holds what is followed now.

use bytes::Bytes;
use ferry_proto::{A2aError, Message, StreamResponse, Task};
use ferry_store::{Event, TaskKey, TaskKeyHasher};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, Weak};
use tokio::sync::{Notify, broadcast};

/// Capacity of a task's live channel; a subscriber that falls further behind catches up from
/// the store.
pub(crate) const LIVE_CHANNEL_CAPACITY: usize = 64;

/// An event as it was stored, with its sequence number. Each of its encodings is made at
/// most once for all subscribers: its ProtoJSON (shared with the store, which may have made
/// it already: see [`Event`]), and each form a binding writes events in of its own.
#[derive(Debug)]
pub(crate) struct LoggedEvent {
    /// Position in the task's log (the SSE `id:`), from 1.
    pub seq: u64,
    /// The event, and its ProtoJSON.
    pub event: Arc<Event>,
    /// The bindings' own encodings, by [`EncodingSlot`] (none without gRPC and v0.3).
    #[cfg_attr(not(any(feature = "grpc", feature = "v03")), allow(dead_code))]
    encodings: [OnceLock<Bytes>; ENCODING_SLOTS],
}

/// How many bindings write events in a form of their own (gRPC's protobuf frame, v0.3's
/// JSON-RPC and REST shapes): each has a slot in every [`LoggedEvent`].
pub(crate) const ENCODING_SLOTS: usize = 3;

/// A binding's slot for its encoding of an event (below [`ENCODING_SLOTS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(any(feature = "grpc", feature = "v03")), allow(dead_code))]
pub(crate) struct EncodingSlot(pub(crate) usize);

impl LoggedEvent {
    /// Event `seq`.
    pub(crate) fn new(seq: u64, event: Arc<Event>) -> Self {
        Self {
            seq,
            event,
            encodings: Default::default(),
        }
    }

    /// The event.
    pub(crate) fn value(&self) -> &StreamResponse {
        self.event.value()
    }

    #[cfg_attr(not(any(feature = "grpc", feature = "v03")), allow(dead_code))]
    /// The event in the form of `slot`, made by `encode` for the first subscriber that needs
    /// it and shared by the rest.
    pub(crate) fn encoded(
        &self,
        slot: EncodingSlot,
        encode: impl FnOnce(&StreamResponse) -> Bytes,
    ) -> Bytes {
        match self.encodings.get(slot.0) {
            Some(cell) => cell.get_or_init(|| encode(self.value())).clone(),
            None => encode(self.value()),
        }
    }
}

#[cfg(test)]
mod encoding_tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn each_encoding_is_made_once_for_every_subscriber() {
        let value = Arc::new(StreamResponse::Message(ferry_proto::Message::user(
            "m",
            vec![],
        )));
        let logged = LoggedEvent::new(1, Arc::new(Event::new(value)));
        let made = AtomicUsize::new(0);
        let encode = |_: &StreamResponse| {
            made.fetch_add(1, Ordering::Relaxed);
            Bytes::from_static(b"frame")
        };
        let first = logged.encoded(EncodingSlot(0), encode);
        let second = logged.encoded(EncodingSlot(0), encode);
        assert_eq!(made.load(Ordering::Relaxed), 1, "made once");
        assert_eq!(first.as_ptr(), second.as_ptr(), "the same bytes, shared");
        logged.encoded(EncodingSlot(1), encode);
        assert_eq!(made.load(Ordering::Relaxed), 2, "each slot its own");
    }
}

/// True when `event` leaves its task in a terminal state (the end of every stream).
pub(crate) fn ends_task(event: &StreamResponse) -> bool {
    match event {
        StreamResponse::StatusUpdate(u) => u.status.state.is_terminal(),
        StreamResponse::Task(t) => t.status.state.is_terminal(),
        StreamResponse::Message(_) | StreamResponse::ArtifactUpdate(_) => false,
    }
}

/// What live subscribers receive.
#[derive(Debug, Clone)]
pub(crate) enum LiveItem {
    /// An event that was stored.
    Event(Arc<LoggedEvent>),
    /// A direct message reply to a new request (never stored: there is no task).
    Reply(Arc<Message>),
    /// Turn number `turn` ended (the agent's `execute` returned) after event `seq`.
    TurnEnded {
        /// The turn.
        turn: u64,
        /// The last event the turn produced (or before it).
        seq: u64,
    },
    /// The task expired and was forgotten.
    Gone,
}

/// The mutable part of a live task.
#[derive(Debug)]
pub(crate) struct View {
    /// The latest snapshot (for a task not yet published: SUBMITTED with its first message).
    pub task: Arc<Task>,
    /// The sequence number of the last stored event (0: none yet).
    pub seq: u64,
    /// The sequence number of the latest status-changing event (0 when none).
    pub status_seq: u64,
    /// The task's first event, as created (what `returnImmediately` answers with).
    pub created: Option<Arc<StreamResponse>>,
    /// True once the task is stored (its first non-message event arrived).
    pub published: bool,
    /// True while the task's creation is queued, not yet committed (stores that commit
    /// writes together): further events go on top of it, nobody sees it yet.
    pub publish_queued: bool,
    /// A direct reply given instead of a task.
    pub reply: Option<Message>,
    /// An error that ended a turn before the task was published.
    pub early_error: Option<A2aError>,
    /// Why the store refused an event of the running turn (the waiting sender's answer).
    pub store_error: Option<A2aError>,
    /// Why a queued event failed after its emit returned (the next emit's answer).
    pub write_failure: Option<ferry_agent::EmitError>,
    /// The latest queued, not yet committed snapshot and its sequence number.
    pub pending: Option<(Arc<Task>, u64)>,
    /// Queued writes not answered yet.
    pub in_flight: usize,
    /// Bumped when a queued write fails: what was queued after it is void.
    pub epoch: u64,
    /// Turns started so far (in this process).
    pub turns_started: u64,
    /// Turns finished so far.
    pub turns_finished: u64,
    /// Aborts the running turn.
    pub running: Option<tokio::task::AbortHandle>,
    /// The push configs a new task arrives with (a send's inline config), stored with its
    /// creation.
    pub initial_push: Vec<ferry_store::push::PushConfig>,
    /// The epoch of this replica's lease on the task while it writes it (several replicas on
    /// one store; see `TaskManager::lease`).
    pub lease: Option<u64>,
    /// Writers other than turns (a cancel) that use the lease now: a turn that ends meanwhile
    /// leaves it to them to give back (see `TaskManager::hold_lease`).
    pub lease_holds: u32,
    /// True once the task expired: it takes no more events.
    pub gone: bool,
    live: Option<broadcast::Sender<LiveItem>>,
}

impl View {
    fn new(task: Arc<Task>, seq: u64, published: bool) -> Self {
        Self {
            task,
            seq,
            status_seq: seq,
            created: None,
            published,
            publish_queued: false,
            reply: None,
            early_error: None,
            store_error: None,
            write_failure: None,
            pending: None,
            in_flight: 0,
            epoch: 0,
            turns_started: 0,
            turns_finished: 0,
            running: None,
            initial_push: Vec::new(),
            lease: None,
            lease_holds: 0,
            gone: false,
            live: None,
        }
    }

    /// The snapshot the next event applies to, and its sequence number: the last queued one,
    /// else the last stored one.
    pub(crate) fn head(&self) -> (Arc<Task>, u64) {
        match &self.pending {
            Some((task, seq)) => (task.clone(), *seq),
            None => (self.task.clone(), self.seq),
        }
    }

    /// Subscribes to live items; call with the view locked, so nothing is missed between the
    /// snapshot the caller takes and the first live item.
    pub(crate) fn subscribe(&mut self) -> broadcast::Receiver<LiveItem> {
        match &self.live {
            Some(tx) => tx.subscribe(),
            None => {
                let (tx, rx) = broadcast::channel(LIVE_CHANNEL_CAPACITY);
                self.live = Some(tx);
                rx
            }
        }
    }

    /// Sends stored event `seq` to current subscribers (if any; made only for them).
    pub(crate) fn broadcast_event(&mut self, seq: u64, event: Arc<Event>) {
        if self.live.is_some() {
            self.broadcast(LiveItem::Event(Arc::new(LoggedEvent::new(seq, event))));
        }
    }

    /// Sends a live item to current subscribers (if any).
    pub(crate) fn broadcast(&mut self, item: LiveItem) {
        if let Some(tx) = &self.live
            && tx.send(item).is_err()
        {
            // Nobody listens any more: drop the channel so idle tasks hold no buffer.
            self.live = None;
        }
    }
}

/// A task followed in this process.
#[derive(Debug)]
pub(crate) struct LiveTask {
    /// Which task.
    pub key: TaskKey,
    /// Its context.
    pub context_id: Arc<str>,
    /// The caller that created it (`None`: stored before owners were recorded).
    pub owner: Option<Arc<str>>,
    /// The cached snapshot and the live parts; held briefly, never across an await.
    pub view: Mutex<View>,
    /// Held by the one writer of the task while it stores an event (across the store call).
    pub(crate) writer: tokio::sync::Mutex<()>,
    /// Woken on every change (blocked senders wait on it).
    pub changed: Notify,
    /// Woken when no queued write is in flight any more.
    pub(crate) flushed: Notify,
    /// The push deliverer's wake-up, once the task has push configs: woken when an event is
    /// committed, so that its deliveries go at once (not at the deliverer's next look).
    pub(crate) push_wake: std::sync::OnceLock<Arc<Notify>>,
    home: Weak<LiveTasks>,
}

impl LiveTask {
    /// Waits until every queued write of the task was answered.
    pub(crate) async fn flushed(&self) {
        loop {
            let flushed = self.flushed.notified();
            if self.view.lock().in_flight == 0 {
                return;
            }
            flushed.await;
        }
    }
}

impl Drop for LiveTask {
    fn drop(&mut self) {
        if let Some(home) = self.home.upgrade() {
            home.forget(&self.key, self);
        }
    }
}

const SHARDS: usize = 32;

/// One shard of the map: live tasks by key, held weakly.
type Shard = Mutex<HashMap<TaskKey, Weak<LiveTask>, TaskKeyHasher>>;

/// The live tasks, by key, held weakly.
#[derive(Debug)]
pub(crate) struct LiveTasks {
    shards: Box<[Shard]>,
}

impl LiveTasks {
    /// An empty map.
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            shards: (0..SHARDS)
                .map(|_| Mutex::new(HashMap::default()))
                .collect(),
        })
    }

    fn shard(&self, key: &TaskKey) -> &Shard {
        &self.shards[key.shard(SHARDS)]
    }

    /// The live task `key`, if something follows it now.
    pub(crate) fn get(&self, key: &TaskKey) -> Option<Arc<LiveTask>> {
        self.shard(key).lock().get(key).and_then(Weak::upgrade)
    }

    /// The live task for `task` (its latest snapshot at `seq`): the one already followed,
    /// or a new one.
    pub(crate) fn follow(
        self: &Arc<Self>,
        tenant: &str,
        task: Arc<Task>,
        seq: u64,
        published: bool,
        owner: Option<Arc<str>>,
    ) -> Arc<LiveTask> {
        let key = TaskKey::new(tenant, task.id.clone());
        let mut shard = self.shard(&key).lock();
        if let Some(existing) = shard.get(&key).and_then(Weak::upgrade) {
            return existing;
        }
        let live = Arc::new(LiveTask {
            key: key.clone(),
            context_id: task.context_id.clone(),
            owner,
            view: Mutex::new(View::new(task, seq, published)),
            writer: tokio::sync::Mutex::new(()),
            changed: Notify::new(),
            flushed: Notify::new(),
            push_wake: std::sync::OnceLock::new(),
            home: Arc::downgrade(self),
        });
        shard.insert(key, Arc::downgrade(&live));
        live
    }

    /// Removes the entry of `dying` (called from its `Drop`), unless another live task took
    /// the key since.
    fn forget(&self, key: &TaskKey, dying: &LiveTask) {
        let mut shard = self.shard(key).lock();
        if shard
            .get(key)
            .is_some_and(|w| std::ptr::eq(w.as_ptr(), dying))
        {
            shard.remove(key);
        }
    }

    /// Every live task (for shutdown).
    pub(crate) fn all(&self) -> Vec<Arc<LiveTask>> {
        let mut out = Vec::new();
        for shard in self.shards.iter() {
            out.extend(shard.lock().values().filter_map(Weak::upgrade));
        }
        out
    }

    /// How many tasks are followed now.
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_proto::{TaskState, TaskStatus};

    fn task(id: &str) -> Arc<Task> {
        Arc::new(Task::new(
            id,
            "c",
            TaskStatus::now(TaskState::Working, None),
        ))
    }

    #[test]
    fn an_entry_lives_exactly_as_long_as_its_holders() {
        let map = LiveTasks::new();
        let a = map.follow("", task("a"), 1, true, None);
        let again = map.follow("", task("a"), 7, true, None);
        assert!(Arc::ptr_eq(&a, &again), "one live task per key");
        assert_eq!(again.view.lock().seq, 1, "the followed one, not a new one");
        drop(again);
        assert_eq!(map.len(), 1);
        drop(a);
        assert_eq!(map.len(), 0, "the last holder's drop removed the entry");
        assert!(map.get(&TaskKey::new("", "a")).is_none());
        let b = map.follow("t", task("a"), 2, true, None);
        assert_eq!(map.len(), 1, "tenants are apart: a new entry");
        drop(b);
        assert_eq!(map.len(), 0);
    }
}
