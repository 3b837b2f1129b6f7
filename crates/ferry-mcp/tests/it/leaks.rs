//! The leak matrix (`notes/browser.md` §2) driven over MCP: `forms_inspect` opens the matrix
//! page, and no request may reach a disallowed host while the allowed controls load.

use crate::support::leak_matrix::{assert_no_leaks, matrix_config};
use crate::support::site::TestSite;
use crate::support::{bounded, call, chromium_or_skip, session};
use ferry_forms::{FormsAgent, Isolation};
use serde_json::json;

async fn matrix_over_mcp(name: &str, isolation: Isolation) {
    if !chromium_or_skip(name) {
        return;
    }
    bounded(async {
        let site = TestSite::start().await;
        let agent = FormsAgent::new(matrix_config(&site, isolation));
        let client = session(&agent, "leak-tester").await;
        let session = &client;
        assert_no_leaks(&site, |url| async move {
            let (data, error) = call(session, "forms_inspect", json!({"url": url})).await;
            assert!(!error, "{data}");
            assert_eq!(data["state"], "completed", "{data}");
            assert_eq!(data["untrusted"], true);
            data["report"].clone()
        })
        .await;
        let _ = client.cancel().await;
        agent.pool().shutdown().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_request_reaches_a_disallowed_host_over_mcp_with_a_browser_per_session() {
    matrix_over_mcp("mcp::leaks::process", Isolation::Process).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_request_reaches_a_disallowed_host_over_mcp_with_a_context_per_session() {
    matrix_over_mcp("mcp::leaks::context", Isolation::Context).await;
}
