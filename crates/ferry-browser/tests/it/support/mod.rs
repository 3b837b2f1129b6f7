//! Helpers shared by the browser tests.

use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Whether Chromium is here; a loud skip outside CI, a failure under `CI=true`.
pub(crate) fn chromium_or_skip(test: &str) -> bool {
    let missing = ferry_browser::find_chromium(None)
        .err()
        .map(|e| format!("{e}; install Debian's `chromium` package or set FERRY_CHROME"));
    ferry_testkit::required_or_skip(test, missing)
}

/// An upper bound for every test, so a hung browser fails the test instead of the suite.
pub(crate) const TEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The page timeout used by the tests.
pub(crate) const NAV_TIMEOUT: Duration = Duration::from_secs(10);

/// A tiny HTTP/1.1 server on 127.0.0.1 with fixed pages:
/// - `/form`: title "Signup" and a form whose `#email` field holds `ada@example.com`
/// - `/framed`: sets `window.secret` and embeds `/form` from `localhost` (a cross-site frame)
/// - `/hang`: accepts and never answers
/// - anything else: a blank page titled "ferry test"
pub(crate) async fn serve_pages() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(answer(stream));
        }
    });
    addr
}

/// Reads up to the end of a request's head; `None` when the client goes away first.
pub(crate) async fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
    Some(String::from_utf8_lossy(&seen).into_owned())
}

async fn answer(mut stream: TcpStream) {
    let Some(head) = read_head(&mut stream).await else {
        return;
    };
    let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let body = match path.as_str() {
        "/form" => concat!(
            "<!doctype html><html><head><title>Signup</title></head><body>",
            "<form method=post action=/done><label for=email>Email</label>",
            "<input id=email name=email value=\"ada@example.com\">",
            "<button>Send</button></form></body></html>"
        ),
        // A page with a secret in its main world and a frame on another site (localhost vs
        // 127.0.0.1), which Chromium puts in its own process.
        "/framed" => concat!(
            "<!doctype html><html><head><title>Framed</title></head><body>",
            "<script>window.secret = 42; const f = document.createElement('iframe');",
            "f.src = `http://localhost:${location.port}/form`; document.body.appendChild(f);</script>",
            "</body></html>"
        ),
        "/hang" => {
            // Hold the connection open without answering; the browser gives up first.
            tokio::time::sleep(Duration::from_secs(60)).await;
            return;
        }
        _ => "<!doctype html><html><head><title>ferry test</title></head><body></body></html>",
    };
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

pub(crate) use ferry_browser::live_group_members;

/// TCP ports in LISTEN state held by any process of group `pgid` (IPv4 and IPv6), from
/// /proc: the socket inodes behind each member's fds, looked up in /proc/net/tcp{,6}.
pub(crate) fn listening_ports(pgid: u32) -> Vec<u16> {
    let mut inodes = std::collections::HashSet::new();
    for pid in live_group_members(pgid) {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path())
                && let Some(inode) = target
                    .to_str()
                    .and_then(|t| t.strip_prefix("socket:["))
                    .and_then(|t| t.strip_suffix(']'))
            {
                inodes.insert(inode.to_owned());
            }
        }
    }
    let mut ports = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // local_address is HEX_IP:HEX_PORT, st 0A is LISTEN, inode is field 9.
            if fields.len() > 9 && fields[3] == "0A" && inodes.contains(fields[9]) {
                let port = fields[1]
                    .rsplit(':')
                    .next()
                    .and_then(|p| u16::from_str_radix(p, 16).ok());
                ports.extend(port);
            }
        }
    }
    ports
}

/// A scratch directory for fake browser binaries, removed on drop.
pub(crate) struct Scratch {
    pub dir: std::path::PathBuf,
}

impl Scratch {
    /// A fresh directory named after `name`.
    pub(crate) fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("ferry-browser-it-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Self { dir }
    }

    /// Writes an executable shell script and returns its path.
    pub(crate) fn script(&self, name: &str, body: &str) -> std::path::PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = self.dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write script");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
