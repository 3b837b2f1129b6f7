//! Tokens the CLI gets for itself from the agent's OpenID provider (`--client-id`): by
//! client credentials (the secret in `FERRY_CLIENT_SECRET`) or by `ferry login` (the device
//! flow), kept under the user's cache directory, renewed before they expire and once more
//! when the agent refuses one.

use anyhow::Context;
use clap::Args;
use ferry_client::oauth::{TokenSettings, Tokens};
use ferry_client::{A2aClient, ClientError, ClientTls};
use ferry_proto::{AgentCard, ErrorKind};
use std::path::PathBuf;

/// The variable that holds the client secret (never a flag: command lines are visible to
/// the other users of a machine).
pub(crate) const CLIENT_SECRET_VAR: &str = "FERRY_CLIENT_SECRET";

/// How the CLI gets tokens from a provider.
#[derive(Debug, Clone, Args)]
pub(crate) struct TokenFlags {
    /// Get tokens from the agent's OpenID provider as this client: by client credentials
    /// when FERRY_CLIENT_SECRET is set, else those `ferry login` got.
    #[arg(long, env = "FERRY_CLIENT_ID", global = true, value_name = "ID")]
    client_id: Option<String>,
    /// The provider to trust with the client's credentials (its issuer URL); the card's
    /// must be the same. Needed to send a client secret.
    #[arg(long, env = "FERRY_OIDC_ISSUER", global = true, value_name = "URL")]
    oidc_issuer: Option<String>,
    /// The audience to ask the provider for.
    #[arg(long, global = true, value_name = "AUD")]
    audience: Option<String>,
    /// The scopes to ask the provider for (space-separated).
    #[arg(long, global = true, value_name = "SCOPES")]
    scope: Option<String>,
    /// Allow a provider on a loopback or private address, over http too.
    #[arg(long, global = true)]
    oidc_allow_private: bool,
}

impl TokenFlags {
    /// Whether tokens are to come from a provider (`--client-id`).
    pub(crate) fn wants_tokens(&self) -> bool {
        self.client_id.as_deref().is_some_and(|c| !c.is_empty())
    }

    /// The token source these flags describe, if any (`--client-id`).
    pub(crate) fn tokens(&self, tls: &ClientTls) -> anyhow::Result<Option<Tokens>> {
        let Some(client_id) = self.client_id.clone().filter(|_| self.wants_tokens()) else {
            return Ok(None);
        };
        let settings = TokenSettings {
            issuer: self.oidc_issuer.clone(),
            client_id,
            client_secret: std::env::var(CLIENT_SECRET_VAR)
                .ok()
                .filter(|s| !s.is_empty()),
            audience: self.audience.clone(),
            scope: self.scope.clone(),
            cache_dir: cache_dir(),
            allow_private: self.oidc_allow_private,
            tls: tls.clone(),
        };
        Ok(Some(Tokens::new(settings)?))
    }
}

/// Where tokens are kept: `$FERRY_TOKEN_CACHE`, else `ferry/tokens` under
/// `$XDG_CACHE_HOME`, else under `~/.cache`.
fn cache_dir() -> Option<PathBuf> {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = var("FERRY_TOKEN_CACHE") {
        return Some(dir.into());
    }
    let base = var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("ferry").join("tokens"))
}

/// `client` with a token of `tokens` for the agent of `card` (renewed when `renew`).
pub(crate) async fn authorize(
    client: A2aClient,
    card: &AgentCard,
    tokens: &Tokens,
    renew: bool,
) -> anyhow::Result<A2aClient> {
    let token = tokens
        .token(card, renew)
        .await
        .context("getting a token from the agent's provider")?;
    Ok(client.with_bearer(&token)?)
}

/// Whether `e` is the agent refusing the credentials as unauthenticated (401).
pub(crate) fn is_unauthenticated(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<ClientError>())
        .any(|c| match c {
            ClientError::Auth { status, .. } => *status == 401,
            ClientError::Protocol(a2a) => a2a.kind == ErrorKind::Unauthenticated,
            _ => false,
        })
}
