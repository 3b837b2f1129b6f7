//! The front door (issue 5), over real sockets: the bearer token (start-up refused off
//! loopback; missing, wrong and right tokens on both bindings and on streams; the public card
//! that declares the scheme and never the token), the `Origin` and `Host` checks, the body
//! limit, the header read timeout, the rate limit and the capacity limits with `Retry-After`,
//! the probes, request ids, and a shutdown that drains and then stops waiting.
//!
//! Each test asserts something that fails without its rule. `constant_time_eq` itself is
//! unit-tested next to it; over the network only its verdicts are visible (a token of another
//! length, or differing only in its last byte, is refused).

use crate::support::{
    Auth, Binding, RATE_LIMITED, REQUEST_TIMEOUT, RawConn, Refusal, Remote, SHUTTING_DOWN,
    ScriptedAgent, ServiceParams, Step, TASK_NOT_FOUND, TOO_MANY_REQUESTS_IN_FLIGHT,
    TOO_MANY_STREAMS, TestServer, WireError, assert_wire_format, message, send_params, state_of,
};
use ferry_agent::AgentExecutor;
use ferry_server::{A2aServer, ServerConfig};
use reqwest::Method;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// The token of the servers that require one.
const TOKEN: &str = "s3cret-token-0123456789";

/// A scripted server that requires [`TOKEN`].
async fn with_token() -> (TestServer, Remote) {
    TestServer::scripted_with(ServerConfig {
        token: Some(TOKEN.into()),
        ..ServerConfig::default()
    })
    .await
}

/// Default service parameters with this `Authorization`.
fn auth(auth: Auth<'_>) -> ServiceParams<'_> {
    ServiceParams {
        auth,
        ..ServiceParams::default()
    }
}

/// Default service parameters plus `headers`.
fn headers<'a>(headers: &'a [(&'a str, &'a str)]) -> ServiceParams<'a> {
    ServiceParams {
        headers,
        ..ServiceParams::default()
    }
}

/// How many tasks the server holds (to show that a refused call ran nothing).
async fn task_count(srv: &TestServer, b: Binding) -> i64 {
    srv.ok(b, "ListTasks", json!({})).await["totalSize"]
        .as_i64()
        .expect("totalSize is a number")
}

/// A front-door refusal: `status`, `reason`, and the request id in the header, in the body's
/// top-level `requestId` and in `ErrorInfo.metadata.requestId`.
#[track_caller]
fn assert_refused(r: &Refusal, status: u16, reason: &str) {
    assert_eq!(r.status, status, "{}", r.body);
    assert_eq!(r.error.reason(), reason, "{}", r.body);
    assert!(!r.error.message().is_empty(), "{}", r.body);
    let rid = r.request_id();
    assert_eq!(
        r.body["requestId"], rid,
        "top-level requestId of {}",
        r.body
    );
    assert_eq!(r.error.meta("requestId"), Some(rid), "{}", r.body);
}

/// 401 with `WWW-Authenticate: Bearer …`, reason `UNAUTHENTICATED`, and no echo of the token.
#[track_caller]
fn assert_unauthenticated(r: &Refusal, what: &str) {
    assert_refused(r, 401, "UNAUTHENTICATED");
    let challenge = r
        .header("www-authenticate")
        .unwrap_or_else(|| panic!("{what}: a 401 has WWW-Authenticate"));
    assert!(challenge.starts_with("Bearer"), "{what}: {challenge}");
    assert!(!r.body.to_string().contains(TOKEN), "{what}: {}", r.body);
}

/// The `Authorization` values that must be refused: none, another length (longer and
/// shorter), the last byte changed, another scheme, no scheme, an empty token.
fn wrong_credentials() -> Vec<Option<String>> {
    let (head, _) = TOKEN.split_at(TOKEN.len() - 1);
    vec![
        None,
        Some(format!("Bearer {TOKEN}0")),
        Some(format!("Bearer {head}")),
        Some(format!("Bearer {head}X")),
        Some(format!("Basic {TOKEN}")),
        Some(TOKEN.to_owned()),
        Some("Bearer ".to_owned()),
    ]
}

fn as_auth(credentials: &Option<String>) -> Auth<'_> {
    credentials.as_deref().map_or(Auth::Anonymous, Auth::Header)
}

/// Off loopback, no token means no start, with a message that names the fix; with a token the
/// server binds.
async fn non_loopback_bind_needs_a_token() {
    let (agent, _remote) = ScriptedAgent::new();
    let agent: Arc<dyn AgentExecutor> = Arc::new(agent);
    let bind = "0.0.0.0:0".parse().expect("a socket address");
    for token in [None, Some(String::new())] {
        let config = ServerConfig {
            bind,
            token: token.clone(),
            ..ServerConfig::default()
        };
        let e = A2aServer::bind(agent.clone(), config)
            .await
            .expect_err("a non-loopback bind without a token is refused");
        // A typed refusal that says what is wrong; which flag fixes it is the binary's to say
        // (crates/ferry/tests/serve_cli.rs checks that).
        assert!(
            matches!(e, ferry_server::ServerError::TokenRequired { bind: b } if b == bind),
            "{token:?}: {e}"
        );
        let said = e.to_string();
        assert!(said.contains("without a token"), "{said}");
        assert!(
            !said.contains("--"),
            "a library error names no flag: {said}"
        );
    }
    let config = ServerConfig {
        bind,
        token: Some(TOKEN.into()),
        ..ServerConfig::default()
    };
    let server = A2aServer::bind(agent, config)
        .await
        .expect("with a token a non-loopback bind is allowed");
    assert!(server.local_addr().ip().is_unspecified());
}

/// Without the right bearer token nothing runs, on either binding; with it, calls succeed (the
/// scheme name is case-insensitive).
async fn token_guards_calls(b: Binding) {
    let (srv, _remote) = with_token().await;
    for credentials in wrong_credentials() {
        let r = srv
            .refused(
                b,
                "SendMessage",
                send_params("hello"),
                auth(as_auth(&credentials)),
            )
            .await;
        assert_unauthenticated(&r, &format!("{credentials:?}"));
        let r = srv
            .refused(b, "ListTasks", json!({}), auth(as_auth(&credentials)))
            .await;
        assert_unauthenticated(&r, &format!("{credentials:?}"));
    }
    let task = srv.send_task(b, send_params("hello")).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    let lowercase = format!("bearer {TOKEN}");
    let answer = srv
        .call_with(b, "ListTasks", json!({}), auth(Auth::Header(&lowercase)))
        .await;
    let listed = answer
        .result
        .expect("`bearer` is the same scheme as `Bearer`");
    assert_eq!(listed["totalSize"], 1, "only the authenticated send ran");
}

/// Streams need the token too: `SendStreamingMessage` and `SubscribeToTask` are refused with
/// 401 before any stream opens, and open with it.
async fn token_guards_streams(b: Binding) {
    let (srv, remote) = with_token().await;
    for credentials in wrong_credentials() {
        let r = srv
            .refused(
                b,
                "SendStreamingMessage",
                send_params("wait"),
                auth(as_auth(&credentials)),
            )
            .await;
        assert_unauthenticated(&r, &format!("SendStreamingMessage {credentials:?}"));
    }
    let id = srv.start_waiting(b, Value::Null).await;
    assert_eq!(remote.started().await, id);
    for credentials in wrong_credentials() {
        let r = srv
            .refused(
                b,
                "SubscribeToTask",
                json!({"id": id}),
                auth(as_auth(&credentials)),
            )
            .await;
        assert_unauthenticated(&r, &format!("SubscribeToTask {credentials:?}"));
    }
    assert_eq!(
        task_count(&srv, b).await,
        1,
        "no refused stream started a task"
    );

    let mut subscribed = srv.open(b, "SubscribeToTask", json!({"id": id})).await;
    assert_eq!(
        state_of(&subscribed.next_ok().await),
        Some("TASK_STATE_WORKING")
    );
    let mut sending = srv
        .open(b, "SendStreamingMessage", send_params("stream me"))
        .await;
    let events = sending.remaining().await;
    assert_eq!(
        events.last().and_then(state_of),
        Some("TASK_STATE_COMPLETED"),
        "{events:?}"
    );
    remote.step(Step::Complete);
    let events = subscribed.remaining().await;
    assert_eq!(
        events.last().and_then(state_of),
        Some("TASK_STATE_COMPLETED"),
        "{events:?}"
    );
}

/// The card stays public with a token set (at the root and under both interfaces), declares
/// the bearer scheme and requires it, and never contains the token.
async fn card_is_public_and_declares_bearer() {
    let (srv, _remote) = with_token().await;
    for path in [
        "/.well-known/agent-card.json",
        "/jsonrpc/.well-known/agent-card.json",
        "/rest/.well-known/agent-card.json",
    ] {
        let response = srv.request(Method::GET, path, &[], "").await;
        assert_eq!(response.status(), 200, "{path} is public");
        let text = response.text().await.expect("the card arrives");
        assert!(!text.contains(TOKEN), "{path} contains the token");
        let card: Value = serde_json::from_str(&text).expect("the card is JSON");
        assert_wire_format(&card);
        assert_eq!(
            card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"], "Bearer",
            "{card}"
        );
        let requirements = card["securityRequirements"]
            .as_array()
            .unwrap_or_else(|| panic!("securityRequirements is a list: {card}"));
        assert!(
            requirements
                .iter()
                .any(|r| r["schemes"].get("bearer").is_some()),
            "the bearer scheme is required: {card}"
        );
    }
    let (open, _remote) = TestServer::scripted().await;
    let (status, card) = open
        .request_json(Method::GET, "/.well-known/agent-card.json", &[], "")
        .await;
    assert_eq!(status, 200);
    assert!(
        card.get("securitySchemes").is_none_or(|s| s == &json!({})),
        "without a token no scheme is declared: {card}"
    );
}

/// A request from a web page of another origin is refused (403) on both bindings and runs
/// nothing: another site, an origin this server does not list, `null`, the server's own host
/// on another port, and another loopback name than the one called.
async fn foreign_origins_are_refused(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let port = srv.addr().port();
    let other_port = format!("http://127.0.0.1:{}", port.wrapping_add(1));
    let other_name = format!("http://localhost:{port}");
    for origin in [
        "http://evil.example",
        "http://localhost:3000",
        "null",
        other_port.as_str(),
        other_name.as_str(),
    ] {
        let r = srv
            .refused(
                b,
                "SendMessage",
                send_params("hello"),
                headers(&[("Origin", origin)]),
            )
            .await;
        assert_refused(&r, 403, "ORIGIN_NOT_ALLOWED");
    }
    assert_eq!(task_count(&srv, b).await, 0, "nothing ran");
}

/// A page of the server's own origin (the one it was called at) and one of an allowed
/// origin call it: the answer carries CORS headers for that origin; the preflight of an
/// allowed origin is answered (204, without credentials), another's is refused.
async fn own_and_allowed_origins_are_served(b: Binding) {
    let config = ServerConfig {
        token: Some("cors-token".into()),
        allowed_origins: vec!["https://app.example.com".into()],
        ..ServerConfig::default()
    };
    let srv = TestServer::with_config(ferry_agents::EchoAgent, config).await;
    let own = format!("http://127.0.0.1:{}", srv.addr().port());
    for origin in [own.as_str(), "https://app.example.com"] {
        let answer = srv
            .call_with(
                b,
                "SendMessage",
                send_params("from a page"),
                ServiceParams {
                    headers: &[("Origin", origin)],
                    ..ServiceParams::default()
                },
            )
            .await;
        let sent = answer
            .result
            .unwrap_or_else(|e| panic!("{origin} is served: {}", e.body));
        assert!(sent.get("task").is_some(), "{sent}");
        let header = |name: &str| answer.headers.get(name).and_then(|v| v.to_str().ok());
        assert_eq!(header("access-control-allow-origin"), Some(origin));
        assert_eq!(header("vary"), Some("Origin"));
        assert!(
            header("access-control-expose-headers").is_some_and(|h| h.contains("x-request-id")),
            "the page may read the request id"
        );
    }
    let path = match b {
        Binding::Rest => "/rest/message:send",
        _ => "/jsonrpc",
    };
    let preflight = |origin: &'static str| {
        srv.http()
            .request(Method::OPTIONS, srv.url(path))
            .header("Origin", origin)
            .header("Access-Control-Request-Method", "POST")
            .header(
                "Access-Control-Request-Headers",
                "authorization, content-type",
            )
            .send()
    };
    let allowed = preflight("https://app.example.com")
        .await
        .expect("answered");
    assert_eq!(allowed.status(), 204, "no token needed for a preflight");
    let header = |name: &str| {
        allowed
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    assert_eq!(
        header("access-control-allow-origin"),
        "https://app.example.com"
    );
    assert!(header("access-control-allow-methods").contains("POST"));
    assert!(header("access-control-allow-headers").contains("authorization"));
    let refused = preflight("https://evil.example").await.expect("answered");
    assert_eq!(refused.status(), 403);
    assert!(
        refused
            .headers()
            .get("access-control-allow-origin")
            .is_none()
    );
}

/// An `allowed_origins` entry that is no origin stops the server before it listens.
async fn allowed_origins_must_be_origins() {
    let config = ServerConfig {
        allowed_origins: vec!["app.example.com".into()],
        ..ServerConfig::default()
    };
    let agent: Arc<dyn AgentExecutor> = Arc::new(ferry_agents::EchoAgent);
    let e = A2aServer::bind(agent, config)
        .await
        .expect_err("a bad origin is refused");
    assert!(
        matches!(&e, ferry_server::ServerError::Setting { setting, .. } if *setting == "allowed_origins"),
        "{e}"
    );
}

/// A foreign `Host` (DNS rebinding) is refused on both bindings and runs nothing.
async fn foreign_host_is_refused(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let port = srv.addr().port();
    let with_port = format!("evil.example:{port}");
    for host in [
        "evil.example",
        with_port.as_str(),
        "localhost.evil.example",
        "127.0.0.1.evil.example",
        "10.0.0.1",
    ] {
        let r = srv
            .refused(
                b,
                "SendMessage",
                send_params("hello"),
                headers(&[("Host", host)]),
            )
            .await;
        assert_refused(&r, 403, "HOST_NOT_ALLOWED");
    }
    assert_eq!(task_count(&srv, b).await, 0, "nothing ran");
}

/// Loopback names and addresses, the configured hosts and the host of `public_url` are
/// served; a name that merely starts with an allowed one is not.
async fn allowed_hosts_are_served(b: Binding) {
    let (srv, _remote) = TestServer::scripted_with(ServerConfig {
        allowed_hosts: vec!["agents.internal".into()],
        public_url: Some("https://ferry.example.com:8443/a2a".into()),
        ..ServerConfig::default()
    })
    .await;
    let port = srv.addr().port();
    let served = [
        format!("localhost:{port}"),
        format!("127.0.0.1:{port}"),
        format!("[::1]:{port}"),
        "agents.internal".to_owned(),
        format!("agents.internal:{port}"),
        "ferry.example.com:8443".to_owned(),
        "FERRY.EXAMPLE.COM".to_owned(),
    ];
    for host in &served {
        let answer = srv
            .call_with(b, "ListTasks", json!({}), headers(&[("Host", host)]))
            .await;
        answer
            .result
            .unwrap_or_else(|e| panic!("Host {host} is served: {}", e.body));
    }
    for host in ["ferry.example.com.evil", "agents.internal.evil:80"] {
        let r = srv
            .refused(b, "ListTasks", json!({}), headers(&[("Host", host)]))
            .await;
        assert_refused(&r, 403, "HOST_NOT_ALLOWED");
    }
}

/// A body over `max_body_bytes` is refused with 413 and a JSON error on both bindings; one
/// under it is served.
async fn oversized_body_is_413(b: Binding) {
    let (srv, _remote) = TestServer::scripted_with(ServerConfig {
        max_body_bytes: 2048,
        ..ServerConfig::default()
    })
    .await;
    let r = srv
        .refused(
            b,
            "SendMessage",
            send_params(&"x".repeat(4096)),
            ServiceParams::default(),
        )
        .await;
    assert_eq!(r.status, 413, "{}", r.body);
    assert!(r.error.message().contains("2048"), "{}", r.body);
    assert_eq!(r.error.meta("requestId"), Some(r.request_id()));
    if b == Binding::Rest {
        assert_eq!(r.error.code(), 413, "{}", r.body);
        assert_eq!(r.body["requestId"], r.request_id());
    }
    assert_eq!(task_count(&srv, b).await, 0, "nothing ran");
    let task = srv.send_task(b, send_params(&"x".repeat(1000))).await;
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
}

/// An HTTP/1.1 request head over 8 KiB (the request line and every header) is refused with
/// 431 before any route sees it; one just under is served. The bound is what keeps each
/// connection's read buffer at 8 KiB (see `connection_builder`).
async fn oversized_request_head_is_431() {
    let (srv, _remote) = TestServer::scripted_with(ServerConfig::default()).await;
    let card = "/.well-known/agent-card.json";
    let padded = |len: usize| "a".repeat(len);
    let over = padded(8 * 1024);
    let response = srv
        .request(Method::GET, card, &[("x-pad", &over)], "")
        .await;
    assert_eq!(response.status(), 431);
    let under = padded(7 * 1024);
    let response = srv
        .request(Method::GET, card, &[("x-pad", &under)], "")
        .await;
    assert_eq!(response.status(), 200, "a head under 8 KiB is served");
}

/// A client that sends its headers slowly is cut off after `header_read_timeout_secs`,
/// whether it stalls or trickles a byte at a time; a prompt client is served. On tokio's
/// paused clock: the timeout and the trickle's pauses pass without real waiting.
#[tokio::test(start_paused = true)]
async fn slow_headers_are_cut_off() {
    let (srv, _remote) = TestServer::scripted_with(ServerConfig {
        header_read_timeout_secs: 1,
        ..ServerConfig::default()
    })
    .await;
    let limit = Duration::from_secs(3);

    let mut stalled = RawConn::connect(srv.addr()).await;
    stalled
        .write(b"POST /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl")
        .await;
    // The event is the close itself: a server without the timeout never closes, and the
    // test fails at `limit`.
    stalled.closed_within(limit).await;

    let mut trickling = RawConn::connect(srv.addr()).await;
    let head = format!(
        "GET /.well-known/agent-card.json HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: {}\r\n\r\n",
        "a".repeat(64)
    );
    trickling
        .trickle(head.as_bytes(), Duration::from_millis(100), limit)
        .await;

    let response = srv
        .request(Method::GET, "/.well-known/agent-card.json", &[], "")
        .await;
    assert_eq!(response.status(), 200, "a prompt client is served");
}

/// Reads until the server closes `conn`, which it must do within `limit` of the paused clock;
/// returns when it did.
async fn closes(conn: &mut tokio::net::TcpStream, limit: Duration) -> tokio::time::Instant {
    use tokio::io::AsyncReadExt;
    let mut buf = [0u8; 1024];
    let closed = async {
        loop {
            match conn.read(&mut buf).await {
                Ok(0) | Err(_) => return tokio::time::Instant::now(),
                Ok(_) => {}
            }
        }
    };
    tokio::time::timeout(limit, closed)
        .await
        .unwrap_or_else(|_| panic!("the connection was still open after {limit:?}"))
}

/// Connections that send nothing, or only the start of the HTTP/2 preface, are closed at the
/// header timeout counted from the accept (hyper's own timer starts only once it reads a
/// request head); a keep-alive connection idle after its answer is closed at it too. On
/// tokio's paused clock: the events are the closes, and none comes before the timeout.
#[tokio::test(start_paused = true)]
async fn idle_connections_are_closed_at_the_header_timeout() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;
    let timeout = Duration::from_secs(10);
    let srv = TestServer::with_config(
        ferry_agents::EchoAgent,
        ServerConfig {
            header_read_timeout_secs: timeout.as_secs(),
            ..ServerConfig::default()
        },
    )
    .await;
    let opened = tokio::time::Instant::now();
    let mut idle = Vec::new();
    for _ in 0..300 {
        idle.push(TcpStream::connect(srv.addr()).await.expect("connect"));
    }
    let mut preface = TcpStream::connect(srv.addr()).await.expect("connect");
    preface.write_all(b"PRI * HTTP/2.0").await.expect("write");
    let mut kept = TcpStream::connect(srv.addr()).await.expect("connect");
    kept.write_all(b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .expect("write");
    // The whole answer (its head says how long the body is), then nothing more is sent.
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    let length = loop {
        let n = kept.read(&mut buf).await.expect("the answer");
        assert!(n > 0, "closed before answering");
        answer.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&answer).to_ascii_lowercase();
        if let Some(head_end) = text.find("\r\n\r\n")
            && let Some(at) = text.find("content-length:")
        {
            let value = text[at + 15..]
                .lines()
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned();
            break head_end + 4 + value.parse::<usize>().expect("a length");
        }
    };
    while answer.len() < length {
        let n = kept.read(&mut buf).await.expect("the body");
        assert!(n > 0, "closed in the body");
        answer.extend_from_slice(&buf[..n]);
    }
    assert!(answer.starts_with(b"HTTP/1.1 200"), "{answer:?}");
    let answered = tokio::time::Instant::now();

    let limit = timeout * 6;
    for conn in idle.iter_mut().chain([&mut preface]) {
        let closed = closes(conn, limit).await;
        assert!(closed - opened >= timeout, "closed before the timeout");
    }
    let closed = closes(&mut kept, limit).await;
    assert!(closed - answered >= timeout, "closed before the timeout");
}

/// Over the rate: 429, `Retry-After`, `retryAfterSeconds` and reason `RATE_LIMITED` (JSON-RPC
/// code -32603; REST an AIP-193 error with the same detail); probes are not counted; after
/// the advertised wait (on the server's clock, moved by the test) the client is served again.
async fn rate_limit_is_429(b: Binding) {
    let clock = Arc::new(ferry_server::clock::ManualClock::new());
    let (agent, _remote) = ScriptedAgent::new();
    let srv = TestServer::with_clock(
        agent,
        ServerConfig {
            rate_limit_per_sec: 1,
            rate_limit_burst: 2,
            ..ServerConfig::default()
        },
        clock.clone(),
    )
    .await;
    srv.ok(b, "ListTasks", json!({})).await;
    srv.ok(b, "ListTasks", json!({})).await;
    let r = srv
        .refused(b, "ListTasks", json!({}), ServiceParams::default())
        .await;
    r.error.assert_is(RATE_LIMITED);
    assert_eq!(r.status, 429);
    let wait = r.retry_after();
    assert!(wait <= 2, "one token a second: {wait}");
    assert_eq!(r.error.meta("requestId"), Some(r.request_id()));
    if b == Binding::Rest {
        assert_eq!(r.body["requestId"], r.request_id());
    }
    let (status, _) = srv.request_json(Method::GET, "/healthz", &[], "").await;
    assert_eq!(status, 200, "probes are not rate-limited");
    clock.advance(Duration::from_millis(wait * 1000 - 100));
    srv.refused(b, "ListTasks", json!({}), ServiceParams::default())
        .await
        .error
        .assert_is(RATE_LIMITED);
    clock.advance(Duration::from_millis(100));
    srv.ok(b, "ListTasks", json!({})).await;
}

/// At `max_in_flight`, another request gets 503 `TOO_MANY_REQUESTS_IN_FLIGHT` with
/// `Retry-After`; probes still answer; once the blocking request ends, the slot is free.
async fn in_flight_limit_is_503(b: Binding) {
    let (srv, remote) = TestServer::scripted_with(ServerConfig {
        max_in_flight: 1,
        ..ServerConfig::default()
    })
    .await;
    let blocking = srv.call(b, "SendMessage", send_params("wait"));
    let meanwhile = async {
        remote.started().await;
        let r = srv
            .refused(b, "ListTasks", json!({}), ServiceParams::default())
            .await;
        let (status, _) = srv.request_json(Method::GET, "/readyz", &[], "").await;
        remote.step(Step::Complete);
        (r, status)
    };
    let (done, (r, probe)) = tokio::join!(blocking, meanwhile);
    r.error.assert_is(TOO_MANY_REQUESTS_IN_FLIGHT);
    r.retry_after();
    assert_eq!(probe, 200, "probes are outside the limit");
    let done = done.expect("the blocking request completes");
    assert_eq!(done["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(task_count(&srv, b).await, 1, "the slot is free again");
}

/// At `max_streams`, another stream (sent or subscribed) gets 503 `TOO_MANY_STREAMS` with
/// `Retry-After`; unary calls are still served; when the open stream ends, a new one opens.
async fn stream_limit_is_503(b: Binding) {
    let (srv, remote) = TestServer::scripted_with(ServerConfig {
        max_streams: 1,
        ..ServerConfig::default()
    })
    .await;
    let mut open = srv
        .open(b, "SendStreamingMessage", send_params("wait"))
        .await;
    let first = open.next_ok().await;
    let id = first["task"]["id"].clone();
    assert!(id.is_string(), "{first}");
    for (method, params) in [
        ("SendStreamingMessage", send_params("hello")),
        ("SubscribeToTask", json!({"id": id})),
    ] {
        let r = srv
            .refused(b, method, params, ServiceParams::default())
            .await;
        r.error.assert_is(TOO_MANY_STREAMS);
        r.retry_after();
    }
    srv.ok(b, "GetTask", json!({"id": id})).await;
    remote.step(Step::Complete);
    let events = open.remaining().await;
    assert_eq!(
        events.last().and_then(state_of),
        Some("TASK_STATE_COMPLETED")
    );
    let events = srv
        .open(b, "SendStreamingMessage", send_params("hello"))
        .await
        .remaining()
        .await;
    assert_eq!(
        events.last().and_then(state_of),
        Some("TASK_STATE_COMPLETED"),
        "the stream slot was given back"
    );
}

/// A unary request that takes longer than `request_timeout_secs` gets 503 `REQUEST_TIMEOUT`
/// without `Retry-After` (it may have started work: a retry could run it twice); a stream is
/// bounded only until its first event.
async fn request_timeout_is_503(b: Binding) {
    let (srv, remote) = TestServer::scripted_with(ServerConfig {
        request_timeout_secs: 1,
        ..ServerConfig::default()
    })
    .await;
    // A stream opened first, then a request that takes longer than the timeout: when its
    // refusal arrives, the timeout has passed with the stream open (no sleep needed to know).
    let mut stream = srv
        .open(b, "SendStreamingMessage", send_params("wait"))
        .await;
    stream.next_ok().await;
    let r = srv
        .refused(
            b,
            "SendMessage",
            send_params("wait"),
            ServiceParams::default(),
        )
        .await;
    r.error.assert_is(REQUEST_TIMEOUT);
    assert_eq!(
        r.header("retry-after"),
        None,
        "a timed-out request is not to be resent"
    );
    remote.step(Step::Complete);
    remote.step(Step::Complete);
    let events = stream.remaining().await;
    assert_eq!(
        events.last().and_then(state_of),
        Some("TASK_STATE_COMPLETED"),
        "an open stream outlives the request timeout: {events:?}"
    );
    remote.finished().await;
    remote.finished().await;
}

/// The probes answer without the token, with a foreign `Host` and with an `Origin`, with only
/// a status word.
async fn probes_answer_anyone() {
    let (srv, _remote) = with_token().await;
    let foreign: &[(&str, &str)] = &[("Host", "evil.example"), ("Origin", "http://evil.example")];
    for (path, want) in [
        ("/healthz", json!({"status": "ok"})),
        ("/readyz", json!({"status": "ready"})),
    ] {
        for headers in [&[][..], foreign] {
            let (status, body) = srv.request_json(Method::GET, path, headers, "").await;
            assert_eq!((status, &body), (200, &want), "{path} with {headers:?}");
        }
    }
}

/// Capability routes (a review link's secret in the path) pass without the token, and only
/// under their prefix; the `Host` and `Origin` checks still apply to them.
async fn capability_routes_pass_without_the_token() {
    use axum::routing::get;
    let (agent, _remote) = ScriptedAgent::new();
    let routes = axum::Router::new()
        .route("/cap/{secret}", get(|| async { "opened" }))
        .route("/cap", get(|| async { "the bare prefix" }));
    let server = A2aServer::builder(Arc::new(agent))
        .config(ServerConfig {
            bind: "127.0.0.1:0".parse().expect("addr"),
            token: Some(TOKEN.into()),
            ..ServerConfig::default()
        })
        .capability_routes("/cap", routes)
        .bind()
        .await
        .expect("bind");
    let base = format!("http://{}", server.local_addr());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(server.run(async move {
        let _ = stopped.await;
    }));
    let http = reqwest::Client::new();
    let get = |path: &str, headers: &[(&'static str, &'static str)]| {
        let mut request = http.get(format!("{base}{path}"));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send()
    };
    let opened = get("/cap/0123abcd", &[]).await.expect("answer");
    assert_eq!(opened.status(), 200);
    assert_eq!(opened.text().await.expect("body"), "opened");
    let wrong_token = get("/cap/0123abcd", &[("Authorization", "Bearer not-ours")])
        .await
        .expect("answer");
    assert_eq!(
        wrong_token.status(),
        200,
        "the route checks its own credentials"
    );
    let bare = get("/cap", &[]).await.expect("answer");
    assert_eq!(bare.status(), 401, "the prefix alone is not a capability");
    let foreign = get("/cap/0123abcd", &[("Origin", "http://evil.example")])
        .await
        .expect("answer");
    assert_eq!(foreign.status(), 403);
    let rebound = get("/cap/0123abcd", &[("Host", "evil.example")])
        .await
        .expect("answer");
    assert_eq!(rebound.status(), 403);
    let _ = stop.send(());
    let _ = running.await;
}

/// A valid `X-Request-Id` (up to 64 of `A-Za-z0-9-_.`) is echoed on successes and errors and
/// repeated in error bodies; an invalid one is replaced by a fresh UUID, as is a missing one.
async fn request_ids(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let longest = "a".repeat(64);
    for id in ["trace-abc_1.2", longest.as_str()] {
        let answer = srv
            .call_with(b, "ListTasks", json!({}), headers(&[("X-Request-Id", id)]))
            .await;
        answer.result.expect("ListTasks succeeds");
        assert_eq!(answer.headers["x-request-id"], id, "echoed on success");
    }

    let unknown = json!({"id": "no-such-task"});
    let too_long = "x".repeat(65);
    for sent in [
        "trace-err",
        "has space",
        too_long.as_str(),
        "semi;colon",
        "a/b",
    ] {
        let answer = srv
            .call_with(
                b,
                "GetTask",
                unknown.clone(),
                headers(&[("X-Request-Id", sent)]),
            )
            .await;
        let rid = answer.headers["x-request-id"]
            .to_str()
            .expect("an ASCII request id")
            .to_owned();
        if sent == "trace-err" {
            assert_eq!(rid, sent, "echoed on an error");
        } else {
            assert_ne!(rid, sent, "an invalid id is not echoed");
            assert_uuid(&rid);
        }
        let e = answer.result.expect_err("no such task");
        e.assert_is(TASK_NOT_FOUND);
        assert_eq!(e.meta("requestId"), Some(rid.as_str()), "{}", e.body);
    }
    if b == Binding::Rest {
        let r = srv
            .refused(
                b,
                "GetTask",
                unknown.clone(),
                headers(&[("X-Request-Id", "trace-rest")]),
            )
            .await;
        assert_eq!(r.body["requestId"], "trace-rest", "top-level requestId");
    }
    let r = srv
        .refused(
            b,
            "ListTasks",
            json!({}),
            headers(&[("X-Request-Id", "trace-403"), ("Origin", "http://x")]),
        )
        .await;
    assert_eq!(r.request_id(), "trace-403");
    assert_refused(&r, 403, "ORIGIN_NOT_ALLOWED");

    let mut generated = Vec::new();
    for _ in 0..2 {
        let answer = srv
            .call_with(b, "GetTask", unknown.clone(), ServiceParams::default())
            .await;
        let rid = answer.headers["x-request-id"]
            .to_str()
            .expect("an ASCII request id")
            .to_owned();
        assert_uuid(&rid);
        let e = answer.result.expect_err("no such task");
        assert_eq!(e.meta("requestId"), Some(rid.as_str()), "{}", e.body);
        generated.push(rid);
    }
    assert_ne!(generated[0], generated[1], "a fresh id per request");

    let response = srv.request(Method::GET, "/healthz", &[], "").await;
    let probe_id = response
        .headers()
        .get("x-request-id")
        .unwrap_or_else(|| panic!("every response has X-Request-Id, /healthz too"));
    assert_uuid(probe_id.to_str().expect("ASCII"));
    let response = srv.request(Method::GET, "/no-such-path", &[], "").await;
    assert_eq!(response.status(), 404);
    assert!(
        response.headers().contains_key("x-request-id"),
        "a 404 outside every route has X-Request-Id"
    );
}

#[track_caller]
fn assert_uuid(id: &str) {
    let uuid = uuid::Uuid::parse_str(id).unwrap_or_else(|_| panic!("a UUID, not {id:?}"));
    assert_eq!(uuid.get_version_num(), 4, "a random UUID: {id}");
}

/// The head of a request to `path` whose `len`-byte body follows later.
fn head(path: &str, len: usize) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         A2A-Version: 1.0\r\nConnection: close\r\nContent-Length: {len}\r\n\r\n"
    )
}

/// Shutdown with an SSE stream open on each binding, a blocking `SendMessage` in flight, and
/// three requests already on the wire: the streams end cleanly, `/readyz` turns 503, new
/// tasks get 503 `SHUTTING_DOWN` on both bindings, new connections are refused, the blocking
/// request completes when its agent finishes, and `run` returns well before the drain timeout.
///
/// The listener is closed once shutdown begins, so the requests that must see the draining
/// server are sent over raw connections opened before: `/readyz` with its headers not yet
/// finished, the two `SendMessage`s with their bodies not yet sent (hyper serves an
/// in-progress request to the end when it shuts a connection down gracefully).
async fn shutdown_drains() {
    let (srv, remote) = TestServer::scripted().await;
    let mut ready = RawConn::connect(srv.addr()).await;
    ready
        .write(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n")
        .await;
    let rpc_body = json!({"jsonrpc": "2.0", "id": 7, "method": "SendMessage",
        "params": {"message": message("hello")}})
    .to_string();
    let rest_body = json!({"message": message("hello")}).to_string();
    let mut rpc = RawConn::connect(srv.addr()).await;
    rpc.write(head("/jsonrpc", rpc_body.len()).as_bytes()).await;
    let mut rest = RawConn::connect(srv.addr()).await;
    rest.write(head("/rest/message:send", rest_body.len()).as_bytes())
        .await;

    let blocking = srv.call(Binding::JsonRpc, "SendMessage", send_params("wait"));
    let script = async {
        let id = remote.started().await;
        let mut subscribed = srv
            .open(Binding::Rest, "SubscribeToTask", json!({"id": id}))
            .await;
        subscribed.next_ok().await;
        let mut sending = srv
            .open(
                Binding::JsonRpc,
                "SendStreamingMessage",
                send_params("wait"),
            )
            .await;
        sending.next_ok().await;

        srv.begin_shutdown();
        let (from_subscribe, from_send) = tokio::join!(subscribed.remaining(), sending.remaining());
        assert!(
            from_subscribe.iter().chain(&from_send).all(|e| !matches!(
                state_of(e),
                Some("TASK_STATE_COMPLETED" | "TASK_STATE_FAILED" | "TASK_STATE_CANCELED")
            )),
            "the streams ended without a terminal event: {from_subscribe:?} {from_send:?}"
        );

        ready.write(b"\r\n").await;
        let response = ready.response().await;
        assert_eq!(response.status, 503);
        assert_eq!(response.json(), json!({"status": "not_ready"}));

        rpc.write(rpc_body.as_bytes()).await;
        let response = rpc.response().await;
        assert_shutting_down(Binding::JsonRpc, &response);
        rest.write(rest_body.as_bytes()).await;
        let response = rest.response().await;
        assert_shutting_down(Binding::Rest, &response);

        assert!(
            tokio::net::TcpStream::connect(srv.addr()).await.is_err(),
            "new connections are refused"
        );
        remote.step(Step::Complete);
    };
    let (done, ()) = tokio::join!(blocking, script);
    let done = done.expect("the in-flight request completes during the drain");
    assert_eq!(done["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    srv.stopped(Duration::from_secs(5)).await;
}

/// A new task during the drain: 503, reason `SHUTTING_DOWN`, `Retry-After`, the request id.
#[track_caller]
fn assert_shutting_down(b: Binding, response: &crate::support::RawResponse) {
    let body = response.json();
    let error = match b {
        Binding::JsonRpc => {
            assert_eq!(body["id"], 7, "{body}");
            body["error"].clone()
        }
        Binding::Rest => {
            assert_eq!(
                Some(&body["requestId"]),
                response.header("x-request-id").map(Value::from).as_ref()
            );
            body["error"].clone()
        }
        Binding::Grpc => unreachable!("a raw HTTP/1.1 response is not a gRPC answer"),
    };
    let e = WireError {
        binding: b,
        http_status: response.status,
        in_stream: false,
        body: error,
    };
    e.assert_is(SHUTTING_DOWN);
    assert_eq!(
        response.header("retry-after"),
        e.meta("retryAfterSeconds"),
        "{}",
        e.body
    );
    assert!(response.header("retry-after").is_some());
    assert_eq!(e.meta("requestId"), response.header("x-request-id"));
}

/// A task that outlives the drain does not hold `run` up: it returns after
/// `drain_timeout_secs`, and the abandoned request's connection is closed rather than left
/// hanging.
async fn drain_timeout_bounds_shutdown() {
    let (srv, remote) = TestServer::scripted_with(ServerConfig {
        drain_timeout_secs: 1,
        ..ServerConfig::default()
    })
    .await;
    let (request, _) = srv.prepare(
        Binding::JsonRpc,
        "SendMessage",
        send_params("wait"),
        ServiceParams::default(),
    );
    let abandoned = tokio::spawn(request.send());
    remote.started().await;
    srv.begin_shutdown();
    // `run` returns although the turn never ends: the drain timeout bounds it.
    srv.stopped(Duration::from_secs(4)).await;
    let outcome = tokio::time::timeout(Duration::from_secs(3), abandoned)
        .await
        .expect("the abandoned request ends with the server")
        .expect("the client task did not panic");
    if let Ok(response) = outcome {
        assert!(
            !response.status().is_success(),
            "a request cut off by the drain did not succeed: {}",
            response.status()
        );
    }
}

// HTTP statuses, headers and bodies; the gRPC front door is tested in grpc.rs.
scenarios!(per_http_binding:
    token_guards_calls,
    token_guards_streams,
    foreign_origins_are_refused,
    own_and_allowed_origins_are_served,
    foreign_host_is_refused,
    allowed_hosts_are_served,
    oversized_body_is_413,
    rate_limit_is_429,
    in_flight_limit_is_503,
    stream_limit_is_503,
    request_timeout_is_503,
    request_ids,
);

scenarios!(once:
    allowed_origins_must_be_origins,
    oversized_request_head_is_431,
    non_loopback_bind_needs_a_token,
    card_is_public_and_declares_bearer,
    probes_answer_anyone,
    capability_routes_pass_without_the_token,
    shutdown_drains,
    drain_timeout_bounds_shutdown,
);
