//! Public keys from outside: PEM, a JWK, a JWKS. A key that loads survives a round trip
//! through its JWK.

#![no_main]

use ferry_trust::keys::{KeySet, PublicKey};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let _ = PublicKey::from_pem(input);
    let _ = PublicKey::from_spki_der(input);
    if let Ok(key) = PublicKey::from_jwk_bytes(input) {
        let jwk = key.to_jwk();
        let again = PublicKey::from_jwk(&jwk).expect("ferry reads the JWK it writes");
        assert!(again == key, "the JWK round trip changed the key");
    }
    if let Ok(set) = KeySet::from_jwks(input) {
        let jwks = serde_json::to_vec(&set.to_jwks()).expect("serializes");
        let again = KeySet::from_jwks(&jwks).expect("ferry reads the JWKS it writes");
        assert_eq!(again.keys().len(), set.keys().len());
    }
});
