//! HTTP/1.1 by hand over a `TcpStream`, for what a well-behaved client never does: stall in
//! the middle of a request's headers, or hold a half-sent request open across the server's
//! shutdown. Every read and write is bounded.

use serde_json::Value;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long a single write, or reading a whole response, may take.
const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// One client connection.
#[derive(Debug)]
pub(crate) struct RawConn {
    stream: TcpStream,
}

/// A response read off a [`RawConn`].
#[derive(Debug)]
pub(crate) struct RawResponse {
    /// The status code.
    pub status: u16,
    /// Header names (lowercased) and values, in order.
    pub headers: Vec<(String, String)>,
    /// The body (by `Content-Length`).
    pub body: Vec<u8>,
}

impl RawConn {
    /// Connects to `addr`.
    pub(crate) async fn connect(addr: SocketAddr) -> Self {
        let stream = tokio::time::timeout(IO_TIMEOUT, TcpStream::connect(addr))
            .await
            .expect("connect within 10 s")
            .expect("the server accepts the connection");
        Self { stream }
    }

    /// Writes `bytes` (a piece of a request).
    pub(crate) async fn write(&mut self, bytes: &[u8]) {
        tokio::time::timeout(IO_TIMEOUT, self.stream.write_all(bytes))
            .await
            .expect("write within 10 s")
            .expect("the server reads the request");
    }

    /// Sends `bytes` one at a time, `every` apart, while watching for the server to close the
    /// connection, which it must do within `limit` and before the last byte; returns when it
    /// closed.
    pub(crate) async fn trickle(
        &mut self,
        bytes: &[u8],
        every: Duration,
        limit: Duration,
    ) -> Duration {
        let start = Instant::now();
        let mut buf = [0u8; 1024];
        for byte in bytes {
            assert!(
                start.elapsed() < limit,
                "the server kept a trickling client for {limit:?}"
            );
            if self.stream.write_all(&[*byte]).await.is_err() {
                return start.elapsed();
            }
            match tokio::time::timeout(every, self.stream.read(&mut buf)).await {
                Err(_) | Ok(Ok(1..)) => {}
                Ok(Ok(0) | Err(_)) => return start.elapsed(),
            }
        }
        panic!(
            "the server read {} header bytes without cutting the client off",
            bytes.len()
        );
    }

    /// Reads one response; the request must have said `Connection: close`, so the response
    /// ends where the connection does.
    pub(crate) async fn response(&mut self) -> RawResponse {
        let mut raw = Vec::new();
        tokio::time::timeout(IO_TIMEOUT, self.stream.read_to_end(&mut raw))
            .await
            .expect("a whole response within 10 s")
            .expect("the response arrives without a transport error");
        RawResponse::parse(&raw)
    }

    /// Reads the head of an interim (1xx) response, up to its blank line, and returns it.
    pub(crate) async fn interim_head(&mut self) -> String {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            let n = tokio::time::timeout(IO_TIMEOUT, self.stream.read(&mut byte))
                .await
                .expect("an interim response within 10 s")
                .expect("the connection stays readable");
            assert_eq!(
                n, 1,
                "the server closed before an interim response: {head:?}"
            );
            head.push(byte[0]);
        }
        String::from_utf8(head).expect("the head is ASCII")
    }

    /// Reads (and discards) until the server closes the connection, which it must do within
    /// `limit`; returns how long that took.
    pub(crate) async fn closed_within(&mut self, limit: Duration) -> Duration {
        let start = Instant::now();
        let mut buf = [0u8; 1024];
        loop {
            let read = tokio::time::timeout_at((start + limit).into(), self.stream.read(&mut buf))
                .await
                .unwrap_or_else(|_| panic!("the server kept the connection open for {limit:?}"));
            match read {
                Ok(0) | Err(_) => return start.elapsed(),
                Ok(_) => {}
            }
        }
    }
}

impl RawResponse {
    fn parse(raw: &[u8]) -> Self {
        let split = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or_else(|| panic!("no end of headers in {:?}", String::from_utf8_lossy(raw)));
        let head = std::str::from_utf8(&raw[..split]).expect("the response head is ASCII");
        let mut lines = head.split("\r\n");
        let status_line = lines.next().expect("a status line");
        let status = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("a status code in {status_line:?}"));
        let headers: Vec<(String, String)> = lines
            .map(|l| {
                let (name, value) = l.split_once(':').expect("a header line has a colon");
                (name.trim().to_ascii_lowercase(), value.trim().to_owned())
            })
            .collect();
        let mut response = Self {
            status,
            headers,
            body: Vec::new(),
        };
        let length: usize = response
            .header("content-length")
            .expect("responses here have a Content-Length")
            .parse()
            .expect("Content-Length is a number");
        let body = &raw[split + 4..];
        assert_eq!(body.len(), length, "the body has Content-Length bytes");
        response.body = body.to_vec();
        response
    }

    /// A header's value.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (the content type must say so).
    pub(crate) fn json(&self) -> Value {
        assert!(
            self.header("content-type")
                .is_some_and(|ct| ct.starts_with("application/json")),
            "a JSON response: {:?}",
            self.headers
        );
        serde_json::from_slice(&self.body).expect("the body is JSON")
    }
}
