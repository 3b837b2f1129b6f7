//! JWT access tokens (RFC 7519, RFC 9068) as an OpenID Connect / OAuth 2 provider issues
//! them: verified against the provider's keys and checked against what this server accepts.
//!
//! [`verify`] applies, in order, each rule answering an attack:
//! - **Form**: at most [`MAX_TOKEN_BYTES`]; three strict base64url parts; the header a JSON
//!   object without duplicate names (the protected-header rules of [`crate::jws`]); `typ`
//!   absent, `JWT` or `at+jwt`.
//! - **Algorithm** from the header only and on [`Rules::algorithms`] (never `none`, never an
//!   HMAC: a provider's public key can never become a shared secret).
//! - **Key**: the provider's key whose `kid` the header names (without a `kid`, the one key of
//!   the algorithm's type, if there is exactly one), of the algorithm's type; a key the set
//!   does not hold is [`JwtError::UnknownKey`], which the caller answers by fetching the set
//!   again (a rotation).
//! - **Signature** over the header and payload as sent.
//! - **Claims**: the payload a JSON object; `iss` exactly the issuer; `aud` (a string or a
//!   list) naming an accepted audience; `exp` required and not past; `nbf` and `iat` not in
//!   the future; `sub` a non-empty string. Times allow [`Rules::leeway`] either way for
//!   clocks that differ.
//!
//! What it returns is [`Claims`]: the subject, the scopes (`scope`, space-separated, or
//! `scp`, a list or a string: providers differ) and the other claims.

use crate::jws::{self, JwsError, ProtectedHeader};
use crate::keys::{Algorithm, KeyError, KeySet, PublicKey, SigningKey};
use crate::strict::{self, Limits};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value};
use std::time::Duration;

/// The longest token accepted (16 KiB: a token with many claims is a few KiB).
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;
/// The clock difference allowed by default either way (60 s).
pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(60);

/// What a token must be to be accepted.
#[derive(Debug, Clone)]
pub struct Rules {
    /// The issuer (`iss`), compared exactly.
    pub issuer: String,
    /// The audiences one of which `aud` must name.
    pub audiences: Vec<String>,
    /// The algorithms accepted (a subset of [`Algorithm::ALL`]).
    pub algorithms: Vec<Algorithm>,
    /// The clock difference allowed either way for `exp`, `nbf` and `iat`.
    pub leeway: Duration,
}

impl Rules {
    /// Tokens of `issuer` for `audience`, any supported algorithm, the default leeway.
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Rules {
        Rules {
            issuer: issuer.into(),
            audiences: vec![audience.into()],
            algorithms: Algorithm::ALL.to_vec(),
            leeway: DEFAULT_LEEWAY,
        }
    }
}

/// Why a token was refused. The messages say what is wrong without repeating the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JwtError {
    /// Not a token of three base64url parts, or too long.
    #[error("the token is not a JWT: {reason}")]
    Malformed {
        /// What is wrong with its form.
        reason: &'static str,
    },
    /// The header broke a rule (its algorithm among them).
    #[error("the token's header is refused: {0}")]
    Header(JwsError),
    /// The header's algorithm is not one this server accepts.
    #[error("the token's algorithm {alg} is not accepted here")]
    AlgorithmNotAccepted {
        /// The algorithm.
        alg: Algorithm,
    },
    /// No key of the provider's set matches the header: unknown `kid` (fetch the set again),
    /// or no `kid` and not exactly one key of the algorithm's type.
    #[error("the token was signed with a key the issuer does not publish ({})", kid.as_deref().unwrap_or("no kid"))]
    UnknownKey {
        /// The header's `kid`.
        kid: Option<String>,
    },
    /// The signature does not verify (a tampered token, or a key mix-up).
    #[error("the token's signature does not verify")]
    BadSignature,
    /// The payload is not a JSON object.
    #[error("the token's payload is not a JSON object")]
    Payload,
    /// A required claim is missing or of the wrong type.
    #[error("the token's {claim} claim is missing or not valid")]
    Claim {
        /// The claim.
        claim: &'static str,
    },
    /// `iss` is another issuer.
    #[error("the token was issued by {issuer:?}, not by the issuer this server trusts")]
    WrongIssuer {
        /// The token's issuer.
        issuer: String,
    },
    /// `aud` names none of the accepted audiences.
    #[error("the token is not meant for this server (its audience is another)")]
    WrongAudience,
    /// `exp` is past.
    #[error("the token has expired")]
    Expired,
    /// `nbf` or `iat` is in the future.
    #[error("the token is not valid yet")]
    NotYetValid,
}

/// What a verified token says.
#[derive(Debug, Clone, PartialEq)]
pub struct Claims {
    /// `sub`: whom the token was issued for (a person, or a client of the client-credentials
    /// flow).
    pub subject: String,
    /// The scopes granted (`scope` and `scp`).
    pub scopes: Vec<String>,
    /// `exp`, seconds since the epoch.
    pub expires_at: i64,
    /// The key that verified it.
    pub key_id: Option<String>,
    /// Every claim, as sent.
    pub all: Map<String, Value>,
}

impl Claims {
    /// Whether `scope` was granted.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
}

/// A JWT of `claims` signed with `key`: the header `{"alg":…,"kid":…,"typ":"JWT"}`, then
/// the claims as given (what a server that signs its own tokens, or a test provider, sends).
pub fn sign(key: &SigningKey, claims: &Value) -> Result<String, KeyError> {
    let header = serde_json::json!({"alg": key.alg().name(), "kid": key.kid(), "typ": "JWT"});
    let mut token = URL_SAFE_NO_PAD.encode(header.to_string());
    token.push('.');
    URL_SAFE_NO_PAD.encode_string(claims.to_string(), &mut token);
    let signature = key.sign(token.as_bytes())?;
    token.push('.');
    URL_SAFE_NO_PAD.encode_string(signature, &mut token);
    Ok(token)
}

/// Verifies `token` with `keys` under `rules` at `now` (seconds since the epoch).
pub fn verify(token: &str, keys: &KeySet, rules: &Rules, now: i64) -> Result<Claims, JwtError> {
    if token.len() > MAX_TOKEN_BYTES {
        return Err(JwtError::Malformed {
            reason: "longer than 16 KiB",
        });
    }
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(JwtError::Malformed {
            reason: "not three dot-separated parts",
        });
    };
    if header.is_empty() || payload.is_empty() {
        return Err(JwtError::Malformed {
            reason: "an empty part",
        });
    }
    // The header is read before the signature is looked at, so an unsigned token (`alg:
    // none`, an empty signature) is refused for its algorithm.
    let parsed = jws::parse_header(header, is_jwt_type).map_err(JwtError::Header)?;
    let alg = parsed.alg();
    if !rules.algorithms.contains(&alg) {
        return Err(JwtError::AlgorithmNotAccepted { alg });
    }
    if signature.is_empty() {
        return Err(JwtError::Malformed {
            reason: "an empty signature",
        });
    }
    let key = key_for(&parsed, keys)?;
    let signature = jws::b64_decode(signature, "signature").map_err(JwtError::Header)?;
    let signed = &token[..header.len() + 1 + payload.len()];
    if !key.verify(alg, signed.as_bytes(), &signature) {
        return Err(JwtError::BadSignature);
    }
    let payload = jws::b64_decode(payload, "payload").map_err(JwtError::Header)?;
    let limits = Limits {
        max_bytes: MAX_TOKEN_BYTES,
        max_depth: 16,
        allow_unsafe_integers: false,
    };
    let Ok(Value::Object(all)) = strict::parse_with(&payload, &limits) else {
        return Err(JwtError::Payload);
    };
    let expires_at = check_claims(&all, rules, now)?;
    Ok(Claims {
        subject: string_claim(&all, "sub")?.to_owned(),
        scopes: scopes(&all),
        expires_at,
        key_id: parsed.kid().map(str::to_owned),
        all,
    })
}

/// `typ` of an access token: `JWT` (RFC 7519) or `at+jwt` (RFC 9068), any case, with or
/// without `application/`.
fn is_jwt_type(typ: &str) -> bool {
    let typ = typ.strip_prefix("application/").unwrap_or(typ);
    typ.eq_ignore_ascii_case("JWT") || typ.eq_ignore_ascii_case("at+jwt")
}

/// The key the header names, of the algorithm's type.
fn key_for<'k>(header: &ProtectedHeader, keys: &'k KeySet) -> Result<&'k PublicKey, JwtError> {
    let alg = header.alg();
    let fits = |k: &&PublicKey| k.key_type() == alg.key_type() && k.alg().is_none_or(|a| a == alg);
    let unknown = || JwtError::UnknownKey {
        kid: header.kid().map(str::to_owned),
    };
    match header.kid() {
        Some(kid) => keys.get(kid).filter(fits).ok_or_else(unknown),
        None => {
            let mut candidates = keys.keys().iter().filter(fits);
            match (candidates.next(), candidates.next()) {
                (Some(only), None) => Ok(only),
                _ => Err(unknown()),
            }
        }
    }
}

/// Checks `iss`, `aud`, `exp`, `nbf` and `iat`; returns `exp`.
fn check_claims(all: &Map<String, Value>, rules: &Rules, now: i64) -> Result<i64, JwtError> {
    let issuer = string_claim(all, "iss")?;
    if issuer != rules.issuer {
        return Err(JwtError::WrongIssuer {
            issuer: issuer.to_owned(),
        });
    }
    let audiences: Vec<&str> = match all.get("aud") {
        Some(Value::String(aud)) => vec![aud.as_str()],
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        _ => return Err(JwtError::Claim { claim: "aud" }),
    };
    if !audiences
        .iter()
        .any(|a| rules.audiences.iter().any(|accepted| accepted == a))
    {
        return Err(JwtError::WrongAudience);
    }
    let leeway = i64::try_from(rules.leeway.as_secs()).unwrap_or(i64::MAX);
    let expires_at = time_claim(all, "exp")?.ok_or(JwtError::Claim { claim: "exp" })?;
    if now > expires_at.saturating_add(leeway) {
        return Err(JwtError::Expired);
    }
    for claim in ["nbf", "iat"] {
        if let Some(at) = time_claim(all, claim)?
            && at > now.saturating_add(leeway)
        {
            return Err(JwtError::NotYetValid);
        }
    }
    Ok(expires_at)
}

fn string_claim<'a>(all: &'a Map<String, Value>, claim: &'static str) -> Result<&'a str, JwtError> {
    all.get(claim)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or(JwtError::Claim { claim })
}

/// A NumericDate claim (seconds, fractions allowed), if present.
fn time_claim(all: &Map<String, Value>, claim: &'static str) -> Result<Option<i64>, JwtError> {
    match all.get(claim) {
        None => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.is_finite())
                    .map(|f| f.floor() as i64)
            })
            .map(Some)
            .ok_or(JwtError::Claim { claim }),
        Some(_) => Err(JwtError::Claim { claim }),
    }
}

/// The scopes of `scope` (space-separated) and `scp` (a list, or space-separated).
fn scopes(all: &Map<String, Value>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for claim in ["scope", "scp"] {
        match all.get(claim) {
            Some(Value::String(s)) => out.extend(s.split_whitespace().map(str::to_owned)),
            Some(Value::Array(list)) => {
                out.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
            }
            _ => {}
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NOW: i64 = 1_800_000_000;

    fn b64(bytes: &[u8]) -> String {
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// A token of `header` and `claims` signed by `key`.
    fn token(key: &SigningKey, header: Value, claims: Value) -> String {
        let input = format!(
            "{}.{}",
            b64(header.to_string().as_bytes()),
            b64(claims.to_string().as_bytes())
        );
        let signature = key.sign(input.as_bytes()).expect("signs");
        format!("{input}.{}", b64(&signature))
    }

    fn claims() -> Value {
        json!({"iss": "https://idp.example", "aud": "ferry", "sub": "ada",
            "exp": NOW + 300, "iat": NOW, "scope": "a2a:read a2a:agent:echo"})
    }

    fn setup() -> (SigningKey, KeySet, Rules) {
        let key = SigningKey::generate(Algorithm::Es256, "k1").expect("a key");
        let keys = KeySet::new(vec![key.public_key()]).expect("a set");
        (key, keys, Rules::new("https://idp.example", "ferry"))
    }

    fn header(key: &SigningKey) -> Value {
        json!({"alg": key.alg().name(), "kid": key.kid(), "typ": "at+jwt"})
    }

    #[test]
    fn a_signed_token_verifies() {
        let (key, keys, rules) = setup();
        let token = sign(&key, &claims()).expect("signs");
        assert_eq!(
            verify(&token, &keys, &rules, NOW).map(|c| c.subject),
            Ok("ada".into())
        );
    }

    #[test]
    fn a_valid_token_gives_its_subject_and_scopes() {
        let (key, keys, rules) = setup();
        let got = verify(&token(&key, header(&key), claims()), &keys, &rules, NOW).expect("valid");
        assert_eq!(got.subject, "ada");
        assert_eq!(got.scopes, ["a2a:agent:echo", "a2a:read"]);
        assert!(got.has_scope("a2a:read"));
        assert_eq!(got.key_id.as_deref(), Some("k1"));
        let mut scp = claims();
        scp["scope"] = Value::Null;
        scp["scp"] = json!(["x", "y"]);
        let got = verify(&token(&key, header(&key), scp), &keys, &rules, NOW).expect("valid");
        assert_eq!(got.scopes, ["x", "y"]);
        let mut many = claims();
        many["aud"] = json!(["other", "ferry"]);
        assert!(verify(&token(&key, header(&key), many), &keys, &rules, NOW).is_ok());
    }

    #[test]
    fn each_broken_rule_is_its_own_refusal() {
        let (key, keys, rules) = setup();
        let with = |change: &dyn Fn(&mut Value)| {
            let mut c = claims();
            change(&mut c);
            verify(&token(&key, header(&key), c), &keys, &rules, NOW)
        };
        assert!(matches!(
            with(&|c| c["iss"] = json!("https://evil.example")),
            Err(JwtError::WrongIssuer { .. })
        ));
        assert_eq!(
            with(&|c| c["aud"] = json!("other")),
            Err(JwtError::WrongAudience)
        );
        assert_eq!(
            with(&|c| c["exp"] = json!(NOW - 61)),
            Err(JwtError::Expired)
        );
        assert!(
            with(&|c| c["exp"] = json!(NOW - 59)).is_ok(),
            "within the leeway"
        );
        assert_eq!(
            with(&|c| c["nbf"] = json!(NOW + 61)),
            Err(JwtError::NotYetValid)
        );
        assert_eq!(
            with(&|c| c["iat"] = json!(NOW + 3600)),
            Err(JwtError::NotYetValid)
        );
        assert_eq!(
            with(&|c| c["exp"] = Value::Null),
            Err(JwtError::Claim { claim: "exp" })
        );
        assert_eq!(
            with(&|c| c["sub"] = json!("")),
            Err(JwtError::Claim { claim: "sub" })
        );
        // A payload changed after signing.
        let good = token(&key, header(&key), claims());
        let parts: Vec<&str> = good.split('.').collect();
        let mut evil = claims();
        evil["sub"] = json!("root");
        let tampered = format!(
            "{}.{}.{}",
            parts[0],
            b64(evil.to_string().as_bytes()),
            parts[2]
        );
        assert_eq!(
            verify(&tampered, &keys, &rules, NOW),
            Err(JwtError::BadSignature)
        );
    }

    #[test]
    fn none_hmac_and_foreign_keys_never_verify() {
        let (key, keys, rules) = setup();
        let unsigned = format!(
            "{}.{}.",
            b64(json!({"alg": "none"}).to_string().as_bytes()),
            b64(claims().to_string().as_bytes())
        );
        // Refused for its algorithm, before its empty signature is looked at.
        assert!(matches!(
            verify(&unsigned, &keys, &rules, NOW),
            Err(JwtError::Header(JwsError::AlgorithmNotAllowed { .. }))
        ));
        let signed = token(&key, header(&key), claims());
        let (head, _) = signed.rsplit_once('.').expect("three parts");
        assert!(matches!(
            verify(&format!("{head}."), &keys, &rules, NOW),
            Err(JwtError::Malformed { .. })
        ));
        let none = format!("{unsigned}AAAA");
        assert!(matches!(
            verify(&none, &keys, &rules, NOW),
            Err(JwtError::Header(JwsError::AlgorithmNotAllowed { .. }))
        ));
        let hs = format!(
            "{}.{}.AAAA",
            b64(json!({"alg": "HS256", "kid": "k1"}).to_string().as_bytes()),
            b64(claims().to_string().as_bytes())
        );
        assert!(matches!(
            verify(&hs, &keys, &rules, NOW),
            Err(JwtError::Header(JwsError::AlgorithmNotAllowed { .. }))
        ));
        let stranger = SigningKey::generate(Algorithm::Es256, "k2").expect("a key");
        assert_eq!(
            verify(
                &token(&stranger, header(&stranger), claims()),
                &keys,
                &rules,
                NOW
            ),
            Err(JwtError::UnknownKey {
                kid: Some("k2".into())
            })
        );
        // Another key under a known kid.
        let impostor = SigningKey::generate(Algorithm::Es256, "k1").expect("a key");
        assert_eq!(
            verify(
                &token(&impostor, header(&impostor), claims()),
                &keys,
                &rules,
                NOW
            ),
            Err(JwtError::BadSignature)
        );
        let only_rs = Rules {
            algorithms: vec![Algorithm::Rs256],
            ..rules
        };
        assert_eq!(
            verify(&token(&key, header(&key), claims()), &keys, &only_rs, NOW),
            Err(JwtError::AlgorithmNotAccepted {
                alg: Algorithm::Es256
            })
        );
        let card_typ = json!({"alg": "ES256", "kid": "k1", "typ": "JOSE"});
        assert!(matches!(
            verify(&token(&key, card_typ, claims()), &keys, &only_rs, NOW),
            Err(JwtError::Header(JwsError::BadType { .. }))
        ));
    }

    #[test]
    fn without_a_kid_the_one_key_of_the_type_is_used() {
        let (key, keys, rules) = setup();
        let bare = json!({"alg": "ES256"});
        assert!(verify(&token(&key, bare.clone(), claims()), &keys, &rules, NOW).is_ok());
        let second = SigningKey::generate(Algorithm::Es256, "k2").expect("a key");
        let two = KeySet::new(vec![key.public_key(), second.public_key()]).expect("a set");
        assert_eq!(
            verify(&token(&key, bare, claims()), &two, &rules, NOW),
            Err(JwtError::UnknownKey { kid: None })
        );
    }
}
