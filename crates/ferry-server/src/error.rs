//! `ServerError`: why a server could not be built or could not serve. Messages say what is
//! wrong; which flag or setting fixes it is the caller's to add (the binary does).

use crate::signing::SigningError;
use std::net::SocketAddr;

/// Why a server could not be built, bound or run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// Push notifications could not be set up.
    #[error("push notifications: {0}")]
    Push(String),
    /// A non-loopback address without a token: anyone who reaches it could run work here.
    #[error(
        "refusing to listen on {bind} without a token: anyone who can reach it could run work on this machine"
    )]
    TokenRequired {
        /// The address asked for.
        bind: SocketAddr,
    },
    /// An extended card is configured, but without a token nobody is authenticated to get it.
    #[error("the extended agent card is served to authenticated callers only, and no token is set")]
    ExtendedCardNeedsToken,
    /// A setting that grades access (read-only tokens, anonymous callers) without the token
    /// of full access: without it every caller has full access.
    #[error("{setting} needs a token: without one every caller already has full access")]
    NeedsToken {
        /// The setting.
        setting: &'static str,
    },
    /// The agents of a server of several agents do not fit together: an invalid or repeated
    /// id, a default or a scoped token naming an agent that is not hosted, agents added to a
    /// server of one agent.
    #[error("agents: {0}")]
    Agents(String),
    /// A setting whose value cannot be used (an `allowed_origins` entry that is no origin, a
    /// caller name ferry keeps for itself).
    #[error("{setting}: {problem}")]
    Setting {
        /// The setting.
        setting: &'static str,
        /// What is wrong with its value.
        problem: String,
    },
    /// The listening socket could not be bound.
    #[error("cannot listen on {bind}: {source}")]
    Bind {
        /// The address asked for.
        bind: SocketAddr,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A signing key, an announced key or the extended card could not be loaded or used.
    #[error(transparent)]
    Signing(#[from] SigningError),
    /// The task store failed while the server started (recovering the tasks a previous
    /// process left unfinished).
    #[error("the task store failed at start-up: {0}")]
    Store(ferry_store::StoreError),
    /// Serving failed (the listener broke).
    #[error("serving failed: {0}")]
    Serve(std::io::Error),
}
