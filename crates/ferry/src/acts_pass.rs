//! How `ferry serve --agent conformance --acts-pass …` sets itself up for the three passes of
//! ACTS: `main` (open, with an extended card for the token), `auth` (every operation needs the
//! token) and `reduced` (streaming, push and extended card not declared). a2a-itk's variables
//! `ITK_ACTS_AUTH=1` and `ITK_ACTS_REDUCED_CAPABILITIES=1`, with which it starts the official
//! SDKs' reference servers, choose `auth` and `reduced` too. Without either the conformance
//! agent serves as it always has (the conformance kit expects no extended card).
//!
//! The tokens are the ITK's published test tokens, so they are applied only to a loopback
//! bind and only when no token is configured: a server given its own token keeps its own
//! settings, and one on a public address without a token is refused as ever.

use ferry_agents::ConformanceAgent;
use ferry_server::ServerConfig;

/// The token that may do everything.
const VALID_TOKEN: &str = "itk-valid-token";
/// A token the server knows that may only read tasks: refused (403) for anything else.
const INSUFFICIENT_TOKEN: &str = "itk-insufficient-token";

/// Which pass the server is started for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ActsPass {
    /// No credentials needed, except for the extended card (the token; the read-only token
    /// gets 403).
    Main,
    /// Every operation needs a token, and the card says so; the read-only token may only read.
    Auth,
    /// Streaming off and no extended card (no token).
    Reduced,
}

impl ActsPass {
    /// The pass asked for: the flag's, else the one a2a-itk's variables name
    /// (`ITK_ACTS_AUTH=1`, `ITK_ACTS_REDUCED_CAPABILITIES=1`), else none.
    pub(crate) fn chosen(flag: Option<ActsPass>) -> anyhow::Result<Option<Self>> {
        let set = |name: &str| std::env::var(name).is_ok_and(|v| v == "1" || v == "true");
        let from_env = match (set("ITK_ACTS_AUTH"), set("ITK_ACTS_REDUCED_CAPABILITIES")) {
            (false, false) => None,
            (true, false) => Some(ActsPass::Auth),
            (false, true) => Some(ActsPass::Reduced),
            (true, true) => anyhow::bail!(
                "ITK_ACTS_AUTH and ITK_ACTS_REDUCED_CAPABILITIES are two different passes; set one"
            ),
        };
        Ok(flag.or(from_env))
    }

    /// Sets the pass's credentials on `config`, unless it has a token of its own or binds
    /// beyond this machine.
    pub(crate) fn apply(self, config: &mut ServerConfig) {
        if self == ActsPass::Reduced {
            // Push is one of the capabilities the reduced pass leaves undeclared.
            config.push.enabled = false;
            return;
        }
        if config.has_token() || !config.bind.ip().is_loopback() {
            return;
        }
        config.token = Some(VALID_TOKEN.into());
        config.read_only_tokens = vec![INSUFFICIENT_TOKEN.into()];
        config.allow_anonymous = self == ActsPass::Main;
    }

    /// The agent of the pass.
    pub(crate) fn agent(self) -> ConformanceAgent {
        match self {
            ActsPass::Reduced => ConformanceAgent::without_streaming(),
            ActsPass::Main | ActsPass::Auth => ConformanceAgent::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_pass_sets_its_credentials() {
        let mut main = ServerConfig::default();
        ActsPass::Main.apply(&mut main);
        assert_eq!(main.token.as_deref(), Some(VALID_TOKEN));
        assert_eq!(main.read_only_tokens, [INSUFFICIENT_TOKEN]);
        assert!(main.allow_anonymous);
        let mut auth = ServerConfig::default();
        ActsPass::Auth.apply(&mut auth);
        assert!(auth.token.is_some() && !auth.allow_anonymous);
        let mut reduced = ServerConfig::default();
        ActsPass::Reduced.apply(&mut reduced);
        assert!(reduced.token.is_none());
        assert!(!reduced.push.enabled, "the reduced pass declares no push");
    }

    #[test]
    fn the_published_tokens_never_guard_a_public_address_or_replace_a_token() {
        let mut public = ServerConfig {
            bind: "0.0.0.0:9400".parse().expect("addr"),
            ..ServerConfig::default()
        };
        ActsPass::Auth.apply(&mut public);
        assert!(
            public.token.is_none(),
            "left to validate(), which refuses it"
        );
        let mut own = ServerConfig {
            token: Some("mine".into()),
            ..ServerConfig::default()
        };
        ActsPass::Main.apply(&mut own);
        assert_eq!(own.token.as_deref(), Some("mine"));
        assert!(own.read_only_tokens.is_empty() && !own.allow_anonymous);
    }
}
