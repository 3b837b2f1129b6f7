//! The forms agent's settings for `ferry serve`: flags, and the `[forms]` table of the
//! `--config` file. Precedence, rising: defaults, the file, flags (list flags add to the
//! file's lists; switches only turn things on).

use anyhow::Context;
use clap::{Args, ValueEnum};
use ferry_forms::{Approval, BrowserSource, FormsConfig, HumanApproval, Isolation};
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

/// How conversations are isolated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IsolationArg {
    /// A Chromium process per conversation.
    Process,
    /// One shared Chromium, a browser context per conversation (far less memory).
    Context,
}

/// Who approves a submit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ApprovalArg {
    /// The calling agent, with {"confirm": true}.
    Caller,
    /// A person, on a review page the server serves (a link in the task); the caller's
    /// confirmation submits nothing.
    Human,
}

/// The variable that holds the approver token (never a flag: command lines are visible to
/// the other users of a machine).
pub(crate) const APPROVER_TOKEN_VAR: &str = "FERRY_APPROVER_TOKEN";

/// Flags of the forms agent (ignored by the other agents).
#[derive(Debug, Args)]
pub(crate) struct FormsArgs {
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
    /// Every caller of a tenant shares its saved profiles (default: each caller has its own).
    #[arg(long)]
    shared_profiles: bool,
    /// A picture of the form as filled with every turn that fills it (a `screenshot`
    /// artifact, secrets blanked) [default: on].
    #[arg(long, value_name = "on|off", value_parser = parse_on_off)]
    screenshots: Option<bool>,
    /// Who approves a submit: the calling agent ({"confirm": true}), or a person on a review
    /// page whose link the task carries (`approvalUrl`); FERRY_APPROVER_TOKEN also lets
    /// `ferry approve` decide [default: caller].
    #[arg(long, value_enum)]
    approval: Option<ApprovalArg>,
    /// How long a review link stays valid, in seconds [default: 900].
    #[arg(long, value_parser = clap::value_parser!(u64).range(10..=86_400))]
    approval_ttl_secs: Option<u64>,
    /// Browser sessions (conversations) at once; more are refused with a retry hint [default: 4].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
    max_contexts: Option<u32>,
    /// Close a conversation's browser session after this many idle seconds [default: 300].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    idle_secs: Option<u64>,
    /// A browser process per conversation, or one browser with a context per conversation
    /// [default: process].
    #[arg(long, value_enum)]
    isolation: Option<IsolationArg>,
    /// The Chromium binary [default: FERRY_CHROME, then /usr/lib/chromium/chromium, …].
    #[arg(long, value_name = "PATH")]
    chrome_path: Option<PathBuf>,
    /// `launch` or `cdp[:NAME]`: use the browser registered through the cdp-config/v1
    /// extension (turns on --cdp-config) instead of launching one [default: launch].
    #[arg(long, value_name = "launch|cdp[:NAME]", value_parser = parse_browser)]
    browser: Option<BrowserSource>,
    /// Longest wait for a page to load, in seconds [default: 20].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=600))]
    navigation_timeout: Option<u64>,
    /// Extra Chromium flag (repeatable; for tests and --lang).
    #[arg(
        long = "chrome-arg",
        value_name = "FLAG",
        allow_hyphen_values = true,
        hide = true
    )]
    chrome_args: Vec<String>,
}

/// The `[forms]` table of the config file (and what `--print-config` shows).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct FormsFile {
    /// `--allow-domain`, as a list.
    allow_domains: Vec<String>,
    /// `--allow-private-networks`.
    allow_private_networks: bool,
    /// `--resolve`, as `NAME=ADDR` strings.
    resolve: Vec<String>,
    /// `--upload-dir`.
    #[serde(skip_serializing_if = "Option::is_none")]
    upload_dir: Option<PathBuf>,
    /// `--auto-submit`.
    auto_submit: bool,
    /// `--shared-profiles`.
    shared_profiles: bool,
    /// `--max-contexts`.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_contexts: Option<u32>,
    /// `--idle-secs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    idle_secs: Option<u64>,
    /// `--isolation`.
    #[serde(skip_serializing_if = "Option::is_none")]
    isolation: Option<IsolationArg>,
    /// `--chrome-path`.
    #[serde(skip_serializing_if = "Option::is_none")]
    chrome_path: Option<PathBuf>,
    /// `--browser` (`launch`, `cdp`, `cdp:NAME`).
    #[serde(skip_serializing_if = "Option::is_none")]
    browser: Option<String>,
    /// `--navigation-timeout`, in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    navigation_timeout_secs: Option<u64>,
    /// `--screenshots`.
    #[serde(skip_serializing_if = "Option::is_none")]
    screenshots: Option<bool>,
    /// `--approval`.
    #[serde(skip_serializing_if = "Option::is_none")]
    approval: Option<ApprovalArg>,
    /// `--approval-ttl-secs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    approval_ttl_secs: Option<u64>,
}

impl FormsFile {
    /// Reads the `[forms]` table set aside from the config file.
    pub(crate) fn from_table(table: Option<&toml::Value>, path: &str) -> anyhow::Result<FormsFile> {
        match table {
            None => Ok(FormsFile::default()),
            Some(value) => value
                .clone()
                .try_into()
                .with_context(|| format!("{path}: [forms]")),
        }
    }

    /// The effective settings of `config`, for `--print-config`.
    pub(crate) fn of(config: &FormsConfig) -> FormsFile {
        FormsFile {
            allow_domains: config.allow_domains.clone(),
            allow_private_networks: config.allow_private_networks,
            resolve: config
                .resolve
                .iter()
                .map(|(name, addr)| format!("{name}={addr}"))
                .collect(),
            upload_dir: config.upload_dir.clone(),
            auto_submit: config.auto_submit,
            shared_profiles: config.shared_profiles,
            max_contexts: u32::try_from(config.max_contexts).ok(),
            idle_secs: Some(config.idle.as_secs()),
            isolation: Some(match config.isolation {
                Isolation::Process => IsolationArg::Process,
                Isolation::Context => IsolationArg::Context,
            }),
            chrome_path: config.chrome_path.clone(),
            browser: Some(match &config.browser {
                BrowserSource::Launch => "launch".to_owned(),
                BrowserSource::Cdp { name: None } => "cdp".to_owned(),
                BrowserSource::Cdp { name: Some(n) } => format!("cdp:{n}"),
            }),
            navigation_timeout_secs: Some(config.navigation_timeout.as_secs()),
            screenshots: Some(config.screenshots),
            approval: Some(match config.approval {
                Approval::Caller => ApprovalArg::Caller,
                Approval::Human(_) => ApprovalArg::Human,
            }),
            approval_ttl_secs: config.approval.human().map(|h| h.ttl.as_secs()),
        }
    }
}

impl FormsArgs {
    /// The agent's configuration: defaults, then `file`, then the flags.
    pub(crate) fn config(&self, file: FormsFile) -> anyhow::Result<FormsConfig> {
        // The file.
        let resolve = file
            .resolve
            .iter()
            .map(|entry| parse_resolve(entry))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| anyhow::anyhow!("[forms] resolve: {e}"))?;
        let mut c = FormsConfig {
            allow_domains: file.allow_domains,
            allow_private_networks: file.allow_private_networks,
            resolve,
            upload_dir: file.upload_dir,
            auto_submit: file.auto_submit,
            shared_profiles: file.shared_profiles,
            chrome_path: file.chrome_path,
            ..FormsConfig::default()
        };
        if let Some(n) = file.max_contexts {
            anyhow::ensure!((1..=256).contains(&n), "[forms] max_contexts: 1 to 256");
            c.max_contexts = n as usize;
        }
        if let Some(secs) = file.idle_secs {
            anyhow::ensure!(secs >= 1, "[forms] idle_secs: at least 1");
            c.idle = Duration::from_secs(secs);
        }
        if let Some(isolation) = file.isolation {
            c.isolation = isolation.into();
        }
        if let Some(browser) = &file.browser {
            c.browser =
                parse_browser(browser).map_err(|e| anyhow::anyhow!("[forms] browser: {e}"))?;
        }
        if let Some(secs) = file.navigation_timeout_secs {
            anyhow::ensure!(
                (1..=600).contains(&secs),
                "[forms] navigation_timeout_secs: 1 to 600"
            );
            c.navigation_timeout = Duration::from_secs(secs);
        }
        if let Some(on) = file.screenshots {
            c.screenshots = on;
        }
        // The flags.
        c.allow_domains.extend(self.allow_domains.iter().cloned());
        c.allow_private_networks |= self.allow_private_networks;
        c.resolve.extend(self.resolve.iter().cloned());
        if let Some(dir) = &self.upload_dir {
            c.upload_dir = Some(dir.clone());
        }
        c.auto_submit |= self.auto_submit;
        c.shared_profiles |= self.shared_profiles;
        if let Some(n) = self.max_contexts {
            c.max_contexts = n as usize;
        }
        if let Some(secs) = self.idle_secs {
            c.idle = Duration::from_secs(secs);
        }
        if let Some(isolation) = self.isolation {
            c.isolation = isolation.into();
        }
        if let Some(path) = &self.chrome_path {
            c.chrome_path = Some(path.clone());
        }
        if let Some(browser) = &self.browser {
            c.browser = browser.clone();
        }
        if let Some(secs) = self.navigation_timeout {
            c.navigation_timeout = Duration::from_secs(secs);
        }
        if let Some(on) = self.screenshots {
            c.screenshots = on;
        }
        c.chrome_args = self.chrome_args.iter().map(OsString::from).collect();
        c.approval = self.approval(file.approval, file.approval_ttl_secs)?;
        anyhow::ensure!(
            !(c.auto_submit && c.approval.human().is_some()),
            "auto_submit and approval = \"human\" contradict each other: a person approves each submit, or none does"
        );
        // Refuse a bad allowlist entry now, not on the first conversation.
        ferry_browser::Allowlist::new(&c.allow_domains).context("allow_domains")?;
        Ok(c)
    }
}

impl FormsArgs {
    /// Who approves submits: the flags over the file's `approval` and `approval_ttl_secs`;
    /// a person's approver token comes from FERRY_APPROVER_TOKEN.
    fn approval(
        &self,
        file: Option<ApprovalArg>,
        file_ttl: Option<u64>,
    ) -> anyhow::Result<Approval> {
        if let Some(secs) = file_ttl {
            anyhow::ensure!(
                (10..=86_400).contains(&secs),
                "[forms] approval_ttl_secs: 10 to 86400"
            );
        }
        let ttl = self
            .approval_ttl_secs
            .or(file_ttl)
            .map_or(HumanApproval::DEFAULT_TTL, Duration::from_secs);
        Ok(
            match self.approval.or(file).unwrap_or(ApprovalArg::Caller) {
                ApprovalArg::Caller => Approval::Caller,
                ApprovalArg::Human => Approval::Human(HumanApproval {
                    ttl,
                    approver_token: std::env::var(APPROVER_TOKEN_VAR)
                        .ok()
                        .filter(|t| !t.trim().is_empty()),
                }),
            },
        )
    }
}

impl From<IsolationArg> for Isolation {
    fn from(arg: IsolationArg) -> Isolation {
        match arg {
            IsolationArg::Process => Isolation::Process,
            IsolationArg::Context => Isolation::Context,
        }
    }
}

fn parse_resolve(text: &str) -> Result<(String, IpAddr), String> {
    ferry_forms::config::parse_resolve(text)
}

fn parse_on_off(text: &str) -> Result<bool, String> {
    match text {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("{text:?}: expected on or off")),
    }
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
