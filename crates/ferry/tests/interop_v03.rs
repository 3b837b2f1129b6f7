//! A2A v0.3 next to v1.0, against a real `ferry serve`.
//!
//! - The official Python SDK of v0.3 (`a2a-sdk` 0.3.26, `$FERRY_PYTHON_V03` or
//!   `<workspace>/.venv-v03`, made by `scripts/test.sh`) runs `interop/python/v03_client.py`:
//!   card, blocking send, three streamed turns, resubscribe while cancelling, get, typed
//!   errors, no `A2A-Version` header anywhere; once over JSON-RPC and once over v0.3's
//!   HTTP+JSON binding. Skipped loudly outside CI when the venv is missing, a failure in CI.
//! - JSON-RPC posted to the base URL (`/`) works, for v1.0 and v0.3 methods alike.
//! - `--no-v03` serves v1.0 only: no v0.3 members on the card, `message/send` is -32601.
//! - `/metrics` counts requests by the version they spoke.
//! - ferry's client (through the `ferry` CLI) calls an a2a-sdk 0.3 server
//!   (`interop/python/v03_server.py`, a v0.3-only card): blocking send, a streamed turn that
//!   asks for input and its follow-up, a task held open, subscribed to and canceled, get,
//!   and a typed error.

mod support;

use serde_json::{Value, json};
use std::process::Command;
use std::time::Duration;
use support::{
    Sdk, Server, ferry, http_get, http_request, run_script, run_with_timeout, spawn_lines,
    workspace_root,
};

/// Hard limit for one `ferry` command.
const CLI_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a subscriber may take to print its next event.
const EVENT_TIMEOUT: Duration = Duration::from_secs(30);

/// Hard limit for one run of the Python script (which has its own 30 s limit).
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(90);

fn post(url: &str, headers: &[(&str, &str)], body: &Value) -> (u16, Value) {
    let (status, bytes) = http_request("POST", url, headers, &body.to_string());
    let value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{url}: not JSON ({e}): {}", String::from_utf8_lossy(&bytes)));
    (status, value)
}

fn v03_send(message_id: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {
        "kind": "message", "messageId": message_id, "role": "user",
        "parts": [{"kind": "text", "text": "hi"}]}}})
}

/// Runs `interop/python/v03_client.py` over `transport` against a conformance agent.
fn python_v03_client_over(transport: &str) {
    let test = format!("interop_v03 python a2a-sdk 0.3 over {transport}");
    let Some(python) = support::sdk_python_or_skip(Sdk::V03, &test, "a2a.client, a2a.types") else {
        return;
    };
    let server = Server::start(["--agent", "conformance", "--bind", "127.0.0.1:0"]);
    let run = run_script(
        &python,
        "interop/python/v03_client.py",
        ["--base-url", &server.base_url, "--transport", transport],
        SCRIPT_TIMEOUT,
    );
    run.assert_passed(&test, &server);
    assert!(run.stdout.contains("PASS"), "{test}\n{}", run.stdout);
    println!("{}", run.stdout);
}

#[test]
fn the_python_sdk_of_v03_converses_with_ferry() {
    python_v03_client_over("JSONRPC");
}

/// The same conversation over v0.3's HTTP+JSON binding (`/rest/v1/message:send`, …).
#[test]
fn the_python_sdk_of_v03_converses_with_ferry_over_rest() {
    python_v03_client_over("HTTP+JSON");
}

/// v0.3's REST routes under `/rest`, in v0.3's ProtoJSON: a blocking send, a get with
/// `historyLength`; a stream's events; under `A2A-Version: 1.0` the same path is v1.0's, for
/// the tenant `v1`.
#[test]
fn v03_rest_routes_speak_v03_proto_json() {
    let server = Server::start(["--agent", "echo", "--bind", "127.0.0.1:0"]);
    let rest = format!("{}/rest", server.base_url);
    let body = json!({"message": {"messageId": "r-1", "role": "ROLE_USER",
        "content": [{"text": "hello"}, {"data": {"data": {"n": 1}}}]},
        "configuration": {"blocking": true}});
    let (status, sent) = post(&format!("{rest}/v1/message:send"), &[], &body);
    assert_eq!(status, 200, "{sent}");
    let task = &sent["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{sent}");
    assert!(task.get("kind").is_none(), "no kind in ProtoJSON: {sent}");
    assert_eq!(task["history"][0]["content"][0]["text"], "hello", "{sent}");
    assert_eq!(task["history"][0]["role"], "ROLE_USER", "{sent}");
    let parts: Vec<&Value> = task["artifacts"]
        .as_array()
        .expect("artifacts")
        .iter()
        .flat_map(|a| a["parts"].as_array().expect("parts"))
        .collect();
    assert!(
        parts.iter().any(|p| p["data"]["data"] == json!({"n": 1})),
        "the data part, one level down: {sent}"
    );
    let id = task["id"].as_str().expect("an id");
    let (status, got) = http_request(
        "GET",
        &format!("{rest}/v1/tasks/{id}?historyLength=1"),
        &[],
        "",
    );
    let got: Value = serde_json::from_slice(&got).expect("JSON");
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["id"], id);
    assert_eq!(got["history"].as_array().map(Vec::len), Some(1), "{got}");
    // A stream: SSE data lines, each one v0.3 StreamResponse, the last a final status.
    let (status, stream) = http_request(
        "POST",
        &format!("{rest}/v1/message:stream"),
        &[],
        &json!({"message": {"messageId": "r-2", "role": "ROLE_USER", "content": [{"text": "hi"}]}})
            .to_string(),
    );
    assert_eq!(status, 200);
    let events: Vec<Value> = String::from_utf8_lossy(&stream)
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| serde_json::from_str(d.trim()).expect("an event"))
        .collect();
    assert!(
        events.first().is_some_and(|e| e.get("task").is_some()),
        "{events:?}"
    );
    let last = events.last().expect("events");
    assert_eq!(last["statusUpdate"]["final"], true, "{events:?}");
    assert_eq!(
        last["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    // Errors: v1.0's AIP-193 body with v0.3's statuses.
    let (status, _) = http_request("GET", &format!("{rest}/v1/tasks/no-such-task"), &[], "");
    assert_eq!(status, 404);
    let (status, refused) = post(
        &format!("{rest}/v1/message:send"),
        &[],
        &json!({"message": {"messageId": "r-3", "role": "ROLE_BOSS", "content": []}}),
    );
    assert_eq!(status, 400, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("role")),
        "{refused}"
    );
    // Under a 1.x version `v1` is a tenant and the body is v1.0's.
    let (status, v1) = post(
        &format!("{rest}/v1/message:send"),
        &[("A2A-Version", "1.0")],
        &json!({"message": {"messageId": "r-4", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}),
    );
    assert_eq!(status, 200, "{v1}");
    assert_eq!(v1["task"]["history"][0]["parts"][0]["text"], "hi", "{v1}");
}

#[test]
fn json_rpc_posted_to_the_base_url_works_in_both_versions() {
    let server = Server::start(["--agent", "echo", "--bind", "127.0.0.1:0"]);
    let root = format!("{}/", server.base_url);
    let v1 = json!({"jsonrpc": "2.0", "id": "a", "method": "SendMessage", "params": {"message": {
        "messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}});
    let (status, body) = post(&root, &[("A2A-Version", "1.0")], &v1);
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{body}"
    );
    let (status, body) = post(&root, &[], &v03_send("m-2"));
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["result"]["kind"], "task", "{body}");
    assert_eq!(body["result"]["status"]["state"], "completed", "{body}");

    // The card names the v0.3 endpoint, and /metrics counts each version.
    let (_, card) = http_get(&format!("{}/.well-known/agent-card.json", server.base_url));
    let card: Value = serde_json::from_slice(&card).expect("card JSON");
    assert_eq!(card["url"], format!("{}/jsonrpc", server.base_url));
    assert_eq!(card["protocolVersion"], "0.3.0");
    let interfaces = card["supportedInterfaces"].as_array().expect("interfaces");
    assert!(
        interfaces.iter().all(|i| i["protocolVersion"] == "1.0"),
        "{card}"
    );
    // A v1.0 client (which states its version) gets the v1.0 card alone.
    let (_, v1) = http_request(
        "GET",
        &format!("{}/.well-known/agent-card.json", server.base_url),
        &[("A2A-Version", "1.0")],
        "",
    );
    let v1: Value = serde_json::from_slice(&v1).expect("card JSON");
    assert!(v1.get("url").is_none(), "{v1}");
    assert_eq!(v1["supportedInterfaces"], card["supportedInterfaces"]);
    let (_, metrics) = http_get(&format!("{}/metrics", server.base_url));
    let metrics = String::from_utf8_lossy(&metrics);
    for line in [
        "ferry_requests_by_version_total{version=\"1.0\"} 1",
        "ferry_requests_by_version_total{version=\"0.3\"} 1",
    ] {
        assert!(metrics.contains(line), "{line} in\n{metrics}");
    }
}

#[test]
fn no_v03_serves_v1_only() {
    let server = Server::start(["--agent", "echo", "--bind", "127.0.0.1:0", "--no-v03"]);
    let (_, card) = http_get(&format!("{}/.well-known/agent-card.json", server.base_url));
    let card: Value = serde_json::from_slice(&card).expect("card JSON");
    for member in [
        "url",
        "protocolVersion",
        "preferredTransport",
        "additionalInterfaces",
    ] {
        assert!(
            card.get(member).is_none(),
            "{member} on a v1.0-only card: {card}"
        );
    }
    assert!(
        card["supportedInterfaces"]
            .as_array()
            .expect("interfaces")
            .iter()
            .all(|i| i["protocolVersion"] == "1.0"),
        "{card}"
    );
    let (status, body) = post(
        &format!("{}/jsonrpc", server.base_url),
        &[],
        &v03_send("m-3"),
    );
    assert_eq!(status, 200);
    assert_eq!(body["error"]["code"], -32601, "{body}");
    // v0.3's REST path is then v1.0's, for a tenant `v1`, and a v0.3 body is refused.
    let (status, body) = post(
        &format!("{}/rest/v1/message:send", server.base_url),
        &[],
        &json!({"message": {"messageId": "m-4", "role": "ROLE_USER", "content": [{"text": "hi"}]}}),
    );
    assert_eq!(status, 400, "{body}");
}

/// Runs `ferry ARGS -o json` and returns its JSON output (the last line for a stream).
fn cli_json(args: &[&str]) -> Value {
    let out = run_with_timeout(ferry().args(args).args(["-o", "json"]), None, CLI_TIMEOUT);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "ferry {args:?}: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("ferry {args:?}: not JSON ({e}): {stdout}"))
}

#[test]
fn ferry_calls_an_a2a_sdk_v03_server() {
    let test = "interop_v03 ferry client -> a2a-sdk 0.3 server";
    let Some(python) = support::sdk_python_or_skip(Sdk::V03, test, "a2a.server.apps, uvicorn")
    else {
        return;
    };
    let mut cmd = Command::new(python);
    cmd.arg("interop/python/v03_server.py")
        .args(["--port", "0"])
        .env("PYTHONUNBUFFERED", "1")
        .current_dir(workspace_root());
    let server = Server::spawn(cmd);
    let url = server.base_url.as_str();

    // A blocking send.
    let sent = cli_json(&["send", url, "hello from ferry"]);
    let task = &sent["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{sent}");
    assert_eq!(
        task["artifacts"][0]["parts"][0]["text"], "hello from ferry",
        "{sent}"
    );

    // A streamed turn that asks, and its follow-up on the same task.
    let asked = cli_json(&["send", url, "ask me", "--stream"]);
    let status = &asked["statusUpdate"]["status"];
    assert_eq!(status["state"], "TASK_STATE_INPUT_REQUIRED", "{asked}");
    assert_eq!(
        status["message"]["parts"][0]["text"], "what else?",
        "{asked}"
    );
    let task_id = asked["statusUpdate"]["taskId"]
        .as_str()
        .expect("task id")
        .to_owned();
    let context = asked["statusUpdate"]["contextId"]
        .as_str()
        .expect("context")
        .to_owned();
    let answered = cli_json(&[
        "send",
        url,
        "more",
        "--task",
        &task_id,
        "--context",
        &context,
    ]);
    assert_eq!(answered["task"]["id"], task_id.as_str());
    assert_eq!(
        answered["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{answered}"
    );
    let got = cli_json(&["task", "get", url, &task_id]);
    assert_eq!(got["status"]["state"], "TASK_STATE_COMPLETED", "{got}");
    assert!(
        got["artifacts"].to_string().contains("more"),
        "the follow-up's artifact: {got}"
    );

    // A task held open: subscribed to, then canceled from another process.
    let held = cli_json(&["send", url, "hold on", "--async"]);
    let held_id = held["task"]["id"].as_str().expect("task id").to_owned();
    let (mut child, lines) =
        spawn_lines(ferry().args(["task", "subscribe", url, &held_id, "-o", "json"]));
    let first: Value =
        serde_json::from_str(&lines.recv_timeout(EVENT_TIMEOUT).expect("an event")).expect("JSON");
    assert!(
        first.get("task").is_some(),
        "the subscription starts with the task: {first}"
    );
    let canceled = cli_json(&["task", "cancel", url, &held_id]);
    assert_eq!(
        canceled["status"]["state"], "TASK_STATE_CANCELED",
        "{canceled}"
    );
    let mut events = vec![first];
    while let Ok(line) = lines.recv_timeout(EVENT_TIMEOUT) {
        events.push(serde_json::from_str(&line).expect("JSON"));
    }
    let status = child.0.wait().expect("the subscriber exits");
    assert!(status.success(), "subscriber: {status}; {events:?}");
    // The 0.3 SDK ends the stream of a canceled task without its last event and then forgets
    // the stream: the client reads the task and ends with it.
    let last = events.last().expect("events");
    let state = last
        .get("statusUpdate")
        .or(last.get("task"))
        .map(|e| &e["status"]["state"]);
    assert_eq!(
        state,
        Some(&json!("TASK_STATE_CANCELED")),
        "the subscription ends at CANCELED: {events:?}"
    );

    // A typed error from the v0.3 server.
    let out = run_with_timeout(
        ferry().args(["task", "get", url, "no-such-task"]),
        None,
        CLI_TIMEOUT,
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("TaskNotFound")
            || stderr.contains("-32001")
            || stderr.contains("not found"),
        "{stderr}"
    );
}

#[test]
fn the_extended_card_in_v03_and_the_security_of_its_schemes() {
    let server = Server::start([
        "--agent",
        "conformance",
        "--bind",
        "127.0.0.1:0",
        "--token",
        "v03-secret",
    ]);
    let (_, card) = http_get(&format!("{}/.well-known/agent-card.json", server.base_url));
    let card: Value = serde_json::from_slice(&card).expect("card JSON");
    // The v0.3 form of the bearer scheme beside v1.0's, and the requirement in both forms.
    let bearer = &card["securitySchemes"]["bearer"];
    assert!(bearer.get("httpAuthSecurityScheme").is_some(), "{card}");
    assert_eq!(
        (&bearer["type"], &bearer["scheme"]),
        (&json!("http"), &json!("Bearer"))
    );
    assert_eq!(card["security"], json!([{"bearer": []}]), "{card}");
    assert_eq!(card["supportsAuthenticatedExtendedCard"], true, "{card}");

    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "agent/getAuthenticatedExtendedCard"});
    let url = format!("{}/jsonrpc", server.base_url);
    let (status, body) = post(&url, &[("Authorization", "Bearer v03-secret")], &call);
    assert_eq!(status, 200, "{body}");
    let extended = &body["result"];
    assert_eq!(extended["url"], url, "{body}");
    assert_eq!(extended["protocolVersion"], "0.3.0", "{body}");
    assert!(
        extended["skills"].as_array().expect("skills").len()
            > card["skills"].as_array().expect("skills").len(),
        "the extended card shows more skills: {body}"
    );
    let (status, _) = post(&url, &[], &call);
    assert_eq!(status, 401, "without the token");
}
