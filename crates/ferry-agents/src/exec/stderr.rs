//! The command's stderr: logged line by line (it is the operator's view of what the command
//! is doing), within a budget so that a chatty command cannot flood the log, and its end kept
//! so that a failure can say why in the task's status message.

use std::sync::Arc;
use tokio::io::AsyncReadExt;

/// How much of the end of stderr a failure message quotes.
pub(crate) const TAIL_BYTES: usize = 2 * 1024;

/// A line longer than this is logged in pieces (stderr without newlines would otherwise be
/// held in memory whole).
const MAX_LINE_BYTES: usize = 4 * 1024;

/// Logs stderr within a byte budget and keeps its last [`TAIL_BYTES`].
#[derive(Debug)]
pub(crate) struct StderrLog {
    task_id: Arc<str>,
    budget: u64,
    logged: u64,
    over_budget: bool,
    line: Vec<u8>,
    tail: Vec<u8>,
}

impl StderrLog {
    pub(crate) fn new(task_id: Arc<str>, budget: u64) -> Self {
        Self {
            task_id,
            budget,
            logged: 0,
            over_budget: false,
            line: Vec::new(),
            tail: Vec::new(),
        }
    }

    /// Reads `stderr` to its end.
    pub(crate) async fn read_all(mut self, mut stderr: impl AsyncReadExt + Unpin) -> Self {
        let mut buf = vec![0u8; 8 * 1024];
        // A read error ends stderr like EOF does: the turn's outcome comes from the exit
        // status, and stderr is only its commentary.
        while let Ok(n @ 1..) = stderr.read(&mut buf).await {
            self.feed(&buf[..n]);
        }
        self.finish();
        self
    }

    fn feed(&mut self, bytes: &[u8]) {
        self.tail.extend_from_slice(bytes);
        if self.tail.len() > 2 * TAIL_BYTES {
            self.tail.drain(..self.tail.len() - TAIL_BYTES);
        }
        for &b in bytes {
            if b == b'\n' {
                self.log_line();
            } else {
                self.line.push(b);
                if self.line.len() >= MAX_LINE_BYTES {
                    self.log_line();
                }
            }
        }
    }

    fn finish(&mut self) {
        if !self.line.is_empty() {
            self.log_line();
        }
    }

    fn log_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        if self.over_budget {
            return;
        }
        let size = line.len() as u64 + 1;
        if self.logged + size > self.budget {
            self.over_budget = true;
            tracing::warn!(
                task = %self.task_id,
                limit = self.budget,
                "the command's stderr passed max_stderr_log_bytes; the rest of it is not logged"
            );
            return;
        }
        self.logged += size;
        let text = String::from_utf8_lossy(&line);
        tracing::info!(task = %self.task_id, "command stderr: {}", text.trim_end());
    }

    /// The last [`TAIL_BYTES`] of stderr as text, trimmed (empty when it wrote nothing).
    pub(crate) fn tail(&self) -> String {
        let start = self.tail.len().saturating_sub(TAIL_BYTES);
        let mut tail = &self.tail[start..];
        // Cutting may have split a character: skip to the next one that starts.
        while let [first, rest @ ..] = tail
            && first & 0b1100_0000 == 0b1000_0000
        {
            tail = rest;
        }
        String::from_utf8_lossy(tail).trim().to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_tail_is_the_last_two_kib() {
        let mut input = Vec::new();
        for i in 0..1000 {
            input.extend_from_slice(format!("line {i}\n").as_bytes());
        }
        let log = StderrLog::new("t".into(), 100)
            .read_all(input.as_slice())
            .await;
        let tail = log.tail();
        assert!(tail.len() <= TAIL_BYTES);
        assert!(tail.ends_with("line 999"), "{tail}");
        assert!(!tail.contains("line 1\n"));
        assert!(log.over_budget);
        assert!(log.logged <= 100);
    }

    #[test]
    fn a_cut_character_is_skipped() {
        // "é" straddles the cut: only its second byte is within the last 2 KiB.
        let mut log = StderrLog::new("t".into(), 0);
        let mut bytes = "é".as_bytes().to_vec();
        bytes.extend(std::iter::repeat_n(b'x', TAIL_BYTES - 1));
        log.feed(&bytes);
        assert_eq!(log.tail(), "x".repeat(TAIL_BYTES - 1));
        // The same after the buffer was shortened.
        let mut log = StderrLog::new("t".into(), 0);
        log.feed(format!("{}a", "é".repeat(TAIL_BYTES)).as_bytes());
        let tail = log.tail();
        assert!(tail.ends_with('a'));
        assert!(!tail.contains('\u{FFFD}'), "{tail}");
    }
}
