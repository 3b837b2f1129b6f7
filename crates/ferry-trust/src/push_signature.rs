//! Signed push deliveries: a JWT in the [`SIGNATURE_HEADER`] of every push notification, so
//! that a receiver can tell a delivery really comes from the agent, was meant for it, and
//! carries the body the agent sent (A2A's non-normative JWT + JWKS flow, made precise).
//!
//! # The token
//!
//! A compact JWS (a JWT) signed with one of the agent's signing keys, its header
//! `{"alg": …, "kid": …, "typ": "JWT"}` (`kid` names the key in the agent's published key
//! set, `/.well-known/jwks.json`), its claims:
//!
//! | claim | value |
//! |---|---|
//! | `iss` | the agent's card URL |
//! | `aud` | the webhook URL the delivery is posted to |
//! | `sub`, `taskId` | the task the event belongs to |
//! | `jti` | the delivery id (also in [`DELIVERY_ID_HEADER`]; the same across retries) |
//! | `iat`, `exp` | when it was signed, and until when it is valid (default 5 minutes) |
//! | `body_sha256` | base64url (no padding) of the SHA-256 of the exact body bytes |
//!
//! Neither the body nor the target can be swapped: the body's hash and the webhook URL are
//! signed. A receiver checks it with any JWT library: verify with the key of `kid` from the
//! agent's key set (ES256, ES384, EdDSA, RS256 or PS256; never `none` or HMAC), require `iss`
//! to be the agent's card URL and `aud` its own URL, check `exp`, compare `body_sha256` with
//! the hash of the body it received, and drop a `jti` it has seen (a replay). [`verify`]
//! does all but the last.

use crate::jwt::{self, JwtError, Rules};
use crate::keys::{KeyError, KeySet, SigningKey};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::json;
use std::time::Duration;

/// The header that carries the signature.
pub const SIGNATURE_HEADER: &str = "A2A-Push-Signature";
/// The header that carries the delivery id (the signature's `jti`).
pub const DELIVERY_ID_HEADER: &str = "A2A-Delivery-Id";
/// How long a signature is valid by default.
pub const DEFAULT_LIFETIME: Duration = Duration::from_secs(300);

/// One delivery, as it is signed.
#[derive(Debug, Clone, Copy)]
pub struct Delivery<'a> {
    /// The agent's card URL (`iss`).
    pub issuer: &'a str,
    /// The webhook URL (`aud`).
    pub webhook: &'a str,
    /// The delivery id (`jti`).
    pub delivery_id: &'a str,
    /// The task (`sub`, `taskId`).
    pub task_id: &'a str,
    /// The exact body bytes.
    pub body: &'a [u8],
}

/// What a verified signature says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedDelivery {
    /// The delivery id (`jti`): drop a delivery whose id was seen already.
    pub delivery_id: String,
    /// The task.
    pub task_id: String,
    /// Until when the signature is valid (seconds since the epoch): keep seen ids that long.
    pub expires_at: i64,
}

/// Why a delivery's signature was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PushSignatureError {
    /// The token itself: form, algorithm, key, signature, issuer, audience, times.
    #[error("{0}")]
    Token(#[from] JwtError),
    /// A claim a delivery signature has is missing.
    #[error("the signature has no {0} claim")]
    MissingClaim(&'static str),
    /// The body is not the one that was signed.
    #[error("the body is not the one that was signed (body_sha256 differs)")]
    BodyMismatch,
}

/// The signature of `delivery` with `key`, signed at `now` (seconds since the epoch), valid
/// for `lifetime`.
pub fn sign(
    key: &SigningKey,
    delivery: &Delivery<'_>,
    now: i64,
    lifetime: Duration,
) -> Result<String, KeyError> {
    let lifetime = i64::try_from(lifetime.as_secs()).unwrap_or(i64::MAX);
    let claims = json!({
        "iss": delivery.issuer,
        "aud": delivery.webhook,
        "sub": delivery.task_id,
        "taskId": delivery.task_id,
        "jti": delivery.delivery_id,
        "iat": now,
        "exp": now.saturating_add(lifetime),
        "body_sha256": body_sha256(delivery.body),
    });
    jwt::sign(key, &claims)
}

/// Checks the signature `token` of a delivery whose body is `body`: signed by a key of
/// `keys`, issued by the agent `issuer` (its card URL), for the webhook `audience`, valid at
/// `now` (with `leeway` either way), and over this body. The replay check (a `jti` seen
/// before) is the receiver's.
pub fn verify(
    token: &str,
    body: &[u8],
    keys: &KeySet,
    issuer: &str,
    audience: &str,
    now: i64,
    leeway: Duration,
) -> Result<VerifiedDelivery, PushSignatureError> {
    let rules = Rules {
        leeway,
        ..Rules::new(issuer, audience)
    };
    let claims = jwt::verify(token, keys, &rules, now)?;
    let text = |name: &'static str| {
        claims
            .all
            .get(name)
            .and_then(|v| v.as_str())
            .ok_or(PushSignatureError::MissingClaim(name))
    };
    let signed_hash = text("body_sha256")?;
    if signed_hash != body_sha256(body) {
        return Err(PushSignatureError::BodyMismatch);
    }
    Ok(VerifiedDelivery {
        delivery_id: text("jti")?.to_owned(),
        task_id: text("taskId")?.to_owned(),
        expires_at: claims.expires_at,
    })
}

/// base64url (no padding) of the SHA-256 of `body`.
pub fn body_sha256(body: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, body))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::Algorithm;

    const CARD: &str = "https://agents.example.com/.well-known/agent-card.json";
    const HOOK: &str = "https://hooks.example.org/a2a";
    const NOW: i64 = 1_800_000_000;
    const BODY: &[u8] =
        br#"{"statusUpdate":{"taskId":"t-1","status":{"state":"TASK_STATE_COMPLETED"}}}"#;

    fn delivery() -> Delivery<'static> {
        Delivery {
            issuer: CARD,
            webhook: HOOK,
            delivery_id: "d-1",
            task_id: "t-1",
            body: BODY,
        }
    }

    fn check(
        token: &str,
        body: &[u8],
        keys: &KeySet,
        audience: &str,
        now: i64,
    ) -> Result<VerifiedDelivery, PushSignatureError> {
        verify(
            token,
            body,
            keys,
            CARD,
            audience,
            now,
            Duration::from_secs(60),
        )
    }

    #[test]
    fn a_signed_delivery_verifies_with_every_algorithm() {
        for alg in [
            Algorithm::Es256,
            Algorithm::Es384,
            Algorithm::EdDsa,
            Algorithm::Rs256,
            Algorithm::Ps256,
        ] {
            let key = SigningKey::generate(alg, "push-1").expect("a key");
            let keys = KeySet::new(vec![key.public_key()]).expect("a set");
            let token = sign(&key, &delivery(), NOW, DEFAULT_LIFETIME).expect("signed");
            let verified = check(&token, BODY, &keys, HOOK, NOW).expect("verifies");
            assert_eq!(
                verified,
                VerifiedDelivery {
                    delivery_id: "d-1".into(),
                    task_id: "t-1".into(),
                    expires_at: NOW + 300,
                },
                "{alg:?}"
            );
        }
    }

    #[test]
    fn a_swapped_body_target_or_time_is_refused() {
        let key = SigningKey::generate(Algorithm::Es256, "push-1").expect("a key");
        let keys = KeySet::new(vec![key.public_key()]).expect("a set");
        let token = sign(&key, &delivery(), NOW, DEFAULT_LIFETIME).expect("signed");
        assert_eq!(
            check(&token, b"{}", &keys, HOOK, NOW),
            Err(PushSignatureError::BodyMismatch)
        );
        assert_eq!(
            check(&token, BODY, &keys, "https://elsewhere.example/hook", NOW),
            Err(PushSignatureError::Token(JwtError::WrongAudience))
        );
        assert_eq!(
            check(&token, BODY, &keys, HOOK, NOW + 300 + 61),
            Err(PushSignatureError::Token(JwtError::Expired))
        );
        let other = SigningKey::generate(Algorithm::Es256, "push-1").expect("another key");
        let forged = sign(&other, &delivery(), NOW, DEFAULT_LIFETIME).expect("signed");
        assert_eq!(
            check(&forged, BODY, &keys, HOOK, NOW),
            Err(PushSignatureError::Token(JwtError::BadSignature))
        );
        let wrong_issuer = verify(
            &token,
            BODY,
            &keys,
            "https://other.example/card",
            HOOK,
            NOW,
            Duration::ZERO,
        );
        assert!(matches!(
            wrong_issuer,
            Err(PushSignatureError::Token(JwtError::WrongIssuer { .. }))
        ));
    }

    #[test]
    fn the_body_hash_is_base64url_of_sha256() {
        // SHA-256("abc"), RFC 4634's test vector, in base64url without padding.
        assert_eq!(
            body_sha256(b"abc"),
            "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0"
        );
    }
}
