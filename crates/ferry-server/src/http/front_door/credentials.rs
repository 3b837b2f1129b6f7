//! Which bearer tokens the server knows and what each allows: the front door turns the
//! `Authorization` header of a request into an [`Access`] and an [`AgentScope`] (or a
//! refusal) here; the core applies the access per operation ([`Access::authorize`]), the
//! agent's gate the scope.

use super::token::constant_time_eq;
use crate::config::ServerConfig;
use crate::core::call::Access;
use axum::http::{HeaderMap, header};
use std::sync::Arc;

/// The tokens of the configuration.
#[derive(Debug)]
pub struct Credentials {
    /// The token of full access, if set.
    full: Option<Box<[u8]>>,
    /// Tokens that may only read tasks.
    read_only: Vec<Box<[u8]>>,
    /// Tokens limited to some agents.
    scoped: Vec<Scoped>,
    /// Whether a request without credentials is let in (as [`Access::Anonymous`]).
    anonymous: bool,
}

/// A token limited to some agents.
#[derive(Debug)]
struct Scoped {
    token: Box<[u8]>,
    access: Access,
    scope: AgentScope,
}

/// Which agents a caller may reach: every one, or those a scoped token names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentScope(Option<Arc<[String]>>);

impl AgentScope {
    /// Every agent.
    pub fn all() -> Self {
        Self(None)
    }

    /// Only the agents `ids`.
    pub fn only(ids: &[String]) -> Self {
        Self(Some(ids.into()))
    }

    /// Whether the agent `id` may be reached.
    pub fn allows(&self, id: &str) -> bool {
        self.0
            .as_ref()
            .is_none_or(|ids| ids.iter().any(|a| a == id))
    }

    /// Whether every agent may be reached (what the server's own routes, such as
    /// `/metrics`, ask of a caller).
    pub fn is_all(&self) -> bool {
        self.0.is_none()
    }
}

/// What a request's credentials give: the operations it may run, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The operations.
    pub access: Access,
    /// The agents.
    pub scope: AgentScope,
}

impl Grant {
    fn everywhere(access: Access) -> Self {
        Self {
            access,
            scope: AgentScope::all(),
        }
    }
}

impl Credentials {
    /// The tokens of `config` (empty ones ignored).
    pub fn new(config: &ServerConfig) -> Self {
        let secret = |t: &String| (!t.is_empty()).then(|| t.as_bytes().into());
        Self {
            full: config.token.as_ref().and_then(secret),
            read_only: config.read_only_tokens.iter().filter_map(secret).collect(),
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
                    })
                })
                .collect(),
            anonymous: config.allow_anonymous,
        }
    }

    /// Whether any credential is asked for at all.
    pub fn required(&self) -> bool {
        self.full.is_some() || !self.scoped.is_empty()
    }

    /// What the request's credentials allow; `None` when they are refused: a token that is
    /// none of the server's (never read as anonymous, even where anonymous callers are let
    /// in), or no token where one is required.
    pub fn grant(&self, headers: &HeaderMap) -> Option<Grant> {
        if !self.required() {
            return Some(Grant::everywhere(Access::Full));
        }
        let Some(presented) = headers.get(header::AUTHORIZATION) else {
            return self.anonymous.then(|| Grant::everywhere(Access::Anonymous));
        };
        let presented = presented
            .to_str()
            .ok()
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, t)| t.trim().as_bytes())?;
        // Every token is compared, so the time taken does not say which one matched.
        let is_full = self
            .full
            .as_ref()
            .is_some_and(|full| constant_time_eq(presented, full));
        let is_read_only = self
            .read_only
            .iter()
            .fold(false, |any, t| constant_time_eq(presented, t) | any);
        let scoped = self.scoped.iter().fold(None, |found, s| {
            let matches = constant_time_eq(presented, &s.token);
            found.or(matches.then_some(s))
        });
        if is_full {
            Some(Grant::everywhere(Access::Full))
        } else if is_read_only {
            Some(Grant::everywhere(Access::ReadOnly))
        } else {
            scoped.map(|s| Grant {
                access: s.access,
                scope: s.scope.clone(),
            })
        }
    }

    /// What the request's credentials allow, wherever they may be used (see [`Self::grant`];
    /// the front door uses the whole grant).
    #[cfg(test)]
    fn access(&self, headers: &HeaderMap) -> Option<Access> {
        self.grant(headers).map(|g| g.access)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
                },
                crate::config::ScopedToken {
                    token: "auditor".into(),
                    agents: vec!["echo".into(), "forms".into()],
                    read_only: true,
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
    }

    #[test]
    fn without_a_token_everyone_has_full_access() {
        let open = Credentials::new(&ServerConfig::default());
        assert!(!open.required());
        assert_eq!(open.access(&headers(None)), Some(Access::Full));
        assert_eq!(open.access(&headers(Some("Bearer x"))), Some(Access::Full));
    }
}
