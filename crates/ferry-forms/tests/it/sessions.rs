//! One contextId, one session: isolation between conversations, the session cap, idle
//! close, slow pages, and a browser that dies mid-task.

use crate::agent::shop_config;
use crate::support::agent::{FormsServer, report, state, status_text};
use crate::support::site::TestSite;
use crate::support::{bounded, chromium_or_skip};
use ferry_forms::{ConversationKey, FormsConfig, Isolation};
use serde_json::json;
use std::time::{Duration, Instant};

/// The Cookie header the `/cookies` page received (it shows it in its title).
async fn cookies_seen(server: &FormsServer, site: &TestSite, context: &str) -> String {
    let result = server
        .send(
            context,
            None,
            json!({"url": site.url("shop.test", "/cookies")}),
        )
        .await;
    assert_eq!(state(&result), "TASK_STATE_COMPLETED", "{result}");
    let _ = site;
    report(&result)["title"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

async fn isolation_holds(isolation: Isolation) {
    let site = TestSite::start().await;
    let server = FormsServer::start(FormsConfig {
        isolation,
        // alice, bob and four parallel conversations.
        max_contexts: 6,
        ..shop_config(&site)
    })
    .await;
    let set = server
        .send(
            "alice",
            None,
            json!({"url": site.url("shop.test", "/set-cookie?session=alice-secret")}),
        )
        .await;
    assert_eq!(state(&set), "TASK_STATE_COMPLETED", "{set}");
    // Alice's own next page carries her cookie; Bob's never does.
    let alice = cookies_seen(&server, &site, "alice").await;
    assert!(alice.contains("alice-secret"), "{alice}");
    let bob = cookies_seen(&server, &site, "bob").await;
    assert!(
        !bob.contains("alice-secret"),
        "bob saw alice's cookie: {bob}"
    );

    // Four conversations at once, each with its own values on the same form.
    let url = site.url("shop.test", "/two-forms.html");
    let runs = (0..4).map(|i| {
        let server = &server;
        let url = url.clone();
        async move {
            let result = server
                .send(
                    &format!("par-{i}"),
                    None,
                    json!({"url": url, "form": 1, "values": {"Email": format!("user{i}@example.com")}}),
                )
                .await;
            (i, result)
        }
    });
    for (i, result) in futures_util::future::join_all(runs).await {
        assert_eq!(state(&result), "TASK_STATE_COMPLETED", "{result}");
        let fields = report(&result)["fields"].to_string();
        assert!(fields.contains(&format!("user{i}@example.com")), "{fields}");
        for j in (0..4).filter(|j| *j != i) {
            assert!(
                !fields.contains(&format!("user{j}@")),
                "conversation {i} saw {j}: {fields}"
            );
        }
    }
    server.agent().pool().shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversations_are_isolated_with_a_browser_each() {
    if chromium_or_skip("sessions::isolation_process") {
        bounded(isolation_holds(Isolation::Process)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversations_are_isolated_with_a_context_each() {
    if chromium_or_skip("sessions::isolation_context") {
        bounded(isolation_holds(Isolation::Context)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_beyond_the_cap_is_refused_with_a_retry_hint_and_idle_ones_close() {
    if !chromium_or_skip("sessions::cap_and_idle") {
        return;
    }
    bounded(async {
        let site = TestSite::start().await;
        // An idle time no turn of this test reaches: closing the idle sessions is the test's
        // move below, not a timer racing two cold browser starts.
        let server = FormsServer::start(FormsConfig {
            max_contexts: 2,
            idle: Duration::from_secs(3600),
            ..shop_config(&site)
        })
        .await;
        let url = site.url("shop.test", "/signup.html");
        for context in ["one", "two"] {
            let ok = server.send(context, None, json!({"url": url})).await;
            assert_eq!(state(&ok), "TASK_STATE_COMPLETED", "{ok}");
        }
        let pid = server
            .agent()
            .pool()
            .browser_pid(&ConversationKey::context("one"))
            .expect("a browser per conversation");
        // A third conversation is refused at once (a 503 while the others hold their slots),
        // not queued behind them.
        let response = server
            .http_post_jsonrpc_send("three", json!({"url": url}))
            .await;
        assert_eq!(response.0, 503, "{:?}", response);
        assert!(response.1.is_some(), "Retry-After header");
        assert!(response.2.contains("in use"), "{}", response.2);
        // A known conversation still gets served.
        let again = server.send("one", None, json!({"url": url})).await;
        assert_eq!(state(&again), "TASK_STATE_COMPLETED", "{again}");
        // Idle sessions close: the pool empties, and the browsers have exited when it returns.
        assert_eq!(
            server.agent().pool().close_idle_for(Duration::ZERO).await,
            2
        );
        assert!(server.agent().pool().is_empty());
        assert!(
            ferry_browser::live_group_members(pid).is_empty(),
            "the idle browser's processes remain"
        );
        // And now the third conversation fits.
        let three = server.send("three", None, json!({"url": url})).await;
        assert_eq!(state(&three), "TASK_STATE_COMPLETED", "{three}");
        server.agent().pool().shutdown().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_never_finishes_loading_is_bounded_by_the_navigation_timeout() {
    if !chromium_or_skip("sessions::slow_page") {
        return;
    }
    bounded(async {
        let site = TestSite::start().await;
        let server = FormsServer::start(FormsConfig {
            navigation_timeout: Duration::from_secs(2),
            ..shop_config(&site)
        })
        .await;
        let started = Instant::now();
        let result = server
            .send("slow", None, json!({"url": site.url("shop.test", "/slow")}))
            .await;
        let took = started.elapsed();
        assert!(took < Duration::from_secs(8), "took {took:?}");
        assert_eq!(state(&result), "TASK_STATE_FAILED", "{result}");
        assert!(
            status_text(&result).contains("did not finish loading"),
            "{}",
            status_text(&result)
        );
        // The session is still usable.
        let next = server
            .send(
                "slow",
                None,
                json!({"url": site.url("shop.test", "/signup.html")}),
            )
            .await;
        assert_eq!(state(&next), "TASK_STATE_COMPLETED", "{next}");
        server.agent().pool().shutdown().await;
    })
    .await;
}

/// The browser process group serving `context`: its own (process isolation) or the shared
/// one (context isolation).
fn serving_group(server: &FormsServer, context: &str, isolation: Isolation) -> u32 {
    let pool = server.agent().pool();
    let pid = match isolation {
        Isolation::Process => pool.browser_pid(&ConversationKey::context(context)),
        Isolation::Context => pool.shared_browser_pid(),
    }
    .expect("a launched browser");
    // Never signal a group that is not a browser's (group 0 or 1, or our own).
    assert!(
        pid > 1 && pid != std::process::id(),
        "odd browser pid {pid}"
    );
    pid
}

async fn crash_and_recover(isolation: Isolation) {
    let site = TestSite::start().await;
    let server = std::sync::Arc::new(
        FormsServer::start(FormsConfig {
            navigation_timeout: Duration::from_secs(30),
            isolation,
            ..shop_config(&site)
        })
        .await,
    );
    let signup = json!({"url": site.url("shop.test", "/signup.html")});
    let first = server.send("crash", None, signup.clone()).await;
    assert_eq!(state(&first), "TASK_STATE_COMPLETED", "{first}");
    let pid = serving_group(&server, "crash", isolation);
    // A turn that hangs on a slow page, and the browser killed under it.
    let pending = {
        let server = server.clone();
        let url = site.url("shop.test", "/slow");
        tokio::spawn(async move { server.send("crash", None, json!({"url": url})).await })
    };
    // The browser is loading the slow page (the site has its request) when it is killed.
    site.requested("shop.test", "/slow").await;
    let killed = std::process::Command::new("kill")
        // `--`: without it, procps reads the negative group id as an option.
        .args(["-s", "KILL", "--", &format!("-{pid}")])
        .status()
        .expect("kill");
    assert!(killed.success());
    let failed = pending.await.expect("join");
    assert_eq!(state(&failed), "TASK_STATE_FAILED", "{failed}");
    assert!(
        status_text(&failed).contains("ended unexpectedly"),
        "{}",
        status_text(&failed)
    );
    let why = crate::support::agent::report(&failed)["warnings"].to_string();
    assert!(
        why.contains("ended unexpectedly"),
        "every task carries its report: {failed}"
    );
    // The next message gets a fresh browser.
    let next = server.send("crash", None, signup).await;
    assert_eq!(state(&next), "TASK_STATE_COMPLETED", "{next}");
    assert_ne!(serving_group(&server, "crash", isolation), pid);
    server.agent().pool().shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_that_dies_mid_task_fails_the_task_and_is_replaced() {
    if chromium_or_skip("sessions::crash_process") {
        bounded(crash_and_recover(Isolation::Process)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_browser_that_dies_is_relaunched_for_the_next_message() {
    if chromium_or_skip("sessions::crash_context") {
        bounded(crash_and_recover(Isolation::Context)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shared_browser_closes_when_its_last_conversation_does() {
    if !chromium_or_skip("sessions::shared_idle") {
        return;
    }
    bounded(async {
        let site = TestSite::start().await;
        let server = FormsServer::start(FormsConfig {
            isolation: Isolation::Context,
            idle: Duration::from_secs(1),
            ..shop_config(&site)
        })
        .await;
        let url = site.url("shop.test", "/signup.html");
        let first = server.send("shared-1", None, json!({"url": url})).await;
        assert_eq!(state(&first), "TASK_STATE_COMPLETED", "{first}");
        let pid = serving_group(&server, "shared-1", Isolation::Context);
        let deadline = Instant::now() + Duration::from_secs(10);
        while server.agent().pool().shared_browser_pid().is_some() {
            assert!(Instant::now() < deadline, "the idle shared browser stayed");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while !ferry_browser::live_group_members(pid).is_empty() {
            assert!(Instant::now() < deadline, "its processes remain");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // The next conversation starts a new one.
        let next = server.send("shared-2", None, json!({"url": url})).await;
        assert_eq!(state(&next), "TASK_STATE_COMPLETED", "{next}");
        assert_ne!(serving_group(&server, "shared-2", Isolation::Context), pid);
        server.agent().pool().shutdown().await;
    })
    .await;
}
