//! Request ids: echoed when the client sent a valid one, generated otherwise.

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use std::fmt;
use std::sync::Arc;

/// The request id header.
pub(crate) const HEADER: HeaderName = HeaderName::from_static("x-request-id");
/// Longest client-supplied id that is echoed.
pub(crate) const MAX_LEN: usize = 64;

/// The id of one request, carried in its extensions, its response and its logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(Arc<str>);

impl RequestId {
    /// The client's `X-Request-Id` when it is 1–64 characters of `A-Za-z0-9-_.`, else a new
    /// UUID (an invalid id is not echoed: it could smuggle text into logs).
    pub fn from_headers(headers: &HeaderMap) -> Self {
        let given = headers
            .get(HEADER)
            .and_then(|v| v.to_str().ok())
            .filter(|s| is_valid(s));
        match given {
            Some(s) => Self(s.into()),
            None => Self(crate::ids::random()),
        }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The id as a header value, marked sensitive: every id is new, so HTTP/2's header
    /// compression would only fill its table with them (and search a longer list of them on
    /// every answer); a sensitive value is sent literally and never indexed.
    pub fn header_value(&self) -> HeaderValue {
        let mut value =
            HeaderValue::from_str(&self.0).unwrap_or_else(|_| HeaderValue::from_static("invalid"));
        value.set_sensitive(true);
        value
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// 1 to 64 characters of `A-Za-z0-9-_.`.
pub(crate) fn is_valid(s: &str) -> bool {
    (1..=MAX_LEN).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_ids_are_echoed_others_replaced() {
        let mut h = HeaderMap::new();
        h.insert(HEADER, HeaderValue::from_static("abc-123_x.y"));
        assert_eq!(RequestId::from_headers(&h).as_str(), "abc-123_x.y");
        for bad in ["has space", "semi;colon", &"x".repeat(65), ""] {
            let mut h = HeaderMap::new();
            h.insert(HEADER, HeaderValue::from_str(bad).expect("ascii"));
            let id = RequestId::from_headers(&h);
            assert_ne!(id.as_str(), bad);
            assert_eq!(id.as_str().len(), 36, "a UUID replaces {bad:?}");
        }
    }
}

/// The peer address of the connection a request came on (set by the server's accept loop).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClientAddr(pub std::net::SocketAddr);
