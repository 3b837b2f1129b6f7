//! `ferry serve --proxy URL` in front of a server built with the official Python SDK
//! (`interop/python/sdk_server.py`): the SDK's own client holds a streamed three-turn
//! conversation through the gateway over every binding, a card pin that does not match stops
//! the gateway before it listens, the remote's errors reach the caller unchanged, and the
//! gateway's own front door stands in front of the remote.
//!
//! Needs the Python interpreter of `interop_python.rs`; without it the tests skip loudly (and
//! fail in CI).

mod support;

use serde_json::Value;
use std::process::Command;
use std::time::Duration;
use support::{
    CARD_PATH, SDK_SERVER_IMPORTS, Server, ferry, http_get, http_request, output_with_timeout,
    python_or_skip, spawn_sdk_server, text, workspace_root,
};

const SCRIPT_TIMEOUT: Duration = Duration::from_secs(60);
const TOKEN: &str = "gateway-token-0123456789";

/// What the gRPC run of `interop_client.py` imports as well.
const GRPC_IMPORTS: &str = "grpc.aio";

fn upstream(test: &str) -> Option<Server> {
    spawn_sdk_server(test, SDK_SERVER_IMPORTS, &[])
}

fn gateway(upstream: &Server, extra: &[&str]) -> Server {
    let mut args = vec![
        "--proxy",
        upstream.base_url.as_str(),
        "--bind",
        "127.0.0.1:0",
    ];
    args.extend_from_slice(extra);
    Server::start(&args)
}

fn json(body: &[u8]) -> Value {
    serde_json::from_slice(body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(body)))
}

/// Runs `interop_client.py --scenario SCENARIO` against `base` over `binding`.
fn sdk_client(python: &std::path::Path, base: &str, binding: &str, scenario: &str) -> String {
    let (out, timed_out) = output_with_timeout(
        Command::new(python)
            .arg("interop/python/interop_client.py")
            .args([
                "--base-url",
                base,
                "--binding",
                binding,
                "--scenario",
                scenario,
            ])
            .env("PYTHONUNBUFFERED", "1")
            .current_dir(workspace_root()),
        None,
        SCRIPT_TIMEOUT,
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        !timed_out && out.status.success(),
        "{scenario} over {binding} through the gateway: {}\n---- stdout ----\n{stdout}\n---- stderr ----\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The gateway re-serves the remote agent with its own card: the remote's name and skills,
/// ferry's interfaces (gRPC included) and security scheme.
#[test]
fn the_gateway_serves_the_remote_agent_under_its_own_card() {
    let test = "proxy_cli the_gateway_serves_the_remote_agent_under_its_own_card";
    let Some(upstream) = upstream(test) else {
        return;
    };
    let remote = json(&upstream.get_ok(CARD_PATH));
    let proxy = gateway(&upstream, &["--token", TOKEN]);
    let card = json(&proxy.get_ok(CARD_PATH));
    assert_eq!(card["name"], remote["name"]);
    assert_eq!(card["skills"], remote["skills"]);
    let bindings: Vec<&str> = card["supportedInterfaces"]
        .as_array()
        .expect("interfaces")
        .iter()
        .map(|i| i["protocolBinding"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(bindings, ["JSONRPC", "HTTP+JSON", "GRPC"]);
    assert!(
        card["supportedInterfaces"][0]["url"]
            .as_str()
            .unwrap_or_default()
            .starts_with(&proxy.base_url),
        "the gateway's own interfaces: {card}"
    );
    assert!(
        card["securitySchemes"].is_object(),
        "ferry's bearer scheme: {card}"
    );
}

/// The SDK's client holds the `ferry-turns-3` conversation (INPUT_REQUIRED, INPUT_REQUIRED,
/// COMPLETED, streamed) and the echo scenario through the gateway, over every binding.
#[test]
fn a_streamed_conversation_through_the_gateway() {
    let test = "proxy_cli a_streamed_conversation_through_the_gateway";
    let imports = format!("a2a.client, {GRPC_IMPORTS}");
    let Some(python) = python_or_skip(test, &imports) else {
        return;
    };
    let Some(upstream) = upstream(test) else {
        return;
    };
    let proxy = gateway(&upstream, &[]);
    for binding in ["JSONRPC", "HTTP+JSON", "GRPC"] {
        for scenario in ["turns", "echo"] {
            let out = sdk_client(&python, &proxy.base_url, binding, scenario);
            assert!(out.contains("PASS"), "{out}");
        }
    }
}

/// A pinned digest that does not match the remote card stops `ferry serve` before it listens,
/// naming the pin; the right digest (what `ferry card digest` prints) starts it.
#[test]
fn a_card_pin_mismatch_refuses_to_start() {
    let test = "proxy_cli a_card_pin_mismatch_refuses_to_start";
    let Some(upstream) = upstream(test) else {
        return;
    };
    let wrong = format!("sha256:{}", "0".repeat(64));
    let (out, timed_out) = output_with_timeout(
        ferry().args([
            "serve",
            "--proxy",
            &upstream.base_url,
            "--proxy-card-digest",
            &wrong,
            "--bind",
            "127.0.0.1:0",
        ]),
        None,
        Duration::from_secs(30),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!timed_out && !out.status.success(), "{stderr}");
    assert!(
        stderr.contains("digest"),
        "the refusal names the pin: {stderr}"
    );
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("agent card:"),
        "it never listened"
    );
    let (status, card) = http_get(&format!("{}{CARD_PATH}", upstream.base_url));
    assert_eq!(status, 200);
    let (digest, _) = output_with_timeout(
        ferry().args(["card", "digest", "-"]),
        Some(&card),
        Duration::from_secs(30),
    );
    let digest = String::from_utf8_lossy(&digest.stdout).trim().to_owned();
    assert!(digest.starts_with("sha256:"), "{digest}");
    let proxy = gateway(&upstream, &["--proxy-card-digest", &digest]);
    proxy.get_ok(CARD_PATH);
}

/// A remote refusal (the SDK's InvalidParamsError, raised by its executor for messageId
/// `ferry-refuse…`) reaches the gateway's caller with the same code, message and reason as
/// it reaches a direct caller, over JSON-RPC and REST.
#[test]
fn the_remote_errors_arrive_unchanged() {
    let test = "proxy_cli the_remote_errors_arrive_unchanged";
    let Some(upstream) = upstream(test) else {
        return;
    };
    let proxy = gateway(&upstream, &[]);
    let remote_card = json(&upstream.get_ok(CARD_PATH));
    let remote_url = |binding: &str| -> String {
        remote_card["supportedInterfaces"]
            .as_array()
            .expect("interfaces")
            .iter()
            .find(|i| i["protocolBinding"] == binding)
            .and_then(|i| i["url"].as_str())
            .expect("the remote's interface")
            .to_owned()
    };
    let message = r#"{"messageId":"ferry-refuse-1","role":"ROLE_USER","parts":[{"text":"x"}]}"#;
    let rpc = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":{message}}}}}"#
    );
    let rest = format!(r#"{{"message":{message}}}"#);
    let version = [("A2A-Version", "1.0")];
    let (direct_status, direct) = http_request("POST", &remote_url("JSONRPC"), &version, &rpc);
    let (status, through) = http_request(
        "POST",
        &format!("{}/jsonrpc", proxy.base_url),
        &version,
        &rpc,
    );
    let (direct, through) = (json(&direct), json(&through));
    assert_eq!(direct_status, 200, "{direct}");
    assert_eq!(status, 200, "{through}");
    assert_eq!(direct["error"]["code"], -32602, "{direct}");
    for field in ["code", "message"] {
        assert_eq!(
            through["error"][field], direct["error"][field],
            "{through} vs {direct}"
        );
    }
    assert_eq!(
        through["error"]["data"][0]["reason"], direct["error"]["data"][0]["reason"],
        "{through} vs {direct}"
    );
    let (direct_status, direct) = http_request(
        "POST",
        &format!("{}/message:send", remote_url("HTTP+JSON")),
        &version,
        &rest,
    );
    let (status, through) = http_request(
        "POST",
        &format!("{}/rest/message:send", proxy.base_url),
        &version,
        &rest,
    );
    let (direct, through) = (json(&direct), json(&through));
    assert_eq!(status, direct_status, "{through} vs {direct}");
    for field in ["code", "status", "message"] {
        assert_eq!(
            through["error"][field], direct["error"][field],
            "{through} vs {direct}"
        );
    }
    assert_eq!(
        through["error"]["details"][0]["reason"], direct["error"]["details"][0]["reason"],
        "{through} vs {direct}"
    );
}

/// The gateway's front door stands in front of the remote: without its token a call is 401
/// and never forwarded; with it, the call goes through.
#[test]
fn the_gateways_front_door_applies() {
    let test = "proxy_cli the_gateways_front_door_applies";
    let Some(upstream) = upstream(test) else {
        return;
    };
    let proxy = gateway(&upstream, &["--token", TOKEN]);
    let send = r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}"#;
    let url = format!("{}/jsonrpc", proxy.base_url);
    let (status, body) = http_request("POST", &url, &[("A2A-Version", "1.0")], send);
    assert_eq!(status, 401, "{}", text(&body));
    let bearer = format!("Bearer {TOKEN}");
    let (status, body) = http_request(
        "POST",
        &url,
        &[("A2A-Version", "1.0"), ("Authorization", &bearer)],
        send,
    );
    assert_eq!(status, 200, "{}", text(&body));
    assert_eq!(
        json(&body)["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
}
