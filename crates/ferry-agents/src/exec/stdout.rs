//! Turning the command's stdout, as it arrives, into artifact text and input prompts.
//!
//! Output streams: whatever can be shown is handed out as soon as it is read, including a
//! line that has not ended yet (a progress bar, a prompt without a newline). Two things are
//! held back. A line that so far matches the start of the input marker waits until it either
//! stops matching (it is output) or ends (it is a prompt, not output). And the last bytes of
//! an unfinished UTF-8 sequence wait for the rest of it, so that no chunk ends in the middle
//! of a character; invalid bytes become U+FFFD.

/// Splits stdout into artifact text and the prompts of marker lines.
#[derive(Debug)]
pub(crate) struct StdoutSplitter {
    marker: Vec<u8>,
    /// Bytes not yet decided (a possible marker line) or not yet decodable.
    pending: Vec<u8>,
    /// True when `pending` starts at the beginning of a line.
    at_line_start: bool,
    /// Output bytes whose last UTF-8 sequence is not complete yet.
    carry: Vec<u8>,
    prompts: Vec<String>,
    /// A marker line with nothing after the marker was seen.
    blank_prompt_seen: bool,
}

impl StdoutSplitter {
    pub(crate) fn new(marker: &str) -> Self {
        Self {
            marker: marker.as_bytes().to_vec(),
            pending: Vec::new(),
            at_line_start: true,
            carry: Vec::new(),
            prompts: Vec::new(),
            blank_prompt_seen: false,
        }
    }

    /// Takes newly read bytes; returns the text that can be shown now (maybe empty).
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut out = std::mem::take(&mut self.carry);
        loop {
            let newline = self.pending.iter().position(|b| *b == b'\n');
            if self.at_line_start {
                let k = self.pending.len().min(self.marker.len());
                if self.pending[..k] == self.marker[..k] {
                    if k < self.marker.len() {
                        // Could still become a marker line: wait for more bytes.
                        break;
                    }
                    let Some(end) = newline else {
                        // A marker line: its prompt ends with the line.
                        break;
                    };
                    let line: Vec<u8> = self.pending.drain(..=end).collect();
                    self.take_prompt(&line);
                    continue;
                }
                self.at_line_start = false;
            }
            match newline {
                Some(end) => {
                    out.extend(self.pending.drain(..=end));
                    self.at_line_start = true;
                }
                None => {
                    out.append(&mut self.pending);
                    break;
                }
            }
        }
        let complete = out.len() - incomplete_utf8_tail(&out);
        self.carry = out.split_off(complete);
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Stdout ended: returns the text still held back.
    pub(crate) fn finish(&mut self) -> String {
        let mut out = std::mem::take(&mut self.carry);
        let pending = std::mem::take(&mut self.pending);
        if self.at_line_start && pending.starts_with(&self.marker) {
            self.take_prompt(&pending);
        } else {
            out.extend(pending);
        }
        self.at_line_start = true;
        String::from_utf8_lossy(&out).into_owned()
    }

    /// The prompts of the marker lines seen, one line each, in order (blank ones dropped).
    pub(crate) fn prompt(&self) -> Option<String> {
        (!self.prompts.is_empty()).then(|| self.prompts.join("\n"))
    }

    /// True once a marker line was seen (even one with a blank prompt).
    pub(crate) fn asked_for_input(&self) -> bool {
        !self.prompts.is_empty() || self.blank_prompt_seen
    }

    fn take_prompt(&mut self, line: &[u8]) {
        let rest = &line[self.marker.len()..];
        let prompt = String::from_utf8_lossy(rest).trim().to_owned();
        if prompt.is_empty() {
            self.blank_prompt_seen = true;
        } else {
            self.prompts.push(prompt);
        }
    }
}

/// How many bytes at the end of `bytes` start a UTF-8 sequence that is not complete yet.
fn incomplete_utf8_tail(bytes: &[u8]) -> usize {
    // A sequence is at most 4 bytes: look for its lead byte among the last 3.
    for back in 1..=bytes.len().min(3) {
        let b = bytes[bytes.len() - back];
        if b & 0b1100_0000 == 0b1000_0000 {
            continue; // a continuation byte: the lead is further back
        }
        let needed = match b {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => return 0, // ASCII or invalid: nothing to wait for
        };
        return if needed > back { back } else { 0 };
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARKER: &str = "FERRY_INPUT_REQUIRED:";

    #[test]
    fn plain_output_passes_as_it_comes_even_mid_line() {
        let mut s = StdoutSplitter::new(MARKER);
        assert_eq!(s.feed(b"hello\nwor"), "hello\nwor");
        assert_eq!(s.feed(b"ld\n"), "ld\n");
        assert_eq!(s.finish(), "");
        assert_eq!(s.prompt(), None);
        assert!(!s.asked_for_input());
    }

    #[test]
    fn a_marker_line_is_a_prompt_not_output() {
        let mut s = StdoutSplitter::new(MARKER);
        assert_eq!(s.feed(b"before\nFERRY_INP"), "before\n");
        assert_eq!(s.feed(b"UT_REQUIRED: what is"), "");
        assert_eq!(s.feed(b" your name?\r\nafter"), "after");
        assert_eq!(s.finish(), "");
        assert_eq!(s.prompt().as_deref(), Some("what is your name?"));
    }

    #[test]
    fn a_line_that_stops_matching_the_marker_is_output() {
        let mut s = StdoutSplitter::new(MARKER);
        assert_eq!(s.feed(b"FERRY_"), "");
        assert_eq!(s.feed(b"TOKEN=1\n"), "FERRY_TOKEN=1\n");
        assert_eq!(
            s.feed(b"x FERRY_INPUT_REQUIRED: no\n"),
            "x FERRY_INPUT_REQUIRED: no\n"
        );
        assert_eq!(s.prompt(), None);
    }

    #[test]
    fn a_marker_line_without_newline_at_the_end_counts() {
        let mut s = StdoutSplitter::new(MARKER);
        assert_eq!(s.feed(b"FERRY_INPUT_REQUIRED: more?"), "");
        assert_eq!(s.finish(), "");
        assert_eq!(s.prompt().as_deref(), Some("more?"));
        let mut s = StdoutSplitter::new(MARKER);
        assert_eq!(s.feed(b"FERRY_INP"), "");
        assert_eq!(
            s.finish(),
            "FERRY_INP",
            "a partial marker at the end is output"
        );
    }

    #[test]
    fn several_marker_lines_make_one_prompt_and_a_blank_one_still_asks() {
        let mut s = StdoutSplitter::new(MARKER);
        s.feed(b"FERRY_INPUT_REQUIRED: one\nFERRY_INPUT_REQUIRED:two\n");
        assert_eq!(s.prompt().as_deref(), Some("one\ntwo"));
        let mut s = StdoutSplitter::new(MARKER);
        s.feed(b"FERRY_INPUT_REQUIRED:  \n");
        assert_eq!(s.prompt(), None);
        assert!(s.asked_for_input());
    }

    #[test]
    fn a_character_is_never_split_across_chunks() {
        let snowman = "☃".as_bytes(); // three bytes
        let mut s = StdoutSplitter::new(MARKER);
        assert_eq!(s.feed(&[b'a', snowman[0]]), "a");
        assert_eq!(s.feed(&snowman[1..2]), "");
        assert_eq!(s.feed(&snowman[2..]), "☃");
        assert_eq!(s.feed(&[0xF0, 0x9F]), "");
        assert_eq!(s.finish(), "\u{FFFD}", "an unfinished sequence at the end");
        let mut s = StdoutSplitter::new(MARKER);
        assert_eq!(s.feed(&[b'x', 0xFF, b'y']), "x\u{FFFD}y");
    }

    #[test]
    fn the_tail_finder_knows_sequence_lengths() {
        assert_eq!(incomplete_utf8_tail(b"abc"), 0);
        assert_eq!(incomplete_utf8_tail("é".as_bytes()), 0);
        assert_eq!(incomplete_utf8_tail(&"é".as_bytes()[..1]), 1);
        assert_eq!(incomplete_utf8_tail(&"😀".as_bytes()[..3]), 3);
        assert_eq!(incomplete_utf8_tail("😀".as_bytes()), 0);
        assert_eq!(incomplete_utf8_tail(&[]), 0);
    }
}
