//! OAuth 2 access tokens a client gets for itself: by client credentials (a service with a
//! client id and secret) or by the device flow (a person at a terminal approves in a
//! browser), kept in a cache per provider, audience, client and scope (file mode 0600), and
//! refreshed before they expire.
//!
//! # Whom credentials go to
//!
//! The provider is the one the card's `openIdConnect` scheme names, or the one the user names
//! ([`TokenSettings::issuer`]); where both are given they must agree. A client secret is
//! sent only to a provider the user named: a card cannot send it elsewhere. The device flow
//! sends no secret (the person sees the provider's own page), so it may follow the card.
//! Every request goes through ferry-net's SSRF-safe client, and the discovery document must
//! name the issuer it was fetched for (OpenID Connect Discovery §4.3).
//!
//! The flows themselves are the `oauth2` crate's.

use crate::ClientTls;
use ferry_net::{SafeClient, SafeClientBuilder, Url};
use ferry_proto::{AgentCard, SecurityScheme};
use oauth2::basic::BasicClient;
use oauth2::{
    AuthType, ClientId, ClientSecret, DeviceAuthorizationUrl, RefreshToken, Scope,
    StandardDeviceAuthorizationResponse, TokenResponse, TokenUrl,
};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The discovery document's path under an issuer.
const DISCOVERY_SUFFIX: &str = "/.well-known/openid-configuration";
/// A token is renewed when it expires within this margin.
pub const RENEW_MARGIN: Duration = Duration::from_secs(60);
/// The largest answer read from the provider.
const MAX_PROVIDER_ANSWER: usize = 64 * 1024;
/// The time budget of one request to the provider.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(15);

/// How a client gets its tokens.
#[derive(Clone, Default)]
pub struct TokenSettings {
    /// The provider the user trusts with the client's credentials (its issuer URL).
    pub issuer: Option<String>,
    /// The client's id at the provider.
    pub client_id: String,
    /// The client's secret, for client credentials; without it, tokens come from the device
    /// flow ([`Tokens::login`]) and are refreshed with their refresh token.
    pub client_secret: Option<String>,
    /// The audience to ask for (`audience`), where the provider wants one.
    pub audience: Option<String>,
    /// The scopes to ask for, space-separated.
    pub scope: Option<String>,
    /// Where tokens are kept between runs; none keeps them in memory only.
    pub cache_dir: Option<PathBuf>,
    /// Allow a provider on a loopback or private address, over plain http too.
    pub allow_private: bool,
    /// A private CA for the provider.
    pub tls: ClientTls,
}

impl std::fmt::Debug for TokenSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSettings")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("audience", &self.audience)
            .field("scope", &self.scope)
            .field("cache_dir", &self.cache_dir)
            .finish_non_exhaustive()
    }
}

/// Why no token could be had.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    /// Neither the card nor the user names a provider.
    #[error("the agent's card names no OpenID provider and none was given")]
    NoProvider,
    /// The card names one provider and the user another.
    #[error("the agent's card names the provider {card}, not {given}")]
    ProviderMismatch {
        /// The card's.
        card: String,
        /// The user's.
        given: String,
    },
    /// A client secret would go to a provider only the card names.
    #[error(
        "the agent's card names the provider {card}; name it yourself (--oidc-issuer {card}) to send your client secret there"
    )]
    ProviderNotNamed {
        /// The card's provider.
        card: String,
    },
    /// No token is kept and none can be had without a person.
    #[error("no token for this agent: sign in with `ferry login` first")]
    LoginNeeded,
    /// The provider could not be reached, or answered with something unusable.
    #[error("the provider {issuer}: {reason}")]
    Provider {
        /// Its issuer.
        issuer: String,
        /// What went wrong.
        reason: String,
    },
    /// The cache could not be written.
    #[error("the token cache {path}: {reason}")]
    Cache {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// What a person is shown to approve a device.
#[derive(Debug, Clone)]
pub struct DeviceCode {
    /// The page to open.
    pub verification_uri: String,
    /// The same page with the code filled in, where the provider gives one.
    pub verification_uri_complete: Option<String>,
    /// The code to enter there.
    pub user_code: String,
}

/// A token kept between runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Kept {
    access_token: String,
    /// Seconds since the epoch; none when the provider did not say.
    expires_at: Option<u64>,
    refresh_token: Option<String>,
}

impl Kept {
    fn fresh(&self, now: u64) -> bool {
        self.expires_at
            .is_none_or(|at| at > now.saturating_add(RENEW_MARGIN.as_secs()))
    }
}

/// The provider's endpoints, from its discovery document.
#[derive(Debug, Deserialize)]
struct Discovery {
    issuer: String,
    token_endpoint: String,
    #[serde(default)]
    device_authorization_endpoint: Option<String>,
}

/// Gets tokens as [`TokenSettings`] say.
#[derive(Debug)]
pub struct Tokens {
    settings: TokenSettings,
    net: SafeClient,
}

impl Tokens {
    /// Tokens as `settings` say (nothing is fetched yet).
    pub fn new(settings: TokenSettings) -> Result<Tokens, OAuthError> {
        let builder = SafeClientBuilder::default()
            .allow_private(settings.allow_private)
            .allow_loopback(settings.allow_private)
            .allow_http(settings.allow_private)
            .timeout(PROVIDER_TIMEOUT);
        let net = settings
            .tls
            .apply(builder)
            .build()
            .map_err(|e| OAuthError::Provider {
                issuer: settings.issuer.clone().unwrap_or_default(),
                reason: e.to_string(),
            })?;
        Ok(Tokens { settings, net })
    }

    /// The provider a card names: the issuer of its `openIdConnect` scheme's discovery URL.
    pub fn issuer_of_card(card: &AgentCard) -> Option<String> {
        card.security_schemes
            .values()
            .find_map(|scheme| match scheme {
                SecurityScheme::OpenIdConnectSecurityScheme(s) => s
                    .open_id_connect_url
                    .strip_suffix(DISCOVERY_SUFFIX)
                    .map(str::to_owned),
                _ => None,
            })
    }

    /// A token for the agent of `card`: the kept one while it is fresh (unless `renew`),
    /// else a refreshed one, else one by client credentials; [`OAuthError::LoginNeeded`]
    /// where only a person can get one.
    pub async fn token(&self, card: &AgentCard, renew: bool) -> Result<String, OAuthError> {
        let secret = self.settings.client_secret.is_some();
        let issuer = self.issuer(card, secret)?;
        let cache = self.cache_file(&issuer);
        let kept = cache.as_deref().and_then(read_kept);
        if let Some(kept) = &kept
            && !renew
            && kept.fresh(now())
        {
            return Ok(kept.access_token.clone());
        }
        let discovery = self.discover(&issuer).await?;
        let refreshed = match kept.and_then(|k| k.refresh_token) {
            Some(refresh) => self.refresh(&issuer, &discovery, refresh).await.ok(),
            None => None,
        };
        let got = match refreshed {
            Some(got) => got,
            None if secret => self.client_credentials(&issuer, &discovery).await?,
            None => return Err(OAuthError::LoginNeeded),
        };
        self.keep(cache.as_deref(), &got)?;
        Ok(got.access_token)
    }

    /// The device flow for the agent of `card`: `show` tells the person where to approve;
    /// returns once they did (or the code expired), keeping the token and its refresh token.
    pub async fn login(
        &self,
        card: &AgentCard,
        show: impl FnOnce(&DeviceCode),
    ) -> Result<String, OAuthError> {
        let issuer = self.issuer(card, false)?;
        let discovery = self.discover(&issuer).await?;
        let failed = |reason: String| OAuthError::Provider {
            issuer: issuer.clone(),
            reason,
        };
        let device_url = discovery
            .device_authorization_endpoint
            .clone()
            .ok_or_else(|| failed("it offers no device authorization".into()))?;
        let client = self
            .client(&discovery)
            .map_err(&failed)?
            .set_device_authorization_url(
                DeviceAuthorizationUrl::new(device_url).map_err(|e| failed(e.to_string()))?,
            );
        let http = self.http();
        let mut ask = client.exchange_device_code();
        for scope in self.scopes() {
            ask = ask.add_scope(scope);
        }
        if let Some(audience) = &self.settings.audience {
            ask = ask.add_extra_param("audience", audience.clone());
        }
        let details: StandardDeviceAuthorizationResponse = ask
            .request_async(&http)
            .await
            .map_err(|e| failed(describe(&e)))?;
        show(&DeviceCode {
            verification_uri: details.verification_uri().to_string(),
            verification_uri_complete: details
                .verification_uri_complete()
                .map(|u| u.secret().clone()),
            user_code: details.user_code().secret().clone(),
        });
        // The provider says how often it may be polled (RFC 8628 §3.4); waiting that long
        // between polls is the protocol, not a guess at when the person is done.
        let answer = client
            .exchange_device_access_token(&details)
            .request_async(&http, tokio::time::sleep, None)
            .await
            .map_err(|e| failed(describe(&e)))?;
        let got = kept_of(&answer);
        self.keep(self.cache_file(&issuer).as_deref(), &got)?;
        Ok(got.access_token)
    }

    /// The provider to ask (see the module docs).
    fn issuer(&self, card: &AgentCard, sends_secret: bool) -> Result<String, OAuthError> {
        let on_card = Self::issuer_of_card(card).map(|i| i.trim_end_matches('/').to_owned());
        let given = self
            .settings
            .issuer
            .as_deref()
            .map(|i| i.trim_end_matches('/').to_owned());
        match (on_card, given) {
            (Some(card), Some(given)) if card != given => {
                Err(OAuthError::ProviderMismatch { card, given })
            }
            (_, Some(given)) => Ok(given),
            (Some(card), None) if sends_secret => Err(OAuthError::ProviderNotNamed { card }),
            (Some(card), None) => Ok(card),
            (None, None) => Err(OAuthError::NoProvider),
        }
    }

    /// The provider's discovery document, its issuer checked.
    async fn discover(&self, issuer: &str) -> Result<Discovery, OAuthError> {
        let failed = |reason: String| OAuthError::Provider {
            issuer: issuer.to_owned(),
            reason,
        };
        let url = Url::parse(&format!("{issuer}{DISCOVERY_SUFFIX}"))
            .map_err(|e| failed(e.to_string()))?;
        let body =
            ferry_trust::fetch::get_json(&self.net, PROVIDER_TIMEOUT, url, MAX_PROVIDER_ANSWER)
                .await
                .map_err(|e| failed(e.to_string()))?;
        let discovery: Discovery = serde_json::from_slice(&body)
            .map_err(|e| failed(format!("its discovery document: {e}")))?;
        if discovery.issuer.trim_end_matches('/') != issuer {
            return Err(failed(format!(
                "its discovery document names the issuer {:?}",
                discovery.issuer
            )));
        }
        Ok(discovery)
    }

    /// The `oauth2` client for the provider's token endpoint.
    fn client(
        &self,
        discovery: &Discovery,
    ) -> Result<
        BasicClient<
            oauth2::EndpointNotSet,
            oauth2::EndpointNotSet,
            oauth2::EndpointNotSet,
            oauth2::EndpointNotSet,
            oauth2::EndpointSet,
        >,
        String,
    > {
        let token_url =
            TokenUrl::new(discovery.token_endpoint.clone()).map_err(|e| e.to_string())?;
        let mut client = BasicClient::new(ClientId::new(self.settings.client_id.clone()))
            .set_auth_type(AuthType::BasicAuth)
            .set_token_uri(token_url);
        if let Some(secret) = &self.settings.client_secret {
            client = client.set_client_secret(ClientSecret::new(secret.clone()));
        }
        Ok(client)
    }

    async fn client_credentials(
        &self,
        issuer: &str,
        discovery: &Discovery,
    ) -> Result<Kept, OAuthError> {
        let failed = |reason: String| OAuthError::Provider {
            issuer: issuer.to_owned(),
            reason,
        };
        let client = self.client(discovery).map_err(&failed)?;
        let mut ask = client.exchange_client_credentials();
        for scope in self.scopes() {
            ask = ask.add_scope(scope);
        }
        if let Some(audience) = &self.settings.audience {
            ask = ask.add_extra_param("audience", audience.clone());
        }
        let answer = ask
            .request_async(&self.http())
            .await
            .map_err(|e| failed(describe(&e)))?;
        Ok(kept_of(&answer))
    }

    async fn refresh(
        &self,
        issuer: &str,
        discovery: &Discovery,
        refresh: String,
    ) -> Result<Kept, OAuthError> {
        let failed = |reason: String| OAuthError::Provider {
            issuer: issuer.to_owned(),
            reason,
        };
        let client = self.client(discovery).map_err(&failed)?;
        let refresh = RefreshToken::new(refresh);
        let answer = client
            .exchange_refresh_token(&refresh)
            .request_async(&self.http())
            .await
            .map_err(|e| failed(describe(&e)))?;
        let mut got = kept_of(&answer);
        // A provider may keep the refresh token as it was.
        got.refresh_token
            .get_or_insert_with(|| refresh.into_secret());
        Ok(got)
    }

    fn scopes(&self) -> Vec<Scope> {
        self.settings
            .scope
            .as_deref()
            .unwrap_or_default()
            .split_whitespace()
            .map(|s| Scope::new(s.to_owned()))
            .collect()
    }

    /// The `oauth2` crate's HTTP client: ferry-net's safe one, answers bounded.
    fn http(&self) -> impl for<'c> oauth2::AsyncHttpClient<'c, Error = HttpFailure> + use<> {
        let net = self.net.clone();
        move |request: oauth2::HttpRequest| {
            let net = net.clone();
            async move {
                let request =
                    reqwest::Request::try_from(request).map_err(|e| HttpFailure(e.to_string()))?;
                let response = net
                    .execute(request)
                    .await
                    .map_err(|e| HttpFailure(e.to_string()))?;
                let status = response.status();
                let headers = response.headers().clone();
                let body = crate::client::read_capped(response, MAX_PROVIDER_ANSWER)
                    .await
                    .map_err(|e| HttpFailure(e.to_string()))?;
                let mut answer = http::Response::new(body.to_vec());
                *answer.status_mut() = status;
                *answer.headers_mut() = headers;
                Ok(answer)
            }
        }
    }

    /// The cache file of tokens from `issuer` for these settings.
    fn cache_file(&self, issuer: &str) -> Option<PathBuf> {
        let dir = self.settings.cache_dir.as_ref()?;
        let s = &self.settings;
        let key = format!(
            "{issuer}\n{}\n{}\n{}",
            s.audience.as_deref().unwrap_or_default(),
            s.client_id,
            s.scope.as_deref().unwrap_or_default()
        );
        let digest = ferry_trust::jcs::digest_bytes(key.as_bytes());
        let name = &digest.trim_start_matches("sha256:")[..32];
        Some(dir.join(format!("{name}.json")))
    }

    /// Writes `kept` to `file` (mode 0600, its directory 0700), whole or not at all.
    fn keep(&self, file: Option<&Path>, kept: &Kept) -> Result<(), OAuthError> {
        let Some(file) = file else {
            return Ok(());
        };
        write_private(file, &serde_json::to_vec(kept).unwrap_or_default()).map_err(|e| {
            OAuthError::Cache {
                path: file.to_owned(),
                reason: e.to_string(),
            }
        })
    }
}

/// An HTTP failure on the way to the provider.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct HttpFailure(String);

/// What a failed token request comes to: the provider's error and description where it
/// sent one.
fn describe<E: std::error::Error, T: oauth2::ErrorResponse>(
    e: &oauth2::RequestTokenError<E, T>,
) -> String {
    match e {
        oauth2::RequestTokenError::ServerResponse(r) => r.to_string(),
        oauth2::RequestTokenError::Request(e) => e.to_string(),
        oauth2::RequestTokenError::Parse(e, _) => format!("an unreadable answer: {e}"),
        oauth2::RequestTokenError::Other(e) => e.clone(),
    }
}

fn kept_of(answer: &impl TokenResponse) -> Kept {
    Kept {
        access_token: answer.access_token().secret().clone(),
        expires_at: answer
            .expires_in()
            .map(|d| now().saturating_add(d.as_secs())),
        refresh_token: answer.refresh_token().map(|r| r.secret().clone()),
    }
}

fn read_kept(file: &Path) -> Option<Kept> {
    serde_json::from_slice(&std::fs::read(file).ok()?).ok()
}

/// Writes `bytes` to `file` through a temporary file renamed into place, readable by its
/// owner only.
fn write_private(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        options.mode(0o600);
    }
    let temporary = file.with_extension(format!("tmp{}", std::process::id()));
    let mut out = options.open(&temporary)?;
    out.write_all(bytes)?;
    out.sync_all()?;
    std::fs::rename(&temporary, file)
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
