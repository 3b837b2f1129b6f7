//! A thin Chrome DevTools Protocol client: one connection, flat sessions, typed helpers for
//! the handful of methods ferry uses.
//!
//! - Every command carries an id; its reply is matched back through a oneshot channel, and
//!   each call has a timeout ([`CdpConnection::with_timeout`], default 30 s).
//! - Sessions are flat (`Target.attachToTarget{flatten:true}`): commands for a page carry
//!   its `sessionId` on the same socket.
//! - Every event goes, in the order the browser sent it, into one [`CdpEvents`] queue.
//! - **The reader loop never awaits a reply** (it only routes messages), and
//!   [`CdpConnection::send`] fires a command without waiting, for event handlers: a handler
//!   that awaits a reply while the browser waits on that handler can deadlock.
//! - Frames and messages up to 256 MiB are accepted (screenshots, large evaluate results).
//! - Two transports: a WebSocket ([`connect_ws`], [`connect_http`]) for a browser someone
//!   else runs, and the `--remote-debugging-pipe` pair ([`connect_pipe`]) for one we launch.
//!
//! Params and results of the generic [`CdpConnection::call`] are `serde_json::Value`; the
//! typed helpers below wrap the methods needed so far.

use crate::CdpError;
use futures_util::{SinkExt, StreamExt};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

/// Largest accepted WebSocket frame and message (screenshots, big DOM dumps exceed the
/// 16 MiB default).
const MAX_MESSAGE_BYTES: usize = 256 << 20;

/// Default per-command timeout.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Limit for the `/json/version` discovery exchange and the WebSocket handshake.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// Largest accepted `/json/version` response.
const MAX_DISCOVERY_BYTES: usize = 64 * 1024;

/// One event from the browser, such as `Page.loadEventFired`.
#[derive(Debug, Clone, PartialEq)]
pub struct CdpEvent {
    /// The CDP method name, e.g. `Target.attachedToTarget`.
    pub method: String,
    /// The event's parameters (`Value::Null` if absent).
    pub params: Value,
    /// The flat session the event belongs to; `None` for browser-level events.
    pub session_id: Option<SessionId>,
}

/// The queue every event arrives on, in the browser's order. It ends when the connection
/// closes. It is unbounded so the reader never waits on a slow consumer: drain it.
pub type CdpEvents = mpsc::UnboundedReceiver<CdpEvent>;

macro_rules! cdp_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Wraps an id received from the browser.
            pub fn new(id: impl Into<String>) -> Self {
                Self(id.into())
            }

            /// The id as the protocol spells it.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

cdp_id!(
    /// A flat session on the browser connection (`sessionId`), one per attached target.
    SessionId
);
cdp_id!(
    /// A target (page, iframe, worker) in the browser (`targetId`).
    TargetId
);
cdp_id!(
    /// An isolated browser context: its own cookies, storage and cache (`browserContextId`).
    BrowserContextId
);
cdp_id!(
    /// A frame in a page (`frameId`).
    FrameId
);
cdp_id!(
    /// A handle on a JavaScript object in a page (`objectId`).
    RemoteObjectId
);

type Reply = Result<Value, CdpError>;

/// Commands waiting for a reply; `closed` once the reader has seen the end of the socket.
#[derive(Default)]
struct Pending {
    closed: bool,
    waiting: HashMap<u64, oneshot::Sender<Reply>>,
}

struct Shared {
    outgoing: mpsc::UnboundedSender<String>,
    pending: Mutex<Pending>,
    next_id: AtomicU64,
}

impl Shared {
    fn pending(&self) -> MutexGuard<'_, Pending> {
        // The lock is never held across an await or a panic-prone call; recover anyway.
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A handle on one DevTools connection (WebSocket or pipe). Cheap to clone; the
/// connection closes when the last handle is dropped.
#[derive(Clone)]
pub struct CdpConnection {
    shared: Arc<Shared>,
    timeout: Duration,
}

/// A handle on a connection that does not keep it open (for event handlers that live as
/// long as the connection).
#[derive(Clone)]
pub struct WeakCdpConnection {
    shared: Weak<Shared>,
    timeout: Duration,
}

impl WeakCdpConnection {
    /// A full handle, while the connection is still held by someone.
    pub fn upgrade(&self) -> Option<CdpConnection> {
        self.shared.upgrade().map(|shared| CdpConnection {
            shared,
            timeout: self.timeout,
        })
    }
}

impl fmt::Debug for WeakCdpConnection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeakCdpConnection").finish_non_exhaustive()
    }
}

impl fmt::Debug for CdpConnection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CdpConnection")
            .field("timeout", &self.timeout)
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

/// Connects to a DevTools WebSocket URL (`ws://127.0.0.1:PORT/devtools/browser/…`).
///
/// ```no_run
/// # async fn run() -> Result<(), ferry_browser::CdpError> {
/// let (cdp, mut events) = ferry_browser::cdp::connect_ws("ws://127.0.0.1:9222/devtools/browser/x").await?;
/// let version = cdp.call("Browser.getVersion", serde_json::json!({}), None).await?;
/// println!("{}", version["product"]);
/// # Ok(()) }
/// ```
pub async fn connect_ws(url: &str) -> Result<(CdpConnection, CdpEvents), CdpError> {
    connect_ws_with_headers(url, &[]).await
}

/// [`connect_ws`] sending extra handshake headers (a CDP endpoint's credential).
pub async fn connect_ws_with_headers(
    url: &str,
    headers: &[(String, String)],
) -> Result<(CdpConnection, CdpEvents), CdpError> {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
    let bad = |reason| CdpError::BadEndpoint {
        endpoint: url.to_owned(),
        reason,
    };
    if !url.starts_with("ws://") {
        return Err(bad("expected a ws:// url (wss:// is not supported)"));
    }
    let mut request = url.into_client_request().map_err(|_| bad("not a url"))?;
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad("bad header name"))?;
        let value = HeaderValue::from_str(value).map_err(|_| bad("bad header value"))?;
        request.headers_mut().insert(name, value);
    }
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_MESSAGE_BYTES));
    let handshake = tokio_tungstenite::connect_async_with_config(request, Some(config), true);
    let (socket, _) = tokio::time::timeout(DISCOVERY_TIMEOUT, handshake)
        .await
        .map_err(|_| CdpError::Timeout {
            method: "websocket handshake".to_owned(),
            after: DISCOVERY_TIMEOUT,
        })?
        .map_err(|e| CdpError::Connect {
            url: url.to_owned(),
            source: Arc::new(e),
        })?;
    let (mut sink, mut stream) = socket.split();
    let (connection, mut out_rx, inbound) = new_connection();

    // Writer: ends when every handle is gone (then closes the socket politely) or the
    // socket fails.
    tokio::spawn(async move {
        while let Some(text) = out_rx.recv().await {
            if sink.send(Message::Text(text.into())).await.is_err() {
                return;
            }
        }
        let _ = sink.close().await;
    });

    // Reader: routes replies and events; never awaits anything but the socket.
    tokio::spawn(async move {
        while let Some(Ok(message)) = stream.next().await {
            let text = match &message {
                Message::Text(text) => text.as_str(),
                Message::Binary(bytes) => match std::str::from_utf8(bytes) {
                    Ok(text) => text,
                    Err(_) => continue,
                },
                Message::Close(_) => break,
                _ => continue,
            };
            if !inbound.route(text) {
                break;
            }
        }
        inbound.close();
    });

    Ok(connection)
}

/// Speaks CDP over a pipe pair (`--remote-debugging-pipe`): each message is JSON followed
/// by a NUL byte. `to_browser` is the browser's fd 3, `from_browser` its fd 4.
///
/// [`crate::Chromium`] launches with a pipe by default, so no TCP port is ever opened.
pub fn connect_pipe<W, R>(to_browser: W, from_browser: R) -> (CdpConnection, CdpEvents)
where
    W: AsyncWrite + Send + Unpin + 'static,
    R: AsyncRead + Send + Unpin + 'static,
{
    let (connection, mut out_rx, inbound) = new_connection();
    tokio::spawn(async move {
        let mut to_browser = to_browser;
        while let Some(text) = out_rx.recv().await {
            let mut frame = text.into_bytes();
            frame.push(0);
            if to_browser.write_all(&frame).await.is_err() || to_browser.flush().await.is_err() {
                return;
            }
        }
        let _ = to_browser.shutdown().await;
    });
    tokio::spawn(async move {
        let mut from_browser = BufReader::new(from_browser);
        let mut frame = Vec::new();
        loop {
            frame.clear();
            let limit = (MAX_MESSAGE_BYTES + 1) as u64;
            match (&mut from_browser)
                .take(limit)
                .read_until(0, &mut frame)
                .await
            {
                Ok(0) | Err(_) => break,
                Ok(_) if frame.last() != Some(&0) => {
                    // Longer than the limit, or cut off by the browser exiting.
                    tracing::warn!(
                        len = frame.len(),
                        "devtools pipe message too long or truncated"
                    );
                    break;
                }
                Ok(_) => {}
            }
            frame.pop();
            let Ok(text) = std::str::from_utf8(&frame) else {
                continue;
            };
            if !inbound.route(text) {
                break;
            }
        }
        inbound.close();
    });
    connection
}

/// A connection handle, the queue its commands leave on, and the reader's side.
fn new_connection() -> (
    (CdpConnection, CdpEvents),
    mpsc::UnboundedReceiver<String>,
    Inbound,
) {
    let (out_tx, out_rx) = mpsc::unbounded_channel();
    let (event_tx, event_rx) = mpsc::unbounded_channel();
    let shared = Arc::new(Shared {
        outgoing: out_tx,
        pending: Mutex::new(Pending::default()),
        next_id: AtomicU64::new(1),
    });
    let inbound = Inbound {
        shared: Arc::downgrade(&shared),
        events: event_tx,
    };
    let connection = CdpConnection {
        shared,
        timeout: DEFAULT_TIMEOUT,
    };
    ((connection, event_rx), out_rx, inbound)
}

/// What a transport's reader task holds: where replies and events go.
struct Inbound {
    /// Weak, so the reader does not keep a connection alive that nobody holds.
    shared: Weak<Shared>,
    events: mpsc::UnboundedSender<CdpEvent>,
}

impl Inbound {
    /// Routes one message; `false` once every handle is gone.
    fn route(&self, text: &str) -> bool {
        match self.shared.upgrade() {
            Some(shared) => {
                route(text, &shared, &self.events);
                true
            }
            None => false,
        }
    }

    /// The transport ended: fail every waiting command, and every later one at once.
    fn close(&self) {
        if let Some(shared) = self.shared.upgrade() {
            let mut pending = shared.pending();
            pending.closed = true;
            for (_, waiter) in pending.waiting.drain() {
                let _ = waiter.send(Err(CdpError::Closed));
            }
        }
    }
}

/// Connects through the DevTools HTTP endpoint (`http://127.0.0.1:9222`): asks
/// `/json/version` for `webSocketDebuggerUrl`, then [`connect_ws`].
///
/// Chromium rejects a `Host` that is not an IP or `localhost`, and keeps the socket open
/// despite `Connection: close`, so the response is read by its `Content-Length`.
pub async fn connect_http(http_url: &str) -> Result<(CdpConnection, CdpEvents), CdpError> {
    connect_http_with_headers(http_url, &[]).await
}

/// [`connect_http`] sending `headers` with the discovery request and the handshake.
pub async fn connect_http_with_headers(
    http_url: &str,
    headers: &[(String, String)],
) -> Result<(CdpConnection, CdpEvents), CdpError> {
    let bad = |reason| CdpError::BadEndpoint {
        endpoint: http_url.to_owned(),
        reason,
    };
    let url = url::Url::parse(http_url).map_err(|_| bad("not a url"))?;
    if url.scheme() != "http" {
        return Err(bad("expected an http:// url (https:// is not supported)"));
    }
    let unsafe_text = |t: &str| t.bytes().any(|b| b == b'\r' || b == b'\n');
    if headers
        .iter()
        .any(|(n, v)| unsafe_text(n) || unsafe_text(v) || n.contains(':'))
    {
        return Err(bad("header names and values must be single lines"));
    }
    let host = url.host_str().ok_or_else(|| bad("no host"))?;
    let port = url.port_or_known_default().ok_or_else(|| bad("no port"))?;
    let authority = format!("{host}:{port}");
    let version_url = format!("http://{authority}/json/version");
    let body = tokio::time::timeout(
        DISCOVERY_TIMEOUT,
        http_get(&authority, "/json/version", headers),
    )
    .await
    .map_err(|_| CdpError::Discovery {
        url: version_url.clone(),
        reason: format!("no complete response within {DISCOVERY_TIMEOUT:?}"),
    })?
    .map_err(|reason| CdpError::Discovery {
        url: version_url.clone(),
        reason,
    })?;
    let version: Value = serde_json::from_slice(&body).map_err(|e| CdpError::Discovery {
        url: version_url.clone(),
        reason: format!("body is not json: {e}"),
    })?;
    let ws_url = version
        .get("webSocketDebuggerUrl")
        .and_then(Value::as_str)
        .ok_or_else(|| CdpError::Discovery {
            url: version_url,
            reason: "no webSocketDebuggerUrl".to_owned(),
        })?;
    connect_ws_with_headers(ws_url, headers).await
}

/// A minimal HTTP/1.1 GET that returns the body of a 200 response, read by Content-Length.
async fn http_get(
    authority: &str,
    path: &str,
    headers: &[(String, String)],
) -> Result<Vec<u8>, String> {
    let mut stream = tokio::net::TcpStream::connect(authority)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let mut request = format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| format!("write: {e}"))?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = stream
            .read(&mut chunk)
            .await
            .map_err(|e| format!("read: {e}"))?;
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() > MAX_DISCOVERY_BYTES {
            return Err(format!("response exceeds {MAX_DISCOVERY_BYTES} bytes"));
        }
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            let status_ok = head
                .lines()
                .next()
                .and_then(|l| l.split_whitespace().nth(1))
                .is_some_and(|code| code == "200");
            if !status_ok {
                let first = head.lines().next().unwrap_or_default().to_owned();
                return Err(format!("unexpected status line {first:?}"));
            }
            let length = head.lines().skip(1).find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.trim()
                    .eq_ignore_ascii_case("content-length")
                    .then(|| value.trim().parse::<usize>().ok())?
            });
            let body = &buf[end + 4..];
            match length {
                Some(len) if body.len() >= len => return Ok(body[..len].to_vec()),
                None if n == 0 => return Ok(body.to_vec()),
                _ => {}
            }
        }
        if n == 0 {
            return Err("connection closed before the response was complete".to_owned());
        }
    }
}

/// Routes one incoming message: a reply to its waiter, an event to the queue.
fn route(text: &str, shared: &Shared, events: &mpsc::UnboundedSender<CdpEvent>) {
    let Ok(mut message) = serde_json::from_str::<Value>(text) else {
        tracing::debug!(
            len = text.len(),
            "ignoring a devtools message that is not json"
        );
        return;
    };
    if let Some(id) = message.get("id").and_then(Value::as_u64) {
        let Some(waiter) = shared.pending().waiting.remove(&id) else {
            return; // fire-and-forget command, or its caller timed out
        };
        let reply = match message.get_mut("error") {
            Some(error) => Err(protocol_error(error)),
            None => Ok(message
                .get_mut("result")
                .map(Value::take)
                .unwrap_or(Value::Null)),
        };
        let _ = waiter.send(reply);
    } else if let Some(method) = message.get("method").and_then(Value::as_str) {
        let event = CdpEvent {
            method: method.to_owned(),
            session_id: message
                .get("sessionId")
                .and_then(Value::as_str)
                .map(SessionId::new),
            params: message
                .get_mut("params")
                .map(Value::take)
                .unwrap_or(Value::Null),
        };
        let _ = events.send(event);
    }
}

/// `{code, message, data?}` → [`CdpError::Protocol`]; the method is filled in by the caller.
fn protocol_error(error: &Value) -> CdpError {
    let code = error.get("code").and_then(Value::as_i64).unwrap_or(0);
    let mut message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("unknown error")
        .to_owned();
    if let Some(data) = error.get("data").and_then(Value::as_str) {
        message.push_str(": ");
        message.push_str(data);
    }
    CdpError::Protocol {
        method: String::new(),
        code,
        message,
    }
}

impl CdpConnection {
    /// A handle that does not keep the connection open.
    pub fn downgrade(&self) -> WeakCdpConnection {
        WeakCdpConnection {
            shared: Arc::downgrade(&self.shared),
            timeout: self.timeout,
        }
    }

    /// The same connection with another per-command timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The per-command timeout of this handle.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Whether the socket has closed (every later call fails with [`CdpError::Closed`]).
    pub fn is_closed(&self) -> bool {
        self.shared.pending().closed
    }

    /// Sends `method` (on `session`, or the browser when `None`) and waits for its reply.
    pub async fn call(
        &self,
        method: &str,
        params: Value,
        session: Option<&SessionId>,
    ) -> Result<Value, CdpError> {
        self.call_with_timeout(method, params, session, self.timeout)
            .await
    }

    /// [`CdpConnection::call`] with an explicit timeout for this one command.
    pub async fn call_with_timeout(
        &self,
        method: &str,
        params: Value,
        session: Option<&SessionId>,
        timeout: Duration,
    ) -> Result<Value, CdpError> {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = self.shared.pending();
            if pending.closed {
                return Err(CdpError::Closed);
            }
            pending.waiting.insert(id, tx);
        }
        if self
            .shared
            .outgoing
            .send(encode(id, method, params, session))
            .is_err()
        {
            self.shared.pending().waiting.remove(&id);
            return Err(CdpError::Closed);
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(Ok(result))) => Ok(result),
            Ok(Ok(Err(CdpError::Protocol { code, message, .. }))) => Err(CdpError::Protocol {
                method: method.to_owned(),
                code,
                message,
            }),
            Ok(Ok(Err(other))) => Err(other),
            Ok(Err(_)) => Err(CdpError::Closed),
            Err(_) => {
                self.shared.pending().waiting.remove(&id);
                Err(CdpError::Timeout {
                    method: method.to_owned(),
                    after: timeout,
                })
            }
        }
    }

    /// Sends `method` without waiting for (or ever seeing) its reply. For event handlers,
    /// which must not await replies; ordering with other commands is kept.
    pub fn send(
        &self,
        method: &str,
        params: Value,
        session: Option<&SessionId>,
    ) -> Result<(), CdpError> {
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        self.shared
            .outgoing
            .send(encode(id, method, params, session))
            .map_err(|_| CdpError::Closed)
    }

    /// `call` and deserialize the result.
    async fn call_typed<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
        session: Option<&SessionId>,
    ) -> Result<T, CdpError> {
        let result = self.call(method, params, session).await?;
        serde_json::from_value(result).map_err(|e| CdpError::BadResponse {
            method: method.to_owned(),
            reason: e.to_string(),
        })
    }

    /// `Target.createBrowserContext`: a new context with its own cookies and storage.
    pub async fn create_browser_context(
        &self,
        options: &CreateBrowserContext,
    ) -> Result<BrowserContextId, CdpError> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Created {
            browser_context_id: BrowserContextId,
        }
        let params = serde_json::to_value(options).unwrap_or_else(|_| json!({}));
        let created: Created = self
            .call_typed("Target.createBrowserContext", params, None)
            .await?;
        Ok(created.browser_context_id)
    }

    /// `Target.disposeBrowserContext`: closes every page of the context and drops its data.
    pub async fn dispose_browser_context(&self, id: &BrowserContextId) -> Result<(), CdpError> {
        self.call(
            "Target.disposeBrowserContext",
            json!({ "browserContextId": id }),
            None,
        )
        .await
        .map(drop)
    }

    /// `Target.createTarget`: a new page showing `url`, in `context` or the default one.
    pub async fn create_target(
        &self,
        url: &str,
        context: Option<&BrowserContextId>,
    ) -> Result<TargetId, CdpError> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Created {
            target_id: TargetId,
        }
        let mut params = json!({ "url": url });
        if let Some(context) = context {
            params["browserContextId"] = json!(context);
        }
        let created: Created = self.call_typed("Target.createTarget", params, None).await?;
        Ok(created.target_id)
    }

    /// `Target.attachToTarget{flatten:true}`: a flat session for commands to `target`.
    pub async fn attach_to_target(&self, target: &TargetId) -> Result<SessionId, CdpError> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Attached {
            session_id: SessionId,
        }
        let params = json!({ "targetId": target, "flatten": true });
        let attached: Attached = self
            .call_typed("Target.attachToTarget", params, None)
            .await?;
        Ok(attached.session_id)
    }

    /// `Target.closeTarget`.
    pub async fn close_target(&self, target: &TargetId) -> Result<(), CdpError> {
        self.call("Target.closeTarget", json!({ "targetId": target }), None)
            .await
            .map(drop)
    }

    /// `Page.enable`: page events (`Page.loadEventFired`, …) start flowing for `session`.
    pub async fn page_enable(&self, session: &SessionId) -> Result<(), CdpError> {
        self.call("Page.enable", json!({}), Some(session))
            .await
            .map(drop)
    }

    /// `Page.navigate`. Returns as soon as the navigation is committed or has failed; it
    /// does not wait for the load event (see `Page::navigate` in [`crate::browser`]).
    pub async fn page_navigate(
        &self,
        session: &SessionId,
        url: &str,
    ) -> Result<Navigation, CdpError> {
        self.call_typed("Page.navigate", json!({ "url": url }), Some(session))
            .await
    }

    /// `Runtime.evaluate{returnByValue:true, awaitPromise:true}` in the page's main world.
    pub async fn runtime_evaluate(
        &self,
        session: &SessionId,
        expression: &str,
    ) -> Result<Evaluation, CdpError> {
        self.runtime_evaluate_in(session, expression, EvaluateIn::default())
            .await
    }

    /// `Runtime.evaluate{returnByValue:true, awaitPromise:true}` in the execution context
    /// `target.context_id` (an isolated world) or the main world, optionally with a user
    /// gesture.
    pub async fn runtime_evaluate_in(
        &self,
        session: &SessionId,
        expression: &str,
        target: EvaluateIn,
    ) -> Result<Evaluation, CdpError> {
        let raw = self.evaluate_raw(session, expression, target, true).await?;
        Ok(raw.into_evaluation())
    }

    /// `Runtime.evaluate{returnByValue:false}`: a handle on the resulting object (for
    /// `DOM.setFileInputFiles`). `Ok(Err(description))` when the expression threw or did
    /// not produce an object.
    pub async fn runtime_evaluate_handle(
        &self,
        session: &SessionId,
        expression: &str,
        target: EvaluateIn,
    ) -> Result<Result<RemoteObjectId, String>, CdpError> {
        let raw = self
            .evaluate_raw(session, expression, target, false)
            .await?;
        Ok(match (raw.exception_details, raw.result.object_id) {
            (Some(details), _) => Err(details.describe()),
            (None, Some(id)) => Ok(id),
            (None, None) => Err("the expression did not produce an object".to_owned()),
        })
    }

    /// `Runtime.callFunctionOn{returnByValue:true, awaitPromise:true}`: calls
    /// `declaration` with `this` bound to `object` and `arguments` passed as JSON values
    /// (never spliced into the source), optionally with a user gesture.
    pub async fn runtime_call_function_on(
        &self,
        session: &SessionId,
        object: &RemoteObjectId,
        declaration: &str,
        arguments: &[Value],
        user_gesture: bool,
    ) -> Result<Evaluation, CdpError> {
        let arguments: Vec<Value> = arguments.iter().map(|v| json!({ "value": v })).collect();
        let params = json!({
            "functionDeclaration": declaration,
            "objectId": object,
            "arguments": arguments,
            "returnByValue": true,
            "awaitPromise": true,
            "userGesture": user_gesture,
        });
        let raw: RawEvaluation = self
            .call_typed("Runtime.callFunctionOn", params, Some(session))
            .await?;
        Ok(raw.into_evaluation())
    }

    async fn evaluate_raw(
        &self,
        session: &SessionId,
        expression: &str,
        target: EvaluateIn,
        by_value: bool,
    ) -> Result<RawEvaluation, CdpError> {
        let mut params = json!({
            "expression": expression,
            "returnByValue": by_value,
            "awaitPromise": true,
        });
        if let Some(context) = target.context_id {
            params["contextId"] = json!(context);
        }
        if target.user_gesture {
            params["userGesture"] = json!(true);
        }
        self.call_typed("Runtime.evaluate", params, Some(session))
            .await
    }
}

/// What `Runtime.evaluate` and `Runtime.callFunctionOn` answer.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawEvaluation {
    result: RawRemoteObject,
    exception_details: Option<ExceptionDetails>,
}

impl RawEvaluation {
    /// The value returned by value, or what was thrown.
    fn into_evaluation(self) -> Evaluation {
        match self.exception_details {
            Some(details) => Evaluation::Threw {
                description: details.describe(),
            },
            None => Evaluation::Value(self.result.value.unwrap_or(Value::Null)),
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawRemoteObject {
    value: Option<Value>,
    object_id: Option<RemoteObjectId>,
}

#[derive(Deserialize)]
struct ExceptionDetails {
    text: Option<String>,
    exception: Option<ExceptionObject>,
}

impl ExceptionDetails {
    fn describe(self) -> String {
        self.exception
            .and_then(|e| e.description)
            .or(self.text)
            .unwrap_or_else(|| "unknown exception".to_owned())
    }
}

#[derive(Deserialize)]
struct ExceptionObject {
    description: Option<String>,
}

/// Where `Runtime.evaluate` runs. `Default`: the main world, no user gesture.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EvaluateIn {
    /// An execution context id (from `Page.createIsolatedWorld`); `None` is the main world.
    pub context_id: Option<i64>,
    /// Run with transient user activation (`userGesture: true`), as a click would have.
    pub user_gesture: bool,
}

/// One command as a text frame; `sessionId` only when addressed to a session.
fn encode(id: u64, method: &str, params: Value, session: Option<&SessionId>) -> String {
    let mut command = json!({ "id": id, "method": method, "params": params });
    if let Some(session) = session {
        command["sessionId"] = json!(session);
    }
    command.to_string()
}

/// Parameters of `Target.createBrowserContext`. `Default`: all unset (no proxy, context
/// kept until disposed).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateBrowserContext {
    /// Dispose the context when the connection that created it detaches, so a crashed
    /// client cannot leak contexts in a shared browser.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dispose_on_detach: bool,
    /// A proxy for every request of this context (`http://127.0.0.1:PORT`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proxy_server: Option<String>,
    /// Hosts that bypass the proxy; `<-loopback>` removes the implicit loopback bypass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proxy_bypass_list: Option<String>,
}

/// The result of `Page.navigate`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Navigation {
    /// The frame that navigated.
    pub frame_id: FrameId,
    /// The loader of a cross-document navigation; `None` for same-document ones (`#hash`),
    /// which fire no load event.
    pub loader_id: Option<String>,
    /// Set when the navigation failed (`net::ERR_CONNECTION_REFUSED`, …).
    pub error_text: Option<String>,
}

/// The outcome of `Runtime.evaluate`.
#[derive(Debug, Clone, PartialEq)]
pub enum Evaluation {
    /// The value the expression produced (a promise is awaited first); `Null` for
    /// `undefined` and values that cannot be serialized.
    Value(Value),
    /// The expression threw; `description` is Chromium's rendering of the exception.
    Threw {
        /// Message and stack of the exception.
        description: String,
    },
}

impl Evaluation {
    /// The value, or the exception as [`BrowserError::Script`].
    pub(crate) fn into_result(self) -> Result<Value, crate::BrowserError> {
        match self {
            Evaluation::Value(value) => Ok(value),
            Evaluation::Threw { description } => Err(crate::BrowserError::Script { description }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_carry_the_session_only_when_given() {
        let browser = encode(1, "Target.getTargets", json!({}), None);
        let browser: Value = serde_json::from_str(&browser).expect("json");
        assert_eq!(
            browser,
            json!({"id": 1, "method": "Target.getTargets", "params": {}})
        );

        let session = SessionId::new("S1");
        let paged = encode(2, "Page.enable", json!({}), Some(&session));
        let paged: Value = serde_json::from_str(&paged).expect("json");
        assert_eq!(paged["sessionId"], "S1");
    }

    #[test]
    fn create_browser_context_omits_unset_fields() {
        let empty = serde_json::to_value(CreateBrowserContext::default()).expect("json");
        assert_eq!(empty, json!({}));
        let full = CreateBrowserContext {
            dispose_on_detach: true,
            proxy_server: Some("http://127.0.0.1:1".into()),
            proxy_bypass_list: Some("<-loopback>".into()),
        };
        assert_eq!(
            serde_json::to_value(full).expect("json"),
            json!({"disposeOnDetach": true, "proxyServer": "http://127.0.0.1:1", "proxyBypassList": "<-loopback>"})
        );
    }

    #[test]
    fn protocol_errors_keep_code_message_and_data() {
        let err = protocol_error(&json!({"code": -32000, "message": "Not allowed", "data": "why"}));
        assert!(matches!(
            err,
            CdpError::Protocol { code: -32000, ref message, .. } if message == "Not allowed: why"
        ));
    }

    #[tokio::test]
    async fn bad_endpoints_are_rejected_before_any_io() {
        assert!(matches!(
            connect_ws("http://127.0.0.1:1").await,
            Err(CdpError::BadEndpoint { .. })
        ));
        assert!(matches!(
            connect_http("ws://127.0.0.1:1").await,
            Err(CdpError::BadEndpoint { .. })
        ));
    }
}
