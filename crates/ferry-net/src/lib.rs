//! ferry-net: reaching user-supplied URLs without reaching the local network.
//!
//! One job: decide which IP addresses a client may dial ([`policy`]: a public-only
//! classifier with an `allow_private` switch for intranets and tests) and build an HTTP
//! client that enforces the decision on the address actually dialed ([`SafeClient`]: every
//! DNS answer checked by a [`resolve::PolicyResolver`], IP-literal hosts checked, the peer
//! address re-checked, no proxy from the environment, no redirects followed, timeouts).
//!
//! It must never know about A2A: agent-card fetching (ferry-trust), push delivery and the
//! browser proxy build on it. The threats it answers are described in [`manual`].
//!
//! ```no_run
//! use ferry_net::{SafeClient, Url};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = SafeClient::builder().build()?;
//! let url: Url = "https://agent.example.com/.well-known/agent-card.json".parse()?;
//! let response = client.get(&url, "application/json").await?;
//! println!("{} from {:?}", response.status(), response.remote_addr());
//! # Ok(()) }
//! ```

pub mod client;
pub mod manual;
pub mod policy;
pub mod resolve;
pub mod secret;

pub use client::{SafeClient, SafeClientBuilder, is_loopback_host};
pub use policy::{IpPolicy, Range, Refusal};
/// The URL type every ferry-net API takes (re-exported from the `url` crate).
pub use url::Url;

use std::net::IpAddr;

/// Why a request through a [`SafeClient`] was refused or failed. Variants are facts a
/// caller can branch on; `reason` strings are for people.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NetError {
    /// The host is, or resolved to, an address the policy refuses.
    #[error("{host} is {addr}, a {refusal}, which is not allowed")]
    BlockedAddress {
        /// The host as written in the URL (a name or an IP literal).
        host: String,
        /// The refused address (IPv4-mapped addresses shown as IPv4).
        addr: IpAddr,
        /// Why it was refused.
        refusal: Refusal,
    },
    /// The URL's scheme is not `https` (or `http` when allowed).
    #[error("scheme {scheme:?} is not allowed")]
    SchemeNotAllowed {
        /// The scheme.
        scheme: String,
    },
    /// The URL cannot be requested (no host, unparsable).
    #[error("invalid url {url:?}: {reason}")]
    InvalidUrl {
        /// The URL text.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// DNS resolution failed.
    #[error("resolving {host}: {reason}")]
    Resolve {
        /// The name.
        host: String,
        /// The resolver's message.
        reason: String,
    },
    /// DNS returned no address.
    #[error("{host} has no address")]
    NoAddresses {
        /// The name.
        host: String,
    },
    /// The response did not say which address it came from, so the peer could not be
    /// re-checked.
    #[error("the peer address of {host} is unknown")]
    UnknownPeer {
        /// The host.
        host: String,
    },
    /// A timeout elapsed (connect, read or total).
    #[error("timed out")]
    Timeout,
    /// The TLS handshake failed (untrusted certificate, wrong name, protocol error).
    #[error("tls: {reason}")]
    Tls {
        /// rustls's message.
        reason: String,
    },
    /// The TCP connection failed (refused, unreachable).
    #[error("connecting: {reason}")]
    Connect {
        /// The error chain.
        reason: String,
    },
    /// Any other HTTP failure (malformed response, connection closed mid-body).
    #[error("http: {reason}")]
    Http {
        /// The error chain.
        reason: String,
    },
    /// The client could not be built (bad root certificate, TLS setup).
    #[error("building the http client: {reason}")]
    Build {
        /// What failed.
        reason: String,
    },
}

impl NetError {
    /// Maps a reqwest error (from sending, or from reading a body) to the variant a caller
    /// branches on: a refusal raised by the [`resolve::PolicyResolver`] deep inside
    /// hyper's connector comes back as itself, TLS failures as [`NetError::Tls`], and any
    /// elapsed timeout as [`NetError::Timeout`].
    pub fn from_reqwest(e: &reqwest::Error) -> NetError {
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
        while let Some(s) = source {
            if let Some(net) = s.downcast_ref::<NetError>() {
                return net.clone();
            }
            if let Some(tls) = s.downcast_ref::<rustls::Error>() {
                return NetError::Tls {
                    reason: tls.to_string(),
                };
            }
            // io::Error::source() skips the error it wraps (tokio-rustls nests a rustls
            // error two io::Errors deep), so descend into the wrapped error itself.
            source = match s
                .downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
            {
                Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
                None => s.source(),
            };
        }
        if e.is_timeout() {
            NetError::Timeout
        } else if e.is_connect() {
            NetError::Connect {
                reason: client::error_chain(e),
            }
        } else {
            NetError::Http {
                reason: client::error_chain(e),
            }
        }
    }
}
