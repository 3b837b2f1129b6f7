//! One live task: its state, its event log with sequence numbers, and its subscribers.
//!
//! Each task has its own lock; nothing here is shared between tasks. Events are appended with a
//! monotonic sequence number and fanned out to live subscribers as `Arc`s; each event is
//! serialized at most once, when the first subscriber needs its bytes.

use bytes::Bytes;
use ferry_proto::{Message, StreamResponse, Task, TaskState, Timestamp};
use parking_lot::Mutex;
use std::collections::VecDeque;
use std::sync::{Arc, OnceLock};
use tokio::sync::{Notify, broadcast};

/// Capacity of a task's live channel; a subscriber that falls further behind catches up from
/// the event log.
pub(crate) const LIVE_CHANNEL_CAPACITY: usize = 64;

/// An event as stored in a task's log.
#[derive(Debug)]
pub struct LoggedEvent {
    /// Position in the task's log (the SSE `id:`).
    pub seq: u64,
    /// The event.
    pub event: StreamResponse,
    /// The task's state after this event.
    pub state_after: TaskState,
    json: OnceLock<Bytes>,
}

impl LoggedEvent {
    /// The event's ProtoJSON bytes, serialized once and shared.
    pub fn json(&self) -> &Bytes {
        self.json
            .get_or_init(|| Bytes::from(serde_json::to_vec(&self.event).unwrap_or_default()))
    }
}

/// What live subscribers receive.
#[derive(Debug, Clone)]
pub enum LiveItem {
    /// An event that was appended to the log.
    Event(Arc<LoggedEvent>),
    /// A direct message reply to a new request (never logged: there is no task).
    Reply(Arc<Message>),
    /// Turn number `n` ended (the agent's `execute` returned).
    TurnEnded(u64),
}

/// The mutable part of a task.
#[derive(Debug)]
pub struct TaskData {
    /// The task as clients see it.
    pub task: Task,
    /// Recent events, oldest first.
    pub log: VecDeque<Arc<LoggedEvent>>,
    /// Sequence number of the next event.
    pub next_seq: u64,
    /// Sequence number of the latest status event (0 when none).
    pub status_seq: u64,
    /// True once the task is visible (its first non-message event arrived).
    pub published: bool,
    /// A direct reply given instead of a task.
    pub reply: Option<Message>,
    /// An error that ended a turn before the task was published.
    pub early_error: Option<ferry_proto::A2aError>,
    /// Turns started so far.
    pub turns_started: u64,
    /// Turns finished so far.
    pub turns_finished: u64,
    /// Aborts the running turn.
    pub running: Option<tokio::task::AbortHandle>,
    live: Option<broadcast::Sender<LiveItem>>,
}

/// A live task.
#[derive(Debug)]
pub struct TaskRecord {
    /// Task id.
    pub id: String,
    /// Context id.
    pub context_id: String,
    /// Tenant ("" when none).
    pub tenant: String,
    /// Mutable state.
    pub data: Mutex<TaskData>,
    /// Woken on every change (blocking senders wait on it).
    pub changed: Notify,
    max_events: usize,
}

impl TaskRecord {
    /// A new, not yet published task in SUBMITTED with `message` as its history.
    pub fn new(
        id: String,
        context_id: String,
        tenant: String,
        message: Message,
        max_events: usize,
    ) -> Self {
        let task = Task {
            id: id.clone(),
            context_id: context_id.clone(),
            status: ferry_proto::TaskStatus::now(TaskState::Submitted, None),
            artifacts: Vec::new(),
            history: vec![message],
            metadata: None,
        };
        Self {
            id,
            context_id,
            tenant,
            data: Mutex::new(TaskData {
                task,
                log: VecDeque::with_capacity(8),
                next_seq: 0,
                status_seq: 0,
                published: false,
                reply: None,
                early_error: None,
                turns_started: 0,
                turns_finished: 0,
                running: None,
                live: None,
            }),
            changed: Notify::new(),
            max_events: max_events.max(1),
        }
    }

    /// Subscribes to live items; call with the data lock held so nothing is missed between the
    /// snapshot the caller takes and the first live item.
    pub fn subscribe_locked(data: &mut TaskData) -> broadcast::Receiver<LiveItem> {
        match &data.live {
            Some(tx) => tx.subscribe(),
            None => {
                let (tx, rx) = broadcast::channel(LIVE_CHANNEL_CAPACITY);
                data.live = Some(tx);
                rx
            }
        }
    }

    /// Appends an event to the log and fans it out. Call with the data lock held, after the
    /// task itself was updated.
    pub fn append_locked(&self, data: &mut TaskData, event: StreamResponse) -> Arc<LoggedEvent> {
        let seq = data.next_seq;
        data.next_seq += 1;
        if matches!(
            event,
            StreamResponse::StatusUpdate(_) | StreamResponse::Task(_)
        ) {
            data.status_seq = seq;
        }
        let logged = Arc::new(LoggedEvent {
            seq,
            event,
            state_after: data.task.status.state,
            json: OnceLock::new(),
        });
        if data.log.len() >= self.max_events {
            data.log.pop_front();
        }
        data.log.push_back(logged.clone());
        Self::broadcast_locked(data, LiveItem::Event(logged.clone()));
        logged
    }

    /// Sends a live item to current subscribers (if any).
    pub fn broadcast_locked(data: &mut TaskData, item: LiveItem) {
        if let Some(tx) = &data.live
            && tx.send(item).is_err()
        {
            // Nobody listens any more: drop the channel so idle tasks hold no buffer.
            data.live = None;
        }
    }

    /// Logged events with a sequence number greater than `after`, for a subscriber that lagged.
    pub fn events_after(&self, after: u64) -> Vec<Arc<LoggedEvent>> {
        let data = self.data.lock();
        data.log.iter().filter(|e| e.seq > after).cloned().collect()
    }

    /// The current state.
    pub fn state(&self) -> TaskState {
        self.data.lock().task.status.state
    }

    /// The status timestamp (what ListTasks orders by).
    pub fn status_time(&self) -> Timestamp {
        self.data
            .lock()
            .task
            .status
            .timestamp
            .unwrap_or_else(|| Timestamp::from_millis(0))
    }
}
