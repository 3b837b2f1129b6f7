//! The leak matrix of `notes/browser.md` §2 through the whole agent: a page on an allowed
//! host tries more than 30 ways to reach a disallowed one (subresources, scripted requests,
//! WebSockets, frames, cross-origin frames, every kind of worker, popups, form posts,
//! redirects, IP literals, WebRTC). The disallowed names map to the same test server, which
//! logs every request: it must log none for them, while the allowed controls load.

use crate::support::agent::{FormsServer, report, state};
use crate::support::site::TestSite;
use crate::support::{bounded, chromium_or_skip};
use ferry_forms::{FormsConfig, Isolation};
use serde_json::json;
use std::time::Duration;
use tokio::net::UdpSocket;

/// Names the matrix uses; all resolve to 127.0.0.1 in the proxy.
const NAMES: [&str; 3] = ["allowed.test", "allowed2.test", "evil.test"];

/// The agent configuration of a matrix run against `site`.
pub(crate) fn matrix_config(site: &TestSite, isolation: Isolation) -> FormsConfig {
    FormsConfig {
        allow_domains: vec!["allowed.test".into(), "allowed2.test".into()],
        // The test server is on loopback; the allowlist still decides which names.
        allow_private_networks: true,
        resolve: NAMES
            .iter()
            .map(|n| ((*n).to_owned(), "127.0.0.1".parse().expect("ip")))
            .collect(),
        isolation,
        chrome_args: vec![
            // Service workers need a secure context; plain-http test hosts are declared one.
            format!(
                "--unsafely-treat-insecure-origin-as-secure=http://allowed.test:{0},http://allowed2.test:{0}",
                site.port()
            )
            .into(),
            "--disable-popup-blocking".into(),
        ],
        ..FormsConfig::default()
    }
}

/// What the matrix page loads from the allowed hosts: if one is missing, the test proves
/// nothing about the vectors next to it.
const CONTROLS: [&str; 9] = [
    "k=ok-img",
    "k=ok-fetch",
    "k=ok-ws",
    "leak-inner.html",
    "k=ok-oopif-img",
    "k=ok-worker-fetch",
    "k=ok-shared-fetch",
    "k=ok-sw-fetch",
    "k=popup-allowed",
];

/// Runs the matrix page in a fresh conversation and checks the server's log.
pub(crate) async fn assert_no_leaks(server: &FormsServer, site: &TestSite, context: &str) {
    let stun = UdpSocket::bind("127.0.0.1:0").await.expect("udp");
    let stun_port = stun.local_addr().expect("addr").port();
    let url = site.url("allowed.test", &format!("/leaks.html?stun={stun_port}"));
    let result = server.send(context, None, json!({"url": url})).await;
    assert_eq!(state(&result), "TASK_STATE_COMPLETED", "{result}");
    // The page keeps working after the turn (workers, the popup, the late navigation): wait
    // until every control has loaded and the page has announced its last vector, the top-level
    // navigation away.
    // Bounded so that a control that never loads fails below, naming it.
    let all_tried = site.until(|log| {
        let on_allowed = |needle: &str| {
            log.iter().any(|r| {
                (r.host == "allowed.test" || r.host == "allowed2.test") && r.path.contains(needle)
            })
        };
        CONTROLS.iter().all(|control| on_allowed(control)) && on_allowed("k=last-vector")
    });
    let _ = tokio::time::timeout(Duration::from_secs(30), all_tried).await;

    for host in ["evil.test", "127.0.0.1", "localhost", "::1", "[::1]"] {
        let leaked: Vec<String> = site
            .requests_for(host)
            .iter()
            .map(|r| r.path.clone())
            .collect();
        assert!(leaked.is_empty(), "requests reached {host}: {leaked:?}");
    }
    let mut datagram = [0u8; 512];
    let udp = tokio::time::timeout(Duration::from_millis(200), stun.recv_from(&mut datagram)).await;
    assert!(udp.is_err(), "a STUN datagram went around the proxy");

    let reached: Vec<String> = site
        .requests_for("allowed.test")
        .iter()
        .chain(site.requests_for("allowed2.test").iter())
        .map(|r| r.path.clone())
        .collect();
    for control in CONTROLS {
        assert!(
            reached.iter().any(|p| p.contains(control)),
            "control {control} did not load; allowed hosts saw {reached:?}"
        );
    }
    // The refusals are in the result, never silent.
    let blocked = report(&result)["blocked"].to_string();
    assert!(blocked.contains("evil.test"), "blocked list: {blocked}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_request_reaches_a_disallowed_host_with_a_browser_per_conversation() {
    if !chromium_or_skip("leaks::process") {
        return;
    }
    bounded(async {
        let site = TestSite::start().await;
        let server = FormsServer::start(matrix_config(&site, Isolation::Process)).await;
        assert_no_leaks(&server, &site, "leaks-process").await;
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
        assert_no_leaks(&server, &site, "leaks-context").await;
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
