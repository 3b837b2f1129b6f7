//! Detached JWS as cards carry them: the input is split like a compact JWS
//! (`protected.payload.signature`) and verified under fixed keys of each type. For inputs that
//! start with `!` (signing is slow; the fuzzer learns the prefix), a signature ferry makes
//! over the payload verifies, and one over another payload does not.

#![no_main]

use ferry_trust::jws;
use ferry_trust::keys::{Algorithm, SigningKey};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

/// One key per key type, fixed so that seeds can hold real signatures.
fn keys() -> &'static [SigningKey] {
    static KEYS: OnceLock<Vec<SigningKey>> = OnceLock::new();
    KEYS.get_or_init(|| {
        let ed = SigningKey::from_ed25519_seed(&[7; 32], Algorithm::EdDsa, "ed")
            .expect("an Ed25519 key from a seed");
        let ec = SigningKey::generate(Algorithm::Es256, "ec").expect("a P-256 key");
        vec![ed, ec]
    })
}

fuzz_target!(|input: &[u8]| {
    let text = String::from_utf8_lossy(input);
    let mut pieces = text.splitn(3, '.');
    let (protected, payload, signature) = (
        pieces.next().unwrap_or_default(),
        pieces.next().unwrap_or_default(),
        pieces.next().unwrap_or_default(),
    );
    let _ = jws::parse_protected(protected);
    for key in keys() {
        let public = key.public_key();
        if let Ok(header) =
            jws::verify_detached(protected, payload.as_bytes(), signature, None, &public)
        {
            assert_eq!(
                header.alg(),
                key.alg(),
                "verified under the key's algorithm"
            );
        }
        if !input.starts_with(b"!") {
            continue;
        }
        let (p, s) = jws::sign_detached(key, payload.as_bytes(), None).expect("signs");
        jws::verify_detached(&p, payload.as_bytes(), &s, None, &public)
            .expect("ferry's own signature verifies");
        let mut other = payload.as_bytes().to_vec();
        other.push(b'!');
        assert!(
            jws::verify_detached(&p, &other, &s, None, &public).is_err(),
            "a signature does not carry over to another payload"
        );
    }
});
