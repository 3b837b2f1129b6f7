//! Fetching an agent card from a URL and checking it against a pinned expectation.
//!
//! [`CardFetcher::fetch`] turns a URL and an [`Expect`] into a [`Verified`] card, or into a
//! [`FetchError`] a caller can branch on. Its rules, each answering a threat:
//!
//! - **Where it connects** is decided by ferry-net's [`SafeClient`]: https only, public
//!   addresses only, checked on the address actually dialed (DNS answers, IP literals and
//!   the peer after connecting), no proxy from the environment.
//! - **Redirects**: at most [`MAX_REDIRECTS`], each to the same scheme, host and port, and
//!   each `Location` checked like the first URL. A card host redirecting elsewhere is not
//!   the card host.
//! - **Size**: the body is streamed and reading stops at [`MAX_CARD_BYTES`] (256 KiB), whatever
//!   `Content-Length` says; a declared length over the limit is refused before reading.
//! - **Time**: one budget (10 s by default) covers every redirect, the body, and the JWKS.
//! - **Form**: status 200, `Content-Type` JSON (`application/json` or `*/*+json`), strict
//!   parsing ([`crate::strict`]: duplicate members at any depth, limits, unsafe integers).
//! - **Trust**: the [`crate::card::digest`] must equal [`Expect::digest`] when given, and
//!   when a key or a JWKS URL is given, one signature must verify ([`crate::jws::verify_card`]).
//!   The JWKS is fetched through the same client and rules (64 KiB); a `jku` in a signature
//!   header is never followed.

use crate::card::{self, CardError, Profile};
use crate::jws::{self, JwsError};
use crate::keys::{KeyError, KeySet, PublicKey};
use crate::strict::{self, JsonError, Limits};
use ferry_net::{NetError, Refusal, SafeClient, SafeClientBuilder};
use serde_json::Value;
use std::net::IpAddr;
use std::time::Duration;
use url::Url;

/// The largest card accepted (256 KiB): `MaxCardBytes` of the design.
pub const MAX_CARD_BYTES: usize = Limits::CARD_MAX_BYTES;
/// The largest JWKS accepted (64 KiB).
pub const MAX_JWKS_BYTES: usize = 64 * 1024;
/// The default time budget of one fetch, redirects, body and JWKS included (10 s).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The most redirects followed.
pub const MAX_REDIRECTS: usize = 3;

/// What the caller expects of a card. Every given expectation must hold; with none, the
/// fetcher still applies every transport and parsing rule and reports the digest.
#[derive(Debug, Clone, Default)]
pub struct Expect {
    /// The pinned digest, `sha256:<hex>` of the card's canonical form without signatures
    /// ([`crate::card::digest`]); compared case-insensitively.
    pub digest: Option<String>,
    /// A trusted public key. With a `kid`, it verifies only signatures with that `kid`;
    /// without one, it is tried for every signature.
    pub public_key: Option<PublicKey>,
    /// A JWKS URL whose keys are trusted; fetched through the same safe client.
    pub jwks_url: Option<Url>,
    /// Trusted keys already at hand (a local JWKS file).
    pub keys: Option<KeySet>,
}

/// A card that passed every rule and every expectation. Only [`CardFetcher::fetch`] builds
/// one:
///
/// ```compile_fail
/// let forged = ferry_trust::fetch::Verified { card: serde_json::Value::Null,
///     digest: String::new(), signed: false, verified: true, key_id: None };
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Verified {
    card: Value,
    digest: String,
    signed: bool,
    verified: bool,
    key_id: Option<String>,
}

impl Verified {
    /// The card without `signatures`: when a signature verified, the payload it covers
    /// ([`crate::jws::VerifiedCard::card`]); otherwise the members the digest covers.
    pub fn card(&self) -> &Value {
        &self.card
    }

    /// The card digest, `sha256:<hex>`.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// Whether the card carries at least one signature (verified or not).
    pub fn signed(&self) -> bool {
        self.signed
    }

    /// Whether a signature verified against the expected key or JWKS.
    pub fn verified(&self) -> bool {
        self.verified
    }

    /// The `kid` of the key that verified, when one did.
    pub fn key_id(&self) -> Option<&str> {
        self.key_id.as_deref()
    }
}

/// Why a redirect was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RedirectError {
    /// More than [`MAX_REDIRECTS`] redirects.
    #[error("more than {limit} redirects")]
    TooMany {
        /// The limit.
        limit: usize,
    },
    /// The redirect leaves the card's scheme, host or port.
    #[error("redirect from {from} to another origin: {to}")]
    CrossHost {
        /// The URL that redirected.
        from: String,
        /// Where it pointed.
        to: String,
    },
    /// A redirect status without a usable `Location`.
    #[error("redirect without a valid location: {location:?}")]
    BadLocation {
        /// The header value, if any.
        location: Option<String>,
    },
}

/// Why a card fetch failed. One enum, so callers branch on the variant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// The URL does not parse or has no host.
    #[error("invalid url {url:?}: {reason}")]
    InvalidUrl {
        /// The URL text.
        url: String,
        /// What is wrong.
        reason: String,
    },
    /// The scheme is not `https` (or `http`, when allowed for tests).
    #[error("scheme {scheme:?} is not allowed, use https")]
    SchemeNotAllowed {
        /// The scheme.
        scheme: String,
    },
    /// The host is, or resolved to, an address the policy refuses.
    #[error("{host} is {addr}, a {refusal}, which is not allowed")]
    BlockedAddress {
        /// The host as written.
        host: String,
        /// The refused address.
        addr: IpAddr,
        /// Why.
        refusal: Refusal,
    },
    /// The time budget ran out.
    #[error("timed out after {limit:?}")]
    Timeout {
        /// The budget.
        limit: Duration,
    },
    /// The TLS handshake failed.
    #[error("tls: {reason}")]
    Tls {
        /// rustls's message.
        reason: String,
    },
    /// Another network failure (DNS, connect, malformed HTTP).
    #[error(transparent)]
    Net(NetError),
    /// The final response's status is not 200.
    #[error("{url} answered HTTP {status}")]
    Status {
        /// The status code.
        status: u16,
        /// The URL that answered.
        url: String,
    },
    /// A redirect was refused.
    #[error(transparent)]
    Redirect(#[from] RedirectError),
    /// The response is not JSON by its `Content-Type`.
    #[error("content type {content_type:?} is not JSON")]
    NotJson {
        /// The header value, if any.
        content_type: Option<String>,
    },
    /// The body is larger than the limit.
    #[error("body is over the limit of {limit} bytes")]
    TooLarge {
        /// The limit in bytes.
        limit: usize,
        /// The declared `Content-Length`, when it alone exceeded the limit.
        declared: Option<u64>,
    },
    /// The card has two members with the same name.
    #[error("duplicate member {name:?} at {at}")]
    DuplicateKey {
        /// The repeated name, unescaped.
        name: String,
        /// JSON pointer of the object holding it.
        at: String,
    },
    /// The body is not strict JSON (other than a duplicate member).
    #[error("card: {0}")]
    Strict(JsonError),
    /// The JSON is not a card (not an object).
    #[error(transparent)]
    Card(#[from] CardError),
    /// The card's digest is not the pinned one.
    #[error("card digest is {actual}, expected {expected}")]
    DigestMismatch {
        /// The pinned digest.
        expected: String,
        /// The card's digest.
        actual: String,
    },
    /// No signature verified against the expected keys (or the card is unsigned).
    #[error("signature: {0}")]
    Signature(JwsError),
    /// The expected keys could not be used (a bad JWKS, duplicate kids).
    #[error("keys: {0}")]
    Key(#[from] KeyError),
    /// Fetching the JWKS failed.
    #[error("jwks {url}: {error}")]
    Jwks {
        /// The JWKS URL.
        url: String,
        /// Why.
        error: Box<FetchError>,
    },
}

impl FetchError {
    fn from_net(e: NetError, limit: Duration) -> FetchError {
        match e {
            NetError::BlockedAddress {
                host,
                addr,
                refusal,
            } => FetchError::BlockedAddress {
                host,
                addr,
                refusal,
            },
            NetError::SchemeNotAllowed { scheme } => FetchError::SchemeNotAllowed { scheme },
            NetError::InvalidUrl { url, reason } => FetchError::InvalidUrl { url, reason },
            NetError::Timeout => FetchError::Timeout { limit },
            NetError::Tls { reason } => FetchError::Tls { reason },
            e => FetchError::Net(e),
        }
    }

    fn from_json(e: JsonError) -> FetchError {
        match e {
            JsonError::DuplicateMember { name, at, .. } => FetchError::DuplicateKey {
                name,
                at: at.as_str().to_owned(),
            },
            JsonError::TooLarge { limit, .. } => FetchError::TooLarge {
                limit,
                declared: None,
            },
            e => FetchError::Strict(e),
        }
    }
}

/// Builds a [`CardFetcher`]. Defaults: ferry-net's [`SafeClient::builder`] (public
/// addresses only, https only, platform roots), a 10 s budget, 256 KiB cards, the
/// [`Profile::Strict`] verification profile.
///
/// ```
/// use ferry_trust::fetch::CardFetcher;
///
/// let fetcher = CardFetcher::builder()
///     .timeout(std::time::Duration::from_secs(5))
///     .build()?;
/// # let _ = fetcher;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct CardFetcherBuilder {
    net: SafeClientBuilder,
    timeout: Duration,
    max_card_bytes: usize,
    profiles: Vec<Profile>,
}

impl CardFetcherBuilder {
    /// The network client settings: address policy (`allow_private` for intranets and
    /// tests), `allow_http`, extra root certificates, fixed DNS answers. The fetcher sets
    /// the client's timeouts from [`CardFetcherBuilder::timeout`].
    pub fn net(mut self, net: SafeClientBuilder) -> CardFetcherBuilder {
        self.net = net;
        self
    }

    /// The time budget of one fetch (default 10 s).
    pub fn timeout(mut self, timeout: Duration) -> CardFetcherBuilder {
        self.timeout = timeout;
        self
    }

    /// The largest card accepted (default [`MAX_CARD_BYTES`]).
    pub fn max_card_bytes(mut self, limit: usize) -> CardFetcherBuilder {
        self.max_card_bytes = limit;
        self
    }

    /// The payload profiles a signature may verify under, tried in order (default
    /// `[Profile::Strict]`; add [`Profile::A2aSdkCompat`] for cards signed by the official
    /// SDKs).
    pub fn profiles(mut self, profiles: &[Profile]) -> CardFetcherBuilder {
        self.profiles = profiles.to_vec();
        self
    }

    /// Builds the fetcher and its client.
    pub fn build(self) -> Result<CardFetcher, FetchError> {
        let client = self
            .net
            .timeout(self.timeout)
            .connect_timeout(self.timeout)
            .build()
            .map_err(|e| FetchError::from_net(e, self.timeout))?;
        Ok(CardFetcher {
            client,
            timeout: self.timeout,
            max_card_bytes: self.max_card_bytes,
            profiles: self.profiles,
        })
    }
}

/// Fetches agent cards and checks them against an [`Expect`]; see the module docs.
#[derive(Debug, Clone)]
pub struct CardFetcher {
    client: SafeClient,
    timeout: Duration,
    max_card_bytes: usize,
    profiles: Vec<Profile>,
}

impl CardFetcher {
    /// A builder with the defaults of [`CardFetcherBuilder`].
    pub fn builder() -> CardFetcherBuilder {
        CardFetcherBuilder {
            net: SafeClient::builder(),
            timeout: DEFAULT_TIMEOUT,
            max_card_bytes: MAX_CARD_BYTES,
            profiles: vec![Profile::Strict],
        }
    }

    /// Fetches the card at `url` and checks it against `expect`.
    ///
    /// ```no_run
    /// use ferry_trust::fetch::{CardFetcher, Expect};
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let fetcher = CardFetcher::builder().build()?;
    /// let expect = Expect { digest: Some("sha256:…".into()), ..Expect::default() };
    /// let card = fetcher
    ///     .fetch("https://agent.example.com/.well-known/agent-card.json", &expect)
    ///     .await?;
    /// println!("{} {}", card.card()["name"], card.digest());
    /// # Ok(()) }
    /// ```
    pub async fn fetch(&self, url: &str, expect: &Expect) -> Result<Verified, FetchError> {
        let url = Url::parse(url).map_err(|e| FetchError::InvalidUrl {
            url: url.to_owned(),
            reason: e.to_string(),
        })?;
        let limit = self.timeout;
        tokio::time::timeout(limit, self.fetch_and_check(url, expect))
            .await
            .map_err(|_| FetchError::Timeout { limit })?
    }

    async fn fetch_and_check(&self, url: Url, expect: &Expect) -> Result<Verified, FetchError> {
        let body = self.get_json(url, self.max_card_bytes).await?;
        let limits = Limits {
            max_bytes: self.max_card_bytes,
            ..Limits::default()
        };
        let card = strict::parse_with(&body, &limits).map_err(FetchError::from_json)?;
        let payload = card::payload(&card, Profile::Strict)?;
        let digest = payload.digest();
        if let Some(expected) = &expect.digest
            && !expected.eq_ignore_ascii_case(&digest)
        {
            return Err(FetchError::DigestMismatch {
                expected: expected.clone(),
                actual: digest,
            });
        }
        let signed = card
            .get("signatures")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty());
        if expect.public_key.is_none() && expect.jwks_url.is_none() && expect.keys.is_none() {
            return Ok(Verified {
                card: payload.value().clone(),
                digest,
                signed,
                verified: false,
                key_id: None,
            });
        }
        let keys = self.trusted_keys(&card, expect).await?;
        let verified =
            jws::verify_card(&card, &keys, &self.profiles).map_err(FetchError::Signature)?;
        Ok(Verified {
            card: verified.card().clone(),
            digest,
            signed,
            verified: true,
            key_id: Some(verified.key_id().to_owned()),
        })
    }

    /// The keys of `expect`: the JWKS's, then the given key (once per signature `kid` when
    /// it has none of its own, skipping kids the JWKS already names).
    async fn trusted_keys(&self, card: &Value, expect: &Expect) -> Result<KeySet, FetchError> {
        let mut keys: Vec<PublicKey> = expect
            .keys
            .iter()
            .flat_map(|set| set.keys().iter().cloned())
            .collect();
        if let Some(url) = &expect.jwks_url {
            let body = self
                .get_json(url.clone(), MAX_JWKS_BYTES)
                .await
                .map_err(|error| FetchError::Jwks {
                    url: url.to_string(),
                    error: Box::new(error),
                })?;
            keys.extend(KeySet::from_jwks(&body)?.keys().iter().cloned());
        }
        if let Some(key) = &expect.public_key {
            if key.kid().is_some() {
                keys.push(key.clone());
            } else {
                for kid in signature_kids(card) {
                    if !keys.iter().any(|k| k.kid() == Some(kid.as_str())) {
                        keys.push(key.clone().with_kid(kid));
                    }
                }
            }
        }
        Ok(KeySet::new(keys)?)
    }

    /// GETs `url`, following same-origin redirects, and returns a JSON body of at most
    /// `limit` bytes.
    async fn get_json(&self, url: Url, limit: usize) -> Result<Vec<u8>, FetchError> {
        get_json(&self.client, self.timeout, url, limit).await
    }
}

/// GETs `url` through `client`, following same-origin redirects (at most
/// [`MAX_REDIRECTS`], each checked like the first URL), and returns a JSON body (status 200,
/// a JSON content type) of at most `limit` bytes; `timeout` is for the messages (the caller
/// bounds the time).
pub async fn get_json(
    client: &SafeClient,
    timeout: Duration,
    mut url: Url,
    limit: usize,
) -> Result<Vec<u8>, FetchError> {
    let net = |e| FetchError::from_net(e, timeout);
    let mut redirects = 0;
    let response = loop {
        let response = client.get(&url, "application/json").await.map_err(net)?;
        let status = response.status();
        if !matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308) {
            break response;
        }
        if redirects == MAX_REDIRECTS {
            return Err(RedirectError::TooMany {
                limit: MAX_REDIRECTS,
            }
            .into());
        }
        let location = response.headers().get(reqwest::header::LOCATION);
        let next = location
            .and_then(|v| v.to_str().ok())
            .and_then(|v| url.join(v).ok())
            .ok_or_else(|| RedirectError::BadLocation {
                location: location.map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
            })?;
        // An address refusal says more than "another host", so check it first.
        client.check_url(&next).map_err(net)?;
        if next.scheme() != url.scheme()
            || next.host_str() != url.host_str()
            || next.port_or_known_default() != url.port_or_known_default()
        {
            return Err(RedirectError::CrossHost {
                from: url.to_string(),
                to: next.to_string(),
            }
            .into());
        }
        redirects += 1;
        url = next;
    };
    if response.status() != reqwest::StatusCode::OK {
        return Err(FetchError::Status {
            status: response.status().as_u16(),
            url: url.to_string(),
        });
    }
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    if !content_type.as_deref().is_some_and(is_json) {
        return Err(FetchError::NotJson { content_type });
    }
    if let Some(declared) = response.content_length()
        && declared > limit as u64
    {
        return Err(FetchError::TooLarge {
            limit,
            declared: Some(declared),
        });
    }
    let mut response = response;
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| net(NetError::from_reqwest(&e)))?
    {
        if body.len() + chunk.len() > limit {
            return Err(FetchError::TooLarge {
                limit,
                declared: None,
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// `application/json` or any `+json` type, parameters ignored, case-insensitive.
fn is_json(content_type: &str) -> bool {
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    match essence.split_once('/') {
        Some((_, subtype)) => {
            essence == "application/json" || (subtype.ends_with("+json") && subtype.len() > 5)
        }
        None => false,
    }
}

/// The distinct `kid`s of a card's signatures whose protected header parses.
fn signature_kids(card: &Value) -> Vec<String> {
    let mut kids: Vec<String> = Vec::new();
    let entries = card.get("signatures").and_then(Value::as_array);
    for entry in entries.into_iter().flatten() {
        let header = entry
            .get("protected")
            .and_then(Value::as_str)
            .and_then(|p| jws::parse_protected(p).ok());
        if let Some(kid) = header.as_ref().and_then(|h| h.kid())
            && !kids.iter().any(|k| k == kid)
        {
            kids.push(kid.to_owned());
        }
    }
    kids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_content_types() {
        for ok in [
            "application/json",
            "Application/JSON; charset=utf-8",
            "application/a2a+json",
            "application/vnd.x+json ; q=1",
        ] {
            assert!(is_json(ok), "{ok}");
        }
        for no in [
            "text/html",
            "text/json-ish",
            "application/+json",
            "json",
            "",
        ] {
            assert!(!is_json(no), "{no}");
        }
    }
}
