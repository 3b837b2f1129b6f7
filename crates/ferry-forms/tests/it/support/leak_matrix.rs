//! The leak matrix of `notes/browser.md` §2, whatever face drives the agent (A2A here, MCP in
//! ferry-mcp's tests, which include this file): the agent's configuration for a run, and the
//! check of the test site's log after the matrix page was opened.

use crate::support::site::TestSite;
use ferry_forms::{FormsConfig, Isolation};
use serde_json::Value;
use std::future::Future;
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

/// Opens the matrix page with `open` (which inspects the URL it is given in a fresh
/// conversation and returns the turn's report) and checks the site's log: nothing reached a
/// disallowed host, every control loaded, and the report lists the refusals.
pub(crate) async fn assert_no_leaks<F, Fut>(site: &TestSite, open: F)
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = Value>,
{
    let stun = UdpSocket::bind("127.0.0.1:0").await.expect("udp");
    let stun_port = stun.local_addr().expect("addr").port();
    let url = site.url("allowed.test", &format!("/leaks.html?stun={stun_port}"));
    let report = open(url).await;
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
    let blocked = report["blocked"].to_string();
    assert!(blocked.contains("evil.test"), "blocked list: {blocked}");
}
