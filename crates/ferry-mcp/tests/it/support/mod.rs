//! Helpers: ferry-forms' test site and leak matrix (the same files), an MCP client.

#[path = "../../../../ferry-forms/tests/it/support/leak_matrix.rs"]
pub(crate) mod leak_matrix;
#[path = "../../../../ferry-forms/tests/it/support/site.rs"]
pub(crate) mod site;

use ferry_forms::FormsAgent;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use serde_json::Value;
use std::time::Duration;

pub(crate) use ferry_testkit::chromium_or_skip;

/// An upper bound for every test, so a hung browser fails the test instead of the suite.
const TEST_TIMEOUT: Duration = Duration::from_secs(90);

/// Runs `body` under [`TEST_TIMEOUT`].
pub(crate) async fn bounded<F: std::future::Future<Output = ()>>(body: F) {
    tokio::time::timeout(TEST_TIMEOUT, body)
        .await
        .expect("test exceeded its time limit");
}

/// An MCP client connected to a session of `agent` for `caller`, over an in-process byte
/// stream (the newline-delimited JSON-RPC of stdio).
pub(crate) async fn session(agent: &FormsAgent, caller: &str) -> RunningService<RoleClient, ()> {
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    let server = ferry_mcp::FormsMcp::for_caller(agent.clone(), Some(caller.to_owned()));
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    ().serve(client_end).await.expect("the MCP session starts")
}

/// Calls `tool` with `arguments`; the structured content, and whether it is an error.
pub(crate) async fn call(
    client: &RunningService<RoleClient, ()>,
    tool: &'static str,
    arguments: Value,
) -> (Value, bool) {
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    let result = client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments))
        .await
        .expect("tools/call answers");
    (
        result.structured_content.unwrap_or(Value::Null),
        result.is_error.unwrap_or(false),
    )
}
