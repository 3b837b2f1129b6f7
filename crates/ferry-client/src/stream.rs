//! A task's event stream as the caller sees it: one continuous sequence of `StreamResponse`s,
//! even when the connection drops (the client resubscribes with `Last-Event-ID`).

use crate::client::{A2aClient, Binding};
use crate::error::ClientError;
use crate::sse::{SseEvent, SseParser};
use bytes::Bytes;
use ferry_proto::{A2aError, StreamResponse};
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use std::collections::VecDeque;

/// Largest SSE event accepted.
const MAX_EVENT_BYTES: usize = 4 << 20;
/// How many times a dropped stream is resumed.
const MAX_RESUMES: u32 = 3;

/// A stream of task events.
pub struct EventStream {
    client: A2aClient,
    body: BoxStream<'static, reqwest::Result<Bytes>>,
    parser: SseParser,
    pending: VecDeque<SseEvent>,
    task_id: Option<String>,
    resumes_left: u32,
    done: bool,
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
        response: reqwest::Response,
        task_id: Option<String>,
    ) -> Self {
        Self {
            client,
            body: response.bytes_stream().boxed(),
            parser: SseParser::new(MAX_EVENT_BYTES),
            pending: VecDeque::new(),
            task_id,
            resumes_left: MAX_RESUMES,
            done: false,
        }
    }

    /// The next event; `None` when the stream ended.
    pub async fn next(&mut self) -> Option<Result<StreamResponse, ClientError>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(self.decode(event));
            }
            if self.done {
                return None;
            }
            match self.body.next().await {
                Some(Ok(bytes)) => match self.parser.feed(&bytes) {
                    Ok(events) => self.pending.extend(events),
                    Err(e) => {
                        self.done = true;
                        return Some(Err(ClientError::Decode(e.to_string())));
                    }
                },
                Some(Err(e)) => {
                    if let Err(e) = self.resume(e).await {
                        self.done = true;
                        return Some(Err(e));
                    }
                }
                None => self.done = true,
            }
        }
    }

    /// Reconnects after a dropped connection: `SubscribeToTask` with the last event id.
    async fn resume(&mut self, cause: reqwest::Error) -> Result<(), ClientError> {
        let (Some(task_id), true) = (self.task_id.clone(), self.resumes_left > 0) else {
            return Err(ClientError::from_reqwest(cause));
        };
        self.resumes_left -= 1;
        let last = self.parser.last_id().map(str::to_owned);
        let response = self
            .client
            .open_subscription(&task_id, last.as_deref())
            .await?;
        self.body = response.bytes_stream().boxed();
        Ok(())
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
            Binding::HttpJson => value,
        };
        let response: StreamResponse = serde_json::from_value(result)
            .map_err(|e| ClientError::Decode(format!("stream event: {e}")))?;
        let (task_id, terminal) = match &response {
            StreamResponse::Task(t) => (Some(&t.id), t.status.state.is_terminal()),
            StreamResponse::StatusUpdate(s) => (Some(&s.task_id), s.status.state.is_terminal()),
            StreamResponse::ArtifactUpdate(a) => (Some(&a.task_id), false),
            StreamResponse::Message(_) => (None, true),
        };
        if self.task_id.is_none() {
            self.task_id = task_id.cloned();
        }
        if terminal {
            self.done = true;
        }
        Ok(response)
    }
}
