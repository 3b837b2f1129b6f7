//! The safe client against a plain HTTP listener on 127.0.0.1: every loopback spelling is
//! refused under the public-only policy, and reached with `allow_private`.

use ferry_net::{NetError, Range, Refusal, SafeClient};
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A listener that answers every request with `200 ok`; returns its address.
async fn ok_server() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let mut seen = Vec::new();
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
                    )
                    .await;
            });
        }
    });
    addr
}

fn url(text: &str) -> url::Url {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[tokio::test]
async fn every_loopback_spelling_is_refused() {
    let addr = ok_server().await;
    let port = addr.port();
    let client = SafeClient::builder()
        .allow_http(true)
        .resolve_fixed("loopback.test", vec![addr.ip()])
        .build()
        .expect("client");
    for host in [
        "127.0.0.1",
        "localhost",
        "2130706433",
        "0x7f.1",
        "127.1",
        "[::ffff:127.0.0.1]",
        "[::1]",
        "loopback.test",
    ] {
        let target = url(&format!("http://{host}:{port}/"));
        match client.get(&target, "*/*").await {
            Err(NetError::BlockedAddress { addr, refusal, .. }) => {
                assert!(addr.is_loopback(), "{host}: {addr}");
                assert_eq!(refusal, Refusal::Range(Range::Loopback), "{host}");
            }
            other => panic!("{host}: expected a refusal, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn allow_private_reaches_loopback() {
    let addr = ok_server().await;
    let port = addr.port();
    let client = SafeClient::builder()
        .allow_http(true)
        .allow_private(true)
        .resolve_fixed("loopback.test", vec![addr.ip()])
        .build()
        .expect("client");
    for host in [
        "127.0.0.1",
        "2130706433",
        "127.1",
        "localhost",
        "loopback.test",
    ] {
        let target = url(&format!("http://{host}:{port}/"));
        let response = client
            .get(&target, "*/*")
            .await
            .unwrap_or_else(|e| panic!("{host}: {e}"));
        assert_eq!(response.status(), 200, "{host}");
        assert_eq!(response.remote_addr().map(|a| a.port()), Some(port));
    }
}

#[tokio::test]
async fn a_name_resolving_to_loopback_is_refused() {
    let addr = ok_server().await;
    let client = SafeClient::builder()
        .allow_http(true)
        .resolve_fixed(
            "rebind.test",
            vec!["8.8.8.8".parse().expect("ip"), addr.ip()],
        )
        .build()
        .expect("client");
    let err = client
        .get(&url(&format!("http://rebind.test:{}/", addr.port())), "*/*")
        .await
        .expect_err("refused");
    assert_eq!(
        err,
        NetError::BlockedAddress {
            host: "rebind.test".into(),
            addr: addr.ip(),
            refusal: Refusal::Range(Range::Loopback),
        }
    );
}

#[tokio::test]
async fn https_only_unless_http_is_allowed() {
    let addr = ok_server().await;
    let client = SafeClient::builder()
        .allow_private(true)
        .build()
        .expect("client");
    let err = client
        .get(&url(&format!("http://{addr}/")), "*/*")
        .await
        .expect_err("refused");
    assert_eq!(
        err,
        NetError::SchemeNotAllowed {
            scheme: "http".into()
        }
    );
}

#[tokio::test]
async fn redirects_are_returned_not_followed() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        if let Ok((mut stream, _)) = listener.accept().await {
            let mut buf = vec![0u8; 4096];
            let _ = stream.read(&mut buf).await;
            let _ = stream
                .write_all(b"HTTP/1.1 302 Found\r\nlocation: http://169.254.169.254/\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                .await;
        }
    });
    let client = SafeClient::builder()
        .allow_http(true)
        .allow_private(true)
        .build()
        .expect("client");
    let response = client
        .get(&url(&format!("http://{addr}/")), "*/*")
        .await
        .expect("response");
    assert_eq!(response.status(), 302);
}

#[tokio::test]
async fn a_refused_literal_fails_before_any_connection() {
    // 169.254.169.254 is not routable from here: a refusal that came from a connection
    // attempt would be a timeout or a connect error, not `BlockedAddress`.
    let client = SafeClient::builder()
        .allow_http(true)
        .build()
        .expect("client");
    let err = client
        .get(&url("http://169.254.169.254/latest/meta-data/"), "*/*")
        .await
        .expect_err("refused");
    assert!(
        matches!(
            err,
            NetError::BlockedAddress {
                refusal: Refusal::Metadata,
                ..
            }
        ),
        "{err:?}"
    );
}

/// Set by [`proxy_environment_is_ignored`] for its child process: the target to fetch.
const CHILD_TARGET: &str = "FERRY_NET_TEST_PROXY_CHILD_TARGET";

#[tokio::test]
async fn proxy_environment_is_ignored() {
    // A proxy resolves and dials on our behalf, voiding every address check, so the
    // client must ignore HTTP(S)_PROXY/ALL_PROXY. Setting variables in this process needs
    // `unsafe` (edition 2024), so a child process runs `proxy_child` with them set.
    let target = ok_server().await;
    let proxy = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
    let proxy_url = format!("http://{}", proxy.local_addr().expect("addr"));
    let exe = std::env::current_exe().expect("test binary");
    let mut child = tokio::process::Command::new(exe);
    child
        .args(["client::proxy_child", "--exact", "--ignored", "--nocapture"])
        .env(CHILD_TARGET, target.to_string())
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .env_remove("REQUEST_METHOD");
    for var in [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        child.env(var, &proxy_url);
    }
    let run = child.output();
    tokio::pin!(run);
    let output = tokio::select! {
        output = &mut run => output.expect("child ran"),
        accepted = proxy.accept() => {
            panic!("the client connected to the proxy: {:?}", accepted.map(|(_, a)| a))
        }
    };
    assert!(
        output.status.success(),
        "child failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("1 passed"),
        "the child ran no test:\n{stdout}"
    );
}

#[tokio::test]
#[ignore = "run by proxy_environment_is_ignored in a child process with proxy variables set"]
async fn proxy_child() {
    let Ok(target) = std::env::var(CHILD_TARGET) else {
        return;
    };
    let client = SafeClient::builder()
        .allow_http(true)
        .allow_private(true)
        .build()
        .expect("client");
    let response = client
        .get(&url(&format!("http://{target}/")), "*/*")
        .await
        .expect("direct request");
    assert_eq!(response.remote_addr().map(|a| a.to_string()), Some(target));
}
