//! A WHATWG server-sent-events parser: bytes in, events out, in any chunking.
//!
//! Lines end in LF, CR or CRLF; `data:` lines of one event are joined with `\n`; a leading
//! space after the colon is dropped; comment lines (`:`) are ignored; `id:` sets the id buffer,
//! which becomes the last event id only when its event is dispatched (so a connection that
//! drops between an `id:` and its blank line does not skip that event on reconnect); the id is
//! kept across events, as the spec says; `event:` names the event; a blank line dispatches. An
//! event without data is not dispatched.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` name (`message` when absent).
    pub event: String,
    /// The joined `data:` lines.
    pub data: String,
    /// The last event id seen so far (the reconnection point).
    pub id: Option<String>,
}

/// Incremental parser state.
#[derive(Debug, Default)]
pub struct SseParser {
    line: Vec<u8>,
    after_cr: bool,
    data: String,
    has_data: bool,
    event: String,
    id_buffer: Option<String>,
    last_id: Option<String>,
    limit: usize,
}

/// Why a stream was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// One event grew beyond the limit.
    #[error("an SSE event is larger than {limit} bytes")]
    TooLarge {
        /// The limit.
        limit: usize,
    },
}

impl SseParser {
    /// A parser refusing events larger than `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            ..Self::default()
        }
    }

    /// The id of the last event dispatched (the point to reconnect after).
    pub fn last_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// Forgets the half-read event of a connection that dropped, keeping the last event id:
    /// the next connection's bytes start a fresh event.
    pub fn discard_partial(&mut self) {
        self.line.clear();
        self.after_cr = false;
        self.data.clear();
        self.has_data = false;
        self.event.clear();
        self.id_buffer.clone_from(&self.last_id);
    }

    /// Feeds bytes; returns the events they completed.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut out = Vec::new();
        for &b in bytes {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' => self.end_line(&mut out),
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(&mut out);
                }
                _ => {
                    self.line.push(b);
                    if self.line.len() + self.data.len() > self.limit {
                        return Err(SseError::TooLarge { limit: self.limit });
                    }
                }
            }
        }
        Ok(out)
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        let line = std::mem::take(&mut self.line);
        let line = String::from_utf8_lossy(&line);
        if line.is_empty() {
            self.last_id.clone_from(&self.id_buffer);
            if self.has_data {
                let event = if self.event.is_empty() {
                    "message".to_owned()
                } else {
                    std::mem::take(&mut self.event)
                };
                out.push(SseEvent {
                    event,
                    data: std::mem::take(&mut self.data),
                    id: self.last_id.clone(),
                });
            }
            self.has_data = false;
            self.data.clear();
            self.event.clear();
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_ref(), ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = value.to_owned(),
            "id" if !value.contains('\0') => self.id_buffer = Some(value.to_owned()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_counts_only_once_its_event_is_dispatched() {
        let mut p = SseParser::new(1 << 20);
        p.feed(b"id: 1\ndata: a\n\nid: 2\ndata: b")
            .expect("within limit");
        assert_eq!(p.last_id(), Some("1"), "event 2 is not complete");
        p.discard_partial();
        let events = p.feed(b"id: 2\ndata: b\n\n").expect("within limit");
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data, "b", "nothing of the dropped half survived");
        assert_eq!(p.last_id(), Some("2"));
    }

    fn all(input: &[u8], chunk: usize) -> Vec<SseEvent> {
        let mut p = SseParser::new(1 << 20);
        input
            .chunks(chunk)
            .flat_map(|c| p.feed(c).expect("within limit"))
            .collect()
    }

    #[test]
    fn whatwg_rules_in_any_chunking() {
        let input = b": keep-alive\n\nid: 1\ndata: {\"a\":\r\ndata:1}\r\n\r\nevent: error\ndata: x\n\nid: 2\n\ndata: y\n\n";
        for chunk in [1, 2, 3, 7, input.len()] {
            let events = all(input, chunk);
            assert_eq!(events.len(), 3, "chunk {chunk}: {events:?}");
            assert_eq!(events[0].data, "{\"a\":\n1}");
            assert_eq!(events[0].id.as_deref(), Some("1"));
            assert_eq!(events[1].event, "error");
            assert_eq!(events[1].id.as_deref(), Some("1"), "ids persist");
            assert_eq!(
                events[2].id.as_deref(),
                Some("2"),
                "an id without data still counts"
            );
        }
    }

    #[test]
    fn oversized_events_are_refused() {
        let mut p = SseParser::new(8);
        assert!(p.feed(b"data: 0123456789\n").is_err());
    }
}
