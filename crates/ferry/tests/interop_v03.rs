//! A2A v0.3 next to v1.0, against a real `ferry serve`.
//!
//! - The official Python SDK of v0.3 (`a2a-sdk` 0.3.26, `$FERRY_PYTHON_V03` or
//!   `<workspace>/.venv-v03`, made by `scripts/test.sh`) runs `interop/python/v03_client.py`:
//!   card, blocking send, three streamed turns, resubscribe while cancelling, get, typed
//!   errors, no `A2A-Version` header anywhere. Skipped loudly outside CI when the venv is
//!   missing, a failure in CI.
//! - JSON-RPC posted to the base URL (`/`) works, for v1.0 and v0.3 methods alike.
//! - `--no-v03` serves v1.0 only: no v0.3 members on the card, `message/send` is -32601.
//! - `/metrics` counts requests by the version they spoke.

mod support;

use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use support::{Sdk, Server, http_get, http_request, output_with_timeout, workspace_root};

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

#[test]
fn the_python_sdk_of_v03_converses_with_ferry() {
    let test = "interop_v03 python a2a-sdk 0.3";
    let Some(python) = support::sdk_python_or_skip(Sdk::V03, test, "a2a.client, a2a.types") else {
        return;
    };
    let root = workspace_root();
    let script = Path::new("interop/python/v03_client.py");
    let server = Server::start(["--agent", "conformance", "--bind", "127.0.0.1:0"]);
    let (out, timed_out) = output_with_timeout(
        Command::new(&python)
            .arg(script)
            .args(["--base-url", &server.base_url])
            .env("PYTHONUNBUFFERED", "1")
            .current_dir(&root),
        None,
        SCRIPT_TIMEOUT,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !timed_out && out.status.success() && stdout.contains("PASS"),
        "{test} failed ({})\n---- stdout ----\n{stdout}\n---- stderr ----\n{}\n---- server ----\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        server.output()
    );
    println!("{stdout}");
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
    assert_eq!(
        interfaces[0]["protocolVersion"], "1.0",
        "v1.0 first: {card}"
    );
    assert!(
        interfaces
            .iter()
            .any(|i| i["protocolVersion"] == "0.3" && i["protocolBinding"] == "JSONRPC"),
        "{card}"
    );
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
}
