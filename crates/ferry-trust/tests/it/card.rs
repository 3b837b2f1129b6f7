//! The A2A card vectors (`jws/a2a-card-*.json`, signed by the official SDKs): payload bytes
//! and digests under the strict and the SDK-compatible profile.

use crate::support::read_json;
use ferry_trust::card::{Profile, digest, payload};
use ferry_trust::strict;

const CARD_VECTORS: [&str; 3] = [
    "jws/a2a-card-ed25519.json",
    "jws/a2a-card-ed25519-empty-members.json",
    "jws/a2a-card-es256.json",
];

/// The vector's card, re-encoded and read back through the strict parser.
fn signed_card(vector: &serde_json::Value) -> serde_json::Value {
    let text = serde_json::to_vec(&vector["signed_card"]).expect("encode");
    strict::parse(&text).expect("strict parse")
}

#[test]
fn payloads_match_the_sdk_vectors_under_both_profiles() {
    for file in CARD_VECTORS {
        let v = read_json(file);
        let card = signed_card(&v);
        let strict = payload(&card, Profile::Strict).expect("strict");
        assert_eq!(
            String::from_utf8_lossy(strict.canonical()),
            v["payload_strict_raw_jcs_utf8"].as_str().expect("payload"),
            "{file}"
        );
        assert_eq!(strict.digest(), v["card_digest_raw_jcs"], "{file}");
        assert_eq!(digest(&card).expect("digest"), v["card_digest_raw_jcs"]);

        let compat = payload(&card, Profile::A2aSdkCompat).expect("compat");
        assert_eq!(
            String::from_utf8_lossy(compat.canonical()),
            v["payload_sdk_profile_utf8"].as_str().expect("payload"),
            "{file}"
        );
        assert_eq!(compat.digest(), v["card_digest_sdk_profile"], "{file}");
        assert_eq!(
            strict.canonical() == compat.canonical(),
            v["payloads_identical"] == true,
            "{file}"
        );
    }
}

#[test]
fn signing_input_is_protected_dot_base64url_of_the_payload() {
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    for file in CARD_VECTORS {
        let v = read_json(file);
        let card = signed_card(&v);
        // The vectors' signing_input is over the profile the SDKs signed.
        let p = payload(&card, Profile::A2aSdkCompat).expect("compat");
        let input = format!(
            "{}.{}",
            v["protected_b64u"].as_str().expect("protected"),
            URL_SAFE_NO_PAD.encode(p.canonical())
        );
        assert_eq!(input, v["signing_input"].as_str().expect("input"), "{file}");
    }
}
