//! The enforcing proxy: a raw HTTP client through it, then a real Chromium context whose
//! only way out is the proxy. Fake names (`allowed.test`, `blocked.test`) are mapped to
//! 127.0.0.1 in the proxy's static resolve map; a logging server on 127.0.0.1 proves that
//! refused requests never reach it.

use crate::support::{NAV_TIMEOUT, TEST_TIMEOUT, chromium_or_skip, read_head};
use ferry_browser::cdp::CreateBrowserContext;
use ferry_browser::peer::GroupOwner;
use ferry_browser::{
    Allowlist, BlockReason, Browser, LaunchOptions, Proxy, ProxyConfig, ProxyHandle,
};
use ferry_net::IpPolicy;
use serde_json::json;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Runs `body` under [`TEST_TIMEOUT`].
async fn bounded<F: std::future::Future<Output = ()>>(body: F) {
    tokio::time::timeout(TEST_TIMEOUT, body)
        .await
        .expect("test exceeded its time limit");
}

/// A server on 127.0.0.1 that logs the `Host` header, path and raw head of every request.
/// `/leak` is a page that loads an image from `blocked.test`; everything else is a blank
/// page titled "ferry test".
struct Site {
    addr: SocketAddr,
    log: Arc<Mutex<Vec<(String, String, String)>>>,
}

impl Site {
    async fn start() -> Site {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let log = Arc::new(Mutex::new(Vec::new()));
        let seen = log.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(answer(stream, addr.port(), seen.clone()));
            }
        });
        Site { addr, log }
    }

    /// Requests whose Host header names `host` (any port).
    fn requests_for(&self, host: &str) -> Vec<String> {
        self.log
            .lock()
            .expect("log")
            .iter()
            .filter(|(h, _, _)| h.split(':').next() == Some(host))
            .map(|(_, path, _)| path.clone())
            .collect()
    }
}

async fn answer(mut stream: TcpStream, port: u16, log: Arc<Mutex<Vec<(String, String, String)>>>) {
    let Some(head) = read_head(&mut stream).await else {
        return;
    };
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let host = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("host")
                .then(|| value.trim().to_ascii_lowercase())
        })
        .unwrap_or_default();
    log.lock()
        .expect("log")
        .push((host, path.clone(), head.clone()));
    let body = if path == "/leak" {
        format!(
            "<!doctype html><html><head><title>leak</title></head><body>\
             <img id=img src=\"http://blocked.test:{port}/img\"></body></html>"
        )
    } else {
        "<!doctype html><html><head><title>ferry test</title></head><body></body></html>".to_owned()
    };
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// A proxy allowing only `allowed.test`, with both fake names mapped to 127.0.0.1 and
/// private addresses allowed (so loopback is reachable), plus `meta.test` on the metadata
/// address.
async fn test_proxy() -> ProxyHandle {
    let loopback = vec!["127.0.0.1".parse().expect("ip")];
    let config = ProxyConfig::new(Allowlist::new(["allowed.test"]).expect("allowlist"))
        .policy(IpPolicy::public_only().allow_private(true))
        .resolve("allowed.test", loopback.clone())
        .resolve("blocked.test", loopback)
        .resolve(
            "meta.allowed.test",
            vec!["169.254.169.254".parse().expect("ip")],
        );
    Proxy::start(config).await.expect("proxy")
}

/// Sends `request` to the proxy and reads until the status line and headers are in,
/// returning the socket (for a tunnel) and what was read.
async fn send(proxy: SocketAddr, request: &str) -> (TcpStream, String) {
    let mut stream = TcpStream::connect(proxy).await.expect("connect proxy");
    stream
        .write_all(request.as_bytes())
        .await
        .expect("write request");
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
    (stream, String::from_utf8_lossy(&seen).into_owned())
}

/// Reads the rest of a response whose server closes the connection.
async fn read_to_end(mut stream: TcpStream, mut text: String) -> String {
    let mut rest = Vec::new();
    let _ = stream.read_to_end(&mut rest).await;
    text.push_str(&String::from_utf8_lossy(&rest));
    text
}

#[tokio::test]
async fn plain_http_requests_are_forwarded_or_refused_with_403() {
    bounded(async {
        let site = Site::start().await;
        let proxy = test_proxy().await;
        let port = site.addr.port();

        let (stream, head) = send(
            proxy.addr(),
            &format!(
                "GET http://allowed.test:{port}/hello HTTP/1.1\r\nHost: allowed.test:{port}\r\nConnection: close\r\n\r\n"
            ),
        )
        .await;
        let text = read_to_end(stream, head).await;
        assert!(text.starts_with("HTTP/1.1 200"), "{text}");
        assert!(text.contains("<title>ferry test</title>"), "{text}");
        assert_eq!(site.requests_for("allowed.test"), ["/hello"]);

        // The Host header is replaced by the checked target; userinfo is dropped.
        let (stream, head) = send(
            proxy.addr(),
            &format!(
                "GET http://user:pw@allowed.test:{port}/again?q=1 HTTP/1.1\r\nHost: blocked.test\r\nConnection: close\r\n\r\n"
            ),
        )
        .await;
        let text = read_to_end(stream, head).await;
        assert!(text.starts_with("HTTP/1.1 200"), "{text}");
        assert_eq!(site.requests_for("allowed.test"), ["/hello", "/again?q=1"]);

        let (stream, head) = send(
            proxy.addr(),
            &format!(
                "GET http://blocked.test:{port}/x HTTP/1.1\r\nHost: blocked.test:{port}\r\nConnection: close\r\n\r\n"
            ),
        )
        .await;
        let text = read_to_end(stream, head).await;
        assert!(text.starts_with("HTTP/1.1 403"), "{text}");
        assert!(
            text.contains("blocked.test") && text.contains("allowlist"),
            "{text}"
        );
        assert!(site.requests_for("blocked.test").is_empty());

        // Allowed by name, but the name resolves to the metadata address.
        let (stream, head) = send(
            proxy.addr(),
            &format!("GET http://meta.allowed.test:{port}/ HTTP/1.1\r\nConnection: close\r\n\r\n"),
        )
        .await;
        let text = read_to_end(stream, head).await;
        assert!(text.starts_with("HTTP/1.1 403"), "{text}");

        // An origin-form request is not a proxy request.
        let (stream, head) = send(proxy.addr(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n").await;
        drop(stream);
        assert!(head.starts_with("HTTP/1.1 400"), "{head}");

        let blocked = proxy.blocked();
        assert_eq!(blocked.len(), 2, "{blocked:?}");
        assert_eq!(blocked[0].target, format!("http://blocked.test:{port}/x"));
        assert_eq!(blocked[0].host, "blocked.test");
        assert_eq!(blocked[0].reason, BlockReason::NotAllowed);
        assert!(matches!(blocked[1].reason, BlockReason::Metadata { .. }));
        assert_eq!(site.log.lock().expect("log").len(), 2);
    })
    .await;
}

#[tokio::test]
async fn connect_tunnels_to_allowed_hosts_and_refuses_the_rest() {
    bounded(async {
        let site = Site::start().await;
        let proxy = test_proxy().await;
        let port = site.addr.port();

        let (mut tunnel, head) = send(
            proxy.addr(),
            &format!("CONNECT allowed.test:{port} HTTP/1.1\r\nHost: allowed.test:{port}\r\n\r\n"),
        )
        .await;
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        tunnel
            .write_all(
                b"GET /tunnelled HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n",
            )
            .await
            .expect("write through tunnel");
        let text = read_to_end(tunnel, String::new()).await;
        assert!(text.contains("<title>ferry test</title>"), "{text}");
        assert_eq!(site.requests_for("allowed.test"), ["/tunnelled"]);

        // An open tunnel ends when the proxy is dropped.
        let upstream = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let upstream_port = upstream.local_addr().expect("addr").port();
        let (mut open_tunnel, head) = send(
            proxy.addr(),
            &format!("CONNECT allowed.test:{upstream_port} HTTP/1.1\r\n\r\n"),
        )
        .await;
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        let (_held, _) = upstream.accept().await.expect("tunnel dialed");

        for target in [
            format!("blocked.test:{port}"),
            format!("127.0.0.1:{port}"),
            format!("BLOCKED.test.:{port}"),
        ] {
            let (stream, head) = send(
                proxy.addr(),
                &format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n"),
            )
            .await;
            drop(stream);
            assert!(head.starts_with("HTTP/1.1 403"), "{target}: {head}");
        }
        assert_eq!(site.log.lock().expect("log").len(), 1);
        let hosts: Vec<String> = proxy.blocked().into_iter().map(|b| b.host).collect();
        assert_eq!(hosts, ["blocked.test", "127.0.0.1", "blocked.test"]);
        drop(proxy);
        let mut buf = [0u8; 16];
        let read = tokio::time::timeout(Duration::from_secs(5), open_tunnel.read(&mut buf))
            .await
            .expect("tunnel still open after the proxy was dropped");
        assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    })
    .await;
}

#[tokio::test]
async fn without_an_allowlist_the_ip_policy_refuses_local_addresses() {
    bounded(async {
        let site = Site::start().await;
        let proxy = Proxy::start(ProxyConfig::new(Allowlist::any()))
            .await
            .expect("proxy");
        let port = site.addr.port();
        for host in [
            "127.0.0.1",
            "localhost",
            "[::1]",
            "[::ffff:127.0.0.1]",
            "0.0.0.0",
        ] {
            let (stream, head) = send(
                proxy.addr(),
                &format!("GET http://{host}:{port}/ HTTP/1.1\r\nConnection: close\r\n\r\n"),
            )
            .await;
            drop(stream);
            assert!(head.starts_with("HTTP/1.1 403"), "{host}: {head}");
        }
        assert!(site.log.lock().expect("log").is_empty());
        assert_eq!(proxy.blocked().len(), 5);
        let addr = proxy.addr();
        // Stopping the handle closes the listener; `stop` returns once it is closed.
        proxy.stop().await;
        assert!(TcpStream::connect(addr).await.is_err());
    })
    .await;
}

#[tokio::test]
async fn with_credentials_only_authenticated_requests_are_served() {
    bounded(async {
        let site = Site::start().await;
        let port = site.addr.port();
        let config = ProxyConfig::new(Allowlist::new(["allowed.test"]).expect("allowlist"))
            .policy(IpPolicy::public_only().allow_private(true))
            .resolve("allowed.test", vec!["127.0.0.1".parse().expect("ip")])
            .credentials("ferry", "s3cret");
        let proxy = Proxy::start(config).await.expect("proxy");
        // base64("ferry:s3cret") and base64("ferry:wrong")
        for auth in ["", "Proxy-Authorization: Basic ZmVycnk6d3Jvbmc=\r\n"] {
            let (stream, head) = send(
                proxy.addr(),
                &format!(
                    "GET http://allowed.test:{port}/ HTTP/1.1\r\n{auth}Connection: close\r\n\r\n"
                ),
            )
            .await;
            drop(stream);
            assert!(head.starts_with("HTTP/1.1 407"), "{auth:?}: {head}");
            assert!(head.to_ascii_lowercase().contains("proxy-authenticate: basic"), "{head}");
        }
        let (stream, head) = send(
            proxy.addr(),
            &format!("CONNECT allowed.test:{port} HTTP/1.1\r\n\r\n"),
        )
        .await;
        drop(stream);
        assert!(head.starts_with("HTTP/1.1 407"), "{head}");
        assert!(site.log.lock().expect("log").is_empty());

        let (stream, head) = send(
            proxy.addr(),
            &format!(
                "GET http://allowed.test:{port}/ok HTTP/1.1\r\nProxy-Authorization: Basic ZmVycnk6czNjcmV0\r\nConnection: close\r\n\r\n"
            ),
        )
        .await;
        let text = read_to_end(stream, head).await;
        assert!(text.starts_with("HTTP/1.1 200"), "{text}");
        assert_eq!(site.requests_for("allowed.test"), ["/ok"]);
        // The credentials are not passed on upstream.
        let heads: Vec<String> = site.log.lock().expect("log").iter().map(|r| r.2.clone()).collect();
        assert!(
            heads.iter().all(|h| !h.to_ascii_lowercase().contains("proxy-authorization")),
            "{heads:?}"
        );
        assert!(proxy.blocked().is_empty());
    })
    .await;
}

#[tokio::test]
async fn a_browser_context_behind_the_proxy_reaches_only_allowed_hosts() {
    if !chromium_or_skip("a_browser_context_behind_the_proxy_reaches_only_allowed_hosts") {
        return;
    }
    bounded(async {
        let site = Site::start().await;
        let proxy = test_proxy().await;
        let port = site.addr.port();
        let browser = Browser::launch(LaunchOptions::default())
            .await
            .expect("launch");
        let options = CreateBrowserContext {
            proxy_server: Some(proxy.server_url()),
            proxy_bypass_list: Some(proxy.bypass_list().to_owned()),
            ..CreateBrowserContext::default()
        };
        let context = browser.new_context_with(&options).await.expect("context");
        let page = context.new_page().await.expect("page");

        page.navigate(&format!("http://allowed.test:{port}/"), NAV_TIMEOUT)
            .await
            .expect("navigate to allowed");
        assert_eq!(
            page.evaluate("document.title").await.expect("title"),
            json!("ferry test")
        );

        // A refused plain-http navigation renders the proxy's 403 page (or fails).
        let refused = page
            .navigate(&format!("http://blocked.test:{port}/"), NAV_TIMEOUT)
            .await;
        if refused.is_ok() {
            let body = page
                .evaluate("document.body ? document.body.innerText : ''")
                .await
                .expect("body");
            assert!(
                body.as_str().is_some_and(|b| b.contains("blocked")),
                "{body}"
            );
        }

        // A page on the allowed host loading an image from and fetching the blocked one.
        page.navigate(&format!("http://allowed.test:{port}/leak"), NAV_TIMEOUT)
            .await
            .expect("navigate to leak page");
        let fetched = page
            .evaluate(&format!(
                "fetch('http://blocked.test:{port}/x', {{mode: 'no-cors'}})\
                 .then(() => 'answered', e => 'failed: ' + e)"
            ))
            .await
            .expect("fetch");
        eprintln!("fetch through the proxy: {fetched}");
        // https and WebSockets go through CONNECT.
        let tunnelled = page
            .evaluate(&format!(
                "Promise.all([\
                   fetch('https://blocked.test:{port}/s').then(() => 'answered', () => 'failed'),\
                   new Promise(r => {{ const ws = new WebSocket('ws://blocked.test:{port}/ws');\
                     ws.onopen = () => r('open'); ws.onerror = () => r('error'); }})])"
            ))
            .await
            .expect("https and ws");
        assert_eq!(tunnelled, json!(["failed", "error"]));

        let wanted = [
            format!("http://blocked.test:{port}/"),
            format!("http://blocked.test:{port}/img"),
            format!("http://blocked.test:{port}/x"),
            format!("blocked.test:{port}"),
        ];
        let all_refused = proxy.blocked_until(|blocked| {
            wanted
                .iter()
                .all(|w| blocked.iter().any(|b| &b.target == w))
        });
        if tokio::time::timeout(Duration::from_secs(30), all_refused)
            .await
            .is_err()
        {
            let targets: Vec<String> = proxy.blocked().into_iter().map(|b| b.target).collect();
            panic!("proxy did not record every blocked request: {targets:?}");
        }
        assert!(
            site.requests_for("blocked.test").is_empty(),
            "blocked host reached the server: {:?}",
            site.requests_for("blocked.test")
        );
        assert!(
            proxy
                .blocked()
                .iter()
                .all(|b| b.reason == BlockReason::NotAllowed),
            "{:?}",
            proxy.blocked()
        );

        context.dispose().await.expect("dispose");
        browser.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn only_the_sessions_browser_may_use_its_proxy() {
    if !chromium_or_skip("only_the_sessions_browser_may_use_its_proxy") {
        return;
    }
    bounded(async {
        let site = Site::start().await;
        let port = site.addr.port();
        let group = Arc::new(std::sync::OnceLock::<GroupOwner>::new());
        let owner = group.clone();
        let check: ferry_browser::ClientCheck =
            Arc::new(move |peer, local| owner.get().is_some_and(|o| o.owns(peer, local)));
        let config = ProxyConfig::new(Allowlist::new(["allowed.test"]).expect("allowlist"))
            .policy(IpPolicy::public_only().allow_private(true))
            .resolve("allowed.test", vec!["127.0.0.1".parse().expect("ip")])
            .only_clients(check);
        let proxy = Proxy::start(config).await.expect("proxy");
        let browser = Browser::launch(LaunchOptions {
            proxy_server: Some(proxy.server_url()),
            ..LaunchOptions::default()
        })
        .await
        .expect("launch");
        let _ = group.set(GroupOwner::new(browser.process().expect("launched").pid()));

        // The browser gets through…
        let context = browser.new_context().await.expect("context");
        let page = context.new_page().await.expect("page");
        page.navigate(&format!("http://allowed.test:{port}/"), NAV_TIMEOUT)
            .await
            .expect("navigate");
        assert_eq!(
            page.evaluate("document.title").await.expect("title"),
            json!("ferry test")
        );
        // …this process does not: the connection is closed without an answer.
        let mut stream = TcpStream::connect(proxy.addr()).await.expect("connect");
        let request =
            format!("GET http://allowed.test:{port}/sneak HTTP/1.1\r\nConnection: close\r\n\r\n");
        let _ = stream.write_all(request.as_bytes()).await;
        let mut answer = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut answer)).await;
        assert!(answer.is_empty(), "{}", String::from_utf8_lossy(&answer));
        let seen = site.requests_for("allowed.test");
        assert!(seen.contains(&"/".to_owned()), "{seen:?}");
        assert!(!seen.contains(&"/sneak".to_owned()), "{seen:?}");
        browser.shutdown().await;
    })
    .await;
}
