//! For receivers of an agent's push notifications written in Rust: checks the signature
//! ferry puts on every delivery ([`ferry_trust::push_signature`] has the format).
//!
//! ```
//! use ferry_client::push::{check_delivery, SIGNATURE_HEADER};
//! use ferry_trust::keys::{Algorithm, KeySet, SigningKey};
//! use ferry_trust::push_signature::{sign, Delivery, DEFAULT_LIFETIME};
//! use std::time::Duration;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let card = "https://agents.example.com/.well-known/agent-card.json";
//! let hook = "https://hooks.example.org/a2a";
//! // The agent's side: its key signs the delivery; its key set is published.
//! let key = SigningKey::generate(Algorithm::Es256, "push-1")?;
//! let keys = KeySet::new(vec![key.public_key()])?;
//! let body = br#"{"statusUpdate":{"taskId":"t-1"}}"#;
//! let delivery = Delivery { issuer: card, webhook: hook, delivery_id: "d-1", task_id: "t-1", body };
//! let mut headers = http::HeaderMap::new();
//! headers.insert(SIGNATURE_HEADER, sign(&key, &delivery, 1_800_000_000, DEFAULT_LIFETIME)?.parse()?);
//! // The receiver's side.
//! let verified = check_delivery(&headers, body, &keys, card, hook, 1_800_000_010, Duration::from_secs(60))?;
//! assert_eq!(verified.task_id, "t-1");
//! # Ok(()) }
//! ```

pub use ferry_trust::push_signature::{
    DELIVERY_ID_HEADER, PushSignatureError, SIGNATURE_HEADER, VerifiedDelivery, body_sha256, verify,
};

use ferry_trust::jwt::JwtError;
use ferry_trust::keys::KeySet;
use std::time::Duration;

/// Checks the signature in `headers` of a delivery whose body is `body` (see
/// [`verify`]); a delivery without one is refused as malformed.
pub fn check_delivery(
    headers: &http::HeaderMap,
    body: &[u8],
    keys: &KeySet,
    issuer: &str,
    audience: &str,
    now: i64,
    leeway: Duration,
) -> Result<VerifiedDelivery, PushSignatureError> {
    let token = headers
        .get(SIGNATURE_HEADER)
        .and_then(|v| v.to_str().ok())
        .ok_or(PushSignatureError::Token(JwtError::Malformed {
            reason: "no A2A-Push-Signature header",
        }))?;
    verify(token, body, keys, issuer, audience, now, leeway)
}
