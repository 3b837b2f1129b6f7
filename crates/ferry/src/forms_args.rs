//! The forms agent's flags of `ferry serve`.

use clap::{Args, ValueEnum};
use ferry_forms::{BrowserSource, FormsConfig, Isolation};
use std::ffi::OsString;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

/// How conversations are isolated.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum IsolationArg {
    /// A Chromium process per conversation.
    Process,
    /// One shared Chromium, a browser context per conversation (far less memory).
    Context,
}

/// Flags of the forms agent (ignored by the other agents).
#[derive(Debug, Args)]
pub struct FormsArgs {
    /// Pages may reach only this domain and its subdomains (repeatable). Without it, any
    /// public address; loopback, private, link-local and metadata addresses are refused.
    #[arg(long = "allow-domain", value_name = "DOMAIN")]
    allow_domains: Vec<String>,
    /// Let pages reach loopback, private and link-local addresses (cloud metadata addresses
    /// stay refused).
    #[arg(long)]
    allow_private_networks: bool,
    /// Answer NAME with ADDR in the browser proxy's resolver, like curl's --resolve
    /// (repeatable). The address policy still applies to ADDR.
    #[arg(long = "resolve", value_name = "NAME=ADDR", value_parser = parse_resolve)]
    resolve: Vec<(String, IpAddr)>,
    /// File inputs take file names inside this directory; without it uploads are refused.
    #[arg(long, value_name = "DIR")]
    upload_dir: Option<PathBuf>,
    /// Submit without asking for {"confirm": true}.
    #[arg(long)]
    auto_submit: bool,
    /// Browser sessions (conversations) at once; more are refused with a retry hint.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    max_contexts: u32,
    /// Close a conversation's browser session after this many idle seconds.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..))]
    idle_secs: u64,
    /// A browser process per conversation, or one browser with a context per conversation.
    #[arg(long, value_enum, default_value = "process")]
    isolation: IsolationArg,
    /// The Chromium binary [default: FERRY_CHROME, then /usr/lib/chromium/chromium, …].
    #[arg(long, value_name = "PATH")]
    chrome_path: Option<PathBuf>,
    /// `launch` (default) or `cdp[:NAME]`: use the browser registered through the
    /// cdp-config/v1 extension (turns on --cdp-config) instead of launching one.
    #[arg(long, value_name = "launch|cdp[:NAME]", default_value = "launch", value_parser = parse_browser)]
    browser: BrowserSource,
    /// Longest wait for a page to load, in seconds.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=600))]
    navigation_timeout: u64,
    /// Extra Chromium flag (repeatable; for tests and --lang).
    #[arg(
        long = "chrome-arg",
        value_name = "FLAG",
        allow_hyphen_values = true,
        hide = true
    )]
    chrome_args: Vec<String>,
}

impl FormsArgs {
    /// True when the agent needs the cdp-config/v1 extension.
    pub fn needs_cdp_config(&self) -> bool {
        matches!(self.browser, BrowserSource::Cdp { .. })
    }

    /// The agent's configuration.
    pub fn config(&self) -> FormsConfig {
        FormsConfig {
            allow_domains: self.allow_domains.clone(),
            allow_private_networks: self.allow_private_networks,
            resolve: self.resolve.clone(),
            upload_dir: self.upload_dir.clone(),
            auto_submit: self.auto_submit,
            max_contexts: self.max_contexts as usize,
            idle: Duration::from_secs(self.idle_secs),
            isolation: match self.isolation {
                IsolationArg::Process => Isolation::Process,
                IsolationArg::Context => Isolation::Context,
            },
            browser: self.browser.clone(),
            chrome_path: self.chrome_path.clone(),
            chrome_args: self.chrome_args.iter().map(OsString::from).collect(),
            navigation_timeout: Duration::from_secs(self.navigation_timeout),
            ..FormsConfig::default()
        }
    }
}

fn parse_resolve(text: &str) -> Result<(String, IpAddr), String> {
    ferry_forms::config::parse_resolve(text)
}

fn parse_browser(text: &str) -> Result<BrowserSource, String> {
    match text {
        "launch" => Ok(BrowserSource::Launch),
        "cdp" => Ok(BrowserSource::Cdp { name: None }),
        _ => match text.strip_prefix("cdp:") {
            Some(name) if !name.is_empty() => Ok(BrowserSource::Cdp {
                name: Some(name.to_owned()),
            }),
            _ => Err(format!("{text:?}: expected launch, cdp or cdp:NAME")),
        },
    }
}
