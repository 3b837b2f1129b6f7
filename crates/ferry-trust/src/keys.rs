//! Keys for card signatures: JWS algorithms, public keys (PEM, JWK, JWKS) and signing keys.
//!
//! The security rule that shapes this module: **the key decides the algorithm family**. A
//! [`PublicKey`] knows its [`KeyType`], and [`Algorithm::key_type`] says which type each
//! algorithm needs, so an EC key can never be used with `HS256` (the classic confusion of
//! HMAC keyed with public key text) or with RSA. Only the algorithms of A2A's allowlist exist
//! here at all; `none` and `HS*` have no [`Algorithm`] value.
//!
//! Other rules enforced when a key is loaded:
//! - a JWK carrying private members (`d`, `p`, `q`, `dp`, `dq`, `qi`, `oth`, `k`) is refused:
//!   a trust store is public, and a private key in it is a leak waiting to happen;
//! - a JWK's `use` must be `sig` and its `key_ops` must contain `verify`, when present;
//! - a JWK's `alg`, when present, must fit the key, and a signature must then use exactly it;
//! - EC points and Ed25519 keys are validated by aws-lc-rs at load time;
//! - RSA moduli must be 2048–8192 bits and exponents odd and at least 3;
//! - a PEM file must hold a `PUBLIC KEY`; text with a private key in it is refused;
//! - a [`KeySet`] with two keys of one `kid` is a configuration error.

use aws_lc_rs::encoding::AsDer;
use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::rsa::KeySize;
use aws_lc_rs::signature::{self, KeyPair, ParsedPublicKey, RsaPublicKeyComponents};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{PrivatePkcs8KeyDer, SubjectPublicKeyInfoDer};
use serde_json::{Map, Value};
use std::fmt;

use crate::strict::{self, JsonError, Limits};

/// A JWS signature algorithm of the A2A allowlist (spec §8.4: ES256, EdDSA and RS256 MUST;
/// ES384 and PS256 SHOULD).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// ECDSA P-256 with SHA-256, 64-byte R‖S signatures.
    Es256,
    /// ECDSA P-384 with SHA-384, 96-byte R‖S signatures.
    Es384,
    /// Ed25519 under its RFC 8037 name `EdDSA`.
    EdDsa,
    /// Ed25519 under its RFC 9864 name `Ed25519` (which deprecates `EdDSA`).
    Ed25519,
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    Rs256,
    /// RSASSA-PSS with SHA-256 (MGF1 SHA-256, 32-byte salt).
    Ps256,
}

impl Algorithm {
    /// Every supported algorithm.
    pub const ALL: [Algorithm; 6] = [
        Algorithm::Es256,
        Algorithm::Es384,
        Algorithm::EdDsa,
        Algorithm::Ed25519,
        Algorithm::Rs256,
        Algorithm::Ps256,
    ];

    /// The algorithm of a JWS `alg` value, compared exactly (`"es256"` is not `ES256`).
    /// `none`, `HS*` and everything else give `None`.
    pub fn from_name(name: &str) -> Option<Algorithm> {
        Self::ALL.into_iter().find(|a| a.name() == name)
    }

    /// The JWS `alg` value.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Es256 => "ES256",
            Algorithm::Es384 => "ES384",
            Algorithm::EdDsa => "EdDSA",
            Algorithm::Ed25519 => "Ed25519",
            Algorithm::Rs256 => "RS256",
            Algorithm::Ps256 => "PS256",
        }
    }

    /// The only key type this algorithm may be used with.
    pub fn key_type(self) -> KeyType {
        match self {
            Algorithm::Es256 => KeyType::EcP256,
            Algorithm::Es384 => KeyType::EcP384,
            Algorithm::EdDsa | Algorithm::Ed25519 => KeyType::Ed25519,
            Algorithm::Rs256 | Algorithm::Ps256 => KeyType::Rsa,
        }
    }

    /// The exact signature length, where the algorithm fixes one (ECDSA R‖S, Ed25519).
    pub fn signature_len(self) -> Option<usize> {
        match self {
            Algorithm::Es256 | Algorithm::EdDsa | Algorithm::Ed25519 => Some(64),
            Algorithm::Es384 => Some(96),
            Algorithm::Rs256 | Algorithm::Ps256 => None,
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The type of a key, as JWK `kty` + `crv` say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyType {
    /// `kty:"EC"`, `crv:"P-256"`.
    EcP256,
    /// `kty:"EC"`, `crv:"P-384"`.
    EcP384,
    /// `kty:"OKP"`, `crv:"Ed25519"`.
    Ed25519,
    /// `kty:"RSA"`.
    Rsa,
}

impl fmt::Display for KeyType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KeyType::EcP256 => "EC P-256",
            KeyType::EcP384 => "EC P-384",
            KeyType::Ed25519 => "OKP Ed25519",
            KeyType::Rsa => "RSA",
        })
    }
}

/// Why a key could not be loaded, generated or used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The PEM text has no `PUBLIC KEY` (or, for a signing key, no `PRIVATE KEY`) section.
    #[error("no {expected} PEM section found")]
    PemSection {
        /// The expected section label.
        expected: &'static str,
    },
    /// Text given as a public key contains a private key.
    #[error("a private key was given where a public key belongs")]
    PrivateKeyGiven,
    /// The DER structure is malformed or of an unsupported key algorithm.
    #[error("unsupported or malformed {what}")]
    Der {
        /// What was being decoded.
        what: &'static str,
    },
    /// The JWK (or JWKS) text is not strict JSON.
    #[error("JWK is not valid JSON: {0}")]
    Json(#[from] JsonError),
    /// A JWK member is missing or has the wrong JSON type or encoding.
    #[error("JWK member {member:?} is missing or invalid")]
    JwkMember {
        /// The member name.
        member: &'static str,
    },
    /// A JWK carries private key material.
    #[error("JWK carries the private member {member:?}; only public keys are accepted")]
    PrivateMember {
        /// The private member found.
        member: &'static str,
    },
    /// A key type or curve outside ES256/ES384/Ed25519/RSA.
    #[error("unsupported key type {kty:?} (curve {crv:?})")]
    UnsupportedKeyType {
        /// JWK `kty`.
        kty: String,
        /// JWK `crv`, if any.
        crv: Option<String>,
    },
    /// The key's `use` or `key_ops` forbid signature verification.
    #[error("the key is not for signature verification (use/key_ops)")]
    NotForVerification,
    /// The key's `alg` is unknown or does not fit the key type.
    #[error("key algorithm {alg:?} does not fit a {key_type} key")]
    AlgorithmMismatch {
        /// The `alg` value.
        alg: String,
        /// The key's type.
        key_type: KeyType,
    },
    /// An RSA modulus outside 2048–8192 bits.
    #[error("RSA modulus is {bits} bits; 2048 to 8192 are accepted")]
    RsaModulusSize {
        /// The modulus size.
        bits: usize,
    },
    /// An RSA public exponent that is even or below 3.
    #[error("RSA public exponent is not odd and at least 3")]
    RsaExponent,
    /// aws-lc-rs refused the key material (a point not on the curve, a bad encoding…).
    #[error("the {key_type} key material is invalid")]
    Rejected {
        /// The key's type.
        key_type: KeyType,
    },
    /// Two keys in one key set share a `kid`.
    #[error("two keys have the kid {kid:?}")]
    DuplicateKid {
        /// The repeated kid.
        kid: String,
    },
    /// The JWKS has no `keys` array.
    #[error("a JWKS must be an object with a \"keys\" array")]
    NotAJwks,
    /// Key generation or signing failed inside aws-lc-rs.
    #[error("the crypto library failed to {operation}")]
    Crypto {
        /// What was attempted.
        operation: &'static str,
    },
}

/// The public key material, normalized so that PEM and JWK give the same value.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Material {
    /// Uncompressed point `04‖x‖y`.
    Ec { key_type: KeyType, point: Vec<u8> },
    /// The 32-byte public key.
    Ed25519(Vec<u8>),
    /// Big-endian modulus and exponent, without leading zeros.
    Rsa { n: Vec<u8>, e: Vec<u8> },
}

/// A public key that may verify card signatures, with its optional `kid` and `alg`.
#[derive(Clone, PartialEq, Eq)]
pub struct PublicKey {
    material: Material,
    kid: Option<String>,
    alg: Option<Algorithm>,
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PublicKey")
            .field("key_type", &self.key_type())
            .field("kid", &self.kid)
            .field("alg", &self.alg)
            .finish_non_exhaustive()
    }
}

/// The largest JWK or JWKS text accepted (the design's JWKS fetch limit).
const JWKS_MAX_BYTES: usize = 64 * 1024;

fn jwk_limits() -> Limits {
    Limits {
        max_bytes: JWKS_MAX_BYTES,
        max_depth: 8,
        allow_unsafe_integers: false,
    }
}

impl PublicKey {
    /// Loads a `-----BEGIN PUBLIC KEY-----` (SubjectPublicKeyInfo) PEM. A PEM key has no
    /// `kid`; set one with [`PublicKey::with_kid`] to select it by a signature's `kid`.
    ///
    /// ```
    /// let pem = b"-----BEGIN PUBLIC KEY-----
    /// MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=
    /// -----END PUBLIC KEY-----
    /// ";
    /// let key = ferry_trust::keys::PublicKey::from_pem(pem)?;
    /// assert_eq!(key.key_type(), ferry_trust::keys::KeyType::Ed25519);
    /// # Ok::<(), ferry_trust::keys::KeyError>(())
    /// ```
    pub fn from_pem(pem: &[u8]) -> Result<PublicKey, KeyError> {
        if pem.windows(11).any(|w| w == b"PRIVATE KEY") {
            return Err(KeyError::PrivateKeyGiven);
        }
        let der =
            SubjectPublicKeyInfoDer::from_pem_slice(pem).map_err(|_| KeyError::PemSection {
                expected: "PUBLIC KEY",
            })?;
        Self::from_spki_der(der.as_ref())
    }

    /// Loads a DER SubjectPublicKeyInfo (EC P-256/P-384, Ed25519 or RSA).
    pub fn from_spki_der(der: &[u8]) -> Result<PublicKey, KeyError> {
        let bad = KeyError::Der {
            what: "SubjectPublicKeyInfo",
        };
        let (spki, rest) = der::read(der, der::SEQUENCE).ok_or_else(|| bad.clone())?;
        if !rest.is_empty() {
            return Err(bad);
        }
        let (alg_id, rest) = der::read(spki, der::SEQUENCE).ok_or_else(|| bad.clone())?;
        let (bits, rest) = der::read(rest, der::BIT_STRING).ok_or_else(|| bad.clone())?;
        if !rest.is_empty() {
            return Err(bad);
        }
        let key = match bits.split_first() {
            Some((0, key)) => key,
            _ => return Err(bad),
        };
        let (oid, params) = der::read(alg_id, der::OID).ok_or_else(|| bad.clone())?;
        let material = match oid {
            der::OID_EC_PUBLIC_KEY => {
                let (curve, _) = der::read(params, der::OID).ok_or_else(|| bad.clone())?;
                let key_type = match curve {
                    der::OID_P256 => KeyType::EcP256,
                    der::OID_P384 => KeyType::EcP384,
                    _ => return Err(bad),
                };
                Material::Ec {
                    key_type,
                    point: key.to_vec(),
                }
            }
            der::OID_ED25519 => Material::Ed25519(key.to_vec()),
            der::OID_RSA => {
                let (seq, _) = der::read(key, der::SEQUENCE).ok_or_else(|| bad.clone())?;
                let (n, rest) = der::read(seq, der::INTEGER).ok_or_else(|| bad.clone())?;
                let (e, _) = der::read(rest, der::INTEGER).ok_or_else(|| bad.clone())?;
                Material::Rsa {
                    n: strip_zeros(n).to_vec(),
                    e: strip_zeros(e).to_vec(),
                }
            }
            _ => return Err(bad),
        };
        Self::checked(material, None, None)
    }

    /// Loads one public JWK from its JSON text (parsed strictly).
    pub fn from_jwk_bytes(text: &[u8]) -> Result<PublicKey, KeyError> {
        Self::from_jwk(&strict::parse_with(text, &jwk_limits())?)
    }

    /// Loads one public JWK. See the module docs for the rules.
    ///
    /// ```
    /// let jwk = serde_json::json!({"kty":"OKP","crv":"Ed25519","kid":"k1",
    ///     "x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"});
    /// let key = ferry_trust::keys::PublicKey::from_jwk(&jwk)?;
    /// assert_eq!(key.kid(), Some("k1"));
    /// let mut private = jwk.clone();
    /// private["d"] = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A".into();
    /// assert!(ferry_trust::keys::PublicKey::from_jwk(&private).is_err());
    /// # Ok::<(), ferry_trust::keys::KeyError>(())
    /// ```
    pub fn from_jwk(jwk: &Value) -> Result<PublicKey, KeyError> {
        let obj = jwk
            .as_object()
            .ok_or(KeyError::JwkMember { member: "kty" })?;
        for member in ["d", "p", "q", "dp", "dq", "qi", "oth", "k"] {
            if obj.contains_key(member) {
                return Err(KeyError::PrivateMember { member });
            }
        }
        let kty = str_member(obj, "kty")?.ok_or(KeyError::JwkMember { member: "kty" })?;
        let crv = str_member(obj, "crv")?;
        let material = match (kty, crv) {
            ("EC", Some(crv @ ("P-256" | "P-384"))) => {
                let (key_type, len) = if crv == "P-256" {
                    (KeyType::EcP256, 32)
                } else {
                    (KeyType::EcP384, 48)
                };
                let x = b64_member(obj, "x")?;
                let y = b64_member(obj, "y")?;
                if x.len() != len {
                    return Err(KeyError::JwkMember { member: "x" });
                }
                if y.len() != len {
                    return Err(KeyError::JwkMember { member: "y" });
                }
                let mut point = Vec::with_capacity(1 + 2 * len);
                point.push(4);
                point.extend_from_slice(&x);
                point.extend_from_slice(&y);
                Material::Ec { key_type, point }
            }
            ("OKP", Some("Ed25519")) => Material::Ed25519(b64_member(obj, "x")?),
            ("RSA", None) => {
                let n = b64_member(obj, "n")?;
                let e = b64_member(obj, "e")?;
                Material::Rsa {
                    n: strip_zeros(&n).to_vec(),
                    e: strip_zeros(&e).to_vec(),
                }
            }
            (kty, crv) => {
                return Err(KeyError::UnsupportedKeyType {
                    kty: kty.to_owned(),
                    crv: crv.map(str::to_owned),
                });
            }
        };
        if let Some(usage) = str_member(obj, "use")?
            && usage != "sig"
        {
            return Err(KeyError::NotForVerification);
        }
        if let Some(ops) = obj.get("key_ops") {
            let ops = ops
                .as_array()
                .ok_or(KeyError::JwkMember { member: "key_ops" })?;
            if !ops.iter().any(|op| op == "verify") {
                return Err(KeyError::NotForVerification);
            }
        }
        let kid = str_member(obj, "kid")?.map(str::to_owned);
        let alg = match str_member(obj, "alg")? {
            None => None,
            Some(name) => {
                Some(
                    Algorithm::from_name(name).ok_or_else(|| KeyError::AlgorithmMismatch {
                        alg: name.to_owned(),
                        key_type: material_type(&material),
                    })?,
                )
            }
        };
        Self::checked(material, kid, alg)
    }

    /// Validates material (and a declared `alg`) and builds the key.
    fn checked(
        material: Material,
        kid: Option<String>,
        alg: Option<Algorithm>,
    ) -> Result<PublicKey, KeyError> {
        let key_type = material_type(&material);
        if let Some(alg) = alg
            && alg.key_type() != key_type
        {
            return Err(KeyError::AlgorithmMismatch {
                alg: alg.name().to_owned(),
                key_type,
            });
        }
        let rejected = KeyError::Rejected { key_type };
        match &material {
            Material::Ec { point, .. } => {
                let alg: &'static dyn signature::VerificationAlgorithm = match key_type {
                    KeyType::EcP384 => &signature::ECDSA_P384_SHA384_FIXED,
                    _ => &signature::ECDSA_P256_SHA256_FIXED,
                };
                ParsedPublicKey::new(alg, point).map_err(|_| rejected)?;
            }
            Material::Ed25519(x) => {
                if x.len() != 32 {
                    return Err(rejected);
                }
                ParsedPublicKey::new(&signature::ED25519, x).map_err(|_| rejected)?;
            }
            Material::Rsa { n, e } => {
                let bits = bit_len(n);
                if !(2048..=8192).contains(&bits) {
                    return Err(KeyError::RsaModulusSize { bits });
                }
                let odd = e.last().is_some_and(|b| b & 1 == 1);
                if !odd || (e.len() == 1 && e[0] < 3) || e.len() > 8 {
                    return Err(KeyError::RsaExponent);
                }
            }
        }
        Ok(PublicKey { material, kid, alg })
    }

    /// Returns the key with `kid` set: how a PEM key gets the id that signatures name.
    pub fn with_kid(mut self, kid: impl Into<String>) -> PublicKey {
        self.kid = Some(kid.into());
        self
    }

    /// The key id, if the key has one.
    pub fn kid(&self) -> Option<&str> {
        self.kid.as_deref()
    }

    /// The algorithm the key is restricted to (JWK `alg`), if any.
    pub fn alg(&self) -> Option<Algorithm> {
        self.alg
    }

    /// The key's type.
    pub fn key_type(&self) -> KeyType {
        material_type(&self.material)
    }

    /// The public JWK (with `kid` and `alg` when known), e.g. for publishing a JWKS.
    pub fn to_jwk(&self) -> Value {
        let b64 = |b: &[u8]| Value::String(URL_SAFE_NO_PAD.encode(b));
        let mut m = Map::new();
        match &self.material {
            Material::Ec { key_type, point } => {
                let len = (point.len() - 1) / 2;
                m.insert("kty".into(), "EC".into());
                let crv = if *key_type == KeyType::EcP384 {
                    "P-384"
                } else {
                    "P-256"
                };
                m.insert("crv".into(), crv.into());
                m.insert("x".into(), b64(&point[1..=len]));
                m.insert("y".into(), b64(&point[1 + len..]));
            }
            Material::Ed25519(x) => {
                m.insert("kty".into(), "OKP".into());
                m.insert("crv".into(), "Ed25519".into());
                m.insert("x".into(), b64(x));
            }
            Material::Rsa { n, e } => {
                m.insert("kty".into(), "RSA".into());
                m.insert("n".into(), b64(n));
                m.insert("e".into(), b64(e));
            }
        }
        if let Some(kid) = &self.kid {
            m.insert("kid".into(), kid.as_str().into());
        }
        if let Some(alg) = self.alg {
            m.insert("alg".into(), alg.name().into());
        }
        m.insert("use".into(), "sig".into());
        Value::Object(m)
    }

    /// Verifies `signature` over `message` with `alg`. The caller has already checked that
    /// `alg` fits this key; this checks it again, because a mismatch here must never reach
    /// the crypto library.
    pub(crate) fn verify(&self, alg: Algorithm, message: &[u8], signature: &[u8]) -> bool {
        if alg.key_type() != self.key_type() {
            return false;
        }
        match (&self.material, alg) {
            (Material::Ec { point, .. }, Algorithm::Es256) => {
                signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point)
                    .verify(message, signature)
                    .is_ok()
            }
            (Material::Ec { point, .. }, Algorithm::Es384) => {
                signature::UnparsedPublicKey::new(&signature::ECDSA_P384_SHA384_FIXED, point)
                    .verify(message, signature)
                    .is_ok()
            }
            (Material::Ed25519(x), Algorithm::EdDsa | Algorithm::Ed25519) => {
                signature::UnparsedPublicKey::new(&signature::ED25519, x)
                    .verify(message, signature)
                    .is_ok()
            }
            (Material::Rsa { n, e }, Algorithm::Rs256 | Algorithm::Ps256) => {
                let params = if alg == Algorithm::Rs256 {
                    &signature::RSA_PKCS1_2048_8192_SHA256
                } else {
                    &signature::RSA_PSS_2048_8192_SHA256
                };
                RsaPublicKeyComponents { n, e }
                    .verify(params, message, signature)
                    .is_ok()
            }
            _ => false,
        }
    }
}

fn material_type(m: &Material) -> KeyType {
    match m {
        Material::Ec { key_type, .. } => *key_type,
        Material::Ed25519(_) => KeyType::Ed25519,
        Material::Rsa { .. } => KeyType::Rsa,
    }
}

fn str_member<'a>(
    obj: &'a Map<String, Value>,
    member: &'static str,
) -> Result<Option<&'a str>, KeyError> {
    match obj.get(member) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(KeyError::JwkMember { member }),
    }
}

fn b64_member(obj: &Map<String, Value>, member: &'static str) -> Result<Vec<u8>, KeyError> {
    let s = str_member(obj, member)?.ok_or(KeyError::JwkMember { member })?;
    URL_SAFE_NO_PAD
        .decode(s)
        .map_err(|_| KeyError::JwkMember { member })
}

fn strip_zeros(b: &[u8]) -> &[u8] {
    let start = b.iter().position(|&x| x != 0).unwrap_or(b.len());
    &b[start..]
}

fn bit_len(b: &[u8]) -> usize {
    let b = strip_zeros(b);
    match b.first() {
        None => 0,
        Some(first) => (b.len() - 1) * 8 + (8 - first.leading_zeros() as usize),
    }
}

/// Trusted public keys, selected by exact `kid`.
#[derive(Debug, Clone, Default)]
pub struct KeySet {
    keys: Vec<PublicKey>,
}

impl KeySet {
    /// Builds a set; two keys with the same `kid` are a configuration error.
    pub fn new(keys: Vec<PublicKey>) -> Result<KeySet, KeyError> {
        for (i, k) in keys.iter().enumerate() {
            if let Some(kid) = k.kid()
                && keys[..i].iter().any(|o| o.kid() == Some(kid))
            {
                return Err(KeyError::DuplicateKid {
                    kid: kid.to_owned(),
                });
            }
        }
        Ok(KeySet { keys })
    }

    /// Parses a JWKS (`{"keys":[…]}`) strictly. Keys of an unsupported type are skipped (a
    /// JWKS may also publish encryption keys); a key with private members, a bad `use`, or
    /// malformed material fails the whole set, since it shows a misconfigured publisher.
    pub fn from_jwks(text: &[u8]) -> Result<KeySet, KeyError> {
        let doc = strict::parse_with(text, &jwk_limits())?;
        let keys = doc
            .get("keys")
            .and_then(Value::as_array)
            .ok_or(KeyError::NotAJwks)?;
        let mut out = Vec::with_capacity(keys.len());
        for jwk in keys {
            match PublicKey::from_jwk(jwk) {
                Ok(k) => out.push(k),
                Err(KeyError::UnsupportedKeyType { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        KeySet::new(out)
    }

    /// Parses an OpenID provider's JWKS: like [`KeySet::from_jwks`], but a key this server
    /// cannot verify with is skipped rather than refused — an encryption key (`use: enc`,
    /// `alg: RSA-OAEP`), an algorithm outside the allowlist, a type we do not support — since
    /// providers publish those beside their signing keys. A key with private members still
    /// fails the whole set, and so does a repeated `kid`.
    pub fn from_provider_jwks(text: &[u8]) -> Result<KeySet, KeyError> {
        let doc = strict::parse_with(text, &jwk_limits())?;
        let keys = doc
            .get("keys")
            .and_then(Value::as_array)
            .ok_or(KeyError::NotAJwks)?;
        let mut out = Vec::with_capacity(keys.len());
        for jwk in keys {
            match PublicKey::from_jwk(jwk) {
                Ok(k) => out.push(k),
                Err(e @ KeyError::PrivateMember { .. }) => return Err(e),
                Err(_) => {}
            }
        }
        KeySet::new(out)
    }

    /// The key whose `kid` is exactly `kid`.
    pub fn get(&self, kid: &str) -> Option<&PublicKey> {
        self.keys.iter().find(|k| k.kid() == Some(kid))
    }

    /// All keys, in the order given.
    pub fn keys(&self) -> &[PublicKey] {
        &self.keys
    }

    /// The set as a JWKS document, for publishing at `/.well-known/jwks.json`.
    pub fn to_jwks(&self) -> Value {
        let keys = self.keys.iter().map(PublicKey::to_jwk).collect();
        let mut m = Map::new();
        m.insert("keys".into(), Value::Array(keys));
        Value::Object(m)
    }
}

enum Signer {
    Ec(signature::EcdsaKeyPair),
    Ed(signature::Ed25519KeyPair),
    Rsa(signature::RsaKeyPair),
}

/// A private key that signs cards, bound to one [`Algorithm`] and one `kid`.
pub struct SigningKey {
    signer: Signer,
    alg: Algorithm,
    kid: String,
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print key material.
        f.debug_struct("SigningKey")
            .field("alg", &self.alg)
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// Generates a new key: P-256/P-384 for ES256/ES384, Ed25519 for EdDSA/Ed25519, RSA
    /// 2048 bits for RS256/PS256.
    pub fn generate(alg: Algorithm, kid: impl Into<String>) -> Result<SigningKey, KeyError> {
        let failed = KeyError::Crypto {
            operation: "generate a key",
        };
        let signer = match alg {
            Algorithm::Es256 => Signer::Ec(
                signature::EcdsaKeyPair::generate(&signature::ECDSA_P256_SHA256_FIXED_SIGNING)
                    .map_err(|_| failed)?,
            ),
            Algorithm::Es384 => Signer::Ec(
                signature::EcdsaKeyPair::generate(&signature::ECDSA_P384_SHA384_FIXED_SIGNING)
                    .map_err(|_| failed)?,
            ),
            Algorithm::EdDsa | Algorithm::Ed25519 => {
                Signer::Ed(signature::Ed25519KeyPair::generate().map_err(|_| failed)?)
            }
            Algorithm::Rs256 | Algorithm::Ps256 => {
                Signer::Rsa(signature::RsaKeyPair::generate(KeySize::Rsa2048).map_err(|_| failed)?)
            }
        };
        Ok(SigningKey {
            signer,
            alg,
            kid: kid.into(),
        })
    }

    /// Loads a `-----BEGIN PRIVATE KEY-----` (PKCS#8) PEM for `alg`.
    pub fn from_pkcs8_pem(
        pem: &[u8],
        alg: Algorithm,
        kid: impl Into<String>,
    ) -> Result<SigningKey, KeyError> {
        let der = PrivatePkcs8KeyDer::from_pem_slice(pem).map_err(|_| KeyError::PemSection {
            expected: "PRIVATE KEY",
        })?;
        Self::from_pkcs8_der(der.secret_pkcs8_der(), alg, kid)
    }

    /// Loads a PKCS#8 DER private key for `alg`; the key type must fit `alg`.
    pub fn from_pkcs8_der(
        der: &[u8],
        alg: Algorithm,
        kid: impl Into<String>,
    ) -> Result<SigningKey, KeyError> {
        let rejected = KeyError::Rejected {
            key_type: alg.key_type(),
        };
        let signer = match alg {
            Algorithm::Es256 => Signer::Ec(
                signature::EcdsaKeyPair::from_pkcs8(
                    &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
                    der,
                )
                .map_err(|_| rejected)?,
            ),
            Algorithm::Es384 => Signer::Ec(
                signature::EcdsaKeyPair::from_pkcs8(
                    &signature::ECDSA_P384_SHA384_FIXED_SIGNING,
                    der,
                )
                .map_err(|_| rejected)?,
            ),
            Algorithm::EdDsa | Algorithm::Ed25519 => Signer::Ed(
                signature::Ed25519KeyPair::from_pkcs8_maybe_unchecked(der).map_err(|_| rejected)?,
            ),
            Algorithm::Rs256 | Algorithm::Ps256 => {
                let pair = signature::RsaKeyPair::from_pkcs8(der).map_err(|_| rejected)?;
                let bits = pair.public_modulus_len() * 8;
                if !(2048..=8192).contains(&bits) {
                    return Err(KeyError::RsaModulusSize { bits });
                }
                Signer::Rsa(pair)
            }
        };
        Ok(SigningKey {
            signer,
            alg,
            kid: kid.into(),
        })
    }

    /// An Ed25519 key from its 32-byte seed (RFC 8032), e.g. a test vector's private key.
    pub fn from_ed25519_seed(
        seed: &[u8],
        alg: Algorithm,
        kid: impl Into<String>,
    ) -> Result<SigningKey, KeyError> {
        if alg.key_type() != KeyType::Ed25519 {
            return Err(KeyError::AlgorithmMismatch {
                alg: alg.name().to_owned(),
                key_type: KeyType::Ed25519,
            });
        }
        let pair = signature::Ed25519KeyPair::from_seed_unchecked(seed).map_err(|_| {
            KeyError::Rejected {
                key_type: KeyType::Ed25519,
            }
        })?;
        Ok(SigningKey {
            signer: Signer::Ed(pair),
            alg,
            kid: kid.into(),
        })
    }

    /// The algorithm this key signs with.
    pub fn alg(&self) -> Algorithm {
        self.alg
    }

    /// The key id written into every protected header.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The matching public key, with this key's `kid` and `alg`.
    pub fn public_key(&self) -> PublicKey {
        let material = match &self.signer {
            Signer::Ec(p) => Material::Ec {
                key_type: self.alg.key_type(),
                point: p.public_key().as_ref().to_vec(),
            },
            Signer::Ed(p) => Material::Ed25519(p.public_key().as_ref().to_vec()),
            Signer::Rsa(p) => Material::Rsa {
                n: p.public_key()
                    .modulus()
                    .big_endian_without_leading_zero()
                    .to_vec(),
                e: p.public_key()
                    .exponent()
                    .big_endian_without_leading_zero()
                    .to_vec(),
            },
        };
        PublicKey {
            material,
            kid: Some(self.kid.clone()),
            alg: Some(self.alg),
        }
    }

    /// The public key as a `PUBLIC KEY` PEM.
    pub fn public_key_pem(&self) -> Result<String, KeyError> {
        let failed = KeyError::Crypto {
            operation: "encode the public key",
        };
        let der = match &self.signer {
            Signer::Ec(p) => p
                .public_key()
                .as_der()
                .map_err(|_| failed)?
                .as_ref()
                .to_vec(),
            Signer::Ed(p) => p
                .public_key()
                .as_der()
                .map_err(|_| failed)?
                .as_ref()
                .to_vec(),
            Signer::Rsa(p) => p
                .public_key()
                .as_der()
                .map_err(|_| failed)?
                .as_ref()
                .to_vec(),
        };
        Ok(pem_encode("PUBLIC KEY", &der))
    }

    /// The private key as a PKCS#8 `PRIVATE KEY` PEM. Handle the result as a secret.
    pub fn to_pkcs8_pem(&self) -> Result<String, KeyError> {
        let failed = KeyError::Crypto {
            operation: "encode the private key",
        };
        let der = match &self.signer {
            Signer::Ec(p) => p.to_pkcs8v1().map_err(|_| failed)?.as_ref().to_vec(),
            Signer::Ed(p) => p.to_pkcs8v1().map_err(|_| failed)?.as_ref().to_vec(),
            Signer::Rsa(p) => {
                let doc: aws_lc_rs::encoding::Pkcs8V1Der<'static> =
                    p.as_der().map_err(|_| failed)?;
                doc.as_ref().to_vec()
            }
        };
        Ok(pem_encode("PRIVATE KEY", &der))
    }

    /// Signs `message` (a JWS signing input) with this key's algorithm.
    pub(crate) fn sign(&self, message: &[u8]) -> Result<Vec<u8>, KeyError> {
        let failed = KeyError::Crypto { operation: "sign" };
        let rng = SystemRandom::new();
        match &self.signer {
            Signer::Ec(p) => Ok(p.sign(&rng, message).map_err(|_| failed)?.as_ref().to_vec()),
            Signer::Ed(p) => Ok(p.sign(message).as_ref().to_vec()),
            Signer::Rsa(p) => {
                let padding: &'static dyn signature::RsaEncoding = if self.alg == Algorithm::Ps256 {
                    &signature::RSA_PSS_SHA256
                } else {
                    &signature::RSA_PKCS1_SHA256
                };
                let mut sig = vec![0u8; p.public_modulus_len()];
                p.sign(padding, &rng, message, &mut sig)
                    .map_err(|_| failed)?;
                Ok(sig)
            }
        }
    }
}

fn pem_encode(label: &str, der: &[u8]) -> String {
    let b64 = STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(chunk));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// The few DER pieces a SubjectPublicKeyInfo needs.
mod der {
    pub(super) const SEQUENCE: u8 = 0x30;
    pub(super) const BIT_STRING: u8 = 0x03;
    pub(super) const OID: u8 = 0x06;
    pub(super) const INTEGER: u8 = 0x02;
    /// 1.2.840.10045.2.1
    pub(super) const OID_EC_PUBLIC_KEY: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
    /// 1.2.840.10045.3.1.7 (prime256v1)
    pub(super) const OID_P256: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
    /// 1.3.132.0.34 (secp384r1)
    pub(super) const OID_P384: &[u8] = &[0x2b, 0x81, 0x04, 0x00, 0x22];
    /// 1.3.101.112
    pub(super) const OID_ED25519: &[u8] = &[0x2b, 0x65, 0x70];
    /// 1.2.840.113549.1.1.1
    pub(super) const OID_RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];

    /// Reads one element with tag `tag`; returns its contents and the rest.
    pub(super) fn read(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
        let (&t, rest) = input.split_first()?;
        if t != tag {
            return None;
        }
        let (&first, rest) = rest.split_first()?;
        let (len, rest) = if first < 0x80 {
            (usize::from(first), rest)
        } else {
            let n = usize::from(first & 0x7f);
            if n == 0 || n > 3 || rest.len() < n {
                return None;
            }
            let len = rest[..n]
                .iter()
                .fold(0usize, |acc, &b| acc << 8 | usize::from(b));
            (len, &rest[n..])
        };
        if rest.len() < len {
            return None;
        }
        Some(rest.split_at(len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn algorithm_names_are_exact_and_exclude_none_and_hmac() {
        for a in Algorithm::ALL {
            assert_eq!(Algorithm::from_name(a.name()), Some(a));
        }
        for bad in ["none", "HS256", "HS384", "HS512", "es256", "RS512", ""] {
            assert_eq!(Algorithm::from_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn generated_keys_round_trip_through_pem_and_jwk() {
        for alg in [Algorithm::Es256, Algorithm::Es384, Algorithm::EdDsa] {
            let key = SigningKey::generate(alg, "k").expect("generate");
            let public = key.public_key();
            let pem = key.public_key_pem().expect("pem");
            let from_pem = PublicKey::from_pem(pem.as_bytes()).expect("from pem");
            assert_eq!(from_pem.with_kid("k").material, public.material);
            let from_jwk = PublicKey::from_jwk(&public.to_jwk()).expect("from jwk");
            assert_eq!(from_jwk, public);
            let private = key.to_pkcs8_pem().expect("pkcs8");
            let again = SigningKey::from_pkcs8_pem(private.as_bytes(), alg, "k").expect("load");
            assert_eq!(again.public_key(), public);
            assert_eq!(
                PublicKey::from_pem(private.as_bytes()),
                Err(KeyError::PrivateKeyGiven)
            );
        }
    }

    #[test]
    fn jwk_rules() {
        let ed =
            json!({"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"});
        let with = |k: &str, v: Value| {
            let mut j = ed.clone();
            j[k] = v;
            PublicKey::from_jwk(&j)
        };
        assert!(PublicKey::from_jwk(&ed).is_ok());
        assert_eq!(
            with("d", json!("x")),
            Err(KeyError::PrivateMember { member: "d" })
        );
        assert_eq!(with("use", json!("enc")), Err(KeyError::NotForVerification));
        assert_eq!(
            with("key_ops", json!(["sign"])),
            Err(KeyError::NotForVerification)
        );
        assert!(with("key_ops", json!(["verify"])).is_ok());
        assert!(matches!(
            with("alg", json!("ES256")),
            Err(KeyError::AlgorithmMismatch { .. })
        ));
        assert!(matches!(
            with("alg", json!("HS256")),
            Err(KeyError::AlgorithmMismatch { .. })
        ));
        assert_eq!(
            with("x", json!("11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHUR")),
            Err(KeyError::JwkMember { member: "x" })
        );
        assert!(matches!(
            PublicKey::from_jwk(&json!({"kty":"oct","k":"c2VjcmV0"})),
            Err(KeyError::PrivateMember { member: "k" })
        ));
        assert!(matches!(
            PublicKey::from_jwk(&json!({"kty":"EC","crv":"P-521","x":"AA","y":"AA"})),
            Err(KeyError::UnsupportedKeyType { .. })
        ));
        // A small RSA modulus (1024 bits) is refused.
        let n = URL_SAFE_NO_PAD.encode([0xc5u8; 128]);
        assert_eq!(
            PublicKey::from_jwk(&json!({"kty":"RSA","n":n,"e":"AQAB"})),
            Err(KeyError::RsaModulusSize { bits: 1024 })
        );
        let n = URL_SAFE_NO_PAD.encode([0xc5u8; 256]);
        assert_eq!(
            PublicKey::from_jwk(&json!({"kty":"RSA","n":n,"e":"Ag"})),
            Err(KeyError::RsaExponent)
        );
        // An EC point that is not on the curve.
        let bad = URL_SAFE_NO_PAD.encode([1u8; 32]);
        assert_eq!(
            PublicKey::from_jwk(&json!({"kty":"EC","crv":"P-256","x":bad,"y":bad})),
            Err(KeyError::Rejected {
                key_type: KeyType::EcP256
            })
        );
    }

    #[test]
    fn key_sets_refuse_duplicate_kids_and_skip_unknown_types() {
        let ed = json!({"kty":"OKP","crv":"Ed25519","kid":"a","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"});
        let jwks = json!({"keys":[ed, {"kty":"EC","crv":"secp256k1","x":"AA","y":"AA"}]});
        let set = KeySet::from_jwks(jwks.to_string().as_bytes()).expect("jwks");
        assert_eq!(set.keys().len(), 1);
        assert!(set.get("a").is_some());
        assert!(set.get("A").is_none());
        let dup = json!({"keys":[ed, ed]});
        assert_eq!(
            KeySet::from_jwks(dup.to_string().as_bytes()).map(|_| ()),
            Err(KeyError::DuplicateKid { kid: "a".into() })
        );
        let dup_member = br#"{"keys":[],"keys":[]}"#;
        assert!(matches!(
            KeySet::from_jwks(dup_member),
            Err(KeyError::Json(JsonError::DuplicateMember { .. }))
        ));
    }
}
