//! The leak matrix of `notes/browser.md` §2 through the whole agent: a page on an allowed
//! host tries more than 30 ways to reach a disallowed one (subresources, scripted requests,
//! WebSockets, frames, cross-origin frames, every kind of worker, popups, form posts,
//! redirects, IP literals, WebRTC). The disallowed names map to the same test server, which
//! logs every request: it must log none for them, while the allowed controls load. (The
//! matrix itself is `support::leak_matrix`, shared with the MCP face's tests.)

use crate::support::agent::{FormsServer, report, state};
use crate::support::leak_matrix::{assert_no_leaks, matrix_config};
use crate::support::site::TestSite;
use crate::support::{bounded, chromium_or_skip};
use ferry_forms::{FormsConfig, Isolation};
use serde_json::json;

/// Opens the matrix page over A2A in conversation `context`; the turn's report.
pub(crate) async fn over_a2a(
    server: &FormsServer,
    context: &str,
    url: String,
) -> serde_json::Value {
    let result = server.send(context, None, json!({"url": url})).await;
    assert_eq!(state(&result), "TASK_STATE_COMPLETED", "{result}");
    report(&result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_request_reaches_a_disallowed_host_with_a_browser_per_conversation() {
    if !chromium_or_skip("leaks::process") {
        return;
    }
    bounded(async {
        let site = TestSite::start().await;
        let server = FormsServer::start(matrix_config(&site, Isolation::Process)).await;
        assert_no_leaks(&site, |url| over_a2a(&server, "leaks-process", url)).await;
        server.agent().pool().shutdown().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_request_reaches_a_disallowed_host_with_a_context_per_conversation() {
    if !chromium_or_skip("leaks::context") {
        return;
    }
    bounded(async {
        let site = TestSite::start().await;
        let server = FormsServer::start(matrix_config(&site, Isolation::Context)).await;
        assert_no_leaks(&site, |url| over_a2a(&server, "leaks-context", url)).await;
        server.agent().pool().shutdown().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_allowlist_local_and_metadata_addresses_are_refused() {
    if !chromium_or_skip("leaks::public_only") {
        return;
    }
    bounded(async {
        let site = TestSite::start().await;
        let config = FormsConfig {
            resolve: vec![
                ("intranet.test".into(), "127.0.0.1".parse().expect("ip")),
                ("meta.test".into(), "169.254.169.254".parse().expect("ip")),
            ],
            ..FormsConfig::default()
        };
        let server = FormsServer::start(config).await;
        for (context, url) in [
            ("p1", site.url("intranet.test", "/signup.html")),
            ("p1", site.url("127.0.0.1", "/signup.html")),
            ("p1", "http://meta.test/latest/meta-data/".to_owned()),
        ] {
            let result = server.send(context, None, json!({"url": url})).await;
            assert_eq!(state(&result), "TASK_STATE_FAILED", "{url}: {result}");
            let text = crate::support::agent::status_text(&result);
            assert!(text.contains("blocked"), "{url}: {text}");
        }
        assert!(site.requests().is_empty(), "{:?}", site.requests());
        server.agent().pool().shutdown().await;
    })
    .await;
}
