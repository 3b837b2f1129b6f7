//! The proxy's errors: [`ProxyError`] when it cannot start (the remote card failed a pin, the
//! remote cannot be reached), and how a failed call to the remote becomes the turn's
//! [`AgentError`].
//!
//! The mapping of a failed call, chosen so that the local caller can tell the remote agent's
//! answer from the proxy's environment failing:
//!
//! - the remote refused with an A2A error ([`ClientError::Protocol`]): the same
//!   [`A2aError`](ferry_proto::A2aError) (kind, message, reason, metadata) as
//!   [`AgentError::Protocol`], so before a task exists the local caller gets the remote's
//!   error unchanged, and afterwards the local task fails with it;
//! - anything else is the environment, not the agent: [`AgentError::Infra`] with a stable
//!   code, `proxy.timeout`, `proxy.unreachable`, `proxy.auth` (the remote refused ferry's
//!   credentials), `proxy.blocked` (the address policy refused an interface) or
//!   `proxy.bad_answer` (the remote answered something that is not A2A). The local task then
//!   FAILS with an `infra_error` data part, which orchestrators do not count against the
//!   agent.
//!
//! No message holds the upstream token: the client never puts it in its errors, and the
//! proxy scrubs every message it builds from a remote's text as well (a remote could echo a
//! header back in an error body).

use ferry_agent::AgentError;
use ferry_client::ClientError;
use ferry_trust::fetch::FetchError;
use std::fmt;

/// Which pin of [`super::ProxyConfig`] a card failed or could not be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Pin {
    /// `card_digest`.
    CardDigest,
    /// `card_key`.
    CardKey,
    /// `jwks`.
    Jwks,
    /// `card_key` and `jwks`, both given: no signature verified with any of their keys.
    CardKeyOrJwks,
}

impl fmt::Display for Pin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::CardDigest => "card_digest",
            Self::CardKey => "card_key",
            Self::Jwks => "jwks",
            Self::CardKeyOrJwks => "card_key/jwks",
        })
    }
}

/// Why a [`super::ProxyAgent`] could not be set up. ferry's `serve` refuses to start on any
/// of them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// A field of the configuration is not usable.
    #[error("invalid proxy configuration: {field}: {reason}")]
    InvalidConfig {
        /// The field (its TOML key).
        field: &'static str,
        /// What is wrong (never the token itself).
        reason: String,
    },
    /// A pin could not be loaded or used: a key file that cannot be read, a key that is not
    /// a public PEM or JWK, a JWKS that cannot be fetched.
    #[error("the {pin} pin cannot be used: {reason}")]
    PinUnusable {
        /// The pin.
        pin: Pin,
        /// Why.
        reason: String,
    },
    /// The remote agent's card does not satisfy a pin: not the pinned digest, or no
    /// signature verifies with the pinned keys. Someone may be serving another card at the
    /// URL: the proxy does not start.
    #[error("the remote agent card at {url} failed the {pin} pin: {reason}")]
    PinMismatch {
        /// The card URL.
        url: String,
        /// The pin it failed.
        pin: Pin,
        /// What did not match.
        reason: String,
    },
    /// The card could not be fetched or is refused for another reason (unreachable, not
    /// strict JSON, no interface ferry speaks, an address the policy refuses).
    #[error("cannot connect to the remote agent at {url}: {source}")]
    Connect {
        /// The URL given.
        url: String,
        /// The client's error.
        #[source]
        source: ClientError,
    },
}

impl ProxyError {
    /// The error of a failed `A2aClient::connect`: pin failures named by their pin.
    pub(super) fn of_connect(url: &str, error: ClientError, key_pins: (bool, bool)) -> ProxyError {
        let card_url = ferry_proto::card_url(url);
        let key_pin = match key_pins {
            (true, true) => Pin::CardKeyOrJwks,
            (false, true) => Pin::Jwks,
            _ => Pin::CardKey,
        };
        match error {
            ClientError::Card(FetchError::DigestMismatch { expected, actual }) => {
                ProxyError::PinMismatch {
                    url: card_url,
                    pin: Pin::CardDigest,
                    reason: format!("its digest is {actual}, the pin is {expected}"),
                }
            }
            ClientError::Card(FetchError::Signature(e)) => ProxyError::PinMismatch {
                url: card_url,
                pin: key_pin,
                reason: e.to_string(),
            },
            ClientError::Card(FetchError::Jwks { url, error }) => ProxyError::PinUnusable {
                pin: Pin::Jwks,
                reason: format!("{url}: {error}"),
            },
            ClientError::Card(FetchError::Key(e)) => ProxyError::PinUnusable {
                pin: key_pin,
                reason: e.to_string(),
            },
            source => ProxyError::Connect {
                url: url.to_owned(),
                source,
            },
        }
    }
}

/// Turns a failed call to the remote into the turn's error (see the module docs).
#[derive(Clone)]
pub(super) struct ErrorMapper {
    /// The remote's base URL, for messages.
    pub(super) url: String,
    /// The upstream token, scrubbed from every message.
    pub(super) token: Option<String>,
    /// The per-call timeout, for messages.
    pub(super) timeout_secs: u64,
}

impl fmt::Debug for ErrorMapper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ErrorMapper")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl ErrorMapper {
    /// The turn's error for `error`.
    pub(super) fn agent_error(&self, error: ClientError) -> AgentError {
        let infra = |code: &'static str, message: String| AgentError::Infra {
            code,
            message: self.scrub(message),
        };
        let url = &self.url;
        match error {
            // Unchanged: the remote's answer is the answer.
            ClientError::Protocol(e) => AgentError::Protocol(e),
            ClientError::Timeout => infra(
                "proxy.timeout",
                format!(
                    "the remote agent at {url} did not answer within {} s",
                    self.timeout_secs
                ),
            ),
            ClientError::Unreachable(why) => infra(
                "proxy.unreachable",
                format!("cannot reach the remote agent at {url}: {why}"),
            ),
            ClientError::Auth { status, .. } => infra(
                "proxy.auth",
                format!(
                    "the remote agent at {url} refused the proxy's credentials (HTTP {status}); check the proxy's token"
                ),
            ),
            ClientError::Blocked {
                url: refused,
                reason,
            } => infra(
                "proxy.blocked",
                format!("the address policy refused {refused}: {reason}"),
            ),
            ClientError::Http { status, .. } if status >= 500 || status == 429 => infra(
                "proxy.unreachable",
                format!("the remote agent at {url} is unavailable (HTTP {status})"),
            ),
            ClientError::Grpc {
                code: "UNAVAILABLE",
                message,
            } => infra(
                "proxy.unreachable",
                format!("the remote agent at {url} is unavailable: {message}"),
            ),
            other => infra(
                "proxy.bad_answer",
                format!("the remote agent at {url} answered what A2A does not allow: {other}"),
            ),
        }
    }

    /// `text` with the token replaced.
    pub(super) fn scrub(&self, text: String) -> String {
        match &self.token {
            Some(token) if !token.is_empty() && text.contains(token.as_str()) => {
                text.replace(token.as_str(), "<redacted>")
            }
            _ => text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_proto::{A2aError, ErrorKind};

    fn mapper() -> ErrorMapper {
        ErrorMapper {
            url: "https://up.example".into(),
            token: Some("tok-123".into()),
            timeout_secs: 7,
        }
    }

    #[test]
    fn a_remote_refusal_passes_unchanged() {
        let remote = A2aError::task_not_found("r-1").with_reason("TASK_NOT_FOUND");
        match mapper().agent_error(ClientError::Protocol(remote.clone())) {
            AgentError::Protocol(e) => assert_eq!(e, remote),
            other => panic!("{other:?}"),
        }
        let e = A2aError::new(ErrorKind::ContentTypeNotSupported, "no images");
        assert!(
            matches!(mapper().agent_error(ClientError::Protocol(e.clone())), AgentError::Protocol(got) if got == e)
        );
    }

    #[test]
    fn transport_failures_are_infra_with_stable_codes_and_no_token() {
        let code = |e| match mapper().agent_error(e) {
            AgentError::Infra { code, message } => {
                assert!(!message.contains("tok-123"), "{message}");
                code
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(code(ClientError::Timeout), "proxy.timeout");
        assert_eq!(
            code(ClientError::Unreachable("refused".into())),
            "proxy.unreachable"
        );
        assert_eq!(
            code(ClientError::Auth {
                status: 401,
                reason: String::new()
            }),
            "proxy.auth"
        );
        assert_eq!(
            code(ClientError::Http {
                status: 400,
                body: "Bearer tok-123 is odd".into()
            }),
            "proxy.bad_answer"
        );
        assert_eq!(
            code(ClientError::Http {
                status: 503,
                body: String::new()
            }),
            "proxy.unreachable"
        );
    }
}
