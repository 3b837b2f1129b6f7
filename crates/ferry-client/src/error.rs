//! The client's one error type: callers branch on the variant, never on an HTTP status.

use ferry_proto::A2aError;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The agent answered with an A2A (or JSON-RPC) error; mapped by `ErrorInfo.reason` or the
    /// JSON-RPC code, whichever status table the server used.
    #[error("the agent refused: {0}")]
    Protocol(A2aError),
    /// The agent answered with an HTTP status and a body that is not an A2A error.
    #[error("HTTP {status}: {body}")]
    Http {
        /// The status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The server refused the credentials (401 or 403).
    #[error("authentication refused (HTTP {status}){}", if reason.is_empty() { String::new() } else { format!(": {reason}") })]
    Auth {
        /// 401 or 403.
        status: u16,
        /// What the server said, if anything (its error's message).
        reason: String,
    },
    /// The agent could not be reached (connect, DNS, TLS, reset).
    #[error("cannot reach the agent: {0}")]
    Unreachable(String),
    /// The call took longer than its timeout.
    #[error("the call timed out")]
    Timeout,
    /// The answer is not what A2A says it should be.
    #[error("unexpected answer: {0}")]
    Decode(String),
    /// No interface of the card uses a binding this client speaks.
    #[error("the agent card offers no interface this client speaks ({0})")]
    NoInterface(String),
    /// A URL (given, or named by the card) could not be parsed.
    #[error("invalid URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL.
        url: String,
        /// Why.
        reason: String,
    },
    /// The address policy refused a URL before any connection: a private or local address
    /// (only the user's own loopback machine is allowed by default), plain http to a host
    /// that is not loopback, or a cloud metadata address.
    #[error("refused {url}: {reason}")]
    Blocked {
        /// The URL.
        url: String,
        /// What the policy said.
        reason: String,
    },
    /// The agent card was fetched but refused: not strict JSON, too large, not matching the
    /// expected digest or key.
    #[error("the agent card was refused: {0}")]
    Card(#[source] ferry_trust::fetch::FetchError),
    /// A gRPC call ended with a status that is not an A2A error (no `ErrorInfo` of the A2A
    /// domain): the server's gRPC stack, a proxy.
    #[error("gRPC status {code}: {message}")]
    Grpc {
        /// The status code's name (`UNAVAILABLE`, …).
        code: &'static str,
        /// The status message.
        message: String,
    },
    /// An answer body was larger than the client reads.
    #[error("the answer is larger than the limit of {limit} bytes")]
    TooLarge {
        /// The limit.
        limit: usize,
    },
    /// The TLS material given to the client cannot be used (a CA or client certificate file
    /// that holds no certificate, a key that is no key).
    #[error("TLS settings: {0}")]
    Tls(String),
}

impl ClientError {
    /// True when retrying could help: connection errors, timeouts, 5xx, 429 and the server's
    /// own capacity refusals.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Unreachable(_) | Self::Timeout => true,
            Self::Http { status, .. } => *status >= 500 || *status == 429,
            Self::Grpc { code, .. } => matches!(*code, "UNAVAILABLE" | "RESOURCE_EXHAUSTED"),
            Self::Protocol(e) => e.retry_after_secs().is_some(),
            _ => false,
        }
    }

    /// A policy refusal of `url`.
    pub(crate) fn blocked(url: &str, e: &ferry_net::NetError) -> Self {
        Self::Blocked {
            url: url.to_owned(),
            reason: e.to_string(),
        }
    }

    pub(crate) fn from_net(e: ferry_net::NetError) -> Self {
        Self::Unreachable(e.to_string())
    }

    /// Maps a failure to fetch the card at `url` onto the classes callers branch on.
    pub(crate) fn from_fetch(e: ferry_trust::fetch::FetchError, url: &str) -> Self {
        use ferry_trust::fetch::FetchError;
        let blocked = |reason: String| Self::Blocked {
            url: url.to_owned(),
            reason,
        };
        match e {
            FetchError::Timeout { .. } => Self::Timeout,
            FetchError::BlockedAddress {
                host,
                addr,
                refusal,
            } => blocked(if host.trim_matches(['[', ']']) == addr.to_string() {
                format!("{addr} is a {refusal}")
            } else {
                format!("{host} is {addr}, a {refusal}")
            }),
            FetchError::SchemeNotAllowed { scheme } => blocked(format!(
                "{scheme} is allowed only to this machine; use https"
            )),
            FetchError::Net(_) | FetchError::Tls { .. } => Self::Unreachable(e.to_string()),
            FetchError::Status {
                status: status @ (401 | 403),
                ..
            } => Self::Auth {
                status,
                reason: String::new(),
            },
            other => Self::Card(other),
        }
    }

    pub(crate) fn from_reqwest(e: reqwest::Error) -> Self {
        if e.is_timeout() {
            Self::Timeout
        } else if e.is_connect() || e.is_request() {
            Self::Unreachable(e.to_string())
        } else {
            Self::Decode(e.to_string())
        }
    }
}
