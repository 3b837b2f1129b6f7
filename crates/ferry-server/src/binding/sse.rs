//! Server-sent events framing: `id:` = the task's event sequence number, `data:` = one line of
//! JSON, `: keep-alive` comments on idle streams, and `event: error` for a mid-stream error.

use crate::core::stream::{StreamItem, TaskStream};
use crate::edge::front_door::StreamPermit;
use crate::edge::service::AgentService;
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::{BufMut, Bytes, BytesMut};
use ferry_proto::{A2aError, JsonRpcSuccess};
use futures_util::FutureExt;
use serde_json::Value;
use std::convert::Infallible;
use std::fmt::Write;
use std::time::Duration;
use tokio::sync::watch;

/// How a binding wraps each event and each error.
pub(crate) trait SseFraming: Send + 'static {
    /// Writes the `data:` payload of an event (the `StreamResponse` JSON is in `item`).
    fn event(&self, item: &StreamItem, out: &mut BytesMut);
    /// Writes the `data:` payload of an error.
    fn error(&self, error: &A2aError, out: &mut BytesMut);
}

/// Each stream event in a JSON-RPC response envelope carrying the request id (the envelope
/// serialized once per stream). The event and error bodies are the dialect's: v1.0's here,
/// v0.3's in its own binding.
pub(crate) struct JsonRpcFraming {
    id: Value,
    envelope: JsonRpcSuccess,
    event: fn(&StreamItem) -> Bytes,
    error: fn(&Value, &A2aError) -> Vec<u8>,
}

impl JsonRpcFraming {
    /// Frames with `event` and `error` for the call `id`.
    pub(crate) fn new(
        id: Value,
        event: fn(&StreamItem) -> Bytes,
        error: fn(&Value, &A2aError) -> Vec<u8>,
    ) -> Self {
        let envelope = JsonRpcSuccess::new(&id);
        Self {
            id,
            envelope,
            event,
            error,
        }
    }

    /// v1.0's: the event's ProtoJSON, the A2A error object.
    pub(crate) fn v1(id: Value) -> Self {
        Self::new(id, StreamItem::json, ferry_proto::jsonrpc_error_body)
    }
}

impl SseFraming for JsonRpcFraming {
    fn event(&self, item: &StreamItem, out: &mut BytesMut) {
        out.put_slice(self.envelope.prefix());
        out.put_slice(&(self.event)(item));
        out.put_slice(self.envelope.suffix());
    }

    fn error(&self, error: &A2aError, out: &mut BytesMut) {
        out.put_slice(&(self.error)(&self.id, error));
    }
}

const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// A chunk of the body stops taking the events that are ready once it holds this much.
const CHUNK_BYTES: usize = 64 * 1024;

/// Writes one event: its `id:` (the sequence number, when it has one) and its `data:` line.
fn frame_event<F: SseFraming>(framing: &F, item: &StreamItem, out: &mut BytesMut) {
    if let Some(seq) = item.seq {
        out.put_slice(b"id: ");
        // Writing to a `BytesMut` cannot fail.
        let _ = write!(out, "{seq}");
        out.put_u8(b'\n');
    }
    out.put_slice(b"data: ");
    framing.event(item, out);
    out.put_slice(b"\n\n");
}

/// Writes a mid-stream error as an `event: error`.
fn frame_error<F: SseFraming>(framing: &F, error: &A2aError, out: &mut BytesMut) {
    out.put_slice(b"event: error\ndata: ");
    framing.error(error, out);
    out.put_slice(b"\n\n");
}

/// The SSE response for `stream` with `app`'s keep-alive and shutdown signal.
pub(crate) fn respond<F: SseFraming>(
    app: &AgentService,
    stream: TaskStream,
    framing: F,
    permit: StreamPermit,
) -> Response {
    sse_response(
        stream,
        framing,
        app.config.sse_keepalive(),
        app.closing.subscribe(),
        permit,
    )
}

/// Turns a task stream into an SSE response that ends when the stream ends.
///
/// The stream also ends, cleanly, when `closing` turns true (server shutdown).
fn sse_response<F: SseFraming>(
    stream: TaskStream,
    framing: F,
    keepalive: Duration,
    closing: watch::Receiver<bool>,
    permit: StreamPermit,
) -> Response {
    // The permit counts this stream against the open-streams limit until the body ends.
    let state = Some((stream, framing, closing, permit));
    let body = futures_util::stream::unfold(state, move |state| async move {
        let (mut stream, framing, mut closing, permit) = state?;
        let next = tokio::select! {
            biased;
            item = stream.next() => Some(item),
            _ = closing.wait_for(|c| *c) => Some(None),
            () = tokio::time::sleep(keepalive) => None,
        };
        let Some(next) = next else {
            let keep = Bytes::from_static(KEEP_ALIVE);
            return Some((
                Ok::<Bytes, Infallible>(keep),
                Some((stream, framing, closing, permit)),
            ));
        };
        let mut out = BytesMut::with_capacity(256);
        match next {
            None => None,
            Some(Ok(item)) => {
                frame_event(&framing, &item, &mut out);
                // The events that are ready already go in the same chunk: one frame of
                // the body and one write for a turn's burst, instead of one per event.
                let ended = loop {
                    if out.len() >= CHUNK_BYTES {
                        break false;
                    }
                    match stream.next().now_or_never() {
                        None => break false,
                        Some(Some(Ok(item))) => frame_event(&framing, &item, &mut out),
                        Some(Some(Err(e))) => {
                            frame_error(&framing, &e, &mut out);
                            break true;
                        }
                        Some(None) => break true,
                    }
                };
                // A stream that ended (or failed) hands back no state: the next poll
                // finishes the body.
                let state = (!ended).then_some((stream, framing, closing, permit));
                Some((Ok(out.freeze()), state))
            }
            Some(Err(e)) => {
                frame_error(&framing, &e, &mut out);
                // The error ends the stream: hand back no state, so the next poll finishes.
                Some((Ok(out.freeze()), None))
            }
        }
    });
    let mut response = Response::new(Body::from_stream(body));
    *response.status_mut() = StatusCode::OK;
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}
