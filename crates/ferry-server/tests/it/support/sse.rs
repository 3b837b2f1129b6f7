//! A small WHATWG-style SSE reader over a streaming reqwest response: `id:`, `event:` and
//! `data:` fields, comment lines (`: keep-alive`), events dispatched on a blank line. Every
//! wait is bounded, so a stream that stops talking fails the test instead of hanging it.

use std::collections::VecDeque;
use std::time::Duration;

/// How long the reader waits for the next bytes of a stream.
const FRAME_TIMEOUT: Duration = Duration::from_secs(10);

/// One event as the server framed it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `id:` field.
    pub id: Option<String>,
    /// The `event:` field.
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// What the reader yields: an event or a comment line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Frame {
    /// A comment line, without its leading `:` and surrounding spaces.
    Comment(String),
    /// A dispatched event.
    Event(SseEvent),
}

/// Reads frames from an open `text/event-stream` response.
#[derive(Debug)]
pub(crate) struct SseReader {
    response: reqwest::Response,
    buf: Vec<u8>,
    /// The event being read, and its `data:` lines so far.
    building: Option<(SseEvent, Vec<String>)>,
    ready: VecDeque<Frame>,
    ended: bool,
}

impl SseReader {
    /// Starts reading `response` (its headers already said `text/event-stream`).
    pub(crate) fn new(response: reqwest::Response) -> Self {
        Self {
            response,
            buf: Vec::new(),
            building: None,
            ready: VecDeque::new(),
            ended: false,
        }
    }

    /// The next frame, or `None` once the server has ended the stream cleanly.
    pub(crate) async fn next_frame(&mut self) -> Option<Frame> {
        loop {
            if let Some(frame) = self.ready.pop_front() {
                return Some(frame);
            }
            if self.ended {
                return None;
            }
            let chunk = tokio::time::timeout(FRAME_TIMEOUT, self.response.chunk())
                .await
                .expect("the stream sent nothing for 10 s")
                .expect("the stream ends cleanly, not with a transport error");
            match chunk {
                Some(bytes) => self.feed(&bytes),
                None => {
                    self.ended = true;
                    assert!(
                        self.buf.is_empty(),
                        "the stream ended inside a line: {:?}",
                        String::from_utf8_lossy(&self.buf)
                    );
                    assert!(
                        self.building.is_none(),
                        "the stream ended inside an event: {:?}",
                        self.building
                    );
                }
            }
        }
    }

    /// The next event (comments are skipped), or `None` at the end of the stream.
    pub(crate) async fn next_event(&mut self) -> Option<SseEvent> {
        loop {
            match self.next_frame().await? {
                Frame::Event(e) => return Some(e),
                Frame::Comment(_) => {}
            }
        }
    }

    /// Every remaining event, until the server ends the stream.
    pub(crate) async fn all_events(mut self) -> Vec<SseEvent> {
        let mut out = Vec::new();
        while let Some(e) = self.next_event().await {
            out.push(e);
        }
        out
    }

    fn feed(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
        while let Some(end) = self.buf.iter().position(|b| *b == b'\n') {
            let raw: Vec<u8> = self.buf.drain(..=end).collect();
            let line = std::str::from_utf8(&raw).expect("SSE is UTF-8");
            self.line(line.trim_end_matches(['\n', '\r']));
        }
    }

    fn line(&mut self, line: &str) {
        if line.is_empty() {
            if let Some((mut event, data)) = self.building.take() {
                event.data = data.join("\n");
                self.ready.push_back(Frame::Event(event));
            }
            return;
        }
        if let Some(comment) = line.strip_prefix(':') {
            self.ready
                .push_back(Frame::Comment(comment.trim().to_owned()));
            return;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value).to_owned();
        let (event, data) = self.building.get_or_insert_with(Default::default);
        match field {
            "id" => event.id = Some(value),
            "event" => event.event = Some(value),
            "data" => data.push(value),
            _ => {}
        }
    }
}
