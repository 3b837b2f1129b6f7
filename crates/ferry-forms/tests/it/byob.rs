//! "Bring your own browser" (`--browser cdp`): the agent drives a Chromium someone else
//! started, registered through the cdp-config/v1 extension, in a browser context of its own
//! with the enforcing proxy attached, and disposes that context afterwards.

use crate::leaks::over_a2a;
use crate::support::agent::{FormsServer, state, status_text};
use crate::support::leak_matrix::{assert_no_leaks, matrix_config};
use crate::support::site::TestSite;
use crate::support::{bounded, chromium_or_skip};
use ferry_browser::Browser;
use ferry_forms::{BrowserSource, FormsConfig, Isolation};
use ferry_server::ServerConfig;
use serde_json::json;
use std::sync::Arc;

/// A Chromium started the way an orchestrator would, without any of ferry's flags (no proxy,
/// no resolver belt, WebRTC left on): DevTools on a loopback port, a throwaway profile.
struct OutsideBrowser {
    child: std::process::Child,
    profile: std::path::PathBuf,
    ws_url: String,
}

impl OutsideBrowser {
    fn start(site: &TestSite) -> OutsideBrowser {
        use std::io::BufRead;
        let binary = ferry_browser::find_chromium(None).expect("chromium");
        let profile = std::env::temp_dir().join(format!(
            "ferry-forms-outside-{}-{}",
            std::process::id(),
            site.port()
        ));
        std::fs::create_dir_all(&profile).expect("profile");
        let mut command = std::process::Command::new(binary);
        command
            .args(["--headless", "--remote-debugging-port=0", "--no-first-run"])
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(matrix_config(site, Isolation::Context).chrome_args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        if std::fs::metadata("/proc/self")
            .is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        {
            command.arg("--no-sandbox");
        }
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command.spawn().expect("chromium starts");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = std::io::BufReader::new(stderr).lines();
        let ws_url = loop {
            let line = lines.next().expect("devtools banner").expect("stderr line");
            if let Some(url) = line.trim().strip_prefix("DevTools listening on ") {
                break url.to_owned();
            }
        };
        // Keep draining stderr so Chromium never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        OutsideBrowser {
            child,
            profile,
            ws_url,
        }
    }
}

impl Drop for OutsideBrowser {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-s", "KILL", "--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// `http://127.0.0.1:PORT` of a `ws://127.0.0.1:PORT/devtools/browser/…` URL.
fn http_of(ws: &str) -> String {
    let rest = ws.trim_start_matches("ws://");
    format!("http://{}", rest.split('/').next().unwrap_or_default())
}

/// Browser contexts other than the default one.
async fn contexts(ws: &str) -> usize {
    let browser = Browser::connect(ws).await.expect("connect");
    let answer = browser
        .cdp()
        .call("Target.getBrowserContexts", json!({}), None)
        .await
        .expect("getBrowserContexts");
    answer["browserContextIds"].as_array().map_or(0, Vec::len)
}

fn byob(site: &TestSite) -> FormsConfig {
    FormsConfig {
        browser: BrowserSource::Cdp { name: None },
        ..matrix_config(site, Isolation::Context)
    }
}

async fn cdp_server(site: &TestSite) -> FormsServer {
    FormsServer::start_with_extensions(
        byob(site),
        ServerConfig::default(),
        vec![Arc::new(ferry_cdp_config::CdpConfig::new(false))],
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_drives_a_registered_browser_by_ws_url_with_the_allowlist_enforced() {
    if !chromium_or_skip("byob::ws") {
        return;
    }
    bounded(async {
        let site = TestSite::start().await;
        let chromium = OutsideBrowser::start(&site);
        let ws = chromium.ws_url.clone();
        let server = cdp_server(&site).await;
        // The http_url is dead: only the ws_url can work.
        let status = server
            .register_cdp(
                json!({"name": "chromium", "http_url": "http://127.0.0.1:9", "ws_url": ws}),
            )
            .await;
        assert_eq!(status, 200);
        let before = contexts(&ws).await;
        assert_no_leaks(&site, |url| over_a2a(&server, "byob-ws", url)).await;
        assert_eq!(
            contexts(&ws).await,
            before + 1,
            "one context for the conversation"
        );
        // The conversation ends: its context is disposed; the browser itself stays.
        server.agent().pool().shutdown().await;
        assert_eq!(contexts(&ws).await, before, "the context is gone");
        drop(chromium);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_finds_a_registered_browser_by_http_url_and_fails_closed_without_one() {
    if !chromium_or_skip("byob::http") {
        return;
    }
    bounded(async {
        let site = TestSite::start().await;
        let chromium = OutsideBrowser::start(&site);
        let ws = chromium.ws_url.clone();
        let server = cdp_server(&site).await;

        // No endpoint registered: an infrastructure failure, and no browser launched.
        let none = server
            .send("h0", None, json!({"url": site.url("allowed.test", "/signup.html")}))
            .await;
        assert_eq!(state(&none), "TASK_STATE_FAILED", "{none}");
        let parts = none["task"]["status"]["message"]["parts"].to_string();
        assert!(parts.contains("infra_error") && parts.contains("cdp.no_endpoint"), "{parts}");
        // Still a task with both artifacts, saying why.
        let data = crate::support::agent::report(&none);
        assert!(data["warnings"].to_string().contains("cdp.no_endpoint"), "{none}");

        // A stale ws_url (the browser restarted) and a live http_url.
        let status = server
            .register_cdp(json!({
                "name": "chromium",
                "http_url": http_of(&ws),
                "ws_url": "ws://127.0.0.1:9/devtools/browser/gone"
            }))
            .await;
        assert_eq!(status, 200);
        let result = server
            .send("h1", None, json!({"url": site.url("allowed.test", "/signup.html"), "values": {"Email": "ada@example.com"}}))
            .await;
        // It reached the page and filled it: the rest of the form is still missing.
        assert_eq!(state(&result), "TASK_STATE_INPUT_REQUIRED", "{result}");
        assert!(status_text(&result).contains("Password"), "{}", status_text(&result));
        let filled = crate::support::agent::report(&result)["filled"].to_string();
        assert!(filled.contains("Email"), "{filled}");
        server.agent().pool().shutdown().await;
        drop(chromium);
    })
    .await;
}
