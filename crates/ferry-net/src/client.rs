//! The SSRF-safe HTTP client: reqwest configured so that a user-supplied URL reaches only
//! the addresses an [`IpPolicy`] allows.
//!
//! [`SafeClientBuilder::build`] makes these decisions, in order (card-crypto.md §5.1):
//!
//! 1. **No proxy**, whatever `HTTP(S)_PROXY`/`ALL_PROXY` say: a proxy resolves and dials on
//!    our behalf, which would void every address check.
//! 2. **Every DNS answer checked** by a [`PolicyResolver`]; one refused address refuses the
//!    whole answer.
//! 3. **IP-literal hosts checked** by [`SafeClient::check_url`] before each request, because
//!    hyper never asks the resolver about `https://127.0.0.1/`. The `url` crate has already
//!    normalised `2130706433`, `0x7f.1` and `127.1` to `127.0.0.1`, and `[::ffff:7f00:1]`
//!    is classified as the IPv4 address it maps.
//! 4. **The peer address re-checked** after the response arrives ([`reqwest::Response::remote_addr`]),
//!    as defence in depth against any path that skips the resolver.
//! 5. **No redirects followed**: a redirect is a new request to a new URL, and the caller
//!    decides (with [`SafeClient::check_url`]) whether to make it.
//! 6. **https only** unless [`SafeClientBuilder::allow_http`]; TLS 1.2 or later over rustls
//!    (aws-lc-rs); no compression (no decompression bombs); connect, read and total
//!    timeouts.

use crate::NetError;
use crate::policy::IpPolicy;
use crate::resolve::PolicyResolver;
use reqwest::redirect::Policy;
use std::net::IpAddr;
use std::time::Duration;
use url::{Host, Url};

/// The default total time for one request, body included (10 s).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The default time to establish a connection (5 s).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Builds a [`SafeClient`]. Defaults: [`IpPolicy::public_only`], https only, the platform's
/// trusted roots, [`DEFAULT_TIMEOUT`] total and [`DEFAULT_CONNECT_TIMEOUT`] to connect,
/// user agent `ferry/<version>`.
///
/// ```
/// use ferry_net::{SafeClient, policy::IpPolicy};
///
/// let client = SafeClient::builder()
///     .policy(IpPolicy::public_only())
///     .timeout(std::time::Duration::from_secs(5))
///     .build()?;
/// assert!(client.check_url(&"https://127.0.0.1/".parse()?).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct SafeClientBuilder {
    policy: IpPolicy,
    allow_http: bool,
    allow_http_loopback: bool,
    timeout: Duration,
    connect_timeout: Duration,
    roots: Vec<Vec<u8>>,
    only_given_roots: bool,
    /// A client certificate chain and its key, PEM, for mutual TLS.
    identity_pem: Option<Vec<u8>>,
    fixed: Vec<(String, Vec<IpAddr>)>,
    user_agent: String,
}

impl Default for SafeClientBuilder {
    fn default() -> Self {
        SafeClientBuilder {
            policy: IpPolicy::public_only(),
            allow_http: false,
            allow_http_loopback: false,
            timeout: DEFAULT_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            roots: Vec::new(),
            only_given_roots: false,
            identity_pem: None,
            fixed: Vec::new(),
            user_agent: concat!("ferry/", env!("CARGO_PKG_VERSION")).to_owned(),
        }
    }
}

impl SafeClientBuilder {
    /// The one address rule for a URL a person gave (a command's argument, a client's base
    /// URL): public https hosts; the local machine, over http too, when the URL itself names
    /// it (`http://127.0.0.1:8765` is no request forgery); private networks and plain http
    /// elsewhere only with `allow_private`.
    ///
    /// ```
    /// use ferry_net::{SafeClientBuilder, Url};
    ///
    /// let local: Url = "http://127.0.0.1:8765/".parse()?;
    /// let client = SafeClientBuilder::for_given_url(&local, false).build()?;
    /// assert!(client.check_url(&local).is_ok());
    /// assert!(client.check_url(&"http://10.0.0.1/".parse()?).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn for_given_url(url: &Url, allow_private: bool) -> SafeClientBuilder {
        SafeClientBuilder::default()
            .allow_private(allow_private)
            .allow_http(allow_private)
            .allow_loopback(is_loopback_host(url))
    }

    /// The address policy (default [`IpPolicy::public_only`]).
    pub fn policy(mut self, policy: IpPolicy) -> SafeClientBuilder {
        self.policy = policy;
        self
    }

    /// Shorthand for `policy(current.allow_private(allow))`; see [`IpPolicy::allow_private`].
    pub fn allow_private(mut self, allow: bool) -> SafeClientBuilder {
        self.policy = self.policy.allow_private(allow);
        self
    }

    /// Allow plain `http` URLs (default: https only). For tests and intranets.
    pub fn allow_http(mut self, allow: bool) -> SafeClientBuilder {
        self.allow_http = allow;
        self
    }

    /// Allow plain `http` to loopback hosts only (`127.0.0.1`, `[::1]`, `localhost`), with
    /// [`IpPolicy::allow_loopback`]: the user's own machine, where TLS protects nothing.
    /// Every other host stays https only.
    pub fn allow_loopback(mut self, allow: bool) -> SafeClientBuilder {
        self.policy = self.policy.allow_loopback(allow);
        self.allow_http_loopback = allow;
        self
    }

    /// The total time for one request, from connecting to the end of the body.
    pub fn timeout(mut self, timeout: Duration) -> SafeClientBuilder {
        self.timeout = timeout;
        self
    }

    /// The time to establish a connection (TCP and TLS).
    pub fn connect_timeout(mut self, timeout: Duration) -> SafeClientBuilder {
        self.connect_timeout = timeout;
        self
    }

    /// Trusts one more root certificate (DER), in addition to the platform's roots.
    pub fn add_root_certificate(mut self, der: Vec<u8>) -> SafeClientBuilder {
        self.roots.push(der);
        self
    }

    /// Presents a client certificate (mutual TLS): `pem` holds the certificate chain and its
    /// private key.
    pub fn identity_pem(mut self, pem: Vec<u8>) -> SafeClientBuilder {
        self.identity_pem = Some(pem);
        self
    }

    /// Trusts only the certificates given with [`SafeClientBuilder::add_root_certificate`],
    /// not the platform's roots (reproducible tests, private PKI).
    pub fn only_given_roots(mut self, only: bool) -> SafeClientBuilder {
        self.only_given_roots = only;
        self
    }

    /// Answers `name` with fixed addresses instead of DNS; the addresses are still checked
    /// against the policy (see [`PolicyResolver::with_fixed`]).
    pub fn resolve_fixed(mut self, name: &str, addrs: Vec<IpAddr>) -> SafeClientBuilder {
        self.fixed.push((name.to_owned(), addrs));
        self
    }

    /// The `User-Agent` header (default `ferry/<version>`).
    pub fn user_agent(mut self, agent: impl Into<String>) -> SafeClientBuilder {
        self.user_agent = agent.into();
        self
    }

    /// Builds the client.
    pub fn build(self) -> Result<SafeClient, NetError> {
        let mut resolver = PolicyResolver::new(self.policy.clone());
        for (name, addrs) in self.fixed {
            resolver = resolver.with_fixed(&name, addrs);
        }
        let mut certs = Vec::with_capacity(self.roots.len());
        for der in &self.roots {
            certs.push(
                reqwest::Certificate::from_der(der).map_err(|e| NetError::Build {
                    reason: e.to_string(),
                })?,
            );
        }
        let mut builder = reqwest::Client::builder()
            .no_proxy()
            .dns_resolver(resolver)
            .redirect(Policy::none())
            // Loopback http is decided per URL in `check_url`.
            .https_only(!self.allow_http && !self.allow_http_loopback)
            .tls_backend_rustls()
            .tls_version_min(reqwest::tls::Version::TLS_1_2)
            .timeout(self.timeout)
            .read_timeout(self.timeout)
            .connect_timeout(self.connect_timeout)
            .referer(false)
            .user_agent(self.user_agent);
        if self.only_given_roots {
            builder = builder.tls_certs_only(certs);
        } else if !certs.is_empty() {
            builder = builder.tls_certs_merge(certs);
        }
        if let Some(pem) = &self.identity_pem {
            let identity = reqwest::Identity::from_pem(pem).map_err(|e| NetError::Build {
                reason: format!("the client certificate: {}", error_chain(&e)),
            })?;
            builder = builder.identity(identity);
        }
        let inner = builder.build().map_err(|e| NetError::Build {
            reason: error_chain(&e),
        })?;
        Ok(SafeClient {
            inner,
            policy: self.policy,
            allow_http: self.allow_http,
            allow_http_loopback: self.allow_http_loopback,
        })
    }
}

/// An HTTP client that only reaches addresses its [`IpPolicy`] allows; see the module docs
/// for every check. It never follows redirects: a 3xx response is returned to the caller,
/// who checks the next URL with [`SafeClient::check_url`] and sends a new request.
#[derive(Debug, Clone)]
pub struct SafeClient {
    inner: reqwest::Client,
    policy: IpPolicy,
    allow_http: bool,
    allow_http_loopback: bool,
}

impl SafeClient {
    /// A builder with the defaults of [`SafeClientBuilder`].
    pub fn builder() -> SafeClientBuilder {
        SafeClientBuilder::default()
    }

    /// The underlying reqwest client, for callers that build their own requests (an A2A
    /// client): its resolver enforces the policy on every DNS name, but the caller must pass
    /// each URL through [`SafeClient::check_url`] first (IP literals skip the resolver).
    pub fn http(&self) -> &reqwest::Client {
        &self.inner
    }

    /// The address policy in force.
    pub fn policy(&self) -> &IpPolicy {
        &self.policy
    }

    /// Checks a URL before it is requested: the scheme (`https`, or `http` when allowed),
    /// the presence of a host, and an IP-literal host against the policy. A DNS name is
    /// checked later, by the resolver, on the addresses actually dialed.
    pub fn check_url(&self, url: &Url) -> Result<(), NetError> {
        // The address first: for `http://10.0.0.5/` "a private address" is the reason that
        // matters, not the scheme.
        let ip = match url.host() {
            None => {
                return Err(NetError::InvalidUrl {
                    url: url.to_string(),
                    reason: "no host".into(),
                });
            }
            Some(Host::Domain(_)) => None,
            Some(Host::Ipv4(v4)) => Some(IpAddr::V4(v4)),
            Some(Host::Ipv6(v6)) => Some(IpAddr::V6(v6)),
        };
        if let Some(ip) = ip {
            self.policy
                .check(ip)
                .map_err(|refusal| NetError::BlockedAddress {
                    host: url.host_str().unwrap_or_default().to_owned(),
                    addr: ip.to_canonical(),
                    refusal,
                })?;
        }
        match url.scheme() {
            "https" => Ok(()),
            "http" if self.allow_http => Ok(()),
            "http" if self.allow_http_loopback && is_loopback_host(url) => Ok(()),
            scheme => Err(NetError::SchemeNotAllowed {
                scheme: scheme.to_owned(),
            }),
        }
    }

    /// Whether plain `http` is allowed to every host.
    pub fn allows_http(&self) -> bool {
        self.allow_http
    }

    /// Sends a `GET` for `url` with the given `Accept` header; see [`SafeClient::execute`].
    pub async fn get(&self, url: &Url, accept: &str) -> Result<reqwest::Response, NetError> {
        let request = self
            .inner
            .get(url.clone())
            .header(reqwest::header::ACCEPT, accept)
            .build()
            .map_err(|e| NetError::from_reqwest(&e))?;
        self.execute(request).await
    }

    /// Sends a request after [`SafeClient::check_url`], then re-checks the peer address the
    /// response came from. Read the body with [`reqwest::Response::chunk`] and map its
    /// errors with [`NetError::from_reqwest`]; the total timeout covers the body too.
    pub async fn execute(&self, request: reqwest::Request) -> Result<reqwest::Response, NetError> {
        self.check_url(request.url())?;
        let host = request.url().host_str().unwrap_or_default().to_owned();
        let response = self
            .inner
            .execute(request)
            .await
            .map_err(|e| NetError::from_reqwest(&e))?;
        let peer = response
            .remote_addr()
            .ok_or_else(|| NetError::UnknownPeer { host: host.clone() })?;
        self.policy
            .check_socket(peer)
            .map_err(|refusal| NetError::BlockedAddress {
                host,
                addr: peer.ip().to_canonical(),
                refusal,
            })?;
        Ok(response)
    }
}

/// The messages of an error and its sources, joined by `: `.
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let next = s.to_string();
        if !text.ends_with(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = s.source();
    }
    text
}

/// True when `url` names the local machine: a loopback IP literal, `localhost` or a name under
/// `.localhost` (RFC 6761, which resolvers must answer with loopback addresses; the resolver
/// checks what they answer anyway).
pub fn is_loopback_host(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(v4)) => v4.is_loopback(),
        Some(Host::Ipv6(v6)) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        Some(Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
        None => false,
    }
}

#[cfg(test)]
mod loopback_tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).expect("url")
    }

    #[test]
    fn loopback_http_is_allowed_only_to_loopback() {
        let client = SafeClient::builder()
            .allow_loopback(true)
            .build()
            .expect("client");
        for ok in [
            "http://127.0.0.1:8765/",
            "http://[::1]:1/",
            "http://localhost/",
            "http://a.localhost/",
            "https://127.0.0.1/",
        ] {
            assert!(client.check_url(&url(ok)).is_ok(), "{ok}");
        }
        for refused in [
            "http://example.com/",
            "http://10.0.0.5:8765/",
            "https://10.0.0.5/",
            "http://169.254.169.254/",
        ] {
            assert!(client.check_url(&url(refused)).is_err(), "{refused}");
        }
        let strict = SafeClient::builder().build().expect("client");
        assert!(strict.check_url(&url("http://127.0.0.1/")).is_err());
        assert!(strict.check_url(&url("https://127.0.0.1/")).is_err());
    }
}
