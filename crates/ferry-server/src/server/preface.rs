//! The header timeout from the moment a connection is accepted.
//!
//! hyper's HTTP/1.1 header timeout runs while it reads a request's head, and again between
//! keep-alive requests; but hyper-util's automatic protocol detection reads the first bytes of
//! a connection (HTTP/1.1, or the HTTP/2 preface) before any of that starts, with no timeout
//! of its own. A client that connects and sends nothing, or one byte of the preface, would hold
//! its connection (and a file descriptor) for ever. [`UntilPreface`] bounds that phase: reads
//! fail with `TimedOut` once the deadline passes, until the bytes read so far decide the
//! protocol (they leave the HTTP/2 preface, or complete it); then it steps aside and the
//! protocol's own timers rule.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The HTTP/2 connection preface (RFC 9113 §3.4).
const H2_PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// What a connection's first bytes say it speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// They leave the HTTP/2 preface: HTTP/1.1.
    Http1,
    /// They are the whole HTTP/2 preface.
    Http2,
    /// They are the start of the preface: more must be read to tell.
    Undecided,
}

/// The protocol a connection whose first bytes are `head` speaks.
pub(crate) fn protocol_of(head: &[u8]) -> Protocol {
    if !H2_PREFACE.starts_with(head) {
        Protocol::Http1
    } else if head.len() == H2_PREFACE.len() {
        Protocol::Http2
    } else {
        Protocol::Undecided
    }
}

/// The bytes that decide a connection's protocol: the length of the HTTP/2 preface.
pub(crate) const PREFACE_LEN: usize = H2_PREFACE.len();

/// A connection whose reads must decide the protocol before a deadline.
#[derive(Debug)]
pub(crate) struct UntilPreface<T> {
    inner: T,
    /// Armed until the protocol is decided.
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
    /// Bytes read so far that match the HTTP/2 preface.
    matched: usize,
}

impl<T> UntilPreface<T> {
    /// `inner`, whose first bytes must arrive within `timeout` of now.
    pub(crate) fn new(inner: T, timeout: Duration) -> Self {
        Self {
            inner,
            deadline: Some(Box::pin(tokio::time::sleep(timeout))),
            matched: 0,
        }
    }

    /// Notes bytes read: the deadline is lifted once they leave or complete the preface.
    fn saw(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            if self.matched < H2_PREFACE.len() && byte == H2_PREFACE[self.matched] {
                self.matched += 1;
            } else {
                self.deadline = None;
                return;
            }
        }
        if self.matched == H2_PREFACE.len() {
            self.deadline = None;
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for UntilPreface<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if let Some(deadline) = &mut self.deadline
            && deadline.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "no request within the header timeout of the connection's start",
            )));
        }
        let before = buf.filled().len();
        let read = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = read
            && self.deadline.is_some()
        {
            self.saw(&buf.filled()[before..]);
        }
        read
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for UntilPreface<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn armed() -> UntilPreface<()> {
        UntilPreface {
            inner: (),
            deadline: None,
            matched: 0,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_deadline_lifts_once_the_bytes_decide_the_protocol() {
        let arm = |mut c: UntilPreface<()>| {
            c.deadline = Some(Box::pin(tokio::time::sleep(Duration::from_secs(1))));
            c
        };
        let mut h1 = arm(armed());
        h1.saw(b"G");
        assert!(h1.deadline.is_none(), "GET is not the preface");
        let mut h2 = arm(armed());
        h2.saw(b"PRI * HTTP/2.0");
        assert!(h2.deadline.is_some(), "part of the preface decides nothing");
        h2.saw(b"\r\n\r\nSM\r\n\r\n");
        assert!(h2.deadline.is_none(), "the whole preface decides");
        let mut odd = arm(armed());
        odd.saw(b"PRX");
        assert!(odd.deadline.is_none(), "a byte off the preface decides");
    }

    #[test]
    fn first_bytes_tell_the_protocol() {
        assert_eq!(protocol_of(b"GET / HTTP/1.1\r\n"), Protocol::Http1);
        assert_eq!(protocol_of(b"PRX"), Protocol::Http1);
        assert_eq!(protocol_of(b"PRI * HTTP/2.0"), Protocol::Undecided);
        assert_eq!(protocol_of(H2_PREFACE), Protocol::Http2);
        assert_eq!(PREFACE_LEN, 24);
    }
}
