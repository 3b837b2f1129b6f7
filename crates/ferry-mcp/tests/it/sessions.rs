//! One MCP session is one conversation: its browser closes when the session ends (the
//! client goes away, or deletes an HTTP session), it stays with the caller who opened it, and
//! nothing is submitted without `forms_submit` unless the server runs with auto-submit.

use crate::support::site::TestSite;
use crate::support::{bounded, call, chromium_or_skip, session};
use ferry_forms::{FormsAgent, FormsConfig};
use serde_json::{Value, json};
use std::time::Duration;

/// How long a closed session's browser may take to exit.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(30);

/// The agent's settings for the test site: `shop.test` allowed and mapped to loopback.
fn shop(auto_submit: bool) -> FormsConfig {
    FormsConfig {
        allow_domains: vec!["shop.test".into()],
        allow_private_networks: true,
        resolve: vec![("shop.test".into(), "127.0.0.1".parse().expect("ip"))],
        auto_submit,
        ..FormsConfig::default()
    }
}

/// Every required field of `signup.html`.
fn signup_values() -> Value {
    json!({"Full name": "Ada Lovelace", "Email": "ada@example.com", "Password": "correct horse 42", "I accept the terms": true})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_ends_closes_its_browser() {
    if !chromium_or_skip("mcp::sessions::ends") {
        return;
    }
    bounded(async {
        let site = TestSite::start().await;
        let agent = FormsAgent::new(shop(false));
        let client = session(&agent, "alice").await;
        let url = site.url("shop.test", "/signup.html");
        let (data, error) = call(&client, "forms_inspect", json!({"url": url})).await;
        assert!(!error && data["state"] == "completed", "{data}");
        assert_eq!(agent.pool().len(), 1, "one session, one browser");
        // forms_close closes it at once; the next call opens a new one.
        let (closed, _) = call(&client, "forms_close", json!({})).await;
        assert_eq!(closed, json!({"closed": true}));
        assert!(agent.pool().is_empty());
        let (status, _) = call(&client, "forms_status", json!({})).await;
        assert_eq!(
            status["state"], "input-required",
            "no page is open: {status}"
        );
        let (data, _) = call(&client, "forms_inspect", json!({"url": url})).await;
        assert_eq!(data["state"], "completed");
        // The client goes away: the session's browser is closed.
        let _ = client.cancel().await;
        tokio::time::timeout(CLOSE_TIMEOUT, agent.pool().wait_empty())
            .await
            .expect("the ended session's browser is closed");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_submitted_without_forms_submit_unless_the_server_auto_submits() {
    if !chromium_or_skip("mcp::sessions::submit") {
        return;
    }
    bounded(async {
        let site = TestSite::start().await;
        let url = site.url("shop.test", "/signup.html");
        let fill = json!({"url": url, "values": signup_values(), "submit": true});

        let agent = FormsAgent::new(shop(false));
        let client = session(&agent, "alice").await;
        let (data, _) = call(&client, "forms_fill", fill.clone()).await;
        assert_eq!(data["state"], "input-required", "{data}");
        assert_eq!(data["needed"]["pendingSubmit"], true, "{data}");
        assert!(
            data["message"]
                .as_str()
                .unwrap_or_default()
                .contains("forms_submit"),
            "the next step is named as a tool call: {data}"
        );
        let (checked, _) = call(&client, "forms_submit", json!({"confirm": false})).await;
        assert_eq!(checked["needed"]["pendingSubmit"], true, "{checked}");
        assert!(site.submissions().is_empty(), "nothing submitted yet");
        let (done, _) = call(&client, "forms_submit", json!({"confirm": true})).await;
        assert_eq!(done["state"], "completed", "{done}");
        assert_eq!(done["report"]["submitted"], true);
        assert_eq!(site.submissions().len(), 1);
        let _ = client.cancel().await;
        agent.pool().shutdown().await;

        let agent = FormsAgent::new(shop(true));
        let client = session(&agent, "alice").await;
        let (data, _) = call(&client, "forms_fill", fill).await;
        assert_eq!(data["state"], "completed", "{data}");
        assert_eq!(data["report"]["submitted"], true, "{data}");
        assert_eq!(site.submissions().len(), 2, "auto-submit submitted at once");
        let _ = client.cancel().await;
        agent.pool().shutdown().await;
    })
    .await;
}

/// The JSON-RPC answer in a Streamable HTTP response (JSON, or the last `data:` event of an
/// SSE body that parses).
async fn answer(response: reqwest::Response) -> Value {
    let text = response.text().await.expect("a body");
    serde_json::from_str(&text).unwrap_or_else(|_| {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .next_back()
            .unwrap_or(Value::Null)
    })
}

/// An HTTP client of the MCP endpoint at `url`, as caller `caller` (none: anonymous), in
/// session `session`.
async fn post(
    http: &reqwest::Client,
    url: &str,
    caller: Option<&str>,
    session: Option<&str>,
    body: Value,
) -> reqwest::Response {
    let mut request = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&body);
    if let Some(caller) = caller {
        request = request.header("x-test-caller", caller);
    }
    if let Some(id) = session {
        request = request
            .header("mcp-session-id", id)
            .header("mcp-protocol-version", "2025-11-25");
    }
    request.send().await.expect("the MCP endpoint answers")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_session_stays_with_its_caller_and_ends_with_delete() {
    if !chromium_or_skip("mcp::sessions::http") {
        return;
    }
    bounded(async {
        let site = TestSite::start().await;
        let agent = FormsAgent::new(shop(false));
        // What ferry serve's front door does, in short: who is calling goes into the request.
        let service = ferry_mcp::http_service(agent.clone(), 1 << 20);
        let app = axum::Router::new().route_service("/mcp", service).layer(
            axum::middleware::from_fn(
                |mut request: axum::extract::Request, next: axum::middleware::Next| async move {
                    let caller = request
                        .headers()
                        .get("x-test-caller")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned);
                    if let Some(caller) = caller {
                        request
                            .extensions_mut()
                            .insert(ferry_mcp::HttpCaller(caller));
                    }
                    next.run(request).await
                },
            ),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
        tokio::spawn(async move { axum::serve(listener, app).await });
        let http = reqwest::Client::new();

        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}});
        let response = post(&http, &url, Some("alice"), None, init).await;
        let session_id = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .expect("a session id");
        let session = Some(session_id.as_str());
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        post(&http, &url, Some("alice"), session, initialized).await;

        let page = site.url("shop.test", "/signup.html");
        let inspect = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "forms_inspect", "arguments": {"url": page}}});
        let result = answer(post(&http, &url, Some("alice"), session, inspect).await).await;
        assert_eq!(
            result["result"]["structuredContent"]["state"], "completed",
            "{result}"
        );
        assert_eq!(agent.pool().len(), 1);

        let status = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "forms_status", "arguments": {}}});
        // Bob, or an anonymous request, holding Alice's session id: refused, and her session
        // is untouched.
        for caller in [Some("bob"), None] {
            let refused = answer(post(&http, &url, caller, session, status.clone()).await).await;
            assert!(
                refused["error"]["message"]
                    .to_string()
                    .contains("belongs to another caller"),
                "{caller:?}: {refused}"
            );
        }
        let own = answer(post(&http, &url, Some("alice"), session, status).await).await;
        assert_eq!(own["result"]["structuredContent"]["state"], "completed", "{own}");

        // Deleting the session closes its browser.
        let deleted = http
            .delete(&url)
            .header("x-test-caller", "alice")
            .header("mcp-session-id", &session_id)
            .header("mcp-protocol-version", "2025-11-25")
            .send()
            .await
            .expect("DELETE answers");
        assert!(deleted.status().is_success(), "{}", deleted.status());
        tokio::time::timeout(CLOSE_TIMEOUT, agent.pool().wait_empty())
            .await
            .expect("the deleted session's browser is closed");
    })
    .await;
}
