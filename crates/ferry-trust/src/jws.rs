//! JWS with a detached payload (RFC 7515), as A2A v1.0 §8.4 uses it to sign agent cards.
//!
//! ```text
//! signing_input = protected || "." || BASE64URL(payload)     -- protected used verbatim
//! signature     = BASE64URL(Sign(alg, key, signing_input))
//! ```
//!
//! The payload travels separately (for a card: its canonical form, see [`crate::card`]); it
//! is base64url-encoded inside the signing input, so this is not RFC 7797 `b64:false`.
//!
//! Rules enforced by [`verify_detached`], each guarding against a known attack:
//! - `protected` and `signature` are strict base64url: no `=`, no non-canonical trailing
//!   bits; the header is at most 4 KiB, UTF-8, a JSON object **without duplicate names** (a
//!   second `alg` is the classic split between the check and the verification);
//! - `alg` comes from the protected header only, must be on the allowlist (never `none` or
//!   `HS*`) and must fit the key's type; a key with a JWK `alg` accepts only that `alg`;
//! - `crit` and `b64` are refused (we understand no extensions); `jwk`, `x5u`, `x5c` and
//!   `jku` are never used to find a key (`jku` is only reported to the caller);
//! - `typ`, if present, must be `JOSE` (any case);
//! - the unprotected `header`, if present, must be an object whose names are disjoint from
//!   the protected header's (RFC 7515 §7.2.1); nothing is read from it;
//! - ECDSA signatures must be exactly 64 (ES256) or 96 (ES384) bytes of R‖S; DER is refused.
//!   High-S signatures are accepted (JWS has no low-S rule; RFC 7515 A.3 itself is high-S),
//!   so signature bytes are malleable and must never serve as an identifier.
//!
//! [`verify_card`] adds the card rules: at most 8 signatures, `kid` required and selecting
//! the key by exact match, and at least one signature valid under one of the allowed
//! payload profiles. It returns a [`VerifiedCard`] that only this module can build.

use crate::card::{self, CardError, CardPayload, Profile};
use crate::keys::{Algorithm, KeyError, KeySet, PublicKey, SigningKey};
use crate::strict::{self, JsonError, Limits};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ferry_proto::{AgentCard, AgentCardSignature};
use serde_json::{Map, Value};

/// The largest decoded protected header accepted.
pub const MAX_HEADER_BYTES: usize = 4 * 1024;
/// The most signatures a card may carry.
pub const MAX_SIGNATURES: usize = 8;

/// Why a signature (or a signed card) was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JwsError {
    /// A field is not strict unpadded base64url.
    #[error("{field} is not canonical unpadded base64url")]
    Base64 {
        /// `protected` or `signature`.
        field: &'static str,
    },
    /// The protected header is larger than [`MAX_HEADER_BYTES`].
    #[error("protected header is {size} bytes, limit is {limit}")]
    HeaderTooLarge {
        /// Its size (encoded, or decoded when that is known).
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The protected header is not strict JSON (duplicate names included).
    #[error("protected header: {0}")]
    HeaderJson(JsonError),
    /// The protected header (or the unprotected `header`) is not a JSON object.
    #[error("the {which} header is not a JSON object")]
    HeaderNotObject {
        /// `protected` or `unprotected`.
        which: &'static str,
    },
    /// A required header parameter is missing or not a string.
    #[error("header parameter {name:?} is missing or not a string")]
    HeaderParam {
        /// The parameter.
        name: &'static str,
    },
    /// `alg` is not on the allowlist (`none`, `HS256`, …).
    #[error("algorithm {alg:?} is not allowed")]
    AlgorithmNotAllowed {
        /// The `alg` value.
        alg: String,
    },
    /// A header parameter we refuse to process (`crit`, `b64`).
    #[error("header parameter {name:?} is not supported")]
    ForbiddenParam {
        /// The parameter.
        name: &'static str,
    },
    /// `typ` is present and not what the signed object is (`JOSE` for a card signature,
    /// `JWT` or `at+jwt` for an access token).
    #[error("header typ {typ:?} is not one this signed object may have")]
    BadType {
        /// The `typ` value.
        typ: String,
    },
    /// A name appears in both the protected and the unprotected header.
    #[error("header parameter {name:?} appears in both the protected and unprotected header")]
    HeaderOverlap {
        /// The shared name.
        name: String,
    },
    /// The header's `alg` does not fit the key (or the key's own `alg`).
    #[error("algorithm {alg} does not fit the {key} key")]
    KeyMismatch {
        /// The header's algorithm.
        alg: Algorithm,
        /// A description of the key.
        key: String,
    },
    /// The signature has the wrong length for its algorithm (e.g. DER-encoded ECDSA).
    #[error("{alg} signature is {len} bytes, expected {expected}")]
    SignatureLength {
        /// The algorithm.
        alg: Algorithm,
        /// The length found.
        len: usize,
        /// The required length.
        expected: usize,
    },
    /// The signature does not verify.
    #[error("signature does not verify")]
    BadSignature,
    /// No trusted key has the signature's `kid`.
    #[error("no trusted key has kid {kid:?}")]
    UnknownKid {
        /// The kid.
        kid: String,
    },
    /// A `signatures` entry is malformed.
    #[error("signature entry {index} is malformed: {reason}")]
    MalformedEntry {
        /// Its index in `signatures`.
        index: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// The card has no `signatures`.
    #[error("the card is not signed")]
    Unsigned,
    /// The card has more than [`MAX_SIGNATURES`] signatures.
    #[error("the card has {count} signatures, limit is {limit}")]
    TooManySignatures {
        /// How many.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// The card payload could not be built.
    #[error(transparent)]
    Card(#[from] CardError),
    /// A signing key failed.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// No signature verified; `failures` holds why each one failed, under the last profile
    /// tried (index into `signatures`, error).
    #[error("no signature verified ({} tried)", failures.len())]
    NoValidSignature {
        /// Why each signature failed.
        failures: Vec<(usize, JwsError)>,
    },
}

/// A protected header that passed every rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedHeader {
    alg: Algorithm,
    kid: Option<String>,
    jku: Option<String>,
    names: Vec<String>,
}

impl ProtectedHeader {
    /// The algorithm (from the protected header, never from anywhere else).
    pub fn alg(&self) -> Algorithm {
        self.alg
    }

    /// The key id, if present.
    pub fn kid(&self) -> Option<&str> {
        self.kid.as_deref()
    }

    /// The `jku`, if present. Never dereference it; at most compare it exactly with
    /// configured JWKS URLs.
    pub fn jku(&self) -> Option<&str> {
        self.jku.as_deref()
    }
}

pub(crate) fn b64_decode(s: &str, field: &'static str) -> Result<Vec<u8>, JwsError> {
    URL_SAFE_NO_PAD
        .decode(s)
        .map_err(|_| JwsError::Base64 { field })
}

/// Decodes and checks a protected header (see the module docs for the rules).
pub fn parse_protected(protected: &str) -> Result<ProtectedHeader, JwsError> {
    parse_header(protected, |typ| typ.eq_ignore_ascii_case("JOSE"))
}

/// Decodes and checks a protected header whose `typ`, if present, satisfies `typ_ok` (a
/// card signature's is `JOSE`, an access token's `JWT` or `at+jwt`).
pub(crate) fn parse_header(
    protected: &str,
    typ_ok: fn(&str) -> bool,
) -> Result<ProtectedHeader, JwsError> {
    // 4 base64 characters per 3 bytes: refuse before decoding anything large.
    if protected.len() > MAX_HEADER_BYTES.div_ceil(3) * 4 {
        return Err(JwsError::HeaderTooLarge {
            size: protected.len(),
            limit: MAX_HEADER_BYTES,
        });
    }
    let bytes = b64_decode(protected, "protected")?;
    let limits = Limits {
        max_bytes: MAX_HEADER_BYTES,
        max_depth: 8,
        allow_unsafe_integers: false,
    };
    let value = strict::parse_with(&bytes, &limits).map_err(|e| match e {
        JsonError::TooLarge { size, limit } => JwsError::HeaderTooLarge { size, limit },
        e => JwsError::HeaderJson(e),
    })?;
    let Value::Object(map) = value else {
        return Err(JwsError::HeaderNotObject { which: "protected" });
    };
    let string = |name: &'static str| -> Result<Option<String>, JwsError> {
        match map.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(JwsError::HeaderParam { name }),
        }
    };
    let alg_name = string("alg")?.ok_or(JwsError::HeaderParam { name: "alg" })?;
    let alg =
        Algorithm::from_name(&alg_name).ok_or(JwsError::AlgorithmNotAllowed { alg: alg_name })?;
    for name in ["crit", "b64"] {
        if map.contains_key(name) {
            return Err(JwsError::ForbiddenParam { name });
        }
    }
    if let Some(typ) = string("typ")?
        && !typ_ok(&typ)
    {
        return Err(JwsError::BadType { typ });
    }
    Ok(ProtectedHeader {
        alg,
        kid: string("kid")?,
        jku: string("jku")?,
        names: map.keys().cloned().collect(),
    })
}

/// Verifies a detached-payload JWS: `protected` and `signature` as they appear in the card
/// (base64url), the `payload` bytes, the optional unprotected `header`, and the key.
///
/// ```
/// use ferry_trust::{jws, keys::PublicKey};
///
/// let key = PublicKey::from_jwk(&serde_json::json!({"kty":"OKP","crv":"Ed25519",
///     "x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}))?;
/// let header = jws::verify_detached(
///     "eyJhbGciOiJFZERTQSJ9",
///     b"Example of Ed25519 signing",
///     "hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg",
///     None,
///     &key,
/// )?;
/// assert_eq!(header.alg(), ferry_trust::keys::Algorithm::EdDsa);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn verify_detached(
    protected: &str,
    payload: &[u8],
    signature: &str,
    unprotected: Option<&Value>,
    key: &PublicKey,
) -> Result<ProtectedHeader, JwsError> {
    let header = parse_protected(protected)?;
    check_unprotected(&header, unprotected)?;
    let alg = header.alg;
    if alg.key_type() != key.key_type() || key.alg().is_some_and(|a| a != alg) {
        return Err(JwsError::KeyMismatch {
            alg,
            key: match key.alg() {
                Some(a) => format!("{} ({a})", key.key_type()),
                None => key.key_type().to_string(),
            },
        });
    }
    let sig = b64_decode(signature, "signature")?;
    if let Some(expected) = alg.signature_len()
        && sig.len() != expected
    {
        return Err(JwsError::SignatureLength {
            alg,
            len: sig.len(),
            expected,
        });
    }
    let input = signing_input(protected, payload);
    if key.verify(alg, input.as_bytes(), &sig) {
        Ok(header)
    } else {
        Err(JwsError::BadSignature)
    }
}

fn check_unprotected(
    header: &ProtectedHeader,
    unprotected: Option<&Value>,
) -> Result<(), JwsError> {
    match unprotected {
        None => Ok(()),
        Some(Value::Object(map)) => match header.names.iter().find(|n| map.contains_key(*n)) {
            Some(name) => Err(JwsError::HeaderOverlap { name: name.clone() }),
            None => Ok(()),
        },
        Some(_) => Err(JwsError::HeaderNotObject {
            which: "unprotected",
        }),
    }
}

fn signing_input(protected: &str, payload: &[u8]) -> String {
    let mut s = String::with_capacity(protected.len() + 1 + payload.len().div_ceil(3) * 4);
    s.push_str(protected);
    s.push('.');
    URL_SAFE_NO_PAD.encode_string(payload, &mut s);
    s
}

/// Signs `payload` as a detached JWS; returns `(protected, signature)`, both base64url.
///
/// The protected header is `{"alg":…,"typ":"JOSE","kid":…}` (plus `jku` when given): the
/// member order of the spec's example, and `typ` always, because the a2a-js verifier refuses
/// a header without it.
pub fn sign_detached(
    key: &SigningKey,
    payload: &[u8],
    jku: Option<&str>,
) -> Result<(String, String), JwsError> {
    let quote = |s: &str| Value::String(s.to_owned()).to_string();
    let mut header = format!(
        "{{\"alg\":{},\"typ\":\"JOSE\",\"kid\":{}",
        quote(key.alg().name()),
        quote(key.kid())
    );
    if let Some(jku) = jku {
        header.push_str(",\"jku\":");
        header.push_str(&quote(jku));
    }
    header.push('}');
    let protected = URL_SAFE_NO_PAD.encode(header.as_bytes());
    let signature = sign_with_protected(key, &protected, payload)?;
    Ok((protected, signature))
}

/// Signs `payload` under a caller-made protected header (base64url, used verbatim); returns
/// the base64url signature. The header must pass [`parse_protected`] and name the key's
/// algorithm, so the signer cannot produce what the verifier would refuse.
pub fn sign_with_protected(
    key: &SigningKey,
    protected: &str,
    payload: &[u8],
) -> Result<String, JwsError> {
    let header = parse_protected(protected)?;
    if header.alg() != key.alg() {
        return Err(JwsError::KeyMismatch {
            alg: header.alg(),
            key: format!("{} ({})", key.alg().key_type(), key.alg()),
        });
    }
    let sig = key.sign(signing_input(protected, payload).as_bytes())?;
    Ok(URL_SAFE_NO_PAD.encode(sig))
}

/// Signs a typed card: appends one signature over its spec §8.4 payload
/// ([`card::signing_payload`]) and returns the signed card. Existing signatures are kept
/// (key rotation: several signatures may coexist).
pub fn sign_card(
    card: &AgentCard,
    key: &SigningKey,
    jku: Option<&str>,
) -> Result<AgentCard, JwsError> {
    let payload = card::signing_payload(card)?;
    let (protected, signature) = sign_detached(key, payload.canonical(), jku)?;
    let mut signed = card.clone();
    signed.signatures.push(AgentCardSignature {
        protected,
        signature,
        header: None,
    });
    Ok(signed)
}

/// A card whose signature verified. Only [`verify_card`] builds one, so holding a
/// `VerifiedCard` proves the check ran:
///
/// ```compile_fail
/// let forged = ferry_trust::jws::VerifiedCard { payload: todo!(), key_id: String::new(),
///     alg: ferry_trust::keys::Algorithm::EdDsa, signature_index: 0 };
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedCard {
    payload: CardPayload,
    key_id: String,
    alg: Algorithm,
    signature_index: usize,
}

impl VerifiedCard {
    /// The verified payload: the card as signed, without `signatures`. Use this, never the
    /// raw card: only these members are covered by the signature.
    pub fn card(&self) -> &Value {
        self.payload.value()
    }

    /// The payload, with its canonical bytes and profile.
    pub fn payload(&self) -> &CardPayload {
        &self.payload
    }

    /// The profile under which the signature verified.
    pub fn profile(&self) -> Profile {
        self.payload.profile()
    }

    /// The `kid` of the key that verified.
    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    /// The algorithm of the signature that verified.
    pub fn alg(&self) -> Algorithm {
        self.alg
    }

    /// The index in `signatures` of the signature that verified.
    pub fn signature_index(&self) -> usize {
        self.signature_index
    }
}

/// Verifies a card (strictly parsed, signatures included) against trusted `keys`: it is
/// trusted when at least one signature verifies under one of `profiles`, tried in order
/// (pass `&[Profile::Strict]` unless SDK-signed cards must be accepted).
pub fn verify_card(
    card: &Value,
    keys: &KeySet,
    profiles: &[Profile],
) -> Result<VerifiedCard, JwsError> {
    let entries = match card.get("signatures") {
        None => return Err(JwsError::Unsigned),
        Some(Value::Array(a)) if a.is_empty() => return Err(JwsError::Unsigned),
        Some(Value::Array(a)) => a,
        Some(_) => {
            return Err(JwsError::MalformedEntry {
                index: 0,
                reason: "signatures is not an array",
            });
        }
    };
    if entries.len() > MAX_SIGNATURES {
        return Err(JwsError::TooManySignatures {
            count: entries.len(),
            limit: MAX_SIGNATURES,
        });
    }
    let mut failures = Vec::new();
    for &profile in profiles {
        let payload = card::payload(card, profile)?;
        failures.clear();
        for (index, entry) in entries.iter().enumerate() {
            match verify_entry(index, entry, payload.canonical(), keys) {
                Ok((key_id, alg)) => {
                    return Ok(VerifiedCard {
                        payload,
                        key_id,
                        alg,
                        signature_index: index,
                    });
                }
                Err(e) => failures.push((index, e)),
            }
        }
    }
    Err(JwsError::NoValidSignature { failures })
}

fn verify_entry(
    index: usize,
    entry: &Value,
    payload: &[u8],
    keys: &KeySet,
) -> Result<(String, Algorithm), JwsError> {
    let malformed = |reason| JwsError::MalformedEntry { index, reason };
    let entry: &Map<String, Value> = entry.as_object().ok_or(malformed("not an object"))?;
    let protected = entry
        .get("protected")
        .and_then(Value::as_str)
        .ok_or(malformed("protected is missing or not a string"))?;
    let signature = entry
        .get("signature")
        .and_then(Value::as_str)
        .ok_or(malformed("signature is missing or not a string"))?;
    let header = parse_protected(protected)?;
    let kid = header.kid().ok_or(JwsError::HeaderParam { name: "kid" })?;
    let key = keys.get(kid).ok_or_else(|| JwsError::UnknownKid {
        kid: kid.to_owned(),
    })?;
    let header = verify_detached(protected, payload, signature, entry.get("header"), key)?;
    Ok((kid.to_owned(), header.alg()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(s: &str) -> String {
        URL_SAFE_NO_PAD.encode(s)
    }

    #[test]
    fn header_rules() {
        let ok = |h: &str| parse_protected(&b64(h));
        assert!(ok(r#"{"alg":"ES256","kid":"k","typ":"jose"}"#).is_ok());
        assert_eq!(
            ok(r#"{"alg":"none"}"#),
            Err(JwsError::AlgorithmNotAllowed { alg: "none".into() })
        );
        assert_eq!(
            ok(r#"{"alg":"HS256"}"#),
            Err(JwsError::AlgorithmNotAllowed {
                alg: "HS256".into()
            })
        );
        assert!(matches!(
            ok(r#"{"alg":"ES256","alg":"none"}"#),
            Err(JwsError::HeaderJson(JsonError::DuplicateMember { .. }))
        ));
        assert_eq!(
            ok(r#"{"alg":"ES256","crit":["exp"]}"#),
            Err(JwsError::ForbiddenParam { name: "crit" })
        );
        assert_eq!(
            ok(r#"{"alg":"ES256","b64":false}"#),
            Err(JwsError::ForbiddenParam { name: "b64" })
        );
        assert_eq!(
            ok(r#"{"alg":"ES256","typ":"JWT"}"#),
            Err(JwsError::BadType { typ: "JWT".into() })
        );
        assert_eq!(
            ok(r#"{"kid":"k"}"#),
            Err(JwsError::HeaderParam { name: "alg" })
        );
        assert_eq!(
            ok("[]"),
            Err(JwsError::HeaderNotObject { which: "protected" })
        );
        assert_eq!(
            parse_protected("eyJhbGciOiJFUzI1NiJ9="),
            Err(JwsError::Base64 { field: "protected" })
        );
        let big = format!(r#"{{"alg":"ES256","x":"{}"}}"#, "a".repeat(5000));
        assert!(matches!(ok(&big), Err(JwsError::HeaderTooLarge { .. })));
    }

    #[test]
    fn sign_and_verify_round_trip_for_every_algorithm() {
        for alg in Algorithm::ALL {
            let key = SigningKey::generate(alg, "k1").expect("generate");
            let (protected, sig) = sign_detached(&key, b"payload", None).expect("sign");
            let public = key.public_key();
            let header = verify_detached(&protected, b"payload", &sig, None, &public)
                .unwrap_or_else(|e| panic!("{alg}: {e}"));
            assert_eq!(header.alg(), alg);
            assert_eq!(header.kid(), Some("k1"));
            assert_eq!(
                verify_detached(&protected, b"payloaD", &sig, None, &public),
                Err(JwsError::BadSignature),
                "{alg}"
            );
        }
    }
}
