//! One conversation's browser session: its enforcing proxy, its browser (or browser
//! context), and its one open page.
//!
//! Every session gets its own proxy (`ferry_browser::proxy`) that checks the allowlist and
//! the address policy for every request the browser makes, and dials only the checked
//! address. The proxy serves only connections held by the session's browser process group
//! (`ferry_browser::peer`), so no other local process can borrow it. How the browser reaches the proxy depends on the isolation mode:
//!
//! - `process`: a Chromium launched for this session; its pages use the session's proxy
//!   through their browser context, and everything else the browser sends goes to a second,
//!   deny-all proxy (`--proxy-server`, loopback not bypassed), under the resolver belt, so
//!   nothing resolves or connects around a proxy;
//! - `context`: the shared browser (started with the resolver belt) gets a browser context
//!   with the session's proxy (`Target.createBrowserContext{proxyServer}`);
//! - `cdp`: a context with the proxy on a browser someone else runs, disposed when the
//!   conversation ends; its pages lose `RTCPeerConnection`, since its WebRTC flags are not
//!   ours to set.

use crate::config::{BrowserSource, FormsConfig, Isolation};
use ferry_browser::CdpEndpoint;
use ferry_browser::cdp::{self, CreateBrowserContext};
use ferry_browser::peer::GroupOwner;
use ferry_browser::{
    Allowlist, Blocked, Browser, BrowserContext, BrowserError, LaunchOptions, Page, Proxy,
    ProxyConfig, ProxyHandle,
};
use ferry_net::IpPolicy;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// The only "allowed" name of the browser-traffic sink: it cannot occur (`.invalid` is
/// reserved), so the sink refuses every request.
const BROWSER_TRAFFIC_SINK: &str = "browser-traffic.invalid";

/// Removes WebRTC from pages of a browser whose launch flags ferry does not control (UDP
/// would go around the proxy).
const NO_WEBRTC: &str = "(() => { for (const n of ['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCDataChannel']) { try { delete globalThis[n]; } catch (_) {} } })();";

/// Why a session could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The allowlist has an entry that is not a host name.
    #[error("allowlist: {0}")]
    Allowlist(String),
    /// The proxy could not start.
    #[error("could not start the enforcing proxy: {0}")]
    Proxy(String),
    /// The browser could not be started or reached.
    #[error("browser: {0}")]
    Browser(#[from] BrowserError),
}

/// The browser a session uses.
#[derive(Debug)]
enum Owner {
    /// Launched (process isolation) or connected (cdp) for this session only.
    Own(Box<Browser>),
    /// The pool's shared browser (context isolation).
    Shared(Arc<Browser>),
}

/// One conversation's browser session.
#[derive(Debug)]
pub struct Session {
    // Field order is drop order: page, context, browser, then the proxy.
    page: Page,
    context: Option<BrowserContext>,
    owner: Owner,
    proxy: ProxyHandle,
    /// The deny-all proxy a launched browser's own traffic goes to (process isolation).
    _background: Option<ProxyHandle>,
    /// The URL the caller last asked to open.
    pub requested_url: Option<url::Url>,
    /// Where that page was when it was last inspected for it (after redirects).
    pub landed_url: Option<String>,
    /// How long opening the session took.
    pub cold_start: Duration,
}

impl Session {
    /// Opens a session: proxy, browser (or context), one blank page.
    pub async fn open(
        config: &FormsConfig,
        shared: Option<Arc<Browser>>,
        endpoint: Option<&CdpEndpoint>,
    ) -> Result<Session, SessionError> {
        let started = Instant::now();
        // Only the session's own browser may use its proxy (a connected browser is someone
        // else's process: no such check there).
        let byob = matches!(config.browser, BrowserSource::Cdp { .. }) && endpoint.is_some();
        let owner_group = Arc::new(OnceLock::<GroupOwner>::new());
        let mut proxy_settings = proxy_config(config)?;
        if !byob {
            let group = owner_group.clone();
            proxy_settings = proxy_settings.only_clients(Arc::new(move |peer, local| {
                group.get().is_some_and(|owner| owner.owns(peer, local))
            }));
        }
        let proxy = Proxy::start(proxy_settings)
            .await
            .map_err(|e| SessionError::Proxy(e.to_string()))?;
        let with_proxy = CreateBrowserContext {
            dispose_on_detach: true,
            proxy_server: Some(proxy.server_url()),
            proxy_bypass_list: Some(proxy.bypass_list().to_owned()),
        };
        let mut background = None;
        let (owner, context) = match (&config.browser, endpoint, shared) {
            (BrowserSource::Cdp { .. }, Some(endpoint), _) => {
                let browser = connect(endpoint)
                    .await?
                    .with_init_scripts(vec![NO_WEBRTC.into()]);
                let context = browser.new_context_with(&with_proxy).await?;
                (Owner::Own(Box::new(browser)), context)
            }
            (_, _, Some(shared)) if config.isolation == Isolation::Context => {
                if let Some(process) = shared.process() {
                    let _ = owner_group.set(GroupOwner::new(process.pid()));
                }
                let context = shared.new_context_with(&with_proxy).await?;
                (Owner::Shared(shared), context)
            }
            _ => {
                // The browser's own traffic (Google's time, sign-in and messaging services,
                // which Chromium keeps calling whatever the flags) goes to a proxy that
                // refuses everything silently; the conversation's pages use the session's
                // proxy through their context, so `blocked` reports only what pages asked.
                let sink = Proxy::start(ProxyConfig::new(
                    Allowlist::new([BROWSER_TRAFFIC_SINK])
                        .map_err(|e| SessionError::Allowlist(e.to_string()))?,
                ))
                .await
                .map_err(|e| SessionError::Proxy(e.to_string()))?;
                let browser = Browser::launch(LaunchOptions {
                    chrome_path: config.chrome_path.clone(),
                    extra_args: config.chrome_args.clone(),
                    proxy_server: Some(sink.server_url()),
                    resolver_belt: true,
                    ..LaunchOptions::default()
                })
                .await?;
                if let Some(process) = browser.process() {
                    let _ = owner_group.set(GroupOwner::new(process.pid()));
                }
                let context = browser.new_context_with(&with_proxy).await?;
                background = Some(sink);
                (Owner::Own(Box::new(browser)), context)
            }
        };
        let page = context.new_page().await?;
        Ok(Session {
            page,
            context: Some(context),
            owner,
            proxy,
            _background: background,
            requested_url: None,
            landed_url: None,
            cold_start: started.elapsed(),
        })
    }

    /// The session's page.
    pub fn page(&self) -> &Page {
        &self.page
    }

    /// False once the browser is gone (crashed, killed, disconnected).
    pub fn is_alive(&self) -> bool {
        let browser_up = match &self.owner {
            Owner::Own(b) => b.is_connected(),
            Owner::Shared(b) => b.is_connected(),
        };
        browser_up && !self.page.is_closed()
    }

    /// How many requests the proxy refused so far (a mark for [`Session::blocked_since`]).
    pub fn blocked_mark(&self) -> usize {
        self.proxy.refusals()
    }

    /// Requests refused since `mark`, as far as the proxy keeps them (its last
    /// `ferry_browser::MAX_BLOCKED_KEPT`).
    pub fn blocked_since(&self, mark: usize) -> Vec<Blocked> {
        self.proxy.blocked_since(mark)
    }

    /// How many requests were refused since `mark`, kept or not.
    pub fn refusals_since(&self, mark: usize) -> usize {
        self.proxy.refusals().saturating_sub(mark)
    }

    /// The process group id of a launched browser (for tests and memory measurements).
    pub fn browser_pid(&self) -> Option<u32> {
        match &self.owner {
            Owner::Own(b) => b.process().map(|p| p.pid()),
            Owner::Shared(b) => b.process().map(|p| p.pid()),
        }
    }

    /// Ends the session: disposes the context, then stops an own browser.
    pub async fn close(mut self) {
        if let Some(context) = self.context.take() {
            let _ = tokio::time::timeout(Duration::from_secs(3), context.dispose()).await;
        }
        let Session { owner, .. } = self;
        if let Owner::Own(browser) = owner {
            browser.shutdown().await;
        }
    }
}

/// The session's proxy: allowlist, address policy, static names.
fn proxy_config(config: &FormsConfig) -> Result<ProxyConfig, SessionError> {
    let allowlist = if config.allow_domains.is_empty() {
        Allowlist::any()
    } else {
        Allowlist::new(&config.allow_domains).map_err(|e| SessionError::Allowlist(e.to_string()))?
    };
    let mut names: BTreeMap<&str, Vec<IpAddr>> = BTreeMap::new();
    for (name, addr) in &config.resolve {
        names.entry(name).or_default().push(*addr);
    }
    let mut proxy = ProxyConfig::new(allowlist)
        .policy(IpPolicy::public_only().allow_private(config.allow_private_networks));
    for (name, addrs) in names {
        proxy = proxy.resolve(name, addrs);
    }
    Ok(proxy)
}

/// Connects to a registered endpoint: its `ws_url` first, then discovery through its
/// `http_url` (the WebSocket URL of a restarted browser changes; the HTTP one does not).
async fn connect(endpoint: &CdpEndpoint) -> Result<Browser, BrowserError> {
    let headers: Vec<(String, String)> = endpoint
        .headers
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let by_ws = cdp::connect_ws_with_headers(&endpoint.ws_url, &headers).await;
    let (connection, events) = match by_ws {
        Ok(pair) => pair,
        Err(ws_error) => match cdp::connect_http_with_headers(&endpoint.http_url, &headers).await {
            Ok(pair) => pair,
            Err(http_error) => {
                tracing::warn!(endpoint = %endpoint.name, %ws_error, %http_error, "cdp endpoint unreachable");
                return Err(http_error.into());
            }
        },
    };
    Ok(Browser::from_connection(connection, events))
}
