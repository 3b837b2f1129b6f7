//! The proxy agent against a real upstream: ferry's own server on 127.0.0.1:0 serving the
//! conformance agent, called through the proxy's `execute`/`cancel` with a recording sink in
//! place of ferry's task manager (the binary-level tests against the Python SDK's server
//! live with `ferry serve --proxy`).

use ferry_agent::{
    AgentError, AgentEvent, AgentExecutor, EmitError, EmitFuture, EventSink, EventTarget,
    RequestContext,
};
use ferry_agents::{ConformanceAgent, Pin, PreferBinding, ProxyAgent, ProxyConfig, ProxyError};
use ferry_client::{A2aClient, ClientError, ClientOptions};
use ferry_proto::{
    A2aError, ErrorKind, Message, Part, SendMessageRequest, Struct, Task, TaskState, TaskStatus,
};
use ferry_server::{A2aServer, ServerConfig, SigningKeyConfig};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::Notify;

/// How long any one wait of a test may take before it fails instead of hanging.
const PATIENCE: Duration = Duration::from_secs(20);

// ---- the upstream -----------------------------------------------------------------------

async fn upstream_with(config: ServerConfig, agent: ConformanceAgent) -> String {
    let config = ServerConfig {
        bind: "127.0.0.1:0".parse().expect("addr"),
        ..config
    };
    let server = A2aServer::bind(Arc::new(agent), config)
        .await
        .expect("bind the upstream");
    let base = format!("http://{}", server.local_addr());
    tokio::spawn(server.run(std::future::pending()));
    base
}

async fn upstream() -> String {
    upstream_with(ServerConfig::default(), ConformanceAgent::default()).await
}

async fn proxy(base: &str) -> ProxyAgent {
    ProxyAgent::connect(ProxyConfig::new(base))
        .await
        .expect("connect the proxy")
}

/// A plain client of the upstream, to check what the proxy did there.
async fn direct(base: &str) -> A2aClient {
    A2aClient::connect(base, ClientOptions::default())
        .await
        .expect("connect directly")
        .0
}

// ---- the local side: a recording sink standing in for ferry's task manager --------------

/// What a turn emitted. Like the task manager, it refuses events after a terminal status.
#[derive(Default)]
struct Recorded {
    events: Mutex<Vec<AgentEvent>>,
    changed: Notify,
}

impl EventTarget for Recorded {
    fn emit(&self, event: AgentEvent) -> EmitFuture<'_> {
        let mut events = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        let terminal = events.iter().find_map(|e| match e {
            AgentEvent::Status { state, .. } if state.is_terminal() => Some(state.as_str()),
            _ => None,
        });
        let outcome = match terminal {
            Some(state) => Err(EmitError::TaskTerminal {
                task_id: "local".into(),
                state,
            }),
            None => {
                events.push(event);
                Ok(())
            }
        };
        drop(events);
        self.changed.notify_waiters();
        Box::pin(async move { outcome })
    }
}

impl Recorded {
    fn events(&self) -> Vec<AgentEvent> {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Resolves once the events satisfy `done` (woken by each emit, never by a timer).
    async fn wait_until(&self, done: impl Fn(&[AgentEvent]) -> bool) {
        let wait = async {
            loop {
                let changed = self.changed.notified();
                if done(&self.events()) {
                    return;
                }
                changed.await;
            }
        };
        tokio::time::timeout(PATIENCE, wait)
            .await
            .expect("the awaited events arrived");
    }

    fn states(&self) -> Vec<TaskState> {
        self.events()
            .iter()
            .filter_map(|e| match e {
                AgentEvent::Status { state, .. } => Some(*state),
                _ => None,
            })
            .collect()
    }

    /// The local task as ferry's task manager would hold it after these events.
    fn task(&self, task_id: &str, context_id: &str) -> Task {
        let mut task = Task::new(
            task_id,
            context_id,
            TaskStatus::now(TaskState::Submitted, None),
        );
        for event in self.events() {
            match event {
                AgentEvent::Status { state, message } => {
                    let message = message.map(Arc::new);
                    if let Some(m) = &message {
                        task.history.push(m.clone());
                    }
                    task.status = TaskStatus::now(state, message);
                }
                AgentEvent::Artifact {
                    artifact, append, ..
                } => match task
                    .artifacts
                    .iter_mut()
                    .find(|a| a.artifact_id == artifact.artifact_id)
                {
                    Some(held) if append => {
                        Arc::make_mut(held).parts.extend(artifact.parts.clone())
                    }
                    Some(held) => *held = artifact,
                    None => task.artifacts.push(artifact),
                },
                AgentEvent::Message(_) => {}
            }
        }
        task
    }
}

fn sink(task_id: &str, context_id: &str) -> (Arc<Recorded>, EventSink) {
    let recorded = Arc::new(Recorded::default());
    let sink = EventSink::new(task_id, context_id, recorded.clone());
    (recorded, sink)
}

/// The context of a turn as ferry's handler builds it.
fn turn(
    message_id: &str,
    text: &str,
    task_id: &str,
    context_id: &str,
    task: Option<Task>,
) -> RequestContext {
    let mut message = Message::user(message_id, vec![Part::text(text)]);
    message.task_id = task_id.into();
    message.context_id = context_id.into();
    RequestContext {
        task,
        ..RequestContext::new(message, task_id, context_id)
    }
}

fn metadata_of(event: &AgentEvent) -> Struct {
    match event {
        AgentEvent::Status {
            message: Some(m), ..
        }
        | AgentEvent::Message(m) => m.metadata.clone().unwrap_or_default(),
        AgentEvent::Artifact { artifact, .. } => artifact.metadata.clone().unwrap_or_default(),
        AgentEvent::Status { message: None, .. } => Struct::new(),
    }
}

fn text(metadata: &Struct, key: &str) -> String {
    metadata
        .get(key)
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned()
}

/// The remote task id the events name (all of them the same one).
fn remote_task_id(events: &[AgentEvent]) -> String {
    let ids: Vec<String> = events
        .iter()
        .map(metadata_of)
        .map(|m| text(&m, ProxyAgent::REMOTE_TASK_ID))
        .filter(|id| !id.is_empty())
        .collect();
    assert!(
        !ids.is_empty(),
        "the events name the remote task: {events:?}"
    );
    assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
    ids[0].clone()
}

// ---- the tests --------------------------------------------------------------------------

#[tokio::test]
async fn the_card_describes_the_remote_agent() {
    let base = upstream().await;
    let proxy = proxy(&base).await;
    let description = proxy.describe();
    let card = proxy.remote_card();
    assert_eq!(description.name, "conformance");
    assert_eq!(description.name, card.name);
    assert_eq!(description.description, card.description);
    assert_eq!(description.version, card.version);
    assert_eq!(description.input_modes, card.default_input_modes);
    assert_eq!(description.output_modes, card.default_output_modes);
    assert_eq!(
        description.skills.iter().map(|s| &s.id).collect::<Vec<_>>(),
        card.skills.iter().map(|s| &s.id).collect::<Vec<_>>()
    );
    assert!(description.streaming);

    let still = upstream_with(
        ServerConfig::default(),
        ConformanceAgent::without_streaming(),
    )
    .await;
    assert!(!self::proxy(&still).await.describe().streaming);
}

#[tokio::test]
async fn a_streamed_turn_relays_chunks_and_final_state_over_every_binding() {
    let base = upstream().await;
    let upstream = direct(&base).await;
    for prefer in [
        PreferBinding::JsonRpc,
        PreferBinding::Rest,
        PreferBinding::Grpc,
    ] {
        let config = ProxyConfig {
            prefer: Some(prefer),
            ..ProxyConfig::new(&base)
        };
        let proxy = ProxyAgent::connect(config).await.expect("connect");
        let local = format!("local-{prefer:?}");
        let (recorded, events) = sink(&local, "ctx-stream");
        let ctx = turn(
            "tck-stream-artifact-chunked-1",
            "go",
            &local,
            "ctx-stream",
            None,
        );
        proxy.execute(ctx, events).await.expect("the turn");

        let got = recorded.events();
        let chunks: Vec<(String, bool, bool)> = got
            .iter()
            .filter_map(|e| match e {
                AgentEvent::Artifact {
                    artifact,
                    append,
                    last_chunk,
                } => Some((
                    artifact.parts[0].as_text().unwrap_or_default().to_owned(),
                    *append,
                    *last_chunk,
                )),
                _ => None,
            })
            .collect();
        assert_eq!(
            chunks,
            [
                ("chunk 1".into(), false, false),
                ("chunk 2".into(), true, false),
                ("chunk 3".into(), true, true),
            ],
            "{prefer:?}"
        );
        assert_eq!(
            recorded.states(),
            [TaskState::Working, TaskState::Completed],
            "{prefer:?}"
        );
        for artifact in got
            .iter()
            .filter(|e| matches!(e, AgentEvent::Artifact { .. }))
        {
            let metadata = metadata_of(artifact);
            assert_eq!(metadata[ProxyAgent::UNTRUSTED], true);
            assert!(!text(&metadata, ProxyAgent::REMOTE_CONTEXT_ID).is_empty());
        }
        let remote = remote_task_id(&got);
        assert_ne!(remote, local, "the remote names its own task");
        let there = upstream
            .get_task(&remote, None)
            .await
            .expect("the remote task");
        assert_eq!(there.status.state, TaskState::Completed, "{prefer:?}");
        assert_eq!(there.artifacts[0].parts.len(), 3);
    }
}

#[tokio::test]
async fn a_turn_without_streaming_is_a_blocking_send() {
    let base = upstream_with(
        ServerConfig::default(),
        ConformanceAgent::without_streaming(),
    )
    .await;
    let proxy = proxy(&base).await;
    let (recorded, events) = sink("local-b", "ctx-b");
    proxy
        .execute(
            turn("tck-artifact-text-1", "go", "local-b", "ctx-b", None),
            events,
        )
        .await
        .expect("the turn");
    let got = recorded.events();
    assert!(
        matches!(&got[..], [AgentEvent::Artifact { artifact, .. }, AgentEvent::Status { state: TaskState::Completed, .. }]
        if artifact.parts[0].as_text() == Some("Generated text content")),
        "{got:?}"
    );
    remote_task_id(&got);

    let (recorded, events) = sink("local-m", "ctx-b");
    proxy
        .execute(
            turn("tck-message-response-1", "hi", "local-m", "ctx-b", None),
            events,
        )
        .await
        .expect("a direct reply");
    let got = recorded.events();
    let [AgentEvent::Message(reply)] = &got[..] else {
        panic!("one direct message: {got:?}");
    };
    assert_eq!(reply.text(), "Direct message response");
    assert_eq!(reply.role, ferry_proto::Role::Agent);
}

#[tokio::test]
async fn a_two_turn_conversation_continues_the_remote_task_and_context() {
    let base = upstream().await;
    let upstream = direct(&base).await;
    let proxy = proxy(&base).await;

    let (first, events) = sink("t-1", "conversation");
    proxy
        .execute(
            turn("m-1", "tck-multi-turn start", "t-1", "conversation", None),
            events,
        )
        .await
        .expect("turn 1");
    assert_eq!(
        first.states(),
        [TaskState::Working, TaskState::InputRequired]
    );
    let remote = remote_task_id(&first.events());
    let question = first.task("t-1", "conversation");
    let asked = question
        .status
        .message
        .as_ref()
        .expect("the remote's question");
    assert_eq!(asked.text(), "more input please");
    let remote_context = text(
        asked.metadata.as_ref().expect("metadata"),
        ProxyAgent::REMOTE_CONTEXT_ID,
    );

    // The follow-up through a proxy that never saw turn 1 (ferry restarted): the remote ids
    // come back from the local task's status message.
    let restarted = self::proxy(&base).await;
    let (second, events) = sink("t-1", "conversation");
    restarted
        .execute(
            turn("m-2", "done", "t-1", "conversation", Some(question)),
            events,
        )
        .await
        .expect("turn 2");
    assert_eq!(second.states(), [TaskState::Working, TaskState::Completed]);
    assert_eq!(
        remote_task_id(&second.events()),
        remote,
        "the same remote task"
    );
    let there = upstream.get_task(&remote, None).await.expect("remote task");
    assert_eq!(there.status.state, TaskState::Completed);
    let said: Vec<String> = there
        .history
        .iter()
        .filter(|m| m.role == ferry_proto::Role::User)
        .map(|m| m.text())
        .collect();
    assert_eq!(said, ["tck-multi-turn start", "done"]);

    // A new local task in the same local context continues the remote conversation.
    let (third, events) = sink("t-2", "conversation");
    proxy
        .execute(
            turn("m-3", "hello again", "t-2", "conversation", None),
            events,
        )
        .await
        .expect("a new task");
    let third = third.events();
    let again = remote_task_id(&third);
    assert_ne!(again, remote, "a new remote task");
    let metadata = third
        .iter()
        .map(metadata_of)
        .find(|m| !m.is_empty())
        .expect("metadata");
    assert_eq!(
        text(&metadata, ProxyAgent::REMOTE_CONTEXT_ID),
        remote_context
    );
    // …but another caller's task in a context of the same name does not.
    let (fourth, events) = sink("t-3", "conversation");
    let mut ctx = turn("m-4", "hello", "t-3", "conversation", None);
    ctx.caller = Some("someone-else".into());
    proxy.execute(ctx, events).await.expect("another caller");
    let metadata = fourth
        .events()
        .iter()
        .map(metadata_of)
        .find(|m| !m.is_empty())
        .expect("metadata");
    assert_ne!(
        text(&metadata, ProxyAgent::REMOTE_CONTEXT_ID),
        remote_context
    );
    // Its messageId is tagged with the caller at the remote (one credential serves every
    // local caller; a deduplicating remote must not mix their retries).
    let theirs = upstream
        .get_task(&remote_task_id(&fourth.events()), None)
        .await
        .expect("their remote task");
    let sent = theirs.history.first().expect("their message");
    assert!(sent.message_id.starts_with("m-4~"), "{}", sent.message_id);
}

#[tokio::test]
async fn the_remotes_error_arrives_unchanged() {
    let base = upstream().await;
    let proxy = proxy(&base).await;
    // A local task whose status names a remote task the remote does not have.
    let mut metadata = Struct::new();
    metadata.insert(
        ProxyAgent::REMOTE_TASK_ID.into(),
        "no-such-remote-task".into(),
    );
    let mut question = Message::agent("q", vec![Part::text("?")]);
    question.metadata = Some(metadata);
    let before = Task::new(
        "t-lost",
        "ctx-lost",
        TaskStatus::now(TaskState::InputRequired, Some(Arc::new(question))),
    );
    let (recorded, events) = sink("t-lost", "ctx-lost");
    let error = proxy
        .execute(
            turn("m-x", "more", "t-lost", "ctx-lost", Some(before)),
            events,
        )
        .await
        .expect_err("the remote has no such task");
    let AgentError::Protocol(proxied) = error else {
        panic!("a protocol error: {error:?}");
    };
    assert!(recorded.events().is_empty());

    // What the remote says to the same message sent directly.
    let mut message = Message::user("m-x", vec![Part::text("more")]);
    message.task_id = "no-such-remote-task".into();
    let request = SendMessageRequest {
        tenant: String::new(),
        message,
        configuration: None,
        metadata: None,
    };
    let Err(ClientError::Protocol(said)) = direct(&base).await.send_streaming(request).await else {
        panic!("the remote refuses directly too");
    };
    assert_eq!(proxied.kind, ErrorKind::TaskNotFound);
    assert_eq!(proxied.reason(), "TASK_NOT_FOUND");
    assert_eq!(proxied.metadata["taskId"], "no-such-remote-task");
    // Each answer carries the remote's id of its own request; all else is the same.
    let (mut proxied, mut said) = (proxied, said);
    assert!(
        proxied.metadata.remove("requestId").is_some(),
        "the remote's request id"
    );
    said.metadata.remove("requestId");
    assert_eq!(
        proxied, said,
        "kind, message, reason and metadata unchanged"
    );

    // A follow-up whose remote task the proxy cannot find anywhere.
    let before = Task::new(
        "t-none",
        "ctx",
        TaskStatus::now(TaskState::InputRequired, None),
    );
    let (_, events) = sink("t-none", "ctx");
    match proxy
        .execute(turn("m-y", "more", "t-none", "ctx", Some(before)), events)
        .await
    {
        Err(AgentError::Infra { code, message }) => {
            assert_eq!(code, "proxy.unknown_remote_task");
            assert!(message.contains("t-none"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn cancel_reaches_the_remote_and_the_local_task_follows() {
    let base = upstream().await;
    let upstream = direct(&base).await;
    let proxy = Arc::new(proxy(&base).await);
    let (recorded, events) = sink("t-c", "ctx-c");
    let running = tokio::spawn({
        let proxy = proxy.clone();
        async move {
            proxy
                .execute(
                    turn("m-c", "tck-cancel please", "t-c", "ctx-c", None),
                    events,
                )
                .await
        }
    });
    recorded
        .wait_until(|e| {
            e.iter().any(|e| {
                matches!(
                    e,
                    AgentEvent::Status {
                        state: TaskState::Working,
                        ..
                    }
                )
            })
        })
        .await;
    // A WORKING status without a message carries no metadata: the remote task is the only
    // one upstream (the proxy itself knows it from its in-memory map).
    let listed = upstream
        .list_all_tasks(&ferry_proto::ListTasksRequest::default())
        .await
        .expect("list");
    let [remote] = &listed[..] else {
        panic!("one remote task: {listed:?}");
    };
    let remote = remote.id.to_string();

    let before = recorded.task("t-c", "ctx-c");
    // The cancel reports to the same local task as the running turn, as with ferry.
    let cancel_events = EventSink::new("t-c", "ctx-c", recorded.clone());
    proxy
        .cancel(turn("m-c", "", "t-c", "ctx-c", Some(before)), cancel_events)
        .await
        .expect("cancel forwarded");
    let outcome = tokio::time::timeout(PATIENCE, running)
        .await
        .expect("the turn ended")
        .expect("joined");
    outcome.expect("the turn ends cleanly once the task is canceled");
    assert_eq!(recorded.states(), [TaskState::Working, TaskState::Canceled]);
    let there = upstream.get_task(&remote, None).await.expect("remote");
    assert_eq!(there.status.state, TaskState::Canceled);
}

#[tokio::test]
async fn cancel_of_a_task_the_remote_finished_reflects_the_remote() {
    let base = upstream().await;
    let proxy = proxy(&base).await;
    let (done, events) = sink("t-f", "ctx-f");
    proxy
        .execute(
            turn("tck-complete-task-1", "go", "t-f", "ctx-f", None),
            events,
        )
        .await
        .expect("the turn");
    // The local task as if it had missed the end (it is still WORKING here).
    let mut before = done.task("t-f", "ctx-f");
    before.status = TaskStatus::now(TaskState::Working, before.status.message.clone());
    let (recorded, events) = sink("t-f", "ctx-f");
    let error = proxy
        .cancel(turn("m", "", "t-f", "ctx-f", Some(before)), events)
        .await
        .expect_err("the remote refuses");
    assert!(
        matches!(
            &error,
            AgentError::Protocol(A2aError {
                kind: ErrorKind::TaskNotCancelable,
                ..
            })
        ),
        "{error:?}"
    );
    assert_eq!(
        recorded.states(),
        [TaskState::Completed],
        "not a false CANCELED"
    );
}

#[tokio::test]
async fn a_card_digest_pin_mismatch_refuses_to_connect_and_the_right_one_connects() {
    let base = upstream().await;
    let mut config = ProxyConfig::new(&base);
    config.card_digest = Some(format!("sha256:{}", "0".repeat(64)));
    let error = ProxyAgent::connect(config.clone())
        .await
        .expect_err("wrong pin");
    assert!(
        matches!(
            error,
            ProxyError::PinMismatch {
                pin: Pin::CardDigest,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("card_digest"), "{error}");

    // The digest as ferry-trust computes it over the card it fetches.
    let net = ferry_net::SafeClientBuilder::default()
        .allow_loopback(true)
        .allow_http(true);
    let fetcher = ferry_trust::fetch::CardFetcher::builder()
        .net(net)
        .build()
        .expect("fetcher");
    let card_url = ferry_proto::card_url(&base);
    let verified = fetcher
        .fetch(&card_url, &ferry_trust::fetch::Expect::default())
        .await
        .expect("fetch");
    config.card_digest = Some(verified.digest().to_owned());
    let proxy = ProxyAgent::connect(config).await.expect("the right pin");
    assert_eq!(proxy.remote_card().name, "conformance");
}

#[tokio::test]
async fn key_pins_check_the_cards_signature() {
    use ferry_trust::keys::{Algorithm, SigningKey};
    let key = SigningKey::generate(Algorithm::Es256, "upstream-1").expect("key");
    let path = std::env::temp_dir().join(format!("ferry-proxy-test-{}.pem", std::process::id()));
    std::fs::write(&path, key.to_pkcs8_pem().expect("pem")).expect("write the key");
    let config = ServerConfig {
        signing_keys: vec![SigningKeyConfig {
            key: path.clone(),
            kid: "upstream-1".into(),
            alg: None,
        }],
        ..ServerConfig::default()
    };
    let base = upstream_with(config, ConformanceAgent::default()).await;
    let _ = std::fs::remove_file(&path);

    let mut config = ProxyConfig::new(&base);
    config.card_key = Some(key.public_key_pem().expect("public pem"));
    ProxyAgent::connect(config.clone())
        .await
        .expect("signed by the pinned key");

    let other = SigningKey::generate(Algorithm::Es256, "other").expect("key");
    config.card_key = Some(other.public_key_pem().expect("public pem"));
    let error = ProxyAgent::connect(config).await.expect_err("another key");
    assert!(
        matches!(
            error,
            ProxyError::PinMismatch {
                pin: Pin::CardKey,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("card_key"), "{error}");

    let mut config = ProxyConfig::new(&base);
    config.jwks = Some(format!("{base}{}", ferry_server::JWKS_PATH));
    ProxyAgent::connect(config)
        .await
        .expect("signed by a key of the JWKS");
}

#[tokio::test]
async fn the_upstream_token_is_sent_and_never_shown() {
    let config = ServerConfig {
        token: Some("upstream-secret".into()),
        ..ServerConfig::default()
    };
    let base = upstream_with(config, ConformanceAgent::default()).await;

    let mut config = ProxyConfig::new(&base);
    config.token = Some("upstream-secret".into());
    let proxy = ProxyAgent::connect(config).await.expect("connect");
    assert!(!format!("{proxy:?}").contains("upstream-secret"));
    let (recorded, events) = sink("t-a", "ctx-a");
    proxy
        .execute(
            turn("tck-complete-task-1", "go", "t-a", "ctx-a", None),
            events,
        )
        .await
        .expect("authorized");
    assert_eq!(
        recorded.states(),
        [TaskState::Working, TaskState::Completed]
    );

    let mut config = ProxyConfig::new(&base);
    config.token = Some("wrong-secret".into());
    let proxy = ProxyAgent::connect(config)
        .await
        .expect("the card is public");
    let (recorded, events) = sink("t-b", "ctx-b");
    match proxy
        .execute(
            turn("tck-complete-task-1", "go", "t-b", "ctx-b", None),
            events,
        )
        .await
    {
        Err(AgentError::Infra { code, message }) => {
            assert_eq!(code, "proxy.auth");
            assert!(!message.contains("wrong-secret"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert!(recorded.events().is_empty());
}

// ---- a remote whose stream breaks off ---------------------------------------------------

/// A hand-written JSON-RPC upstream: its send stream breaks off after the first chunk, it
/// refuses to resume it (as an SDK may for a task that just ended), and `GetTask` shows the
/// task completed with the whole artifact.
async fn breaking_upstream() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let card = serde_json::json!({
        "name": "breaking", "description": "breaks its streams", "version": "1",
        "supportedInterfaces": [{"url": format!("{base}/jsonrpc"), "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": []
    });
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(answer_once(socket, card.clone()));
        }
    });
    base
}

/// Answers one HTTP/1.1 request and closes the connection.
async fn answer_once(mut socket: tokio::net::TcpStream, card: serde_json::Value) {
    use serde_json::json;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match socket.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        match socket.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let body: serde_json::Value =
        serde_json::from_slice(&buf[head_end..head_end + length]).unwrap_or_default();
    let id = body["id"].clone();
    let task =
        |state: &str| json!({"id": "up-1", "contextId": "up-ctx", "status": {"state": state}});
    let (content_type, payload) = if head.starts_with("get") {
        ("application/json", card.to_string())
    } else {
        match body["method"].as_str() {
            Some("SendStreamingMessage") => {
                let event = |n: u32, result: serde_json::Value| {
                    format!(
                        "id: {n}\ndata: {}\n\n",
                        json!({"jsonrpc": "2.0", "id": id, "result": result})
                    )
                };
                let chunk = json!({"artifactUpdate": {"taskId": "up-1", "contextId": "up-ctx",
                    "artifact": {"artifactId": "out", "parts": [{"text": "chunk 1"}]}}});
                let stream =
                    event(1, json!({"task": task("TASK_STATE_WORKING")})) + &event(2, chunk);
                ("text/event-stream", stream)
            }
            Some("GetTask") => {
                let mut done = task("TASK_STATE_COMPLETED");
                done["status"]["message"] = json!({"messageId": "up-m", "role": "ROLE_AGENT",
                    "parts": [{"text": "all done"}]});
                done["artifacts"] = json!([{"artifactId": "out",
                    "parts": [{"text": "chunk 1"}, {"text": "chunk 2"}]}]);
                (
                    "application/json",
                    json!({"jsonrpc": "2.0", "id": id, "result": done}).to_string(),
                )
            }
            _ => (
                "application/json",
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32004,
                    "message": "this upstream does not resubscribe"}})
                .to_string(),
            ),
        }
    };
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{payload}",
        payload.len()
    );
    let _ = socket.write_all(response.as_bytes()).await;
    let _ = socket.shutdown().await;
}

#[tokio::test]
async fn a_broken_stream_ends_the_turn_as_the_remote_task_ended() {
    let base = breaking_upstream().await;
    let proxy = proxy(&base).await;
    let (recorded, events) = sink("t-broken", "ctx-broken");
    proxy
        .execute(turn("m-1", "go", "t-broken", "ctx-broken", None), events)
        .await
        .expect("the turn ends as the remote task did");
    let shapes: Vec<String> = recorded
        .events()
        .iter()
        .map(|e| match e {
            AgentEvent::Artifact {
                artifact,
                append,
                last_chunk,
            } => format!(
                "artifact {} parts append={append} last={last_chunk}",
                artifact.parts.len()
            ),
            AgentEvent::Status { state, message } => format!(
                "{state} {}",
                message.as_ref().map(Message::text).unwrap_or_default()
            ),
            AgentEvent::Message(_) => "message".into(),
        })
        .collect();
    assert_eq!(
        shapes,
        [
            "TASK_STATE_WORKING ",
            "artifact 1 parts append=false last=false",
            "artifact 2 parts append=false last=true",
            "TASK_STATE_COMPLETED all done",
        ]
    );
    let local = recorded.task("t-broken", "ctx-broken");
    assert_eq!(
        local.artifacts[0].parts.len(),
        2,
        "the whole artifact, once"
    );
    assert_eq!(remote_task_id(&recorded.events()), "up-1");
}
