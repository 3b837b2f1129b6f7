//! The `cdp-config/v1` extension over real HTTP: the card entry, registering, replacing,
//! listing (no URLs or header values), removing twice, every 400, the snapshot a turn sees
//! (headers included, detached from later changes), and `cdp.no_endpoint` / `cdp.ambiguous` as
//! infrastructure failures, blocking and streamed.

use ferry_agent::{
    AgentDescription, AgentError, AgentExecutor, AgentFuture, EventSink, RequestContext,
};
use ferry_browser::CdpEndpoints;
use ferry_cdp_config::CdpConfig;
use ferry_proto::{Artifact, Part};
use ferry_server::{ServerConfig, ServerExtension};
use ferry_testkit::TestServer;
use reqwest::Method;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::sync::Semaphore;

/// Reports the endpoint it resolves (the message text names it; empty = the only one). A
/// message starting with `wait` first says it started (a permit on `started`), then waits for
/// a permit on `gate`, so a test can change the registry while the turn runs.
struct EndpointReporter {
    gate: Arc<Semaphore>,
    started: Arc<Semaphore>,
}

/// The endpoint a turn uses, as the forms agent resolves it: by name, or the only one.
fn cdp_endpoint(
    ctx: &RequestContext,
    name: Option<&str>,
) -> Result<ferry_browser::CdpEndpoint, AgentError> {
    let none = CdpEndpoints::default();
    let endpoints = ctx.extension::<CdpEndpoints>().unwrap_or(&none);
    endpoints
        .pick(name)
        .cloned()
        .map_err(|e| AgentError::Infra {
            code: e.code(),
            message: e.to_string(),
        })
}

impl AgentExecutor for EndpointReporter {
    fn describe(&self) -> AgentDescription {
        AgentDescription::new("cdp-reporter", "Reports the CDP endpoint its turn sees")
    }

    fn execute(&self, ctx: RequestContext, events: EventSink) -> AgentFuture<'_> {
        Box::pin(async move {
            let text = ctx.message.text();
            if text.starts_with("wait") {
                self.started.add_permits(1);
                let _ = self.gate.acquire().await;
            }
            let name = text.trim_start_matches("wait").trim();
            let endpoint = cdp_endpoint(&ctx, (!name.is_empty()).then_some(name))?;
            let seen = json!({"name": endpoint.name, "http_url": endpoint.http_url, "ws_url": endpoint.ws_url,
                "headers": endpoint.headers,
                "count": ctx.extension::<CdpEndpoints>().map_or(0, CdpEndpoints::len)});
            events
                .artifact(
                    Artifact::new("seen", "seen", vec![Part::data(seen)]),
                    false,
                    true,
                )
                .await?;
            events.complete(None).await?;
            Ok(())
        })
    }
}

fn reporter(gate: Arc<Semaphore>) -> (EndpointReporter, Arc<Semaphore>) {
    let started = Arc::new(Semaphore::new(0));
    let agent = EndpointReporter {
        gate,
        started: started.clone(),
    };
    (agent, started)
}

fn extension() -> Vec<Arc<dyn ServerExtension>> {
    vec![Arc::new(CdpConfig::new(false))]
}

async fn server(gate: Arc<Semaphore>) -> TestServer {
    server_started(gate).await.0
}

/// The server, and the semaphore a waiting turn puts a permit on when it has started.
async fn server_started(gate: Arc<Semaphore>) -> (TestServer, Arc<Semaphore>) {
    let (agent, started) = reporter(gate);
    let srv = TestServer::serve(agent, ServerConfig::default(), extension()).await;
    (srv, started)
}

const JSON: [(&str, &str); 1] = [("content-type", "application/json")];

async fn assert_nothing_registered(srv: &TestServer) {
    let (_, listed) = srv
        .request_json(Method::GET, "/ext/cdp-config", &[], "")
        .await;
    assert_eq!(listed["cdp_endpoints"], json!({}), "nothing was registered");
}

async fn register(srv: &TestServer, body: Value) -> (u16, Value) {
    srv.request_json(Method::POST, "/ext/cdp-config", &JSON, &body.to_string())
        .await
}

fn endpoint(name: &str) -> Value {
    json!({"name": name, "http_url": "http://127.0.0.1:9222", "ws_url": "ws://127.0.0.1:9222/devtools/browser/abc",
        "headers": {"authorization": "Bearer cdp-secret"}, "metadata": {"pool": "a"}})
}

/// Sends `text` (blocking JSON-RPC, or streamed when `stream`); returns the final task JSON or
/// the last streamed status.
async fn turn(srv: &TestServer, text: &str) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message":
        {"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER", "parts": [{"text": text}]}}});
    let headers = [("content-type", "application/json"), ("a2a-version", "1.0")];
    let (_, answer) = srv
        .request_json(Method::POST, "/jsonrpc", &headers, &body.to_string())
        .await;
    answer["result"]["task"].clone()
}

fn infra_code(task: &Value) -> Option<String> {
    assert_eq!(task["status"]["state"], "TASK_STATE_FAILED", "{task}");
    let parts = task["status"]["message"]["parts"].as_array()?;
    let data = parts.iter().find_map(|p| p.get("data"))?;
    assert_eq!(data["error"]["kind"], "infra_error", "{data}");
    data["error"]["code"].as_str().map(str::to_owned)
}

#[tokio::test]
async fn register_list_replace_remove() {
    let srv = server(Arc::new(Semaphore::new(100))).await;
    let (_, card) = srv
        .request_json(Method::GET, "/.well-known/agent-card.json", &[], "")
        .await;
    let ext = &card["capabilities"]["extensions"][0];
    assert_eq!(ext["uri"], "urn:ferry:ext:cdp-config:v1", "{card}");
    assert!(ext.get("required").is_none(), "not required by default");

    assert_eq!(
        register(&srv, endpoint("chromium")).await,
        (200, json!({"status": "added", "name": "chromium"}))
    );
    assert_eq!(
        register(&srv, endpoint("chromium")).await.1["status"],
        "replaced"
    );
    register(&srv, json!({"name": "chromium-buyer", "http_url": "https://h.example:9222", "ws_url": "wss://h.example/x"})).await;
    let (status, listed) = srv
        .request_json(Method::GET, "/ext/cdp-config", &[], "")
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        listed,
        json!({"cdp_endpoints": {"chromium": {"has_headers": true, "metadata": {"pool": "a"}},
                                  "chromium-buyer": {"has_headers": false, "metadata": null}}})
    );
    let text = listed.to_string();
    assert!(
        !text.contains("9222") && !text.contains("cdp-secret"),
        "no URLs or header values: {text}"
    );
    let remove = json!({"name": "chromium"}).to_string();
    let (_, first) = srv
        .request_json(Method::DELETE, "/ext/cdp-config", &JSON, &remove)
        .await;
    assert_eq!(first["status"], "removed");
    let (status, again) = srv
        .request_json(Method::DELETE, "/ext/cdp-config", &JSON, &remove)
        .await;
    assert_eq!((status, again["status"].clone()), (200, json!("absent")));
}

#[tokio::test]
async fn bad_registrations_are_400_naming_the_field() {
    let srv = server(Arc::new(Semaphore::new(100))).await;
    let with = |k: &str, v: Value| {
        let mut e = endpoint("ok");
        e[k] = v;
        e
    };
    let mut extra = endpoint("ok");
    extra["surprise"] = json!(1);
    for (body, field) in [
        (with("name", json!("Bad_Name")), "name"),
        (with("name", json!("a--b")), "name"),
        (with("http_url", json!("http://:8080/")), "http_url"),
        (with("http_url", json!("http://h:port/")), "http_url"),
        (with("ws_url", json!("http://127.0.0.1:9222/")), "ws_url"),
        (extra, "surprise"),
    ] {
        let (status, error) = register(&srv, body.clone()).await;
        assert_eq!(status, 400, "{body}");
        let message = error["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(field), "{field}: {error}");
    }
    assert_nothing_registered(&srv).await;
}

#[tokio::test]
async fn turns_see_a_detached_snapshot_with_headers() {
    let gate = Arc::new(Semaphore::new(0));
    let (srv, started) = server_started(gate.clone()).await;
    register(&srv, endpoint("chromium")).await;
    let seen = turn(&srv, "").await;
    let data = &seen["artifacts"][0]["parts"][0]["data"];
    assert_eq!(
        data["headers"]["authorization"], "Bearer cdp-secret",
        "{seen}"
    );
    assert_eq!(data["ws_url"], "ws://127.0.0.1:9222/devtools/browser/abc");

    // A running turn keeps what it saw when it started.
    let srv = Arc::new(srv);
    let running = tokio::spawn({
        let srv = srv.clone();
        async move { turn(&srv, "wait chromium").await }
    });
    // The turn has started (and taken its snapshot) before the endpoint is removed.
    let _ = started.acquire().await.expect("the turn starts");
    let remove = json!({"name": "chromium"}).to_string();
    srv.request_json(Method::DELETE, "/ext/cdp-config", &JSON, &remove)
        .await;
    gate.add_permits(1);
    let task = tokio::time::timeout(std::time::Duration::from_secs(10), running)
        .await
        .expect("in time")
        .expect("joined");
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    assert_eq!(task["artifacts"][0]["parts"][0]["data"]["name"], "chromium");
    // A new turn sees the removal.
    assert_eq!(
        infra_code(&turn(&srv, "").await).as_deref(),
        Some("cdp.no_endpoint")
    );
}

#[tokio::test]
async fn missing_and_ambiguous_endpoints_fail_as_infrastructure() {
    let srv = server(Arc::new(Semaphore::new(100))).await;
    assert_eq!(
        infra_code(&turn(&srv, "").await).as_deref(),
        Some("cdp.no_endpoint")
    );
    register(&srv, endpoint("a")).await;
    register(&srv, endpoint("b")).await;
    assert_eq!(
        infra_code(&turn(&srv, "").await).as_deref(),
        Some("cdp.ambiguous")
    );
    assert_eq!(
        infra_code(&turn(&srv, "nope").await).as_deref(),
        Some("cdp.no_endpoint")
    );
    let named = turn(&srv, "b").await;
    assert_eq!(
        named["artifacts"][0]["parts"][0]["data"]["name"], "b",
        "{named}"
    );
    // Streamed: the same failure, as the final status of the stream.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message":
        {"messageId": "s-1", "role": "ROLE_USER", "parts": [{"text": ""}]}}});
    let headers = [("content-type", "application/json"), ("a2a-version", "1.0")];
    let response = srv
        .request(Method::POST, "/jsonrpc", &headers, &body.to_string())
        .await;
    let text = response.text().await.expect("stream");
    let last = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .next_back()
        .expect("events");
    let last: Value = serde_json::from_str(last).expect("json");
    let status = &last["result"]["statusUpdate"]["status"];
    assert_eq!(status["state"], "TASK_STATE_FAILED", "{text}");
    let data = status["message"]["parts"]
        .as_array()
        .and_then(|p| p.iter().find_map(|p| p.get("data")))
        .expect("data part");
    assert_eq!(data["error"]["code"], "cdp.ambiguous");
}

#[tokio::test]
async fn the_extension_needs_the_token_and_is_off_by_default() {
    let config = ServerConfig {
        token: Some("s3cret".into()),
        ..ServerConfig::default()
    };
    let (agent, _) = reporter(Arc::new(Semaphore::new(1)));
    let srv = TestServer::serve(agent, config, extension()).await;
    assert_eq!(
        srv.request(Method::GET, "/ext/cdp-config", &[], "")
            .await
            .status(),
        401
    );
    let ok = srv
        .request(
            Method::GET,
            "/ext/cdp-config",
            &[("authorization", "Bearer s3cret")],
            "",
        )
        .await;
    assert_eq!(ok.status(), 200);
    let off = TestServer::serve(ferry_agents::EchoAgent, ServerConfig::default(), vec![]).await;
    assert_eq!(
        off.request(Method::GET, "/ext/cdp-config", &[], "")
            .await
            .status(),
        404
    );
}

/// Issue 11: an extension's body is strict too. Two members with one name (the ws_url a
/// client's JSON library would keep is not the one another would), a member twice deep in
/// `metadata`, and a registration written as an array are 400 naming where; nothing is
/// registered.
#[tokio::test]
async fn duplicate_members_and_arrays_are_400() {
    let srv = server(Arc::new(Semaphore::new(100))).await;
    for (body, says) in [
        (
            r#"{"name":"ok","http_url":"http://127.0.0.1:9222/","ws_url":"ws://127.0.0.1:9222/a","ws_url":"ws://10.0.0.1:9222/b"}"#,
            r#"duplicate member "ws_url" at the top level"#,
        ),
        (
            r#"{"name":"ok","http_url":"http://127.0.0.1:9222/","ws_url":"ws://127.0.0.1:9222/a","metadata":{"pool":{"k":1,"k":2}}}"#,
            r#"duplicate member "k" at /metadata/pool"#,
        ),
        (
            r#"["ok","http://127.0.0.1:9222/","ws://127.0.0.1:9222/a"]"#,
            "invalid type: sequence",
        ),
    ] {
        let (status, error) = srv
            .request_json(Method::POST, "/ext/cdp-config", &JSON, body)
            .await;
        assert_eq!(status, 400, "{body}");
        let message = error["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{body}: {error}");
    }
    assert_nothing_registered(&srv).await;
}
