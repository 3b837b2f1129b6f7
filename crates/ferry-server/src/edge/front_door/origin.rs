//! The `Origin` check: which web pages may call the server from a browser.
//!
//! A request without `Origin` is not a browser's cross-origin call and passes. One with it is
//! served only when the origin is the server's own — its host and port are those of the
//! request's `Host` (which the host check has already accepted), or it is the public URL's —
//! or is listed in `allowed_origins`. Anything else, `null` included, is refused: a page on
//! another origin (a DNS-rebinding attack or any other site) cannot use the server. The
//! answers to an allowed origin carry CORS headers; its preflight (`OPTIONS` with
//! `Access-Control-Request-Method`) is answered here, before credentials, since browsers send
//! none with it.

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;

/// How long a browser may cache a preflight's answer.
const PREFLIGHT_MAX_AGE_SECS: &str = "600";

/// What a browser may send besides the CORS-safe headers: the A2A service parameters, the
/// bearer token, the JSON body's type, request ids, stream resumption and MCP's session.
const ALLOWED_HEADERS: &str = "authorization, content-type, a2a-version, a2a-extensions, \
     x-request-id, last-event-id, traceparent, tracestate, mcp-session-id, mcp-protocol-version";

/// What a page may read of an answer besides the CORS-safe headers.
const EXPOSED_HEADERS: &str =
    "x-request-id, a2a-version, a2a-extensions, www-authenticate, retry-after, mcp-session-id";

/// The methods the server's routes answer.
const ALLOWED_METHODS: &str = "GET, POST, DELETE, OPTIONS";

/// Which origins are served.
#[derive(Debug, Clone)]
pub(crate) struct OriginPolicy {
    /// `allowed_origins` and the public URL's origin, normalized.
    listed: Vec<Origin>,
}

/// What the check says of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OriginVerdict {
    /// No `Origin` header: not a browser's cross-origin call.
    Absent,
    /// An origin the server serves (its header value, echoed in the CORS headers).
    Allowed(HeaderValue),
    /// Any other origin, `null` and unreadable ones included.
    Refused,
}

/// A tuple origin: scheme, host, port (the scheme's default when none is written).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl OriginPolicy {
    /// The policy serving the request's own origin, `public_url`'s and `allowed`
    /// (`scheme://host[:port]` each; entries that are not origins are ignored, and
    /// configuration validation reports them).
    pub(crate) fn new(allowed: &[String], public_url: Option<&str>) -> Self {
        let listed = allowed
            .iter()
            .map(String::as_str)
            .chain(public_url)
            .filter_map(Origin::parse)
            .collect();
        Self { listed }
    }

    /// The verdict on `request`'s `Origin`.
    pub(crate) fn check(&self, request: &Request) -> OriginVerdict {
        let Some(value) = request.headers().get(header::ORIGIN) else {
            return OriginVerdict::Absent;
        };
        let Some(origin) = value.to_str().ok().and_then(Origin::parse) else {
            return OriginVerdict::Refused;
        };
        if self.listed.contains(&origin) || origin.is_of(request) {
            OriginVerdict::Allowed(value.clone())
        } else {
            OriginVerdict::Refused
        }
    }
}

/// Whether `value` is an origin `allowed_origins` may list (`scheme://host[:port]`, http or
/// https, nothing after the authority).
pub(crate) fn is_origin(value: &str) -> bool {
    Origin::parse(value).is_some()
}

impl Origin {
    /// `scheme://host[:port]`, http or https, without path, query, fragment or userinfo;
    /// scheme and host compared without case.
    fn parse(text: &str) -> Option<Origin> {
        let (scheme, authority) = text.split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return None,
        };
        let authority = authority.strip_suffix('/').unwrap_or(authority);
        if authority.is_empty() || authority.contains(['/', '?', '#', '@']) {
            return None;
        }
        let (host, port) = split_port(authority)?;
        Some(Origin {
            scheme,
            host: host.to_ascii_lowercase(),
            port: port.unwrap_or(default_port),
        })
    }

    /// Whether this is the origin the request was made to: the host and port of its `Host`
    /// header (a `Host` without a port names the origin's default one).
    fn is_of(&self, request: &Request) -> bool {
        let Some(host) = request
            .headers()
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .or_else(|| request.uri().authority().map(|a| a.as_str()))
        else {
            return false;
        };
        let Some((name, port)) = split_port(host) else {
            return false;
        };
        let default_port = if self.scheme == "https" { 443 } else { 80 };
        name.eq_ignore_ascii_case(&self.host) && port.unwrap_or(default_port) == self.port
    }
}

/// `host[:port]` → host and port; `[v6]:port` keeps the brackets. `None` for a port that is
/// not a number.
fn split_port(authority: &str) -> Option<(&str, Option<u16>)> {
    let (host, port) = match authority.rfind(']') {
        Some(end) => match authority[end + 1..].strip_prefix(':') {
            Some(port) => (&authority[..=end], Some(port)),
            None if end + 1 == authority.len() => (authority, None),
            None => return None,
        },
        None => match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        },
    };
    let port = match port {
        Some(p) => Some(p.parse::<u16>().ok()?),
        None => None,
    };
    (!host.is_empty()).then_some((host, port))
}

/// Whether `request` is a CORS preflight: `OPTIONS` asking for a method.
pub(crate) fn is_preflight(request: &Request) -> bool {
    request.method() == Method::OPTIONS
        && request
            .headers()
            .contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
}

/// The answer to an allowed origin's preflight: 204 with what it may send.
pub(crate) fn preflight(origin: &HeaderValue) -> Response {
    let mut response = Response::new(axum::body::Body::empty());
    *response.status_mut() = StatusCode::NO_CONTENT;
    let headers = response.headers_mut();
    allow(headers, origin);
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(ALLOWED_METHODS),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(ALLOWED_HEADERS),
    );
    headers.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static(PREFLIGHT_MAX_AGE_SECS),
    );
    response
}

/// Lets the page of `origin` read `response` (and the headers it needs of it).
pub(crate) fn expose(response: &mut Response, origin: &HeaderValue) {
    let headers = response.headers_mut();
    allow(headers, origin);
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(EXPOSED_HEADERS),
    );
}

/// The headers every answer to an allowed origin carries. Credentials (the bearer token) are
/// sent by the page itself in `Authorization`, never by cookies, so none are allowed.
fn allow(headers: &mut HeaderMap, origin: &HeaderValue) {
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
    headers.append(header::VARY, HeaderValue::from_static("Origin"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(host: &str, origin: Option<&str>) -> Request {
        let mut builder = Request::builder()
            .uri("/jsonrpc")
            .header(header::HOST, host);
        if let Some(origin) = origin {
            builder = builder.header(header::ORIGIN, origin);
        }
        builder.body(axum::body::Body::empty()).expect("request")
    }

    #[test]
    fn the_servers_own_origin_and_listed_ones_only() {
        let policy = OriginPolicy::new(
            &[
                "https://app.example.com".into(),
                "http://localhost:3000".into(),
            ],
            Some("https://agents.example.com"),
        );
        let allowed = |host: &str, origin: &str| {
            matches!(
                policy.check(&request(host, Some(origin))),
                OriginVerdict::Allowed(_)
            )
        };
        assert_eq!(
            policy.check(&request("127.0.0.1:8765", None)),
            OriginVerdict::Absent
        );
        for (host, origin) in [
            ("127.0.0.1:8765", "http://127.0.0.1:8765"),
            ("localhost:8765", "http://LOCALHOST:8765"),
            ("[::1]:8765", "http://[::1]:8765"),
            ("localhost", "http://localhost"),
            ("localhost", "http://localhost:80"),
            // Behind a TLS proxy a Host without a port is the https default's.
            ("localhost", "https://localhost"),
            ("127.0.0.1:8765", "https://app.example.com"),
            ("127.0.0.1:8765", "https://app.example.com:443/"),
            ("127.0.0.1:8765", "http://localhost:3000"),
            ("127.0.0.1:8765", "https://agents.example.com"),
        ] {
            assert!(allowed(host, origin), "{origin} to {host}");
        }
        for (host, origin) in [
            ("127.0.0.1:8765", "null"),
            ("127.0.0.1:8765", "http://localhost:8765"),
            ("127.0.0.1:8765", "http://127.0.0.1:8766"),
            ("127.0.0.1:8765", "http://evil.example"),
            ("127.0.0.1:8765", "https://app.example.com:8443"),
            ("127.0.0.1:8765", "http://app.example.com"),
            ("127.0.0.1:8765", "file://"),
            ("127.0.0.1:8765", "http://user@127.0.0.1:8765"),
            ("127.0.0.1:8765", "http://127.0.0.1:8765/page"),
            ("localhost:80", "https://localhost"),
            ("127.0.0.1:8765", "http://127.0.0.1:x"),
        ] {
            assert!(!allowed(host, origin), "{origin} to {host}");
        }
    }

    #[test]
    fn only_origins_may_be_listed() {
        for ok in [
            "http://a.example",
            "https://a.example:8443",
            "http://[::1]:9",
        ] {
            assert!(is_origin(ok), "{ok}");
        }
        for bad in [
            "a.example",
            "ftp://a.example",
            "http://a.example/x",
            "http://",
            "null",
        ] {
            assert!(!is_origin(bad), "{bad}");
        }
    }
}
