//! A push delivery signed by ferry (`ferry_trust::push_signature`) verifies with PyJWT, a
//! JWT library that is not ferry's, against the key set the agent publishes: the format in
//! README is enough for a receiver in another language. A tampered body, another audience
//! and an expired token are each refused there too.
//!
//! Needs the interpreter of `interop_python.rs` (PyJWT and `cryptography` come with the
//! SDK's `signing` extra); skipped loudly without it, a failure in CI.

mod support;

use support::unix_now;

use ferry_trust::keys::{Algorithm, KeySet, SigningKey};
use ferry_trust::push_signature::{DEFAULT_LIFETIME, Delivery, sign};
use std::process::Command;
use std::time::Duration;
use support::{output_with_timeout, python_or_skip, text};

const CARD: &str = "http://127.0.0.1:8765/.well-known/agent-card.json";
const HOOK: &str = "http://127.0.0.1:9000/hook";
const BODY: &str = r#"{"statusUpdate":{"taskId":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED"}}}"#;

/// A receiver written with PyJWT: argv = jwks, token, body, audience; prints the verdict.
const RECEIVER: &str = r#"
import base64, hashlib, json, sys, jwt
jwks, token, body, audience = sys.argv[1:5]
try:
    header = jwt.get_unverified_header(token)
    key = jwt.PyJWKSet.from_json(jwks)[header["kid"]]
    claims = jwt.decode(token, key.key, algorithms=[header["alg"]], audience=audience,
                        issuer=sys.argv[5], options={"require": ["exp", "iat", "jti", "iss", "aud"]})
    digest = base64.urlsafe_b64encode(hashlib.sha256(body.encode()).digest()).rstrip(b"=").decode()
    if claims["body_sha256"] != digest:
        print("refused: body_sha256 differs")
    else:
        print("verified", claims["jti"], claims["taskId"])
except jwt.PyJWTError as e:
    print("refused:", type(e).__name__)
"#;

#[test]
fn pyjwt_verifies_a_signed_delivery_and_refuses_a_swapped_one() {
    let test = "pyjwt_verifies_a_signed_delivery_and_refuses_a_swapped_one";
    let Some(python) = python_or_skip(test, "jwt, cryptography") else {
        return;
    };
    let receive = |jwks: &str, token: &str, body: &str, audience: &str| {
        let (out, timed_out) = output_with_timeout(
            Command::new(&python).args(["-c", RECEIVER, jwks, token, body, audience, CARD]),
            None,
            Duration::from_secs(30),
        );
        assert!(!timed_out && out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout).trim().to_owned()
    };
    for alg in [
        Algorithm::Es256,
        Algorithm::EdDsa,
        Algorithm::Rs256,
        Algorithm::Ps256,
    ] {
        let key = SigningKey::generate(alg, format!("push-{}", alg.name())).expect("a key");
        let jwks = KeySet::new(vec![key.public_key()])
            .expect("a set")
            .to_jwks()
            .to_string();
        let delivery = Delivery {
            issuer: CARD,
            webhook: HOOK,
            delivery_id: "d-1",
            task_id: "t-1",
            body: BODY.as_bytes(),
        };
        let token = sign(&key, &delivery, unix_now(), DEFAULT_LIFETIME).expect("signed");
        assert_eq!(
            receive(&jwks, &token, BODY, HOOK),
            "verified d-1 t-1",
            "{alg:?}"
        );
        assert_eq!(
            receive(&jwks, &token, "{}", HOOK),
            "refused: body_sha256 differs",
            "{alg:?}"
        );
        assert_eq!(
            receive(&jwks, &token, BODY, "http://127.0.0.1:9000/other"),
            "refused: InvalidAudienceError",
            "{alg:?}"
        );
        let old = sign(&key, &delivery, unix_now() - 3600, DEFAULT_LIFETIME).expect("signed");
        assert_eq!(
            receive(&jwks, &old, BODY, HOOK),
            "refused: ExpiredSignatureError",
            "{alg:?}"
        );
    }
}
