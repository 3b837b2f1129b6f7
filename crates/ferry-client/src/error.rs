//! The client's one error type: callers branch on the variant, never on an HTTP status.

use ferry_proto::A2aError;

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
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
    #[error("authentication refused (HTTP {status})")]
    Auth {
        /// 401 or 403.
        status: u16,
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
}

impl ClientError {
    /// True when retrying could help: connection errors, timeouts, 5xx, 429 and the server's
    /// own capacity refusals.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Unreachable(_) | Self::Timeout => true,
            Self::Http { status, .. } => *status >= 500 || *status == 429,
            Self::Protocol(e) => e.retry_after_secs().is_some(),
            _ => false,
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
