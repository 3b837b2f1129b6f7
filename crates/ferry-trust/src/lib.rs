//! ferry-trust: deciding whether an A2A agent card can be trusted.
//!
//! One job: turn the bytes of a card into facts a caller can rely on. It parses JSON
//! strictly ([`strict`]: duplicate member names, limits, unsafe integers and malformed text
//! are refused with an error that says where), computes the RFC 8785 canonical form and the
//! `sha256:` digest that security teams pin ([`jcs`]), and builds the A2A v1.0 signing payload
//! of a card ([`card`], spec §8.4).
//!
//! It must never know about servers or browsers: it takes bytes and values, and returns
//! values and typed errors.
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
pub mod jcs;
pub mod strict;
