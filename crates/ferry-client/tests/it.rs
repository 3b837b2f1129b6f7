//! The client against real servers on 127.0.0.1: `ferry serve`'s server in-process (every
//! operation over both bindings, streams, multi-turn) and small hand-written HTTP servers for
//! retry behaviour (503 + `Retry-After` twice then success; 400 never retried).

use ferry_agents::{ConformanceAgent, EchoAgent};
use ferry_client::{A2aClient, Binding, ClientError, ClientOptions, RetryPolicy};
use ferry_proto::{
    ErrorKind, ListTasksRequest, Message, Part, SendMessageRequest, SendMessageResponse,
    StreamResponse, TaskState,
};
use ferry_server::{A2aServer, ServerConfig};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn server(agent: Arc<dyn ferry_agent::AgentExecutor>) -> String {
    let config = ServerConfig {
        bind: "127.0.0.1:0".parse().expect("addr"),
        ..ServerConfig::default()
    };
    let server = A2aServer::bind(agent, config).await.expect("bind");
    let base = format!("http://{}", server.local_addr());
    tokio::spawn(server.run(std::future::pending()));
    base
}

fn request(message_id: &str, text: &str) -> SendMessageRequest {
    SendMessageRequest {
        tenant: String::new(),
        message: Message::user(message_id, vec![Part::text(text)]),
        configuration: None,
        metadata: None,
    }
}

async fn connect(base: &str, binding: Binding) -> A2aClient {
    let options = ClientOptions {
        prefer: Some(binding),
        ..ClientOptions::default()
    };
    let (client, card) = A2aClient::connect(base, options).await.expect("connect");
    assert_eq!(client.binding(), binding);
    assert!(!card.name.is_empty());
    client
}

#[tokio::test]
async fn every_operation_over_every_binding() {
    let base = server(Arc::new(ConformanceAgent::default())).await;
    for binding in [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc] {
        let client = connect(&base, binding).await;
        let SendMessageResponse::Task(task) = client
            .send_message(request("plain-1", "hi"))
            .await
            .expect("send")
        else {
            panic!("a task");
        };
        assert_eq!(task.status.state, TaskState::Completed, "{binding:?}");
        let got = client.get_task(&task.id, Some(0)).await.expect("get");
        assert_eq!(got.id, task.id);
        assert!(got.history.is_empty(), "historyLength 0");
        let filter = ListTasksRequest {
            context_id: task.context_id.to_string(),
            ..ListTasksRequest::default()
        };
        let all = client.list_all_tasks(&filter).await.expect("list");
        assert_eq!(all.len(), 1);
        let SendMessageResponse::Task(open) = client
            .send_message(request("tck-input-required-1", "x"))
            .await
            .expect("send")
        else {
            panic!("a task");
        };
        assert_eq!(open.status.state, TaskState::InputRequired);
        let canceled = client.cancel_task(&open.id).await.expect("cancel");
        assert_eq!(canceled.status.state, TaskState::Canceled);
        match client.cancel_task(&open.id).await {
            Err(ClientError::Protocol(e)) => {
                assert_eq!(e.kind, ErrorKind::TaskNotCancelable, "{binding:?}")
            }
            other => panic!("{binding:?}: {other:?}"),
        }
        let config = ferry_proto::TaskPushNotificationConfig {
            task_id: task.id.to_string(),
            url: "https://example.com/hook".into(),
            token: "client-token".into(),
            ..Default::default()
        };
        let made = client.create_push_config(config).await.expect("create");
        assert!(!made.id.is_empty(), "{binding:?}: an id is given");
        assert!(
            made.token.is_empty(),
            "{binding:?}: the token is write-only"
        );
        let listed = client.list_push_configs(&task.id).await.expect("list");
        assert_eq!(listed.configs.len(), 1, "{binding:?}");
        client
            .delete_push_config(&task.id, &made.id)
            .await
            .expect("delete");
        client
            .delete_push_config(&task.id, &made.id)
            .await
            .expect("deleting twice is fine");
        match client.extended_card().await {
            Err(ClientError::Protocol(e)) => assert_eq!(e.kind, ErrorKind::UnsupportedOperation),
            other => panic!("{binding:?}: {other:?}"),
        }
        match client.get_task("no-such-task", None).await {
            Err(ClientError::Protocol(e)) => assert_eq!(e.kind, ErrorKind::TaskNotFound),
            other => panic!("{binding:?}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn three_turns_streamed() {
    let base = server(Arc::new(ConformanceAgent::default())).await;
    for binding in [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc] {
        let client = connect(&base, binding).await;
        let mut task_id = String::new();
        let mut context_id = String::new();
        for turn in 1..=3 {
            let mut req = request(&format!("ferry-turns-3-{turn}"), "go");
            req.message.task_id.clone_from(&task_id);
            req.message.context_id.clone_from(&context_id);
            let mut stream = client.send_streaming(req).await.expect("stream");
            let mut last_state = None;
            let mut artifacts = 0;
            let mut first = true;
            while let Some(event) = tokio::time::timeout(Duration::from_secs(10), stream.next())
                .await
                .expect("in time")
            {
                match event.expect("event") {
                    StreamResponse::Task(t) => {
                        assert!(first, "the task comes first");
                        task_id = t.id.to_string();
                        context_id = t.context_id.to_string();
                    }
                    StreamResponse::StatusUpdate(s) => last_state = Some(s.status.state),
                    StreamResponse::ArtifactUpdate(_) => artifacts += 1,
                    StreamResponse::Message(m) => panic!("unexpected message {m:?}"),
                }
                first = false;
            }
            let want = if turn < 3 {
                TaskState::InputRequired
            } else {
                TaskState::Completed
            };
            assert_eq!(last_state, Some(want), "{binding:?} turn {turn}");
            assert_eq!(artifacts, 1, "{binding:?} turn {turn}");
        }
    }
}

#[tokio::test]
async fn echo_agent_blocking() {
    let base = server(Arc::new(EchoAgent)).await;
    let client = connect(&base, Binding::JsonRpc).await;
    let SendMessageResponse::Task(task) = client
        .send_message(request("m", "hello ferry"))
        .await
        .expect("send")
    else {
        panic!("a task");
    };
    let text: String = task.artifacts[0]
        .parts
        .iter()
        .filter_map(Part::as_text)
        .collect();
    assert_eq!(text, "hello ferry");
}

/// A one-route HTTP server: answer `n` of a request with `script(n)`, count requests.
async fn scripted(script: fn(usize) -> String) -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let n = seen.fetch_add(1, Ordering::SeqCst);
            let mut buf = vec![0u8; 65536];
            let _ = sock.read(&mut buf).await;
            let _ = sock.write_all(script(n).as_bytes()).await;
            let _ = sock.shutdown().await;
        }
    });
    (format!("http://{addr}/rpc"), count)
}

/// A JSON-RPC success holding a working task.
fn ok_task() -> String {
    let body = r#"{"jsonrpc":"2.0","id":1,"result":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}"#;
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}
const BUSY: &str = "HTTP/1.1 503 Service Unavailable\r\nretry-after: 1\r\ncontent-type: text/plain\r\nconnection: close\r\ncontent-length: 4\r\n\r\nbusy";
const BAD: &str = "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\nconnection: close\r\ncontent-length: 3\r\n\r\nbad";

fn endpoint_client(url: String) -> A2aClient {
    let endpoint = ferry_client::Endpoint {
        binding: Binding::JsonRpc,
        url,
        tenant: String::new(),
    };
    let options = ClientOptions {
        retry: RetryPolicy {
            retries: 2,
            ..RetryPolicy::default()
        },
        ..ClientOptions::default()
    };
    A2aClient::with_http(reqwest::Client::new(), endpoint, options)
}

/// Two 503s with `Retry-After: 1`, then the answer: the client waits the second the server
/// asks for each time (on tokio's paused clock: no real time passes) and gets the answer.
#[tokio::test(start_paused = true)]
async fn retries_honour_retry_after_then_succeed() {
    let (url, count) = scripted(|n| if n < 2 { BUSY.to_owned() } else { ok_task() }).await;
    let started = tokio::time::Instant::now();
    let task = endpoint_client(url)
        .get_task("t", None)
        .await
        .expect("third try succeeds");
    assert_eq!(&*task.id, "t");
    assert_eq!(count.load(Ordering::SeqCst), 3);
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(2),
        "waited Retry-After twice: {waited:?}"
    );
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let (url, count) = scripted(|_| BAD.to_owned()).await;
    match endpoint_client(url).get_task("t", None).await {
        Err(ClientError::Http { status: 400, .. }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(count.load(Ordering::SeqCst), 1, "a 400 is surfaced at once");
}

/// Emits `working`, an artifact, waits until `resumed` (the client's stream was cut and it
/// has reconnected), another artifact, then completes.
struct SlowAgent {
    resumed: Arc<tokio::sync::Notify>,
}

impl ferry_agent::AgentExecutor for SlowAgent {
    fn describe(&self) -> ferry_agent::AgentDescription {
        ferry_agent::AgentDescription::new("slow", "Takes its time")
    }

    fn execute(
        &self,
        _ctx: ferry_agent::RequestContext,
        events: ferry_agent::EventSink,
    ) -> ferry_agent::AgentFuture<'_> {
        Box::pin(async move {
            events.working(None).await?;
            events
                .artifact(
                    ferry_proto::Artifact::new("a", "a", vec![Part::text("one")]),
                    false,
                    false,
                )
                .await?;
            self.resumed.notified().await;
            events
                .artifact(
                    ferry_proto::Artifact::new("a", "a", vec![Part::text("two")]),
                    true,
                    true,
                )
                .await?;
            events.complete(None).await?;
            Ok(())
        })
    }
}

/// A TCP proxy that cuts the first connection after `events` complete SSE events (`\n\n`),
/// and forwards every later connection whole; `resumed` is notified when a later one comes.
async fn cutting_proxy(
    upstream: std::net::SocketAddr,
    events: usize,
    resumed: Arc<tokio::sync::Notify>,
) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let mut first = true;
        loop {
            let Ok((client, _)) = listener.accept().await else {
                return;
            };
            let server = tokio::net::TcpStream::connect(upstream)
                .await
                .expect("upstream");
            let cut = std::mem::replace(&mut first, false);
            if !cut {
                resumed.notify_one();
            }
            tokio::spawn(async move {
                let (mut cr, mut cw) = client.into_split();
                let (mut sr, mut sw) = server.into_split();
                tokio::spawn(async move { tokio::io::copy(&mut cr, &mut sw).await });
                let mut seen = 0;
                let mut buf = [0u8; 4096];
                while let Ok(n) = sr.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    seen += buf[..n].windows(2).filter(|w| w == b"\n\n").count();
                    if cw.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                    if cut && seen >= events {
                        // Drop both halves: the client sees the connection end mid-stream.
                        return;
                    }
                }
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn a_dropped_stream_resumes_without_loss_or_duplicates() {
    let config = ServerConfig {
        bind: "127.0.0.1:0".parse().expect("addr"),
        ..ServerConfig::default()
    };
    let resumed = Arc::new(tokio::sync::Notify::new());
    let agent = SlowAgent {
        resumed: resumed.clone(),
    };
    let server = A2aServer::bind(Arc::new(agent), config)
        .await
        .expect("bind");
    let upstream = server.local_addr();
    tokio::spawn(server.run(std::future::pending()));
    let proxy = cutting_proxy(upstream, 3, resumed).await;
    let endpoint = ferry_client::Endpoint {
        binding: Binding::HttpJson,
        url: format!("{proxy}/rest"),
        tenant: String::new(),
    };
    let client = A2aClient::with_http(reqwest::Client::new(), endpoint, ClientOptions::default());
    let mut stream = client
        .send_streaming(request("slow-1", "go"))
        .await
        .expect("stream");
    let mut kinds = Vec::new();
    while let Some(event) = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("in time")
    {
        kinds.push(match event.expect("no error: the stream resumed") {
            StreamResponse::Task(_) => "task".to_owned(),
            StreamResponse::StatusUpdate(s) => s.status.state.as_str().to_owned(),
            StreamResponse::ArtifactUpdate(a) => {
                a.artifact.parts[0].as_text().unwrap_or_default().to_owned()
            }
            StreamResponse::Message(_) => "message".to_owned(),
        });
    }
    assert_eq!(
        kinds,
        [
            "task",
            "TASK_STATE_WORKING",
            "one",
            "two",
            "TASK_STATE_COMPLETED"
        ],
        "one continuous stream"
    );
}

/// Serves `body` as JSON to every request, counting the requests.
async fn fixed_json(body: String) -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let served = Arc::new(AtomicUsize::new(0));
    let count = served.clone();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf).await;
            let response = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = conn.write_all(response.as_bytes()).await;
        }
    });
    (format!("http://{addr}"), served)
}

/// Issue 13: the interface URL a card names is held to the address policy of the card's own
/// URL: a card on this machine cannot send the client to a private address (decided from the
/// parsed URL; nothing dials it), nor to plain http off this machine.
#[tokio::test]
async fn a_card_cannot_point_the_client_at_a_private_address() {
    for interface in [
        "http://10.0.0.5:8765/jsonrpc",
        "http://agents.example.com/jsonrpc",
        "http://169.254.169.254/a2a",
    ] {
        let card = serde_json::json!({"name": "n", "description": "d", "version": "1",
            "supportedInterfaces": [{"url": interface, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": []});
        let (base, served) = fixed_json(card.to_string()).await;
        let e = A2aClient::connect(&base, ClientOptions::default())
            .await
            .expect_err("refused");
        assert!(
            matches!(&e, ClientError::Blocked { url, .. } if url == interface),
            "{interface}: {e}"
        );
        assert_eq!(
            served.load(Ordering::SeqCst),
            1,
            "only the card was fetched"
        );
    }
}

/// Issue 13: every answer body is capped; a larger one is a clear error naming the limit.
#[tokio::test]
async fn answers_larger_than_the_limit_are_refused() {
    let base = server(Arc::new(EchoAgent)).await;
    let options = ClientOptions {
        max_response_bytes: 256,
        ..ClientOptions::default()
    };
    let (client, _) = A2aClient::connect(&base, options).await.expect("connect");
    let e = client
        .send_message(request("big-1", &"x".repeat(1000)))
        .await
        .expect_err("the echoed task is over 256 bytes");
    assert!(matches!(e, ClientError::TooLarge { limit: 256 }), "{e}");
    assert!(e.to_string().contains("256"), "{e}");
    // A card over its limit is refused too.
    let options = ClientOptions {
        max_card_bytes: 64,
        ..ClientOptions::default()
    };
    let e = A2aClient::connect(&base, options)
        .await
        .expect_err("card too large");
    assert!(matches!(e, ClientError::Card(_)), "{e}");
}
