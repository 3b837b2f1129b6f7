//! How the forms agent runs: where pages may go, how conversations are isolated, limits.

use std::ffi::OsString;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

/// How conversations are kept apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Isolation {
    /// A browser process per conversation (default): nothing shared but the kernel.
    #[default]
    Process,
    /// One shared browser, a separate browser context (cookies, storage, cache, proxy) per
    /// conversation: far less memory, one renderer crash domain less.
    Context,
}

/// Where the browser comes from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum BrowserSource {
    /// ferry launches headless Chromium itself (default).
    #[default]
    Launch,
    /// "Bring your own browser": use the CDP endpoint registered through the
    /// `cdp-config/v1` extension under this name (or the only one, when `None`); each
    /// conversation gets its own browser context there, and with no endpoint the turn
    /// fails closed (`cdp.no_endpoint`).
    Cdp {
        /// The registered endpoint's name.
        name: Option<String>,
    },
}

/// Who approves a submit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Approval {
    /// The calling agent, with `{"confirm": true}` (default).
    #[default]
    Caller,
    /// A person, on a review page ferry serves: the caller's confirmation submits nothing.
    Human(HumanApproval),
}

/// How a person approves submits (`--approval human`). Review links are
/// `{base}/approvals/{task}/{secret}`, where the server that serves the agent sets `base`
/// once it is bound ([`crate::FormsAgent::serve_approvals_at`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HumanApproval {
    /// How long a review link stays valid.
    pub ttl: Duration,
    /// A token that may approve or reject from the command line (`ferry approve`) and do
    /// nothing else; `None`: only the review page's link approves.
    pub approver_token: Option<String>,
}

impl HumanApproval {
    /// Review links last 15 minutes by default.
    pub const DEFAULT_TTL: Duration = Duration::from_secs(15 * 60);
}

impl Approval {
    /// The human approval's settings, when a person approves.
    pub fn human(&self) -> Option<&HumanApproval> {
        match self {
            Approval::Caller => None,
            Approval::Human(human) => Some(human),
        }
    }
}

/// The forms agent's settings. `Default` is the secure default: no allowlist (public
/// addresses only), no uploads, confirmation before every submit, 4 conversations, 5 idle
/// minutes, a browser process per conversation.
#[derive(Debug, Clone)]
pub struct FormsConfig {
    /// Domains pages may reach (each with its subdomains). Empty: any public address.
    pub allow_domains: Vec<String>,
    /// Let pages reach loopback, private and link-local addresses (never cloud metadata).
    pub allow_private_networks: bool,
    /// Static answers for the proxy's resolver (`NAME=ADDR`, like curl's `--resolve`).
    pub resolve: Vec<(String, IpAddr)>,
    /// File inputs take file names inside this directory; `None` refuses uploads.
    pub upload_dir: Option<PathBuf>,
    /// Submit without asking for `{"confirm": true}`.
    pub auto_submit: bool,
    /// Conversations (browser sessions) at once; a new one beyond this is refused.
    pub max_contexts: usize,
    /// A conversation idle this long is closed.
    pub idle: Duration,
    /// Process or context isolation.
    pub isolation: Isolation,
    /// Launched or connected browser.
    pub browser: BrowserSource,
    /// The Chromium binary (else `FERRY_CHROME`, then the usual paths).
    pub chrome_path: Option<PathBuf>,
    /// Extra Chromium flags (tests, `--lang`).
    pub chrome_args: Vec<OsString>,
    /// Longest wait for a page to load.
    pub navigation_timeout: Duration,
    /// How long to let the page react after filling (validation messages, SPA updates).
    pub settle: Duration,
    /// Longest wait for a submit to start a navigation before treating the page as an
    /// SPA that updated in place.
    pub submit_navigation_wait: Duration,
    /// Every caller of a tenant shares its saved profiles (default false: each caller has
    /// its own, and never sees another's).
    pub shared_profiles: bool,
    /// A picture of the form as filled with every turn that fills it (`screenshot`
    /// artifact; secrets blanked). Default true.
    pub screenshots: bool,
    /// Who approves a submit: the caller's `{"confirm": true}`, or a person on a review page.
    pub approval: Approval,
}

impl Default for FormsConfig {
    fn default() -> Self {
        Self {
            allow_domains: Vec::new(),
            allow_private_networks: false,
            resolve: Vec::new(),
            upload_dir: None,
            auto_submit: false,
            max_contexts: 4,
            idle: Duration::from_secs(300),
            isolation: Isolation::default(),
            browser: BrowserSource::default(),
            chrome_path: None,
            chrome_args: Vec::new(),
            navigation_timeout: Duration::from_secs(20),
            settle: Duration::from_millis(150),
            submit_navigation_wait: Duration::from_millis(1500),
            screenshots: true,
            shared_profiles: false,
            approval: Approval::Caller,
        }
    }
}

/// Reads one `NAME=ADDR` mapping (`ADDR` an IPv4 or IPv6 address, brackets allowed).
pub fn parse_resolve(text: &str) -> Result<(String, IpAddr), String> {
    let (name, addr) = text
        .split_once('=')
        .ok_or_else(|| format!("{text:?}: expected NAME=ADDR"))?;
    let name = name.trim().trim_end_matches('.').to_ascii_lowercase();
    if name.is_empty() || name.contains(['/', ':', ' ']) {
        return Err(format!("{text:?}: {name:?} is not a host name"));
    }
    let addr = addr.trim().trim_start_matches('[').trim_end_matches(']');
    let addr: IpAddr = addr
        .parse()
        .map_err(|_| format!("{text:?}: {addr:?} is not an IP address"))?;
    Ok((name, addr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_mappings_parse_like_curl() {
        assert_eq!(
            parse_resolve("Shop.Test=127.0.0.1"),
            Ok(("shop.test".into(), "127.0.0.1".parse().expect("ip")))
        );
        assert_eq!(
            parse_resolve("v6.test=[::1]").map(|(_, a)| a),
            Ok("::1".parse().expect("ip"))
        );
        assert!(parse_resolve("shop.test").is_err());
        assert!(parse_resolve("shop.test=localhost").is_err());
        assert!(parse_resolve("=1.2.3.4").is_err());
    }
}
