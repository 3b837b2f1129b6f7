//! Access tokens of an OpenID Connect / OAuth 2 provider (`[auth.oidc]`): verified with the
//! provider's published keys ([`ferry_trust::oidc::Provider`]) and turned into a grant.
//!
//! The token's subject is the caller, `oidc:SUB` (tasks, forms sessions and saved profiles
//! are kept per caller). Its scopes decide the rest: the read scope makes it read-only, the
//! admin scope lets it see every caller's tasks, and with `agent_scopes` each agent of a
//! server of several needs `{prefix}ID`. Without scope settings a valid token has full
//! access to every agent.

use super::credentials::{AgentScope, Caller, Grant};
use crate::config::OidcConfig;
use crate::core::call::{Access, TaskReach};
use crate::error::ServerError;
use ferry_trust::jwt::{Claims, Rules};
use ferry_trust::oidc::{OidcError, Provider, ProviderSettings};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The provider and what its tokens must be, and mean.
#[derive(Debug)]
pub(crate) struct OidcGate {
    provider: Provider,
    rules: Rules,
    config: OidcConfig,
}

/// Why a provider's token did not give a grant.
#[derive(Debug)]
pub(crate) enum TokenRefused {
    /// The token is not valid (401 `invalid_token`): what is wrong with it.
    Invalid(String),
    /// The provider could not be asked (503): why.
    ProviderUnavailable(String),
}

impl OidcGate {
    /// The gate of `config` (the provider is asked on first use, not now).
    pub(crate) fn new(config: &OidcConfig) -> Result<Self, ServerError> {
        let setting = |problem: String| ServerError::Setting {
            setting: "auth.oidc",
            problem,
        };
        let roots = match &config.ca_file {
            Some(path) => read_roots(path).map_err(setting)?,
            None => Vec::new(),
        };
        let settings = ProviderSettings {
            allow_private: config.allow_private,
            roots,
            refresh_after: Duration::from_secs(config.refresh_secs),
            refetch_min_interval: Duration::from_secs(config.refetch_min_secs),
            ..ProviderSettings::new(&config.issuer)
        };
        let provider = Provider::new(settings).map_err(|e| setting(e.to_string()))?;
        let rules = Rules {
            leeway: Duration::from_secs(config.leeway_secs),
            ..Rules::new(&config.issuer, &config.audience)
        };
        Ok(Self {
            provider,
            rules,
            config: config.clone(),
        })
    }

    /// The grant of `token`, or why there is none.
    pub(crate) async fn grant(&self, token: &str) -> Result<Grant, TokenRefused> {
        match self.provider.verify(token, &self.rules, now()).await {
            Ok(claims) => Ok(self.grant_of(&claims)),
            Err(e) if e.is_token_refusal() => Err(TokenRefused::Invalid(e.to_string())),
            Err(e) => {
                tracing::warn!(issuer = self.provider.issuer(), error = %e, "the identity provider could not be asked");
                Err(TokenRefused::ProviderUnavailable(provider_failure(&e)))
            }
        }
    }

    /// What the claims of a verified token allow (see the module docs).
    fn grant_of(&self, claims: &Claims) -> Grant {
        let c = &self.config;
        let access = if claims.has_scope(&c.read_scope) {
            Access::ReadOnly
        } else {
            Access::Full
        };
        let scope = if c.agent_scopes {
            let agents: Vec<String> = claims
                .scopes
                .iter()
                .filter_map(|s| s.strip_prefix(c.agent_scope_prefix.as_str()))
                .map(str::to_owned)
                .collect();
            AgentScope::only(&agents)
        } else {
            AgentScope::all()
        };
        let reach = if claims.has_scope(&c.admin_scope) {
            TaskReach::All
        } else {
            TaskReach::Own
        };
        Grant {
            access,
            scope,
            caller: Some(Caller(format!("oidc:{}", claims.subject).into())),
            reach,
        }
    }
}

/// What a caller is told when the provider failed: no more than that it did (the details
/// are in the server's log).
fn provider_failure(e: &OidcError) -> String {
    let what = match e {
        OidcError::Fetch { .. } => "could not be reached",
        _ => "answered with something unusable",
    };
    format!("the identity provider {what}; try again later")
}

/// Seconds since the epoch.
fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The certificates of a PEM file, as DER.
fn read_roots(path: &std::path::Path) -> Result<Vec<Vec<u8>>, String> {
    use rustls_pki_types::CertificateDer;
    use rustls_pki_types::pem::PemObject;
    let shown = path.display();
    let pem = std::fs::read(path).map_err(|e| format!("ca_file {shown}: {e}"))?;
    let roots: Vec<Vec<u8>> = CertificateDer::pem_slice_iter(&pem)
        .map(|c| c.map(|c| c.to_vec()))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("ca_file {shown}: {e}"))?;
    if roots.is_empty() {
        return Err(format!("ca_file {shown} holds no certificate"));
    }
    Ok(roots)
}
