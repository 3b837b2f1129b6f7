//! An agent card from outside: strict parse, the signing payload under every profile, its
//! digest, the typed card (which must survive a round trip), and signature verification
//! against fixed keys.

#![no_main]

use ferry_proto::AgentCard;
use ferry_trust::card::{self, Profile};
use ferry_trust::keys::{Algorithm, KeySet, SigningKey};
use ferry_trust::{jws, strict};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

/// The key seeds sign with (kid `ed`), fixed so that a seed's signature verifies.
fn trusted() -> &'static KeySet {
    static KEYS: OnceLock<KeySet> = OnceLock::new();
    KEYS.get_or_init(|| {
        let key = SigningKey::from_ed25519_seed(&[7; 32], Algorithm::EdDsa, "ed")
            .expect("an Ed25519 key from a seed");
        KeySet::new(vec![key.public_key()]).expect("a key set")
    })
}

fuzz_target!(|input: &[u8]| {
    let Ok(value) = strict::parse(input) else {
        return;
    };
    for profile in [Profile::Strict, Profile::SpecPruned, Profile::A2aSdkCompat] {
        if let Ok(payload) = card::payload(&value, profile) {
            let _ = payload.digest();
        }
    }
    let _ = jws::verify_card(
        &value,
        trusted(),
        &[Profile::Strict, Profile::SpecPruned, Profile::A2aSdkCompat],
    );
    if let Ok(typed) = serde_json::from_value::<AgentCard>(value) {
        let written = serde_json::to_value(&typed).expect("serializes");
        let read: AgentCard = serde_json::from_value(written).expect("ferry reads what it writes");
        assert_eq!(read, typed, "a round trip changes nothing");
        let _ = card::signing_payload(&typed);
    }
});
