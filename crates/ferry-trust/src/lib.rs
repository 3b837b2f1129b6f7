//! ferry-trust: deciding whether an A2A agent card can be trusted.
//!
//! One job: turn the bytes of a card into facts a caller can rely on. It parses JSON
//! strictly ([`strict`]: duplicate member names, limits, unsafe integers and malformed text
//! are refused with an error that says where), computes the RFC 8785 canonical form and the
//! `sha256:` digest that security teams pin ([`jcs`]), builds the A2A v1.0 signing payload
//! of a card under a named profile ([`card`], spec §8.4), loads keys from PEM, JWK and JWKS
//! ([`keys`]), signs and verifies detached-payload JWS card signatures ([`jws`]), and
//! fetches cards over ferry-net's SSRF-safe client and checks them against a pinned
//! expectation ([`fetch`]).
//!
//! It must never know about servers or browsers: it takes bytes, values or a URL (fetched
//! only through ferry-net's safe client), and returns values and typed errors.
//!
//! ```
//! use ferry_trust::{card, strict};
//!
//! let raw = br#"{"name":"Echo","description":"","version":"1","supportedInterfaces":[],
//!   "capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[],
//!   "signatures":[{"protected":"e30","signature":"AA"}]}"#;
//! let value = strict::parse(raw)?;
//! let payload = card::payload(&value, card::Profile::Strict)?;
//! assert!(!payload.canonical().windows(10).any(|w| w == b"signatures"));
//! println!("{}", payload.digest());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
pub mod card;
pub mod fetch;
pub mod jcs;
pub mod jws;
pub mod jwt;
pub mod keys;
pub mod oidc;
pub mod push_signature;
pub mod strict;

/// Any ferry-trust error, for callers that propagate with `?` and still want to branch on
/// the kind of failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Strict JSON parsing refused the input.
    #[error(transparent)]
    Json(#[from] strict::JsonError),
    /// The card payload could not be built.
    #[error(transparent)]
    Card(#[from] card::CardError),
    /// A key could not be loaded, generated or used.
    #[error(transparent)]
    Key(#[from] keys::KeyError),
    /// A signature or signed card was refused.
    #[error(transparent)]
    Jws(#[from] jws::JwsError),
    /// Fetching or checking a card from a URL failed.
    #[error(transparent)]
    Fetch(#[from] fetch::FetchError),
}
