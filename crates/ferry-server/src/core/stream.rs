//! A task's event stream as one subscriber sees it: a first item (the task snapshot, or the
//! direct reply), then live events in log order, ending at a terminal state (or, for the stream
//! of a send, when the agent's turn ends).
//!
//! A subscriber that falls behind the live channel catches up from the task's event log, so a
//! slow reader never sees a gap; if the log no longer holds what it missed, the stream ends with
//! an error instead of silently skipping.

use crate::core::record::{LiveItem, LoggedEvent, TaskRecord};
use bytes::Bytes;
use ferry_proto::{A2aError, ErrorKind, StreamResponse};
use std::collections::VecDeque;
use std::sync::Arc;
use tokio::sync::broadcast::{self, error::RecvError};

/// One item for the wire: the event's ProtoJSON and its sequence number (the SSE `id:`).
#[derive(Debug, Clone)]
pub struct StreamItem {
    /// Sequence number in the task's log (`None` for a direct reply, which has no task).
    pub seq: Option<u64>,
    /// The `StreamResponse` as JSON.
    pub json: Bytes,
}

impl StreamItem {
    fn logged(e: &LoggedEvent) -> Self {
        Self {
            seq: Some(e.seq),
            json: e.json().clone(),
        }
    }

    fn fresh(seq: Option<u64>, event: &StreamResponse) -> Self {
        Self {
            seq,
            json: Bytes::from(serde_json::to_vec(event).unwrap_or_default()),
        }
    }
}

/// The stream of one subscriber.
#[derive(Debug)]
pub struct TaskStream {
    record: Arc<TaskRecord>,
    rx: broadcast::Receiver<LiveItem>,
    first: Option<StreamItem>,
    pending: VecDeque<Arc<LoggedEvent>>,
    last_seq: Option<u64>,
    close_after_turn: Option<u64>,
    turn_over: bool,
    done: bool,
}

/// What the first item of a new task's stream turned out to be.
pub(crate) enum Opening {
    /// The stream (its first item is ready).
    Stream(TaskStream),
    /// The turn failed before any event.
    Error(A2aError),
}

impl TaskStream {
    /// A stream that starts with `snapshot` (already sequenced at `snapshot_seq`).
    pub(crate) fn with_snapshot(
        record: Arc<TaskRecord>,
        rx: broadcast::Receiver<LiveItem>,
        snapshot: &StreamResponse,
        snapshot_seq: Option<u64>,
        close_after_turn: Option<u64>,
    ) -> Self {
        Self {
            first: Some(StreamItem::fresh(snapshot_seq, snapshot)),
            record,
            rx,
            pending: VecDeque::new(),
            last_seq: snapshot_seq,
            close_after_turn,
            turn_over: false,
            done: false,
        }
    }

    /// A stream that resumes after sequence number `after`, replaying `missed` first.
    pub(crate) fn resumed(
        record: Arc<TaskRecord>,
        rx: broadcast::Receiver<LiveItem>,
        after: u64,
        missed: Vec<Arc<LoggedEvent>>,
    ) -> Self {
        Self {
            first: None,
            record,
            rx,
            pending: missed.into(),
            last_seq: Some(after),
            close_after_turn: None,
            turn_over: false,
            done: false,
        }
    }

    /// Waits for the first item of a brand-new task's stream: the task (first logged event), a
    /// direct reply, or the error that ended the turn before either.
    pub(crate) async fn open_new(
        record: Arc<TaskRecord>,
        rx: broadcast::Receiver<LiveItem>,
        turn: u64,
    ) -> Opening {
        let mut s = Self {
            record,
            rx,
            first: None,
            pending: VecDeque::new(),
            last_seq: None,
            close_after_turn: Some(turn),
            turn_over: false,
            done: false,
        };
        match s.next().await {
            Some(Ok(item)) => {
                s.first = Some(item);
                Opening::Stream(s)
            }
            Some(Err(e)) => Opening::Error(e),
            None => {
                let early = s.record.data.lock().early_error.clone();
                Opening::Error(early.unwrap_or_else(|| {
                    A2aError::new(
                        ErrorKind::InvalidAgentResponse,
                        "the agent ended its turn without a reply or a task",
                    )
                }))
            }
        }
    }

    /// The task this stream follows.
    pub fn task_id(&self) -> &str {
        &self.record.id
    }

    /// The next item; `None` when the stream is over.
    pub async fn next(&mut self) -> Option<Result<StreamItem, A2aError>> {
        if let Some(first) = self.first.take() {
            return Some(Ok(first));
        }
        loop {
            if self.done {
                return None;
            }
            if let Some(e) = self.pending.pop_front() {
                if let Some(item) = self.deliver(&e) {
                    return Some(Ok(item));
                }
                continue;
            }
            if self.turn_over {
                self.done = true;
                return None;
            }
            match self.rx.recv().await {
                Ok(LiveItem::Event(e)) => {
                    if let Some(item) = self.deliver(&e) {
                        return Some(Ok(item));
                    }
                }
                Ok(LiveItem::Reply(m)) => {
                    self.done = true;
                    return Some(Ok(StreamItem::fresh(
                        None,
                        &StreamResponse::Message((*m).clone()),
                    )));
                }
                Ok(LiveItem::TurnEnded(n)) => {
                    if self.close_after_turn.is_some_and(|t| n >= t) {
                        self.done = true;
                        return None;
                    }
                }
                Err(RecvError::Lagged(_)) => {
                    if let Err(e) = self.catch_up() {
                        self.done = true;
                        return Some(Err(e));
                    }
                }
                Err(RecvError::Closed) => {
                    self.done = true;
                    return None;
                }
            }
        }
    }

    /// Delivers a logged event unless it was already delivered; marks the end at terminal.
    fn deliver(&mut self, e: &LoggedEvent) -> Option<StreamItem> {
        if self.last_seq.is_some_and(|last| e.seq <= last) {
            return None;
        }
        self.last_seq = Some(e.seq);
        if e.state_after.is_terminal() {
            self.done = true;
        }
        Some(StreamItem::logged(e))
    }

    /// Refills from the event log after the live channel dropped items for this subscriber.
    fn catch_up(&mut self) -> Result<(), A2aError> {
        let data = self.record.data.lock();
        let last = self.last_seq;
        let missed: Vec<_> = data
            .log
            .iter()
            .filter(|e| last.is_none_or(|l| e.seq > l))
            .cloned()
            .collect();
        let expected = last.map_or(0, |s| s + 1);
        if let Some(first) = missed.first()
            && first.seq > expected
        {
            return Err(A2aError::internal(format!(
                "the stream fell behind and events {expected}..{} are no longer kept",
                first.seq
            )));
        }
        self.turn_over = self
            .close_after_turn
            .is_some_and(|t| data.turns_finished >= t);
        drop(data);
        self.pending.extend(missed);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::record::LIVE_CHANNEL_CAPACITY;
    use ferry_proto::{Message, Part, TaskState, TaskStatus, TaskStatusUpdateEvent};
    use std::time::Duration;

    fn record(max_events: usize) -> Arc<TaskRecord> {
        let m = Message::user("m", vec![Part::text("x")]);
        Arc::new(TaskRecord::new(
            "t".into(),
            "c".into(),
            String::new(),
            m,
            max_events,
        ))
    }

    /// A subscriber that joins before any event, as SubscribeToTask does.
    fn subscriber(record: &Arc<TaskRecord>) -> TaskStream {
        let mut data = record.data.lock();
        let rx = TaskRecord::subscribe_locked(&mut data);
        let snapshot = StreamResponse::Task(data.task.clone());
        let seq = data.next_seq.checked_sub(1);
        drop(data);
        TaskStream::with_snapshot(record.clone(), rx, &snapshot, seq, None)
    }

    /// Appends `working` WORKING updates and then a COMPLETED one, without yielding: far more
    /// than the live channel holds.
    fn flood_then_complete(record: &TaskRecord, working: usize) {
        let mut data = record.data.lock();
        for i in 0..=working {
            let state = if i == working {
                TaskState::Completed
            } else {
                TaskState::Working
            };
            data.task.status = TaskStatus::now(state, None);
            let event = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                task_id: record.id.clone(),
                context_id: record.context_id.clone(),
                status: data.task.status.clone(),
                metadata: None,
            });
            record.append_locked(&mut data, event);
        }
    }

    /// Subscribes to a task that keeps `max_events` in its log, floods it with three times what
    /// the live channel holds, and returns every item the subscriber then reads until its
    /// stream ends (bounded, so a regression cannot hang the test).
    async fn flooded_subscriber(max_events: usize) -> Vec<Result<StreamItem, A2aError>> {
        let record = record(max_events);
        let mut stream = subscriber(&record);
        flood_then_complete(&record, 3 * LIVE_CHANNEL_CAPACITY);
        let all = async {
            let mut out = Vec::new();
            while let Some(item) = stream.next().await {
                out.push(item);
            }
            out
        };
        tokio::time::timeout(Duration::from_secs(5), all)
            .await
            .expect("the stream ends")
    }

    #[tokio::test]
    async fn a_lagging_subscriber_catches_up_from_the_log_without_a_gap() {
        let items = flooded_subscriber(1024).await;
        let seqs: Vec<Option<u64>> = items
            .iter()
            .map(|i| i.as_ref().expect("no error").seq)
            .collect();
        let expected: Vec<Option<u64>> = std::iter::once(None)
            .chain((0..=3 * LIVE_CHANNEL_CAPACITY as u64).map(Some))
            .collect();
        assert_eq!(
            seqs, expected,
            "the snapshot, then every event once, in order, then the end"
        );
    }

    #[tokio::test]
    async fn a_subscriber_behind_the_log_gets_an_error_and_the_end() {
        let items = flooded_subscriber(2).await;
        assert_eq!(
            items.len(),
            2,
            "the snapshot, then the error, then nothing: {items:?}"
        );
        assert!(
            items[0].as_ref().is_ok_and(|i| i.seq.is_none()),
            "{items:?}"
        );
        let error = items[1]
            .as_ref()
            .expect_err("an error instead of a silent gap");
        assert_eq!(error.kind, ErrorKind::Internal);
        assert!(error.message.contains("fell behind"), "{error}");
    }
}
