//! What a proxy agent is configured with: where the remote agent is, the pins its card must
//! satisfy and the credentials ferry presents to it. One `[[agents]] kind = "proxy"` table of
//! ferry's TOML file, or the `ferry serve --proxy` flags, deserialize into [`ProxyConfig`].

use super::error::{Pin, ProxyError};
use ferry_client::{Binding, ClientOptions, Expect};
use ferry_trust::keys::{KeySet, PublicKey};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;
use std::time::Duration;

/// The largest key or JWKS file read (64 KiB, as ferry-trust's JWKS limit).
const MAX_PIN_FILE_BYTES: u64 = 64 * 1024;

/// How to reach and trust the remote agent. Only `url` is required:
///
/// ```toml
/// url = "https://agent.example.com"
/// card_digest = "sha256:6f1c…"
/// token = "${UPSTREAM_TOKEN}"
/// prefer = "jsonrpc"
/// timeout_secs = 120
/// ```
///
/// ```
/// let config: ferry_agents::ProxyConfig =
///     serde_json::from_value(serde_json::json!({"url": "https://agent.example.com", "token": "s3cret"}))?;
/// assert_eq!(config.timeout_secs, 60);
/// assert!(!format!("{config:?}").contains("s3cret"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProxyConfig {
    /// The remote agent's base URL (`https://agent.example.com`; its card is read from
    /// `/.well-known/agent-card.json`) or the URL of its card itself (ending in `.json`).
    /// Required. https only, public addresses only, except a URL naming this machine
    /// (`http://127.0.0.1:…`, `http://localhost:…`) or with `danger_allow_private`.
    pub url: String,
    /// Pin: the card's digest, `sha256:<hex>` of its canonical form without signatures (what
    /// `ferry card URL` prints). The card must match it, or [`super::ProxyAgent::connect`]
    /// fails naming this pin. Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card_digest: Option<String>,
    /// Pin: a public key one of the card's signatures must verify with: a PEM
    /// (`-----BEGIN PUBLIC KEY-----`) or a JWK (`{…}`), inline, or the path of a file holding
    /// either. Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card_key: Option<String>,
    /// Pin: trusted keys as a JWKS: an `https://` URL (fetched with the card's address rules),
    /// an inline JWKS (`{"keys":[…]}`), or the path of a JWKS file. One of the card's
    /// signatures must verify with one of them. Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks: Option<String>,
    /// A bearer token sent to the remote agent (`Authorization: Bearer …`) on every call.
    /// Never printed: `Debug` shows `<redacted>`, and error messages never contain it.
    /// Default: none (no `Authorization` header).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// The binding to call the remote agent with, when its card offers several:
    /// `"jsonrpc"`, `"rest"` or `"grpc"`. Default: the card's first usable interface.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefer: Option<PreferBinding>,
    /// **Danger:** also reach the remote agent (and the interfaces its card names) on private
    /// networks and over plain http anywhere. Cloud metadata addresses stay refused. Default
    /// false (a loopback `url` is allowed without it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub danger_allow_private: bool,
    /// How long one call to the remote agent may take, in seconds: the card fetch, each
    /// send, get and cancel (an open stream has no limit). With a remote that does not
    /// stream, the blocking send waits for the remote's whole turn, so this must cover its
    /// longest turn. Default 60; 0 is refused.
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: u64,
}

fn default_timeout_secs() -> u64 {
    60
}

impl ProxyConfig {
    /// A configuration for the remote agent at `url`, every other field at its default.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            card_digest: None,
            card_key: None,
            jwks: None,
            token: None,
            prefer: None,
            danger_allow_private: false,
            timeout_secs: default_timeout_secs(),
        }
    }

    /// The client options: pins loaded, token as a sensitive header.
    pub(super) fn client_options(&self) -> Result<ClientOptions, ProxyError> {
        if self.url.trim().is_empty() {
            return Err(ProxyError::InvalidConfig {
                field: "url",
                reason: "the remote agent's URL is required".into(),
            });
        }
        if self.timeout_secs == 0 {
            return Err(ProxyError::InvalidConfig {
                field: "timeout_secs",
                reason: "must be at least 1".into(),
            });
        }
        let options = ClientOptions {
            prefer: self.prefer.map(PreferBinding::binding),
            timeout: Duration::from_secs(self.timeout_secs),
            expect: self.expect()?,
            danger_allow_private: self.danger_allow_private,
            ..ClientOptions::default()
        };
        match &self.token {
            // The client's own error text never holds the token; say only what is wrong.
            Some(token) => options
                .bearer(token)
                .map_err(|_| ProxyError::InvalidConfig {
                    field: "token",
                    reason: "not a valid HTTP header value (control characters or non-ASCII)"
                        .into(),
                }),
            None => Ok(options),
        }
    }

    /// The pins as ferry-trust's expectation.
    fn expect(&self) -> Result<Expect, ProxyError> {
        let mut expect = Expect {
            digest: self.card_digest.clone(),
            ..Expect::default()
        };
        if let Some(digest) = &self.card_digest
            && !digest.to_ascii_lowercase().starts_with("sha256:")
        {
            return Err(ProxyError::PinUnusable {
                pin: Pin::CardDigest,
                reason: format!("{digest:?} is not a sha256:<hex> digest"),
            });
        }
        if let Some(key) = &self.card_key {
            let unusable = |reason: String| ProxyError::PinUnusable {
                pin: Pin::CardKey,
                reason,
            };
            let bytes = inline_or_file(key, &["-----BEGIN", "{"]).map_err(unusable)?;
            let loaded = if bytes.trim_ascii_start().starts_with(b"{") {
                PublicKey::from_jwk_bytes(&bytes)
            } else {
                PublicKey::from_pem(&bytes)
            };
            expect.public_key = Some(loaded.map_err(|e| unusable(e.to_string()))?);
        }
        if let Some(jwks) = &self.jwks {
            let unusable = |reason: String| ProxyError::PinUnusable {
                pin: Pin::Jwks,
                reason,
            };
            if jwks.starts_with("https://") || jwks.starts_with("http://") {
                let url = url::Url::parse(jwks).map_err(|e| unusable(e.to_string()))?;
                expect.jwks_url = Some(url);
            } else {
                let bytes = inline_or_file(jwks, &["{"]).map_err(unusable)?;
                let keys = KeySet::from_jwks(&bytes).map_err(|e| unusable(e.to_string()))?;
                expect.keys = Some(keys);
            }
        }
        Ok(expect)
    }
}

/// The bytes of a pin given inline (it starts with one of `inline`) or as a file path.
fn inline_or_file(value: &str, inline: &[&str]) -> Result<Vec<u8>, String> {
    let trimmed = value.trim_start();
    if inline.iter().any(|p| trimmed.starts_with(p)) {
        return Ok(trimmed.as_bytes().to_vec());
    }
    let path = Path::new(value);
    let size = std::fs::metadata(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .len();
    if size > MAX_PIN_FILE_BYTES {
        return Err(format!(
            "{} is {size} bytes, over the limit of {MAX_PIN_FILE_BYTES}",
            path.display()
        ));
    }
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

impl fmt::Debug for ProxyConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProxyConfig")
            .field("url", &self.url)
            .field("card_digest", &self.card_digest)
            .field("card_key", &self.card_key)
            .field("jwks", &self.jwks)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("prefer", &self.prefer)
            .field("danger_allow_private", &self.danger_allow_private)
            .field("timeout_secs", &self.timeout_secs)
            .finish()
    }
}

/// The binding the proxy prefers for calling the remote agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PreferBinding {
    /// JSON-RPC 2.0 (`"jsonrpc"`).
    #[serde(alias = "json-rpc")]
    JsonRpc,
    /// HTTP+JSON (`"rest"`).
    #[serde(alias = "http+json")]
    Rest,
    /// gRPC (`"grpc"`).
    Grpc,
}

impl PreferBinding {
    /// The client's binding.
    pub fn binding(self) -> Binding {
        match self {
            Self::JsonRpc => Binding::JsonRpc,
            Self::Rest => Binding::HttpJson,
            Self::Grpc => Binding::Grpc,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_are_snake_case_with_documented_defaults() {
        let config: ProxyConfig = serde_json::from_value(json!({"url": "https://a.example"}))
            .expect("only url is required");
        assert_eq!(config, ProxyConfig::new("https://a.example"));
        let config: ProxyConfig = serde_json::from_value(json!({
            "url": "https://a.example", "card_digest": "sha256:00", "prefer": "rest",
            "danger_allow_private": true, "timeout_secs": 5, "token": "t"
        }))
        .expect("every key");
        assert_eq!(config.prefer, Some(PreferBinding::Rest));
        assert!(
            serde_json::from_value::<ProxyConfig>(json!({"url": "x", "cardDigest": "y"})).is_err(),
            "unknown keys are refused"
        );
        assert!(
            serde_json::from_value::<ProxyConfig>(json!({"url": "x", "prefer": "soap"})).is_err()
        );
    }

    #[test]
    fn the_token_never_shows() {
        let mut config = ProxyConfig::new("https://a.example");
        config.token = Some("hunter2".into());
        assert!(!format!("{config:?}").contains("hunter2"));
        config.token = Some("bad\ntoken-hunter2".into());
        let error = config.client_options().expect_err("not a header value");
        assert!(!error.to_string().contains("hunter2"), "{error}");
    }

    #[test]
    fn pins_load_inline_and_name_themselves_when_unusable() {
        let mut config = ProxyConfig::new("https://a.example");
        config.card_key = Some(
            "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n-----END PUBLIC KEY-----\n"
                .into(),
        );
        config.jwks = Some(
            r#"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k1","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#
                .into(),
        );
        let expect = config.expect().expect("inline pins");
        assert!(expect.public_key.is_some() && expect.keys.is_some());
        config.jwks = Some("/nonexistent/jwks.json".into());
        let error = config.expect().expect_err("no such file");
        assert!(matches!(
            error,
            ProxyError::PinUnusable { pin: Pin::Jwks, .. }
        ));
        assert!(error.to_string().contains("jwks"), "{error}");
        config.jwks = None;
        config.card_digest = Some("md5:00".into());
        let error = config.expect().expect_err("not sha256");
        assert!(error.to_string().contains("card_digest"), "{error}");
    }
}
