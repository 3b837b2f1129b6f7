//! Which bearer tokens the server knows and what each allows: the front door turns the
//! `Authorization` header of a request into an [`Access`], an [`AgentScope`] and a
//! [`Caller`] (or a refusal) here; the core applies the access per operation
//! ([`Access::authorize`]), the agent's gate the scope, and agents see the caller.
//!
//! # Who the caller is
//!
//! Each token names one caller: a scoped token its configured `caller` name, any other token
//! its fingerprint, `token:` and the first 16 hex digits of the token's SHA-256. The
//! fingerprint is stable across restarts (a caller's saved data survives them), distinct
//! tokens get distinct callers, and it reveals nothing usable of a random token: it can be
//! logged and stored. On a server without tokens every request is the one caller
//! [`Caller::LOCAL`]; an anonymous request to a server with tokens has no caller (strangers
//! must not share one).

use crate::config::ServerConfig;
use crate::core::call::Access;
use crate::core::call::TaskReach;
use axum::http::{HeaderMap, header};
use ferry_net::secret::constant_time_eq;
use std::sync::Arc;

/// What a request's `Authorization` comes to, before any provider is asked.
#[derive(Debug)]
pub(crate) enum Verdict<'h> {
    /// Its grant.
    Granted(Grant),
    /// A bearer token that is none of the static tokens.
    Unknown(&'h str),
    /// No credentials where they are required, or not a bearer token.
    Missing,
}

/// The tokens of the configuration.
#[derive(Debug)]
pub(crate) struct Credentials {
    /// The token of full access, if set, and its caller.
    full: Option<(Box<[u8]>, Caller)>,
    /// Tokens that may only read tasks, with their callers.
    read_only: Vec<(Box<[u8]>, Caller)>,
    /// Tokens limited to some agents.
    scoped: Vec<Scoped>,
    /// Whether a request without credentials is let in (as [`Access::Anonymous`]).
    anonymous: bool,
    /// The caller of every request to a server without tokens ([`Caller::LOCAL`]).
    local: Caller,
    /// Whether a provider's tokens or client certificates are accepted too (then
    /// credentials are required).
    other_credentials: bool,
}

/// The caller a connection's verified client certificate names, on each of its requests.
#[derive(Debug, Clone)]
pub(crate) struct ClientCertificate(pub(crate) Caller);

/// A token limited to some agents.
#[derive(Debug)]
struct Scoped {
    token: Box<[u8]>,
    access: Access,
    scope: AgentScope,
    caller: Caller,
    reach: TaskReach,
}

/// Who an authenticated request comes from, as agents see it (see the module docs); the
/// front door puts it in the request's extensions, where routes of extensions find it too.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Caller(pub Arc<str>);

impl Caller {
    /// The one caller of a server without tokens: whoever can reach it is its operator (it
    /// listens on loopback unless told otherwise). `ferry mcp` names the same caller by
    /// default, so both faces of one store share that user's saved data.
    pub const LOCAL: &'static str = ferry_agent::LOCAL_CALLER;

    /// The caller a token names when it has no configured name: its fingerprint (16 hex
    /// digits of its SHA-256; the token itself never appears).
    pub(crate) fn of_token(token: &str) -> Caller {
        let digest = ferry_trust::jcs::digest_bytes(token.as_bytes());
        let hex = digest.trim_start_matches("sha256:");
        Caller(format!("token:{}", &hex[..16]).into())
    }

    /// The caller's name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Which agents a caller may reach: every one, or those a scoped token names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentScope(Option<Arc<[String]>>);

impl AgentScope {
    /// Every agent.
    pub(crate) fn all() -> Self {
        Self(None)
    }

    /// Only the agents `ids`.
    pub(crate) fn only(ids: &[String]) -> Self {
        Self(Some(ids.into()))
    }

    /// Whether the agent `id` may be reached.
    pub fn allows(&self, id: &str) -> bool {
        self.0
            .as_ref()
            .is_none_or(|ids| ids.iter().any(|a| a == id))
    }

    /// The agents it names (`None`: every agent).
    pub(crate) fn agents(&self) -> Option<&[String]> {
        self.0.as_deref()
    }

    /// Whether every agent may be reached (what the server's own routes, such as
    /// `/metrics`, ask of a caller).
    pub fn is_all(&self) -> bool {
        self.0.is_none()
    }
}

/// What a request's credentials give: the operations it may run, where, and as whom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Grant {
    /// The operations.
    pub(crate) access: Access,
    /// The agents.
    pub(crate) scope: AgentScope,
    /// Who is calling; `None` without credentials.
    pub(crate) caller: Option<Caller>,
    /// Whose tasks it reaches besides its own.
    pub(crate) reach: TaskReach,
}

impl Grant {
    pub(crate) fn everywhere(access: Access, caller: Option<&Caller>) -> Self {
        Self {
            access,
            scope: AgentScope::all(),
            caller: caller.cloned(),
            reach: TaskReach::Own,
        }
    }
}

impl Credentials {
    /// The tokens of `config` (empty ones ignored).
    pub(crate) fn new(config: &ServerConfig) -> Self {
        let secret = |t: &String| (!t.is_empty()).then(|| t.as_bytes().into());
        let with_caller = |t: &String| Some((secret(t)?, Caller::of_token(t)));
        Self {
            full: config.token.as_ref().and_then(with_caller),
            read_only: config
                .read_only_tokens
                .iter()
                .filter_map(with_caller)
                .collect(),
            scoped: config
                .scoped_tokens
                .iter()
                .filter_map(|t| {
                    Some(Scoped {
                        token: secret(&t.token)?,
                        access: if t.read_only {
                            Access::ReadOnly
                        } else {
                            Access::Full
                        },
                        scope: AgentScope::only(&t.agents),
                        caller: match &t.caller {
                            Some(name) if !name.is_empty() => Caller(name.as_str().into()),
                            _ => Caller::of_token(&t.token),
                        },
                        reach: if t.admin {
                            TaskReach::All
                        } else {
                            TaskReach::Own
                        },
                    })
                })
                .collect(),
            anonymous: config.allow_anonymous,
            local: Caller(Caller::LOCAL.into()),
            other_credentials: config.auth.oidc.is_some() || config.accepts_client_certs(),
        }
    }

    /// Whether any credential is asked for at all.
    pub(crate) fn required(&self) -> bool {
        self.full.is_some() || !self.scoped.is_empty() || self.other_credentials
    }

    /// Whether the request presents the server's own token (the full one): what a replica
    /// forwarding a request sends.
    pub(crate) fn is_server_token(&self, headers: &HeaderMap) -> bool {
        let Some((full, _)) = &self.full else {
            return false;
        };
        headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .is_some_and(|(_, token)| constant_time_eq(token.trim().as_bytes(), full))
    }

    /// What the request's credentials are: a grant, a bearer token that is none of the
    /// static ones (a provider's, perhaps), or nothing usable — a token that is not a bearer
    /// token, or no token where one is required (a token is never read as anonymous, even
    /// where anonymous callers are let in).
    pub(crate) fn verdict<'h>(&self, headers: &'h HeaderMap) -> Verdict<'h> {
        if !self.required() {
            return Verdict::Granted(Grant::everywhere(Access::Full, Some(&self.local)));
        }
        let Some(presented) = headers.get(header::AUTHORIZATION) else {
            return if self.anonymous {
                Verdict::Granted(Grant::everywhere(Access::Anonymous, None))
            } else {
                Verdict::Missing
            };
        };
        let Some(token) = presented
            .to_str()
            .ok()
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, t)| t.trim())
        else {
            return Verdict::Missing;
        };
        match self.static_grant(token.as_bytes()) {
            Some(grant) => Verdict::Granted(grant),
            None => Verdict::Unknown(token),
        }
    }

    /// The grant of a static token, if `presented` is one.
    fn static_grant(&self, presented: &[u8]) -> Option<Grant> {
        // Every token is compared, so the time taken does not say which one matched.
        let full = self
            .full
            .as_ref()
            .filter(|(full, _)| constant_time_eq(presented, full));
        let read_only = self.read_only.iter().fold(None, |found, (t, caller)| {
            let matches = constant_time_eq(presented, t);
            found.or(matches.then_some(caller))
        });
        let scoped = self.scoped.iter().fold(None, |found, s| {
            let matches = constant_time_eq(presented, &s.token);
            found.or(matches.then_some(s))
        });
        if let Some((_, caller)) = full {
            Some(Grant::everywhere(Access::Full, Some(caller)))
        } else if let Some(caller) = read_only {
            // The server's read-only tokens watch every caller's tasks (a dashboard); a
            // scoped read-only token reads its own caller's.
            Some(Grant {
                reach: TaskReach::All,
                ..Grant::everywhere(Access::ReadOnly, Some(caller))
            })
        } else {
            scoped.map(|s| Grant {
                access: s.access,
                scope: s.scope.clone(),
                caller: Some(s.caller.clone()),
                reach: s.reach,
            })
        }
    }

    /// What the request's static credentials allow, wherever they may be used (see
    /// [`Self::verdict`]; the front door uses the whole grant).
    #[cfg(test)]
    fn access(&self, headers: &HeaderMap) -> Option<Access> {
        self.grant(headers).map(|g| g.access)
    }

    /// The grant of the request's static credentials, if they give one.
    #[cfg(test)]
    fn grant(&self, headers: &HeaderMap) -> Option<Grant> {
        match self.verdict(headers) {
            Verdict::Granted(g) => Some(g),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tokens_caller_is_its_fingerprint_never_the_token() {
        let a = Caller::of_token("s3cret");
        assert!(a.0.starts_with("token:") && a.0.len() == 22);
        assert!(!a.0.contains("s3cret"));
        assert_ne!(a, Caller::of_token("other"));
        assert_eq!(a, Caller::of_token("s3cret"));
    }
    use axum::http::HeaderValue;

    fn headers(authorization: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(v) = authorization {
            h.insert(
                header::AUTHORIZATION,
                HeaderValue::from_str(v).expect("header"),
            );
        }
        h
    }

    fn credentials(anonymous: bool) -> Credentials {
        Credentials::new(&ServerConfig {
            token: Some("full".into()),
            read_only_tokens: vec!["reader".into(), String::new()],
            allow_anonymous: anonymous,
            ..ServerConfig::default()
        })
    }

    #[test]
    fn tokens_map_to_their_access() {
        for anonymous in [false, true] {
            let c = credentials(anonymous);
            assert_eq!(c.access(&headers(Some("Bearer full"))), Some(Access::Full));
            assert_eq!(
                c.access(&headers(Some("bearer  full "))),
                Some(Access::Full)
            );
            assert_eq!(
                c.access(&headers(Some("Bearer reader"))),
                Some(Access::ReadOnly)
            );
            // A wrong token, another scheme or an empty token is refused, never anonymous.
            for refused in ["Bearer nope", "Basic full", "Bearer ", "Bearer"] {
                assert_eq!(c.access(&headers(Some(refused))), None, "{refused}");
            }
        }
        assert_eq!(credentials(false).access(&headers(None)), None);
        assert_eq!(
            credentials(true).access(&headers(None)),
            Some(Access::Anonymous)
        );
    }

    #[test]
    fn a_scoped_token_reaches_only_its_agents() {
        let c = Credentials::new(&ServerConfig {
            scoped_tokens: vec![
                crate::config::ScopedToken {
                    token: "partner".into(),
                    agents: vec!["echo".into()],
                    read_only: false,
                    caller: Some("acme".into()),
                    admin: false,
                },
                crate::config::ScopedToken {
                    token: "auditor".into(),
                    agents: vec!["echo".into(), "forms".into()],
                    read_only: true,
                    caller: None,
                    admin: false,
                },
            ],
            ..ServerConfig::default()
        });
        assert!(c.required(), "a scoped token alone turns authentication on");
        assert_eq!(c.grant(&headers(None)), None);
        assert_eq!(c.grant(&headers(Some("Bearer nope"))), None);
        let partner = c.grant(&headers(Some("Bearer partner"))).expect("known");
        assert_eq!(partner.access, Access::Full);
        assert!(partner.scope.allows("echo"));
        assert!(!partner.scope.allows("forms"));
        assert!(!partner.scope.is_all());
        let auditor = c.grant(&headers(Some("Bearer auditor"))).expect("known");
        assert_eq!(auditor.access, Access::ReadOnly);
        assert!(auditor.scope.allows("forms"));
        assert!(!auditor.scope.allows("exec"));
        assert_eq!(
            partner.caller,
            Some(Caller("acme".into())),
            "its configured name"
        );
        assert_eq!(auditor.caller, Some(Caller::of_token("auditor")));
    }

    #[test]
    fn each_token_names_its_own_caller() {
        let c = credentials(true);
        let full = c.grant(&headers(Some("Bearer full"))).expect("full");
        let reader = c.grant(&headers(Some("Bearer reader"))).expect("reader");
        assert_eq!(full.caller, Some(Caller::of_token("full")));
        assert_eq!(reader.caller, Some(Caller::of_token("reader")));
        assert_ne!(full.caller, reader.caller);
        assert_eq!(c.grant(&headers(None)).expect("anonymous").caller, None);
        // A server without tokens: every request is its one local caller.
        let open = Credentials::new(&ServerConfig::default());
        let local = Some(Caller(Caller::LOCAL.into()));
        assert_eq!(
            open.grant(&headers(Some("Bearer x"))).expect("open").caller,
            local
        );
        assert_eq!(open.grant(&headers(None)).expect("open").caller, local);
        // Known SHA-256 ("abc"): the fingerprint is its first 16 hex digits.
        assert_eq!(Caller::of_token("abc").as_str(), "token:ba7816bf8f01cfea");
    }

    #[test]
    fn without_a_token_everyone_has_full_access() {
        let open = Credentials::new(&ServerConfig::default());
        assert!(!open.required());
        assert_eq!(open.access(&headers(None)), Some(Access::Full));
        assert_eq!(open.access(&headers(Some("Bearer x"))), Some(Access::Full));
    }
}
