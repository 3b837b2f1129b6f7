//! JWS against outside answers: RFC 7515 A.2/A.3, RFC 8037 A.4, the A2A cards signed by the
//! official SDKs (both profiles, every case) and the spec §6 EdDSA vector.

use crate::support::read_json;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ferry_trust::card::Profile;
use ferry_trust::jws::{self, JwsError};
use ferry_trust::keys::{Algorithm, KeySet, PublicKey, SigningKey};
use ferry_trust::strict;
use serde_json::Value;

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v[k].as_str().unwrap_or_else(|| panic!("missing {k}"))
}

/// Each RFC vector's cases, under the JWK and under the PEM form of its key.
fn check_rfc_vector(file: &str) -> usize {
    let v = read_json(file);
    let keys = [
        PublicKey::from_jwk(&v["jwk_public"]).expect("jwk"),
        PublicKey::from_pem(s(&v, "public_key_spki_pem").as_bytes()).expect("pem"),
    ];
    let mut cases: Vec<Value> = v["cases"].as_array().cloned().unwrap_or_default();
    cases.push(serde_json::json!({
        "id": "top-level", "protected_b64u": v["protected_b64u"], "payload_b64u": v["payload_b64u"],
        "signature_b64u": v["signature_b64u"], "expected": v["expected"],
    }));
    for key in &keys {
        for case in &cases {
            let id = s(case, "id");
            let payload = URL_SAFE_NO_PAD
                .decode(s(case, "payload_b64u"))
                .expect("payload");
            let got = jws::verify_detached(
                s(case, "protected_b64u"),
                &payload,
                s(case, "signature_b64u"),
                None,
                key,
            );
            match s(case, "expected") {
                "valid" => assert!(got.is_ok(), "{file} {id}: {got:?}"),
                _ => assert!(got.is_err(), "{file} {id}: accepted"),
            }
        }
    }
    cases.len()
}

#[test]
fn rfc7515_a3_es256_and_its_negative_cases() {
    assert_eq!(check_rfc_vector("jws/rfc7515-a3-es256.json"), 10);
    // The reasons, for the cases where the reason is the point.
    let v = read_json("jws/rfc7515-a3-es256.json");
    let key = PublicKey::from_jwk(&v["jwk_public"]).expect("jwk");
    let case = |id: &str| {
        let c = v["cases"]
            .as_array()
            .and_then(|a| a.iter().find(|c| c["id"] == id))
            .unwrap_or_else(|| panic!("case {id}"));
        let payload = URL_SAFE_NO_PAD
            .decode(s(c, "payload_b64u"))
            .expect("payload");
        jws::verify_detached(
            s(c, "protected_b64u"),
            &payload,
            s(c, "signature_b64u"),
            None,
            &key,
        )
    };
    assert!(matches!(
        case("der-encoded-signature"),
        Err(JwsError::SignatureLength {
            len: 71,
            expected: 64,
            ..
        })
    ));
    assert_eq!(
        case("padded-base64url-signature"),
        Err(JwsError::Base64 { field: "signature" })
    );
    assert!(matches!(
        case("header-alg-changed-to-ES384"),
        Err(JwsError::KeyMismatch { .. })
    ));
    assert!(matches!(
        case("alg-none"),
        Err(JwsError::AlgorithmNotAllowed { .. })
    ));
    assert!(matches!(
        case("alg-HS256-with-public-key-as-secret"),
        Err(JwsError::AlgorithmNotAllowed { .. })
    ));
    assert_eq!(case("signature-bit-flip"), Err(JwsError::BadSignature));
}

#[test]
fn rfc8037_a4_ed25519_verifies_and_signs_deterministically() {
    assert_eq!(check_rfc_vector("jws/rfc8037-a4-ed25519.json"), 7);
    let v = read_json("jws/rfc8037-a4-ed25519.json");
    let seed = URL_SAFE_NO_PAD
        .decode(s(&v["jwk_private"], "d"))
        .expect("seed");
    let key = SigningKey::from_ed25519_seed(&seed, Algorithm::EdDsa, "rfc8037").expect("key");
    let sig = jws::sign_with_protected(
        &key,
        s(&v, "protected_b64u"),
        s(&v, "payload_utf8").as_bytes(),
    )
    .expect("sign");
    assert_eq!(sig, s(&v, "signature_b64u"));
    // A private JWK is refused as a public key.
    assert!(PublicKey::from_jwk(&v["jwk_private"]).is_err());
}

#[test]
fn rfc7515_a2_rs256() {
    assert_eq!(check_rfc_vector("jws/rfc7515-a2-rs256.json"), 1);
}

#[test]
fn sdk_signed_cards_under_both_profiles_with_every_case() {
    let mut checked = 0;
    for file in [
        "jws/a2a-card-ed25519.json",
        "jws/a2a-card-ed25519-empty-members.json",
        "jws/a2a-card-es256.json",
    ] {
        let v = read_json(file);
        let keys =
            KeySet::new(vec![PublicKey::from_jwk(&v["jwk_public"]).expect("jwk")]).expect("keys");
        let mut cards = vec![(
            "signed_card".to_owned(),
            v["signed_card"].clone(),
            v["valid_strict_raw_jcs"] == true,
            v["valid_sdk_profile"] == true,
        )];
        for c in v["cases"].as_array().expect("cases") {
            cards.push((
                s(c, "id").to_owned(),
                c["card"].clone(),
                c["valid_strict_raw_jcs"] == true,
                c["valid_sdk_profile"] == true,
            ));
        }
        for (id, card, strict_ok, compat_ok) in cards {
            let card = strict::parse(&serde_json::to_vec(&card).expect("encode")).expect("parse");
            for (profile, want) in [
                (Profile::Strict, strict_ok),
                (Profile::A2aSdkCompat, compat_ok),
            ] {
                let got = jws::verify_card(&card, &keys, &[profile]);
                assert_eq!(got.is_ok(), want, "{file} {id} {profile}: {got:?}");
                if let Ok(verified) = got {
                    assert_eq!(verified.key_id(), s(&v, "kid"));
                    assert_eq!(verified.profile(), profile);
                    assert!(verified.card().get("signatures").is_none());
                }
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 3 * 6 * 2);
}

#[test]
fn unprotected_header_sharing_a_name_is_refused_before_crypto() {
    let v = read_json("jws/a2a-card-ed25519.json");
    let keys =
        KeySet::new(vec![PublicKey::from_jwk(&v["jwk_public"]).expect("jwk")]).expect("keys");
    let case = v["cases"]
        .as_array()
        .and_then(|a| {
            a.iter()
                .find(|c| c["id"] == "unprotected-header-duplicates-alg")
        })
        .expect("case");
    let err = jws::verify_card(&case["card"], &keys, &[Profile::Strict]).expect_err("refused");
    assert_eq!(
        err,
        JwsError::NoValidSignature {
            failures: vec![(0, JwsError::HeaderOverlap { name: "alg".into() })]
        }
    );
}

/// Spec §6 (a2a-v1.md): the self-generated deterministic EdDSA vector.
#[test]
fn spec_section_6_eddsa_vector() {
    let card: ferry_proto::AgentCard = serde_json::from_str(r#"{"name":"Echo Agent","description":"Echoes text back","version":"1.0.0","supportedInterfaces":[{"url":"https://agent.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":true,"pushNotifications":false},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"echo","name":"Echo","description":"Echo input","tags":["echo"]}]}"#).expect("card");
    let seed: Vec<u8> = (0u8..32).collect();
    let key = SigningKey::from_ed25519_seed(&seed, Algorithm::EdDsa, "test-key-1").expect("key");
    let public = PublicKey::from_jwk(&serde_json::json!({"kty":"OKP","crv":"Ed25519","x":"A6EHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg","kid":"test-key-1"})).expect("jwk");
    assert_eq!(key.public_key().to_jwk()["x"], public.to_jwk()["x"]);

    let signed = jws::sign_card(&card, &key, None).expect("sign");
    let sig = &signed.signatures[0];
    assert_eq!(
        sig.protected,
        "eyJhbGciOiJFZERTQSIsInR5cCI6IkpPU0UiLCJraWQiOiJ0ZXN0LWtleS0xIn0"
    );
    assert_eq!(
        sig.signature,
        "oxpi-pb114gY6MFt63puNlSQK9XN9McrQmzpAfyeSWUKZ6IKvZwNVd_q-dtIyvW-WylUTsWv1wqjNcQW5f-gBQ"
    );

    // What we serve verifies under the strict profile with the published JWK.
    let served = serde_json::to_vec(&signed).expect("serialize");
    let served = strict::parse(&served).expect("parse");
    let keys = KeySet::new(vec![public]).expect("keys");
    let verified = jws::verify_card(&served, &keys, &[Profile::Strict]).expect("verify");
    assert_eq!(verified.key_id(), "test-key-1");
    assert_eq!(verified.alg(), Algorithm::EdDsa);
}

#[test]
fn signed_cards_round_trip_for_every_algorithm() {
    let card: ferry_proto::AgentCard = serde_json::from_value(serde_json::json!({
        "name":"Café","description":"","version":"1","supportedInterfaces":[],
        "capabilities":{"streaming":false},"defaultInputModes":[],"defaultOutputModes":[],"skills":[]
    }))
    .expect("card");
    for alg in Algorithm::ALL {
        let key = SigningKey::generate(alg, format!("k-{alg}")).expect("generate");
        let signed =
            jws::sign_card(&card, &key, Some("https://example.com/jwks.json")).expect("sign");
        let served = strict::parse(&serde_json::to_vec(&signed).expect("ser")).expect("parse");
        let keys = KeySet::new(vec![key.public_key()]).expect("keys");
        let verified = jws::verify_card(&served, &keys, &[Profile::Strict])
            .unwrap_or_else(|e| panic!("{alg}: {e}"));
        assert_eq!(verified.alg(), alg);
        // A different key with the same kid does not verify.
        let other = SigningKey::generate(alg, format!("k-{alg}")).expect("generate");
        let keys = KeySet::new(vec![other.public_key()]).expect("keys");
        assert!(
            jws::verify_card(&served, &keys, &[Profile::Strict]).is_err(),
            "{alg}"
        );
    }
}

/// Throughput, for the numbers in the notes; run with
/// `cargo test --release -p ferry-trust --test it -- --ignored --nocapture throughput`.
#[test]
#[ignore = "measurement, not a check; run in release"]
fn throughput() {
    use std::time::Instant;
    let v = read_json("jws/a2a-card-ed25519.json");
    let mut card = v["signed_card"].clone();
    // Grow the card to about 2 KiB with more skills, like a typical published card.
    let skill = card["skills"][0].clone();
    let skills = card["skills"].as_array_mut().expect("skills");
    for i in 0..6 {
        let mut s = skill.clone();
        s["id"] = format!("skill-{i}").into();
        skills.push(s);
    }
    let bytes = serde_json::to_vec(&card).expect("ser");
    let value = strict::parse(&bytes).expect("parse");
    let n = 20_000;
    let t = Instant::now();
    let mut total = 0;
    for _ in 0..n {
        total += ferry_trust::jcs::canonicalize(&value).len();
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "canonicalize: {} bytes in, {:.1} MB/s of output, {:.0} cards/s",
        bytes.len(),
        total as f64 / secs / 1e6,
        n as f64 / secs
    );
    let t = Instant::now();
    for _ in 0..n {
        ferry_trust::jcs::canonicalize(&strict::parse(&bytes).expect("parse"));
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "strict parse + canonicalize: {:.1} MB/s of input",
        (bytes.len() * n) as f64 / secs / 1e6
    );
    let card: ferry_proto::AgentCard = serde_json::from_value(
        card.as_object()
            .map(|m| {
                let mut m = m.clone();
                m.remove("signatures");
                Value::Object(m)
            })
            .expect("object"),
    )
    .expect("typed");
    for alg in [Algorithm::EdDsa, Algorithm::Es256] {
        let key = SigningKey::generate(alg, "k").expect("key");
        let signed = jws::sign_card(&card, &key, None).expect("sign");
        let raw = serde_json::to_vec(&signed).expect("ser");
        let keys = KeySet::new(vec![key.public_key()]).expect("keys");
        let t = Instant::now();
        for _ in 0..n / 4 {
            let parsed = strict::parse(&raw).expect("parse");
            jws::verify_card(&parsed, &keys, &[Profile::Strict]).expect("verify");
        }
        let secs = t.elapsed().as_secs_f64();
        println!(
            "{alg}: parse + verify a {} byte card: {:.0} cards/s on one core",
            raw.len(),
            (n / 4) as f64 / secs
        );
    }
}
