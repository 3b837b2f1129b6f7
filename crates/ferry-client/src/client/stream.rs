//! A task's event stream as the caller sees it: one continuous sequence of `StreamResponse`s,
//! even when the connection drops or the server restarts. The client then resubscribes with
//! `Last-Event-ID` (the id of the last event it handed out), waiting between attempts as its
//! retry policy says (and as long as a `Retry-After` asks), and the server replays what
//! happened meanwhile: no gap, no duplicate.
//!
//! Over gRPC there are no event ids: a resumed stream starts again with the task's snapshot
//! (the state it is in now), then live events.
//!
//! A stream counts as dropped when the connection breaks, or when it ends before the task
//! reached a state where it would end: terminal for a subscription, terminal or interrupted
//! (INPUT_REQUIRED, AUTH_REQUIRED) for the stream of a send. A task that ended while the
//! stream was away (the server no longer lets anyone subscribe to it) ends the stream with
//! the task as `GetTask` reads it.

use crate::client::A2aClient;
use crate::endpoint::Binding;
use crate::error::ClientError;
use crate::sse::{SseEvent, SseParser};
use bytes::Bytes;
#[cfg(feature = "grpc")]
use ferry_proto::grpc::pb;
use ferry_proto::{A2aError, StreamResponse, TaskState};
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use std::collections::VecDeque;

/// Largest SSE event accepted.
const MAX_EVENT_BYTES: usize = 4 << 20;
/// Reconnection attempts after one drop (waits of the retry policy in between).
const ATTEMPTS_PER_DROP: u32 = 8;
/// Drops in a row without an event in between before the stream gives up.
const MAX_DROPS_WITHOUT_PROGRESS: u32 = 4;

/// Which operation opened the stream (they end differently).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StreamKind {
    /// `SendStreamingMessage`: ends when the turn ends (terminal or interrupted).
    Send,
    /// `SubscribeToTask`: ends at a terminal state.
    Subscribe,
}

/// Where a stream's events come from.
pub(crate) enum Source {
    /// An SSE body (JSON-RPC or REST).
    Sse(BoxStream<'static, reqwest::Result<Bytes>>),
    /// A gRPC server stream.
    #[cfg(feature = "grpc")]
    Grpc(Box<tonic::Streaming<pb::StreamResponse>>),
}

impl Source {
    pub(crate) fn sse(response: reqwest::Response) -> Self {
        Self::Sse(response.bytes_stream().boxed())
    }
}

/// A stream of task events.
pub struct EventStream {
    client: A2aClient,
    source: Source,
    parser: SseParser,
    pending: VecDeque<SseEvent>,
    task_id: Option<String>,
    kind: StreamKind,
    last_state: Option<TaskState>,
    drops_without_progress: u32,
    done: bool,
    /// The task as it ended, when the stream could not be resumed because it had (see
    /// [`EventStream::resume`]): handed out as the last event.
    ended: Option<StreamResponse>,
    /// True once the stream was resumed after a drop.
    resumed: bool,
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream")
            .field("task_id", &self.task_id)
            .finish_non_exhaustive()
    }
}

impl EventStream {
    pub(crate) fn new(
        client: A2aClient,
        source: Source,
        task_id: Option<String>,
        kind: StreamKind,
    ) -> Self {
        Self {
            client,
            source,
            parser: SseParser::new(MAX_EVENT_BYTES),
            pending: VecDeque::new(),
            task_id,
            kind,
            last_state: None,
            drops_without_progress: 0,
            done: false,
            ended: None,
            resumed: false,
        }
    }

    /// The id of the last event handed out (what a resume continues after; none over gRPC).
    pub fn last_event_id(&self) -> Option<&str> {
        self.parser.last_id()
    }

    /// True when the stream ended where it should: the task is terminal, or (a send's
    /// stream) interrupted, or there was no task (a direct message).
    fn ended_where_it_should(&self) -> bool {
        match self.last_state {
            None => self.task_id.is_none(),
            Some(state) => self.would_end_at(state),
        }
    }

    /// The next event; `None` when the stream ended.
    pub async fn next(&mut self) -> Option<Result<StreamResponse, ClientError>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                let decoded = self.decode(event);
                // A resubscription refused in its stream (as SDK servers answer) rather than
                // before it.
                if let (Err(ClientError::Protocol(refusal)), true, Some(task_id)) =
                    (&decoded, self.resumed, self.task_id.clone())
                    && ended_meanwhile(refusal)
                {
                    let (client, kind) = (self.client.clone(), self.kind);
                    let ended = read_ended(client, kind, &task_id, refusal.clone()).await;
                    return Some(ended.map(|task| self.accept(task)));
                }
                return Some(decoded);
            }
            if let Some(ended) = self.ended.take() {
                return Some(Ok(self.accept(ended)));
            }
            if self.done {
                return None;
            }
            let body = match &mut self.source {
                Source::Sse(body) => body,
                #[cfg(feature = "grpc")]
                Source::Grpc(_) => match self.grpc_next().await {
                    Some(next) => return Some(next),
                    None => continue,
                },
            };
            match body.next().await {
                Some(Ok(bytes)) => match self.parser.feed(&bytes) {
                    Ok(events) => self.pending.extend(events),
                    Err(e) => {
                        self.done = true;
                        return Some(Err(ClientError::Decode(e.to_string())));
                    }
                },
                Some(Err(e)) => {
                    if let Err(e) = self.resume(ClientError::from_reqwest(e)).await {
                        self.done = true;
                        return Some(Err(e));
                    }
                }
                None if self.ended_where_it_should() => self.done = true,
                None => {
                    let cause =
                        ClientError::Unreachable("the stream ended before its task did".to_owned());
                    if let Err(e) = self.resume(cause).await {
                        self.done = true;
                        return Some(Err(e));
                    }
                }
            }
        }
    }

    /// Reconnects after a drop: `SubscribeToTask` with the last event id, retried with the
    /// client's backoff while the server is unreachable or busy (a restart). When the server
    /// refuses because the task ended meanwhile, the task is read with `GetTask` and, if it
    /// did end where this stream would have, handed out as the stream's last event.
    async fn resume(&mut self, cause: ClientError) -> Result<(), ClientError> {
        let Some(task_id) = self.task_id.clone() else {
            return Err(cause);
        };
        if self.drops_without_progress >= MAX_DROPS_WITHOUT_PROGRESS {
            return Err(cause);
        }
        self.drops_without_progress += 1;
        self.parser.discard_partial();
        self.resumed = true;
        let last = self.parser.last_id().map(str::to_owned);
        let policy = self.client.retry_policy();
        let mut attempt = 0;
        loop {
            match self
                .client
                .open_subscription(&task_id, last.as_deref())
                .await
            {
                Ok(source) => {
                    self.source = source;
                    return Ok(());
                }
                Err(ClientError::Protocol(refusal)) if ended_meanwhile(&refusal) => {
                    let client = self.client.clone();
                    self.ended = Some(read_ended(client, self.kind, &task_id, refusal).await?);
                    return Ok(());
                }
                Err(e) if e.is_transient() && attempt + 1 < ATTEMPTS_PER_DROP => {
                    let retry_after = match &e {
                        ClientError::Protocol(p) => {
                            p.retry_after_secs().map(std::time::Duration::from_secs)
                        }
                        _ => None,
                    };
                    tokio::time::sleep(policy.wait(attempt, retry_after)).await;
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// True when this stream would have ended at `state`.
    fn would_end_at(&self, state: TaskState) -> bool {
        would_end_at(self.kind, state)
    }

    fn decode(&mut self, event: SseEvent) -> Result<StreamResponse, ClientError> {
        let value: serde_json::Value = serde_json::from_str(&event.data)
            .map_err(|e| ClientError::Decode(format!("stream event: {e}")))?;
        let error = value.get("error");
        if event.event == "error" || error.is_some() {
            self.done = true;
            let e = error.and_then(A2aError::from_wire);
            return Err(e.map_or_else(
                || ClientError::Decode(event.data.clone()),
                ClientError::Protocol,
            ));
        }
        let result = match self.client.binding() {
            Binding::JsonRpc => value.get("result").cloned().unwrap_or_default(),
            Binding::HttpJson | Binding::Grpc => value,
        };
        #[cfg(feature = "v03")]
        if self.client.speaks_v03() {
            let response = crate::v03::event(result)?;
            return Ok(self.accept(response));
        }
        let response: StreamResponse = serde_json::from_value(result)
            .map_err(|e| ClientError::Decode(format!("stream event: {e}")))?;
        Ok(self.accept(response))
    }

    /// The next item of a gRPC stream: `None` to go round again (the stream ended where it
    /// should, or was resumed).
    #[cfg(feature = "grpc")]
    async fn grpc_next(&mut self) -> Option<Result<StreamResponse, ClientError>> {
        let Source::Grpc(messages) = &mut self.source else {
            return None;
        };
        let message = messages.message().await;
        let cause = match message {
            Ok(Some(message)) => {
                let event =
                    StreamResponse::try_from(message).map_err(|e| crate::grpc::decode_error(&e));
                return Some(event.map(|e| self.accept(e)));
            }
            Ok(None) if self.ended_where_it_should() => {
                self.done = true;
                return None;
            }
            Ok(None) => ClientError::Unreachable("the stream ended before its task did".to_owned()),
            Err(status) => crate::grpc::error_of(&status),
        };
        if !cause.is_transient() && !matches!(cause, ClientError::Unreachable(_)) {
            self.done = true;
            return Some(Err(cause));
        }
        match self.resume(cause).await {
            Ok(()) => None,
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }

    /// Notes what an event says about the stream (its task, the state reached) and hands it
    /// on.
    fn accept(&mut self, response: StreamResponse) -> StreamResponse {
        let (task_id, terminal) = match &response {
            StreamResponse::Task(t) => (Some(&t.id), t.status.state.is_terminal()),
            StreamResponse::StatusUpdate(s) => (Some(&s.task_id), s.status.state.is_terminal()),
            StreamResponse::ArtifactUpdate(a) => (Some(&a.task_id), false),
            StreamResponse::Message(_) => (None, true),
        };
        if self.task_id.is_none() {
            self.task_id = task_id.map(|id| id.to_string());
        }
        match &response {
            StreamResponse::Task(t) => self.last_state = Some(t.status.state),
            StreamResponse::StatusUpdate(s) => self.last_state = Some(s.status.state),
            StreamResponse::ArtifactUpdate(_) | StreamResponse::Message(_) => {}
        }
        self.drops_without_progress = 0;
        if terminal {
            self.done = true;
        }
        response
    }
}

/// A refusal to resubscribe that a task which ended meanwhile gets: a v1.0 server's
/// UnsupportedOperation (no subscribing to a terminal task), or TaskNotFound from a v0.3 SDK
/// server, which ends the stream of a canceled task without its last event and forgets the
/// stream then.
fn ended_meanwhile(refusal: &A2aError) -> bool {
    matches!(
        refusal.kind,
        ferry_proto::ErrorKind::UnsupportedOperation | ferry_proto::ErrorKind::TaskNotFound
    )
}

/// True when a stream of `kind` ends at `state`.
fn would_end_at(kind: StreamKind, state: TaskState) -> bool {
    state.is_terminal() || (kind == StreamKind::Send && state.is_interrupted())
}

/// The task, read with `GetTask` after a resubscription was refused with `refusal`, when it
/// ended where a stream of `kind` would have; the refusal otherwise.
async fn read_ended(
    client: A2aClient,
    kind: StreamKind,
    task_id: &str,
    refusal: A2aError,
) -> Result<StreamResponse, ClientError> {
    match client.get_task(task_id, None).await {
        Ok(task) if would_end_at(kind, task.status.state) => {
            Ok(StreamResponse::Task(std::sync::Arc::new(task)))
        }
        _ => Err(ClientError::Protocol(refusal)),
    }
}
