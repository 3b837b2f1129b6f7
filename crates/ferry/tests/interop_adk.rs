//! Google ADK against a real `ferry serve`: `interop/python/adk_client.py` runs ADK's
//! `RemoteA2aAgent` (google-adk 2.13, a2a-sdk 1.3; `$FERRY_PYTHON_ADK` or
//! `<workspace>/.venv-adk`, made by `scripts/test.sh`) in an ADK runner whose only agent is
//! the ferry agent. Skipped loudly outside CI when the venv is missing, a failure in CI.
//!
//! ADK checks every interface URL on a card it fetches: each must be http(s) on the card's
//! own origin. The spec's gRPC interface is `host:port`, so:
//!
//! - against ferry's default card (gRPC listed), ADK refuses the card and names the gRPC
//!   entry: a canary that says when ADK changes its rule;
//! - with `--grpc-off-card` (gRPC still served, not listed), ADK calls ferry over JSON-RPC
//!   and HTTP+JSON, blocking and streaming: one-turn tasks, a conversation of two turns on
//!   one task, a streamed artifact;
//! - in a server of several agents, an agent other than the default lists no gRPC (gRPC
//!   reaches the default agent only), so ADK calls it with no flag at all.

mod support;

use std::time::Duration;
use support::{Sdk, Server, run_script, scratch_dir, write};

/// Hard limit for one run of the script (which has its own 60 s limit).
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `adk_client.py` with `args` (after `--card-url card_url`); asserts it succeeded.
fn adk_client(test: &str, server: &Server, card_url: &str, args: &[&str]) {
    let Some(python) =
        support::sdk_python_or_skip(Sdk::Adk, test, "google.adk.agents.remote_a2a_agent")
    else {
        return;
    };
    let mut all = vec!["--card-url", card_url];
    all.extend_from_slice(args);
    let run = run_script(&python, "interop/python/adk_client.py", all, SCRIPT_TIMEOUT);
    run.assert_passed(test, server);
    assert!(
        run.stdout.contains("ok: "),
        "{test}: no check ran\n{}",
        run.stdout
    );
    println!("{}", run.stdout);
}

fn well_known(base_url: &str) -> String {
    format!("{base_url}/.well-known/agent-card.json")
}

#[test]
fn adk_refuses_the_default_card_for_its_grpc_entry() {
    let server = Server::start(["--agent", "conformance", "--bind", "127.0.0.1:0"]);
    let grpc_target = server
        .base_url
        .trim_start_matches("http://")
        .trim_end_matches('/');
    adk_client(
        "interop_adk default card",
        &server,
        &well_known(&server.base_url),
        &["--expect", "refused", "--refused-url", grpc_target],
    );
}

/// gRPC off the card: ADK over each HTTP binding, blocking and streaming.
#[test]
fn adk_calls_ferry_with_grpc_off_the_card() {
    let server = Server::start([
        "--agent",
        "conformance",
        "--bind",
        "127.0.0.1:0",
        "--grpc-off-card",
    ]);
    let card = well_known(&server.base_url);
    for transport in ["JSONRPC", "HTTP+JSON"] {
        adk_client(
            &format!("interop_adk {transport} blocking"),
            &server,
            &card,
            &["--transport", transport],
        );
        adk_client(
            &format!("interop_adk {transport} streaming"),
            &server,
            &card,
            &["--transport", transport, "--streaming"],
        );
    }
}

/// A server of several agents: an agent other than the default has no gRPC interface, so
/// its card suits ADK as it is.
#[test]
fn adk_calls_a_hosted_agent_that_is_not_the_default() {
    let dir = scratch_dir("interop-adk-hosting");
    let config = write(
        &dir,
        "ferry.toml",
        "default_agent = \"echo\"\n\n\
         [[agents]]\nid = \"echo\"\nkind = \"echo\"\n\n\
         [[agents]]\nid = \"kit\"\nkind = \"conformance\"\n",
    );
    let config = config.to_str().expect("a UTF-8 path");
    let server = Server::start(["--config", config, "--bind", "127.0.0.1:0"]);
    // The card line names the first agent's card; the root is before `/agents/`.
    let root = server
        .base_url
        .split_once("/agents/")
        .map_or(server.base_url.as_str(), |(root, _)| root);
    let card = well_known(&format!("{root}/agents/kit"));
    adk_client(
        "interop_adk hosted agent",
        &server,
        &card,
        &["--transport", "JSONRPC", "--streaming"],
    );
}
