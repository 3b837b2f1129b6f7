//! The A2A v1.0 signing payload of an agent card (spec §8.4) and the card digest.
//!
//! A card signature covers `RFC8785(card without its top-level "signatures" member)`. The
//! spec and the official SDKs disagree on what else is removed before canonicalizing, so
//! the payload is built under a named [`Profile`]:
//!
//! | profile | payload | who produces it |
//! |---|---|---|
//! | [`Profile::Strict`] (default) | the card **as received**, minus top-level `signatures` (and v0.3's members, below) | any JCS signer; what we verify by default: every served member is covered |
//! | [`Profile::SpecPruned`] | the card read into the typed `ferry_proto::AgentCard` and written back: proto presence rules (spec §8.4.1 step 1) drop non-REQUIRED defaults (`"extensions":[]`, `"required":false`), keep REQUIRED members even when empty (`"description":""`, `"skills":[]`) and keep set `optional` fields (`"streaming":false`) | the spec's own construction; ferry's signer ([`signing_payload`]) |
//! | [`Profile::A2aSdkCompat`] | the card as received, minus `signatures`, then `null`, `""`, `[]` and `{}` dropped recursively (post-order) | `a2a-sdk` 1.3.0 and `@a2a-js/sdk` 1.3.0 |
//!
//! Two threats shape this:
//!
//! - **Unsigned members riding along.** The SDKs also drop members their schema does not
//!   know before signing; emulating that would let anyone add members to a signed card.
//!   [`Profile::A2aSdkCompat`] therefore never drops unknown members. [`Profile::SpecPruned`]
//!   does drop them, because it canonicalizes the typed card; its [`CardPayload::value`] is
//!   then the typed card, so a caller that uses only the payload never sees an unsigned
//!   member.
//! - **Trusting the raw card.** A verifier must hand its caller the payload that was
//!   verified ([`CardPayload::value`]), not the bytes that were received.
//!
//! The card digest that security teams pin is the SHA-256 of the [`Profile::Strict`]
//! payload ([`digest`]).
//!
//! A card that serves v1.0 and v0.3 carries v0.3's top-level members (`url`,
//! `preferredTransport`, …) and v0.3's spelling inside each security scheme next to v1.0's
//! (see `ferry_proto::v03::add_card_members`). They are not part of the v1.0 card: every
//! profile removes them first ([`ferry_proto::v03::strip_card_members`]), so no signature
//! covers them, no digest counts them, and the verified payload never shows them. A
//! v0.3-only card (no `supportedInterfaces`) is kept whole.

use crate::jcs;
use ferry_proto::AgentCard;
use serde_json::Value;
use std::fmt;

/// Which members are removed from a card before it is canonicalized; see the module docs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Profile {
    /// The card as received, minus the top-level `signatures` member.
    #[default]
    Strict,
    /// The typed card with spec §8.4.1 default pruning (proto presence rules).
    SpecPruned,
    /// As [`Profile::Strict`], then `null`, `""`, `[]` and `{}` dropped recursively, as the
    /// official SDKs do. Unknown members are kept.
    A2aSdkCompat,
}

impl Profile {
    /// The profile's name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Strict => "strict",
            Profile::SpecPruned => "spec-pruned",
            Profile::A2aSdkCompat => "a2a-sdk-compat",
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a card payload could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CardError {
    /// The card is not a JSON object.
    #[error("an agent card must be a JSON object, found {found}")]
    NotAnObject {
        /// The JSON type found (`array`, `string`, …).
        found: &'static str,
    },
    /// The card does not fit the A2A v1.0 `AgentCard` schema (needed by
    /// [`Profile::SpecPruned`] only).
    #[error("not an A2A v1.0 agent card: {reason}")]
    Schema {
        /// serde's description of the mismatch.
        reason: String,
    },
}

/// The canonical bytes a card signature covers, with the profile that produced them.
#[derive(Debug, Clone, PartialEq)]
pub struct CardPayload {
    profile: Profile,
    value: Value,
    canonical: Vec<u8>,
}

impl CardPayload {
    /// The profile that built this payload.
    pub fn profile(&self) -> Profile {
        self.profile
    }

    /// The payload as JSON: the card without `signatures`, after the profile's pruning. This
    /// is the only form of the card a verifier's caller should use.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The RFC 8785 bytes that are base64url-encoded into the JWS signing input.
    pub fn canonical(&self) -> &[u8] {
        &self.canonical
    }

    /// `sha256:<hex>` of [`CardPayload::canonical`].
    pub fn digest(&self) -> String {
        jcs::digest_bytes(&self.canonical)
    }
}

/// Builds the signing payload of `card` (a parsed card, signatures and all) under `profile`.
///
/// ```
/// use ferry_trust::card::{payload, Profile};
///
/// let card = ferry_trust::strict::parse(br#"{"name":"A","iconUrl":"","signatures":[]}"#)?;
/// assert_eq!(payload(&card, Profile::Strict)?.canonical(), br#"{"iconUrl":"","name":"A"}"#);
/// assert_eq!(payload(&card, Profile::A2aSdkCompat)?.canonical(), br#"{"name":"A"}"#);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn payload(card: &Value, profile: Profile) -> Result<CardPayload, CardError> {
    let Value::Object(map) = card else {
        return Err(CardError::NotAnObject {
            found: json_type(card),
        });
    };
    let value = match profile {
        Profile::Strict => {
            let mut map = map.clone();
            map.remove("signatures");
            ferry_proto::v03::strip_card_members(&mut map);
            Value::Object(map)
        }
        Profile::A2aSdkCompat => {
            let mut map = map.clone();
            map.remove("signatures");
            ferry_proto::v03::strip_card_members(&mut map);
            let mut value = Value::Object(map);
            drop_empty_members(&mut value);
            value
        }
        Profile::SpecPruned => {
            let typed: AgentCard =
                serde_json::from_value(card.clone()).map_err(|e| CardError::Schema {
                    reason: e.to_string(),
                })?;
            return signing_payload(&typed);
        }
    };
    let canonical = jcs::canonicalize(&value);
    Ok(CardPayload {
        profile,
        value,
        canonical,
    })
}

/// Builds the spec §8.4 signing payload of a typed card ([`Profile::SpecPruned`]): what
/// ferry signs. Serving the same typed card makes its [`Profile::Strict`] payload equal to
/// this one, so strict verifiers accept ferry's signatures.
///
/// ```
/// let card: ferry_proto::AgentCard = serde_json::from_str(r#"{"name":"A","description":"",
///   "version":"1","supportedInterfaces":[],"capabilities":{"streaming":false,"extensions":[]},
///   "defaultInputModes":[],"defaultOutputModes":[],"skills":[]}"#)?;
/// let p = ferry_trust::card::signing_payload(&card)?;
/// assert_eq!(
///     p.canonical(),
///     br#"{"capabilities":{"streaming":false},"defaultInputModes":[],"defaultOutputModes":[],"description":"","name":"A","skills":[],"supportedInterfaces":[],"version":"1"}"#
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn signing_payload(card: &AgentCard) -> Result<CardPayload, CardError> {
    // The proto model's serde already encodes the presence rules: REQUIRED members are
    // always written, `optional` members when set, everything else only when not default.
    let mut value = serde_json::to_value(card).map_err(|e| CardError::Schema {
        reason: e.to_string(),
    })?;
    if let Value::Object(map) = &mut value {
        map.remove("signatures");
    }
    let canonical = jcs::canonicalize(&value);
    Ok(CardPayload {
        profile: Profile::SpecPruned,
        value,
        canonical,
    })
}

/// The card digest: `sha256:<hex>` of the [`Profile::Strict`] payload, the value a pinned
/// expectation (`--expect-digest`) is compared with. Signatures do not change it.
///
/// ```
/// let card = ferry_trust::strict::parse(br#"{"b":1,"a":2,"signatures":[]}"#)?;
/// assert_eq!(
///     ferry_trust::card::digest(&card)?,
///     ferry_trust::jcs::digest(&serde_json::json!({"a":2,"b":1}))
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn digest(card: &Value) -> Result<String, CardError> {
    Ok(payload(card, Profile::Strict)?.digest())
}

/// Drops `null`, `""`, `[]` and `{}` members and elements recursively, children first, so a
/// container that becomes empty is dropped too (as the SDKs' `_clean_empty` does). The
/// top-level value itself is kept.
fn drop_empty_members(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for v in map.values_mut() {
                drop_empty_members(v);
            }
            map.retain(|_, v| !is_empty(v));
        }
        Value::Array(items) => {
            for v in items.iter_mut() {
                drop_empty_members(v);
            }
            items.retain(|v| !is_empty(v));
        }
        _ => {}
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Bool(_) | Value::Number(_) => false,
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strict;
    use serde_json::json;

    /// Spec §6 (a2a-v1.md), the self-generated EdDSA vector: card and canonical payload.
    const ECHO_CARD: &str = r#"{"name":"Echo Agent","description":"Echoes text back","version":"1.0.0","supportedInterfaces":[{"url":"https://agent.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":true,"pushNotifications":false},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"echo","name":"Echo","description":"Echo input","tags":["echo"]}]}"#;
    const ECHO_PAYLOAD: &str = r#"{"capabilities":{"pushNotifications":false,"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"description":"Echoes text back","name":"Echo Agent","skills":[{"description":"Echo input","id":"echo","name":"Echo","tags":["echo"]}],"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0","url":"https://agent.example.com/a2a"}],"version":"1.0.0"}"#;

    #[test]
    fn spec_section_6_vector_under_every_profile() {
        let raw = strict::parse(ECHO_CARD.as_bytes()).expect("card");
        let typed: AgentCard = serde_json::from_str(ECHO_CARD).expect("typed");
        assert_eq!(
            signing_payload(&typed).expect("payload").canonical(),
            ECHO_PAYLOAD.as_bytes()
        );
        for profile in [Profile::Strict, Profile::SpecPruned, Profile::A2aSdkCompat] {
            let p = payload(&raw, profile).expect("payload");
            assert_eq!(p.canonical(), ECHO_PAYLOAD.as_bytes(), "{profile}");
            assert_eq!(p.profile(), profile);
        }
    }

    #[test]
    fn spec_pruning_keeps_required_and_set_optional_members() {
        // The spec §6 example's pruning, on a card with every REQUIRED member present.
        let raw = json!({
            "name": "Example Agent", "description": "", "version": "",
            "supportedInterfaces": [{"url":"u","protocolBinding":"JSONRPC","protocolVersion":"1.0","tenant":""}],
            "capabilities": {"streaming": false, "pushNotifications": false, "extensions": [
                {"uri": "urn:x", "required": false, "description": ""}
            ]},
            "securitySchemes": {}, "securityRequirements": [],
            "defaultInputModes": [], "defaultOutputModes": [], "skills": [],
            "signatures": [{"protected": "e30", "signature": "AA"}],
            "iconUrl": "",
            "unknownMember": "dropped by the typed model"
        });
        let p = payload(&raw, Profile::SpecPruned).expect("payload");
        assert_eq!(
            String::from_utf8_lossy(p.canonical()),
            r#"{"capabilities":{"extensions":[{"uri":"urn:x"}],"pushNotifications":false,"streaming":false},"defaultInputModes":[],"defaultOutputModes":[],"description":"","iconUrl":"","name":"Example Agent","skills":[],"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0","url":"u"}],"version":""}"#
        );
        assert!(p.value().get("unknownMember").is_none());
    }

    #[test]
    fn sdk_compat_drops_empties_post_order_and_keeps_unknown_members() {
        let raw = json!({
            "name": "A", "description": "", "skills": [{"examples": [], "tags": [""]}],
            "capabilities": {"extensions": [], "streaming": false},
            "x-unknown": {"kept": 0}, "nothing": null,
            "signatures": [{"protected": "e30", "signature": "AA"}]
        });
        let p = payload(&raw, Profile::A2aSdkCompat).expect("payload");
        assert_eq!(
            p.canonical(),
            br#"{"capabilities":{"streaming":false},"name":"A","x-unknown":{"kept":0}}"#
        );
    }

    #[test]
    fn strict_removes_only_top_level_signatures() {
        let raw = json!({"signatures": [], "skills": [{"signatures": 1}]});
        let p = payload(&raw, Profile::Strict).expect("payload");
        assert_eq!(p.canonical(), br#"{"skills":[{"signatures":1}]}"#);
    }

    #[test]
    fn refuses_non_objects_and_non_cards() {
        assert_eq!(
            payload(&json!([1]), Profile::Strict),
            Err(CardError::NotAnObject { found: "an array" })
        );
        // A member the card cannot be used without; `description` would be read as empty.
        let err = payload(&json!({"name": "A"}), Profile::SpecPruned).expect_err("schema");
        assert!(
            matches!(&err, CardError::Schema { reason } if reason.contains("supportedInterfaces")),
            "{err}"
        );
    }
}
