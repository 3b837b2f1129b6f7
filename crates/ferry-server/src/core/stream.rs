//! A task's event stream as one subscriber sees it: a first item (the task snapshot, the
//! direct reply, or nothing when it resumes), then events in sequence order, ending at a
//! terminal state (or, for the stream of a send, when the agent's turn ends).
//!
//! Live events come over the task's broadcast channel; whatever a subscriber has not seen
//! and the channel does not hold (it resumes after `Last-Event-ID`, or it fell behind) is read
//! from the store first, so it sees every event once, in order. If the store no longer holds
//! what it missed, the stream ends with an error instead of silently skipping.
//!
//! [`LocalStream::next`] is cancel-safe: it changes nothing until an await completed, so
//! dropping it (the SSE body's keep-alive timer does) loses nothing.

use crate::core::live::{EncodingSlot, LiveItem, LiveTask, LoggedEvent, ends_task};
use crate::core::manager::{TaskManager, store_error};
use bytes::Bytes;
use ferry_proto::{A2aError, ErrorKind, StreamResponse};
use ferry_store::Event;
use std::collections::VecDeque;
use std::sync::Arc;
use tokio::sync::broadcast::{self, error::RecvError};

/// Events read from the store at once when catching up.
const CATCH_UP_CHUNK: usize = 256;

/// One item for the wire: the event and its sequence number (the SSE `id:`). Each binding
/// takes the form it sends: the ProtoJSON (made once per event and shared with the store),
/// its own encoding (made once per event for every subscriber), or the value.
#[derive(Debug, Clone)]
pub(crate) struct StreamItem {
    /// Sequence number in the task's log (`None` for a direct reply, which has no task).
    pub seq: Option<u64>,
    event: ItemEvent,
}

#[derive(Debug, Clone)]
enum ItemEvent {
    /// From the live log: its encodings are shared by every subscriber.
    Logged(Arc<LoggedEvent>),
    /// Read back from the store (its ProtoJSON is the text the store kept, when it keeps
    /// text).
    Stored(Arc<Event>),
    /// A snapshot or a reply, made for this stream alone.
    Fresh(Arc<StreamResponse>),
}

impl StreamItem {
    fn logged(e: &Arc<LoggedEvent>) -> Self {
        Self {
            seq: Some(e.seq),
            event: ItemEvent::Logged(e.clone()),
        }
    }

    fn stored(seq: u64, event: Arc<Event>) -> Self {
        Self {
            seq: Some(seq),
            event: ItemEvent::Stored(event),
        }
    }

    pub(crate) fn fresh(seq: Option<u64>, event: Arc<StreamResponse>) -> Self {
        Self {
            seq,
            event: ItemEvent::Fresh(event),
        }
    }

    /// The `StreamResponse`.
    pub(crate) fn event(&self) -> &StreamResponse {
        match &self.event {
            ItemEvent::Logged(e) => e.value(),
            ItemEvent::Stored(e) => e.value(),
            ItemEvent::Fresh(e) => e,
        }
    }

    /// The `StreamResponse` as ProtoJSON.
    pub(crate) fn json(&self) -> Bytes {
        match &self.event {
            ItemEvent::Logged(e) => e.event.json().clone(),
            ItemEvent::Stored(e) => e.json().clone(),
            ItemEvent::Fresh(e) => Bytes::from(serde_json::to_vec(&**e).unwrap_or_default()),
        }
    }

    #[cfg_attr(not(any(feature = "grpc", feature = "v03")), allow(dead_code))]
    /// The event in a binding's own form (`slot`), made by `encode`: once for all
    /// subscribers for an event of the live log, for this stream alone otherwise.
    pub(crate) fn encoded(
        &self,
        slot: EncodingSlot,
        encode: impl FnOnce(&StreamResponse) -> Bytes,
    ) -> Bytes {
        match &self.event {
            ItemEvent::Logged(e) => e.encoded(slot, encode),
            ItemEvent::Stored(_) | ItemEvent::Fresh(_) => encode(self.event()),
        }
    }
}

/// The stream of one subscriber, read here.
#[derive(Debug)]
pub(crate) struct LocalStream {
    live: Arc<LiveTask>,
    manager: Arc<TaskManager>,
    rx: broadcast::Receiver<LiveItem>,
    first: Option<StreamItem>,
    /// Events read from the store, not yet handed out (with whether each ends the task).
    pending: VecDeque<(StreamItem, bool)>,
    /// The last sequence number handed out (or queued in `pending`).
    last_seq: u64,
    /// Events up to this one are read from the store before live ones.
    behind: u64,
    close_after_turn: Option<u64>,
    turn_end_seq: Option<u64>,
    done: bool,
}

/// What the first item of a new task's stream turned out to be.
pub(crate) enum Opening {
    /// The stream (its first item is ready).
    Stream(LocalStream),
    /// The turn failed before any event.
    Error(A2aError),
}

impl LocalStream {
    fn new(
        live: Arc<LiveTask>,
        manager: Arc<TaskManager>,
        rx: broadcast::Receiver<LiveItem>,
        last_seq: u64,
        behind: u64,
    ) -> Self {
        Self {
            live,
            manager,
            rx,
            first: None,
            pending: VecDeque::new(),
            last_seq,
            behind,
            close_after_turn: None,
            turn_end_seq: None,
            done: false,
        }
    }

    /// A stream that starts with `snapshot` (the task at event `seq`); it ends after the
    /// snapshot when that is terminal, else after turn `close_after_turn` when given.
    pub(crate) fn with_snapshot(
        live: Arc<LiveTask>,
        manager: Arc<TaskManager>,
        rx: broadcast::Receiver<LiveItem>,
        snapshot: StreamResponse,
        seq: u64,
        close_after_turn: Option<u64>,
    ) -> Self {
        let mut s = Self::new(live, manager, rx, seq, seq);
        s.done = ends_task(&snapshot);
        s.first = Some(StreamItem::fresh(Some(seq), Arc::new(snapshot)));
        s.close_after_turn = close_after_turn;
        s
    }

    /// A stream that resumes after event `after`, reading what it missed up to event `now`
    /// (the task's latest) from the store first; `over` when nothing more will come.
    pub(crate) fn resumed(
        live: Arc<LiveTask>,
        manager: Arc<TaskManager>,
        rx: broadcast::Receiver<LiveItem>,
        (after, now): (u64, u64),
        over: bool,
    ) -> Self {
        let mut s = Self::new(live, manager, rx, after, now);
        s.done = over;
        s
    }

    /// Waits for the first item of a brand-new task's stream: the task (first stored event), a
    /// direct reply, or the error that ended the turn before either.
    pub(crate) async fn open_new(
        live: Arc<LiveTask>,
        manager: Arc<TaskManager>,
        rx: broadcast::Receiver<LiveItem>,
        turn: u64,
    ) -> Opening {
        let mut s = Self::new(live, manager, rx, 0, 0);
        s.close_after_turn = Some(turn);
        match s.next().await {
            Some(Ok(item)) => {
                s.first = Some(item);
                // A reply is the whole stream; `next` marked it done.
                Opening::Stream(s)
            }
            Some(Err(e)) => Opening::Error(e),
            None => {
                let early = s.live.view.lock().early_error.clone();
                Opening::Error(early.unwrap_or_else(|| {
                    A2aError::new(
                        ErrorKind::InvalidAgentResponse,
                        "the agent ended its turn without a reply or a task",
                    )
                }))
            }
        }
    }

    /// The next item; `None` when the stream is over.
    pub(crate) async fn next(&mut self) -> Option<Result<StreamItem, A2aError>> {
        if let Some(first) = self.first.take() {
            return Some(Ok(first));
        }
        loop {
            if let Some((item, ends)) = self.pending.pop_front() {
                self.done |= ends;
                return Some(Ok(item));
            }
            if self.done {
                return None;
            }
            if self.last_seq < self.behind {
                if let Err(e) = self.catch_up().await {
                    self.done = true;
                    return Some(Err(e));
                }
                continue;
            }
            if self.turn_end_seq.is_some_and(|s| self.last_seq >= s) {
                self.done = true;
                return None;
            }
            match self.rx.recv().await {
                Ok(LiveItem::Event(e)) => {
                    if e.seq <= self.last_seq {
                        continue;
                    }
                    if e.seq > self.last_seq + 1 {
                        // Something came in between that this stream has not seen.
                        self.behind = e.seq;
                        continue;
                    }
                    self.last_seq = e.seq;
                    self.done = ends_task(e.value());
                    return Some(Ok(StreamItem::logged(&e)));
                }
                Ok(LiveItem::Reply(m)) => {
                    self.done = true;
                    return Some(Ok(StreamItem::fresh(
                        None,
                        Arc::new(StreamResponse::Message((*m).clone())),
                    )));
                }
                Ok(LiveItem::TurnEnded { turn, seq }) => {
                    if self.close_after_turn.is_some_and(|t| turn >= t) {
                        self.turn_end_seq = Some(seq);
                        self.behind = self.behind.max(seq);
                    }
                }
                Ok(LiveItem::Gone) => {
                    self.done = true;
                    return Some(Err(
                        A2aError::task_not_found(&self.live.key.id).with_meta("expired", "true")
                    ));
                }
                Err(RecvError::Lagged(_)) => {
                    let now = self.live.view.lock().seq;
                    self.behind = self.behind.max(now);
                }
                Err(RecvError::Closed) => {
                    self.done = true;
                    return None;
                }
            }
        }
    }

    /// Reads the next events this stream missed from the store into `pending`.
    async fn catch_up(&mut self) -> Result<(), A2aError> {
        let events = self
            .manager
            .events_after(&self.live.key, self.last_seq, CATCH_UP_CHUNK)
            .await
            .map_err(store_error)?;
        let expected = self.last_seq + 1;
        match events.first() {
            Some(first) if first.seq == expected => {}
            Some(first) => {
                return Err(A2aError::internal(format!(
                    "the stream fell behind and events {expected}..{} are no longer kept",
                    first.seq
                )));
            }
            None => {
                return Err(A2aError::internal(format!(
                    "the stream fell behind and event {expected} is no longer kept"
                )));
            }
        }
        for e in events {
            self.last_seq = e.seq;
            let ends = ends_task(e.event.value());
            self.pending
                .push_back((StreamItem::stored(e.seq, e.event), ends));
        }
        Ok(())
    }
}

/// The stream one subscriber gets: read here, or relayed from the replica that holds the
/// task's conversation (`core::forward`). Both are cancel-safe.
#[derive(Debug)]
pub(crate) enum TaskStream {
    /// Read from this replica's view of the task.
    Local(LocalStream),
    /// Another replica's stream, relayed.
    Relayed(Relay),
}

/// A stream read elsewhere (another replica's, by `core::forward`) and handed over a
/// channel: cancel-safe, since a dropped read loses nothing the channel holds.
#[derive(Debug)]
pub(crate) struct Relay(tokio::sync::mpsc::Receiver<Result<StreamItem, A2aError>>);

impl Relay {
    /// The stream whose items come over `items`; it ends when the sender is dropped.
    pub(crate) fn new(items: tokio::sync::mpsc::Receiver<Result<StreamItem, A2aError>>) -> Self {
        Self(items)
    }

    /// The next item; `None` when the stream is over.
    pub(crate) async fn next(&mut self) -> Option<Result<StreamItem, A2aError>> {
        self.0.recv().await
    }
}

impl TaskStream {
    /// The next item; `None` when the stream is over.
    pub(crate) async fn next(&mut self) -> Option<Result<StreamItem, A2aError>> {
        match self {
            TaskStream::Local(s) => s.next().await,
            TaskStream::Relayed(r) => r.next().await,
        }
    }
}

impl From<LocalStream> for TaskStream {
    fn from(s: LocalStream) -> Self {
        TaskStream::Local(s)
    }
}
