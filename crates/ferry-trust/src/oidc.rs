//! An OpenID Connect provider, as a server that accepts its access tokens sees it: the
//! discovery document and the signing keys, fetched and kept current, and the verification
//! of a token against them ([`crate::jwt`]).
//!
//! - **Where it connects**: through ferry-net's [`SafeClient`] (the address actually dialed
//!   is checked; no proxy from the environment): public https only, unless the provider is
//!   configured as private (loopback and private addresses, plain http: tests, intranets). A
//!   private CA can be trusted for it.
//! - **Discovery**: `{issuer}/.well-known/openid-configuration`, whose `issuer` must be the
//!   configured one exactly (OpenID Connect Discovery §4.3), and whose `jwks_uri` names the
//!   key set. Fetched on first use, not at start: a provider that is down does not keep the
//!   server from starting, and a token is refused (503 to its caller) until it answers.
//! - **Keys**: kept and used for every token; fetched again after
//!   [`ProviderSettings::refresh_after`] (a rotation that adds a key first), and when a token
//!   names a key the set does not hold — such fetches at most once per
//!   [`ProviderSettings::refetch_min_interval`], so a stream of tokens with made-up `kid`s
//!   cannot make the server hammer the provider. One fetch at a time; readers never wait
//!   for one unless they need it.

use crate::fetch::{self, FetchError};
use crate::jwt::{self, Claims, JwtError, Rules};
use crate::keys::{KeyError, KeySet};
use crate::strict::{self, Limits};
use ferry_net::{SafeClient, SafeClientBuilder};
use serde_json::Value;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;
use tokio::time::Instant;
use url::Url;

/// The largest discovery document accepted (64 KiB).
pub const MAX_DISCOVERY_BYTES: usize = 64 * 1024;
/// The default age after which the keys are fetched again (10 min).
pub const DEFAULT_REFRESH_AFTER: Duration = Duration::from_secs(600);
/// The default shortest time between two fetches for an unknown key (30 s).
pub const DEFAULT_REFETCH_MIN_INTERVAL: Duration = Duration::from_secs(30);

/// The discovery document's URL of `issuer` (OpenID Connect Discovery §4).
pub fn discovery_url(issuer: &str) -> String {
    format!(
        "{}/.well-known/openid-configuration",
        issuer.trim_end_matches('/')
    )
}

/// How to reach a provider and how often to ask it.
#[derive(Debug, Clone)]
pub struct ProviderSettings {
    /// The issuer URL, as its tokens' `iss` says it.
    pub issuer: String,
    /// Allow the provider on loopback and private addresses, over plain http too.
    pub allow_private: bool,
    /// Further trusted root certificates (DER), for a provider with a private CA.
    pub roots: Vec<Vec<u8>>,
    /// The time budget of one fetch.
    pub timeout: Duration,
    /// The age after which the keys are fetched again.
    pub refresh_after: Duration,
    /// The shortest time between two fetches caused by unknown keys.
    pub refetch_min_interval: Duration,
}

impl ProviderSettings {
    /// The settings for `issuer`, public https, with the defaults.
    pub fn new(issuer: impl Into<String>) -> ProviderSettings {
        ProviderSettings {
            issuer: issuer.into(),
            allow_private: false,
            roots: Vec::new(),
            timeout: fetch::DEFAULT_TIMEOUT,
            refresh_after: DEFAULT_REFRESH_AFTER,
            refetch_min_interval: DEFAULT_REFETCH_MIN_INTERVAL,
        }
    }
}

/// Why the provider could not be used, or a token was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum OidcError {
    /// The issuer is not an absolute http(s) URL.
    #[error("the issuer {issuer:?} is not an http(s) URL: {reason}")]
    Issuer {
        /// The configured issuer.
        issuer: String,
        /// Why not.
        reason: String,
    },
    /// The HTTP client could not be built (a bad root certificate).
    #[error("cannot build the client for the provider: {0}")]
    Client(String),
    /// The discovery document or the key set could not be fetched.
    #[error("cannot fetch the provider's {what}: {error}")]
    Fetch {
        /// Which document.
        what: &'static str,
        /// Why.
        error: FetchError,
    },
    /// The discovery document is not one this issuer's.
    #[error("the provider's discovery document is not usable: {0}")]
    Discovery(String),
    /// The key set could not be read.
    #[error("the provider's key set is not usable: {0}")]
    Keys(KeyError),
    /// The token was refused.
    #[error(transparent)]
    Token(#[from] JwtError),
}

impl OidcError {
    /// Whether the token itself was refused (401 to its caller), rather than the provider
    /// failing (503: the token may be fine).
    pub fn is_token_refusal(&self) -> bool {
        matches!(self, OidcError::Token(_))
    }
}

/// The keys as last fetched.
#[derive(Debug)]
struct Fetched {
    keys: Arc<KeySet>,
    /// When (`None`: never).
    at: Option<Instant>,
}

/// An OpenID Connect provider whose tokens a server accepts (see the module docs).
#[derive(Debug)]
pub struct Provider {
    issuer: String,
    discovery_url: Url,
    client: SafeClient,
    settings: ProviderSettings,
    fetched: RwLock<Arc<Fetched>>,
    /// Held by the one fetch in progress.
    fetching: tokio::sync::Mutex<()>,
    /// When a token naming an unknown key last made the keys be fetched: the rate limit of
    /// such fetches counts from there, not from the scheduled fetches, so a rotation right
    /// after one is still picked up at once.
    last_refetch: Mutex<Option<Instant>>,
}

impl Provider {
    /// The provider of `settings` (nothing is fetched yet).
    pub fn new(settings: ProviderSettings) -> Result<Provider, OidcError> {
        let issuer = settings.issuer.clone();
        let bad = |reason: String| OidcError::Issuer {
            issuer: issuer.clone(),
            reason,
        };
        let url = Url::parse(&issuer).map_err(|e| bad(e.to_string()))?;
        if !matches!(url.scheme(), "https" | "http") || url.host_str().is_none() {
            return Err(bad("an issuer is an https URL with a host".into()));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(bad("an issuer has no query or fragment".into()));
        }
        let discovery_url = Url::parse(&discovery_url(&issuer)).map_err(|e| bad(e.to_string()))?;
        let mut builder = SafeClientBuilder::default()
            .allow_private(settings.allow_private)
            .allow_loopback(settings.allow_private)
            .allow_http(settings.allow_private)
            .timeout(settings.timeout);
        for root in &settings.roots {
            builder = builder.add_root_certificate(root.clone());
        }
        let client = builder
            .build()
            .map_err(|e| OidcError::Client(e.to_string()))?;
        client
            .check_url(&discovery_url)
            .map_err(|e| bad(e.to_string()))?;
        Ok(Provider {
            issuer,
            discovery_url,
            client,
            settings,
            fetched: RwLock::new(Arc::new(Fetched {
                keys: Arc::new(KeySet::default()),
                at: None,
            })),
            fetching: tokio::sync::Mutex::new(()),
            last_refetch: Mutex::new(None),
        })
    }

    /// The issuer.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The discovery document's URL (what a card's `openIdConnect` scheme names).
    pub fn discovery_url(&self) -> &Url {
        &self.discovery_url
    }

    /// Verifies `token` under `rules` (whose issuer should be this provider's) at `now`
    /// (seconds since the epoch): with the keys held, fetched first when there are none yet
    /// or they are old, and fetched again once when the token names a key they lack.
    pub async fn verify(&self, token: &str, rules: &Rules, now: i64) -> Result<Claims, OidcError> {
        let keys = self.current_keys().await?;
        match jwt::verify(token, &keys, rules, now) {
            Err(JwtError::UnknownKey { .. }) => match self.refetch_for_unknown_key(&keys).await? {
                Some(fresh) => Ok(jwt::verify(token, &fresh, rules, now)?),
                None => Ok(jwt::verify(token, &keys, rules, now)?),
            },
            verified => Ok(verified?),
        }
    }

    fn snapshot(&self) -> Arc<Fetched> {
        self.fetched
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The keys to verify with: those held, unless there are none yet or they are older
    /// than `refresh_after` (then fetched; a failed refresh keeps the old keys).
    async fn current_keys(&self) -> Result<Arc<KeySet>, OidcError> {
        let held = self.snapshot();
        let fresh = held
            .at
            .is_some_and(|at| at.elapsed() < self.settings.refresh_after);
        if fresh {
            return Ok(held.keys.clone());
        }
        match self.fetch_once(held.at).await {
            Ok(keys) => Ok(keys),
            Err(e) if held.at.is_some() => {
                tracing::warn!(issuer = %self.issuer, error = %e, "refreshing the provider's keys failed; the keys held are used");
                Ok(held.keys.clone())
            }
            Err(e) => Err(e),
        }
    }

    /// After a token named a key `seen` lacks: the keys fetched again, unless such a fetch
    /// was made within `refetch_min_interval` (then `None`), or the newer keys another fetch
    /// brought meanwhile.
    async fn refetch_for_unknown_key(
        &self,
        seen: &Arc<KeySet>,
    ) -> Result<Option<Arc<KeySet>>, OidcError> {
        let held = self.snapshot();
        if !Arc::ptr_eq(&held.keys, seen) {
            return Ok(Some(held.keys.clone()));
        }
        {
            let mut last = self
                .last_refetch
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if last.is_some_and(|at| at.elapsed() < self.settings.refetch_min_interval) {
                return Ok(None);
            }
            *last = Some(Instant::now());
        }
        self.fetch_once(held.at).await.map(Some)
    }

    /// Fetches the keys, unless another fetch did since `since` (then its keys).
    async fn fetch_once(&self, since: Option<Instant>) -> Result<Arc<KeySet>, OidcError> {
        let _one_at_a_time = self.fetching.lock().await;
        let held = self.snapshot();
        if held.at != since {
            return Ok(held.keys.clone());
        }
        let keys = Arc::new(self.fetch_keys().await?);
        let fetched = Arc::new(Fetched {
            keys: keys.clone(),
            at: Some(Instant::now()),
        });
        *self.fetched.write().unwrap_or_else(PoisonError::into_inner) = fetched;
        Ok(keys)
    }

    /// The discovery document, then the key set it names.
    async fn fetch_keys(&self) -> Result<KeySet, OidcError> {
        let limit = self.settings.timeout;
        let work = async {
            let jwks_uri = self.jwks_uri().await?;
            let body = fetch::get_json(&self.client, limit, jwks_uri, fetch::MAX_JWKS_BYTES)
                .await
                .map_err(|error| OidcError::Fetch {
                    what: "key set",
                    error,
                })?;
            KeySet::from_provider_jwks(&body).map_err(OidcError::Keys)
        };
        tokio::time::timeout(limit, work)
            .await
            .map_err(|_| OidcError::Fetch {
                what: "key set",
                error: FetchError::Timeout { limit },
            })?
    }

    /// The `jwks_uri` of the discovery document, after checking its `issuer`.
    async fn jwks_uri(&self) -> Result<Url, OidcError> {
        let body = fetch::get_json(
            &self.client,
            self.settings.timeout,
            self.discovery_url.clone(),
            MAX_DISCOVERY_BYTES,
        )
        .await
        .map_err(|error| OidcError::Fetch {
            what: "discovery document",
            error,
        })?;
        let limits = Limits {
            max_bytes: MAX_DISCOVERY_BYTES,
            ..Limits::default()
        };
        let doc =
            strict::parse_with(&body, &limits).map_err(|e| OidcError::Discovery(e.to_string()))?;
        let member = |name: &str| doc.get(name).and_then(Value::as_str);
        match member("issuer") {
            Some(issuer) if issuer == self.issuer => {}
            other => {
                return Err(OidcError::Discovery(format!(
                    "its issuer is {other:?}, not {:?}",
                    self.issuer
                )));
            }
        }
        let uri = member("jwks_uri")
            .ok_or_else(|| OidcError::Discovery("it names no jwks_uri".into()))?;
        Url::parse(uri).map_err(|e| OidcError::Discovery(format!("jwks_uri {uri:?}: {e}")))
    }
}
