//! Serving signed cards: the configured keys sign the served card (one signature each, so keys
//! can rotate), and their public keys, plus any announced next keys, are published as a JWKS at
//! `/.well-known/jwks.json`.

use crate::config::SigningKeyConfig;
use ferry_proto::AgentCard;
use ferry_trust::keys::{Algorithm, KeySet, PublicKey, SigningKey};

/// The path of the published key set.
pub const JWKS_PATH: &str = "/.well-known/jwks.json";

/// Why the signing keys could not be loaded or used.
#[derive(Debug, thiserror::Error)]
pub enum SigningError {
    /// The key file could not be read.
    #[error("cannot read signing key {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A key or card file is not usable.
    #[error("{path}: {message}")]
    Key {
        /// The file.
        path: String,
        /// What was wrong.
        message: String,
    },
    /// Signing failed.
    #[error("signing the card failed: {0}")]
    Sign(String),
}

/// Loads one signing key.
pub(crate) fn load_signing_key(config: &SigningKeyConfig) -> Result<SigningKey, SigningError> {
    let path = config.key.display().to_string();
    let pem = std::fs::read(&config.key).map_err(|source| SigningError::Read {
        path: path.clone(),
        source,
    })?;
    let key_error = |message: String| SigningError::Key {
        path: path.clone(),
        message,
    };
    let candidates: Vec<Algorithm> = match &config.alg {
        Some(name) => vec![
            Algorithm::from_name(name)
                .ok_or_else(|| key_error(format!("unknown algorithm {name:?}")))?,
        ],
        None => vec![
            Algorithm::EdDsa,
            Algorithm::Es256,
            Algorithm::Es384,
            Algorithm::Rs256,
        ],
    };
    let mut last = String::from("no algorithm fits");
    for alg in candidates {
        match SigningKey::from_pkcs8_pem(&pem, alg, config.kid.clone()) {
            Ok(key) => return Ok(key),
            Err(e) => last = e.to_string(),
        }
    }
    Err(key_error(last))
}

/// Signs `card` with every key, in order.
pub(crate) fn sign(card: AgentCard, keys: &[SigningKey]) -> Result<AgentCard, SigningError> {
    keys.iter().try_fold(card, |card, key| {
        ferry_trust::jws::sign_card(&card, key, None).map_err(|e| SigningError::Sign(e.to_string()))
    })
}

/// The JWKS of the signing keys' public halves plus `announced` keys (published, not used).
pub(crate) fn jwks(
    keys: &[SigningKey],
    announced: &[PublicKey],
) -> Result<serde_json::Value, SigningError> {
    let all: Vec<PublicKey> = keys
        .iter()
        .map(SigningKey::public_key)
        .chain(announced.iter().cloned())
        .collect();
    let set = KeySet::new(all).map_err(|e| SigningError::Sign(e.to_string()))?;
    Ok(set.to_jwks())
}

/// Loads a public key to announce (PEM `PUBLIC KEY` or a JWK), with its `kid`.
pub(crate) fn load_public_key(
    path: &std::path::Path,
    kid: &str,
) -> Result<PublicKey, SigningError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| SigningError::Read {
        path: shown.clone(),
        source,
    })?;
    let key = if bytes.trim_ascii_start().starts_with(b"{") {
        PublicKey::from_jwk_bytes(&bytes)
    } else {
        PublicKey::from_pem(&bytes)
    };
    key.map(|k| k.with_kid(kid)).map_err(|e| SigningError::Key {
        path: shown,
        message: e.to_string(),
    })
}

/// The extended card: the public `card` with the members of the JSON object in `path` put over
/// it (top-level members replace the public card's).
pub(crate) fn extended_card(
    card: &AgentCard,
    path: &std::path::Path,
) -> Result<AgentCard, SigningError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|source| SigningError::Read {
        path: shown.clone(),
        source,
    })?;
    let invalid = |message: String| SigningError::Key {
        path: shown.clone(),
        message,
    };
    let overlay = ferry_trust::strict::parse(&bytes).map_err(|e| invalid(e.to_string()))?;
    let serde_json::Value::Object(overlay) = overlay else {
        return Err(invalid(
            "the extended card file must hold a JSON object".into(),
        ));
    };
    let mut merged = serde_json::to_value(card).map_err(|e| invalid(e.to_string()))?;
    if let Some(obj) = merged.as_object_mut() {
        for (k, v) in overlay {
            if k != "signatures" {
                obj.insert(k, v);
            }
        }
    }
    serde_json::from_value(merged)
        .map_err(|e| invalid(format!("not an agent card once merged: {e}")))
}
