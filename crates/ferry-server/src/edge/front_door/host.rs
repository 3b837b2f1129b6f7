//! The `Host` check: only loopback names, configured hosts and the advertised host are served,
//! so a web page whose DNS name is rebound to 127.0.0.1 cannot talk to the server.

use axum::extract::Request;
use axum::http::header;
use std::net::IpAddr;

/// Which `Host` values are served.
#[derive(Debug, Clone)]
pub(crate) struct HostPolicy {
    allowed: Vec<String>,
}

impl HostPolicy {
    /// Loopback names plus `allowed_hosts` plus the server's own hosts (the public URL's,
    /// …).
    pub(crate) fn new(allowed_hosts: &[String], own_hosts: Vec<String>) -> Self {
        let allowed = allowed_hosts
            .iter()
            .chain(&own_hosts)
            .map(|h| strip_port(h).to_ascii_lowercase())
            .collect();
        Self { allowed }
    }

    /// True when every authority the request names is served: its `Host` header and the
    /// authority of its target (an absolute-form target such as `POST http://evil.example/`,
    /// which HTTP/1.1 servers must prefer over `Host`; the `:authority` of HTTP/2). At least
    /// one must be present. Several `Host` lines are refused before this check.
    pub(crate) fn allows(&self, request: &Request) -> bool {
        let header = match request.headers().get(header::HOST) {
            Some(v) => match v.to_str() {
                Ok(host) => Some(host),
                Err(_) => return false,
            },
            None => None,
        };
        let target = request.uri().authority().map(|a| a.as_str());
        if header.is_none() && target.is_none() {
            return false;
        }
        header
            .into_iter()
            .chain(target)
            .all(|host| self.serves(host))
    }

    fn serves(&self, host: &str) -> bool {
        // An authority with userinfo (`user@host`) is never one of ours.
        if host.contains('@') {
            return false;
        }
        let name = strip_port(host).to_ascii_lowercase();
        is_loopback_name(&name) || self.allowed.contains(&name)
    }
}

/// `localhost`, `*.localhost` (RFC 6761) and loopback IP literals.
fn is_loopback_name(name: &str) -> bool {
    if name == "localhost" || name.ends_with(".localhost") {
        return true;
    }
    let literal = name.trim_start_matches('[').trim_end_matches(']');
    literal.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// `host:port` → `host`; `[v6]:port` → `[v6]`.
fn strip_port(host: &str) -> &str {
    if let Some(end) = host.find(']') {
        return &host[..=end];
    }
    match host.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) && !h.contains(':') => h,
        _ => host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(host: &str) -> Request {
        Request::builder()
            .uri("/x")
            .header(header::HOST, host)
            .body(axum::body::Body::empty())
            .expect("request")
    }

    #[test]
    fn loopback_configured_and_public_hosts_only() {
        let p = HostPolicy::new(
            &["agents.internal".into()],
            vec!["ferry.example.com".into()],
        );
        for ok in [
            "127.0.0.1:8765",
            "localhost",
            "LOCALHOST:1",
            "[::1]:8765",
            "127.1.2.3",
            "a.localhost",
            "agents.internal:9",
            "ferry.example.com",
        ] {
            assert!(p.allows(&req(ok)), "{ok}");
        }
        for bad in [
            "user@127.0.0.1",
            "evil.example",
            "10.0.0.1:8765",
            "localhost.evil.com",
            "[::2]:1",
            "ferry.example.com.evil",
        ] {
            assert!(!p.allows(&req(bad)), "{bad}");
        }
    }

    #[test]
    fn an_absolute_form_target_must_pass_too() {
        let p = HostPolicy::new(&[], Vec::new());
        let absolute = |uri: &str, host: Option<&str>| {
            let mut b = Request::builder().uri(uri);
            if let Some(h) = host {
                b = b.header(header::HOST, h);
            }
            b.body(axum::body::Body::empty()).expect("request")
        };
        assert!(!p.allows(&absolute("http://evil.example/jsonrpc", Some("127.0.0.1"))));
        assert!(!p.allows(&absolute("http://127.0.0.1/jsonrpc", Some("evil.example"))));
        assert!(p.allows(&absolute(
            "http://127.0.0.1:8765/jsonrpc",
            Some("127.0.0.1")
        )));
        assert!(
            p.allows(&absolute("http://localhost/jsonrpc", None)),
            "HTTP/2 :authority"
        );
        assert!(
            !p.allows(&absolute("/jsonrpc", None)),
            "no authority at all"
        );
    }
}
