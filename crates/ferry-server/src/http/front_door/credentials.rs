//! Which bearer tokens the server knows and what each allows: the front door turns the
//! `Authorization` header of a request into an [`Access`] (or a refusal) here, and the core
//! applies it per operation ([`Access::authorize`]).

use super::token::constant_time_eq;
use crate::config::ServerConfig;
use crate::core::call::Access;
use axum::http::{HeaderMap, header};

/// The tokens of the configuration.
#[derive(Debug)]
pub struct Credentials {
    /// The token of full access; `None` on a server without one (everyone has full access).
    full: Option<Box<[u8]>>,
    /// Tokens that may only read tasks.
    read_only: Vec<Box<[u8]>>,
    /// Whether a request without credentials is let in (as [`Access::Anonymous`]).
    anonymous: bool,
}

impl Credentials {
    /// The tokens of `config` (empty ones ignored).
    pub fn new(config: &ServerConfig) -> Self {
        let secret = |t: &String| (!t.is_empty()).then(|| t.as_bytes().into());
        Self {
            full: config.token.as_ref().and_then(secret),
            read_only: config.read_only_tokens.iter().filter_map(secret).collect(),
            anonymous: config.allow_anonymous,
        }
    }

    /// Whether any credential is asked for at all.
    pub fn required(&self) -> bool {
        self.full.is_some()
    }

    /// What the request's credentials allow; `None` when they are refused: a token that is
    /// none of the server's (never read as anonymous, even where anonymous callers are let
    /// in), or no token where one is required.
    pub fn access(&self, headers: &HeaderMap) -> Option<Access> {
        let Some(full) = &self.full else {
            return Some(Access::Full);
        };
        let Some(presented) = headers.get(header::AUTHORIZATION) else {
            return self.anonymous.then_some(Access::Anonymous);
        };
        let presented = presented
            .to_str()
            .ok()
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, t)| t.trim().as_bytes())?;
        // Every token is compared, so the time taken does not say which one matched.
        let is_full = constant_time_eq(presented, full);
        let is_read_only = self
            .read_only
            .iter()
            .fold(false, |any, t| constant_time_eq(presented, t) | any);
        if is_full {
            Some(Access::Full)
        } else if is_read_only {
            Some(Access::ReadOnly)
        } else {
            None
        }
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
    fn without_a_token_everyone_has_full_access() {
        let open = Credentials::new(&ServerConfig::default());
        assert!(!open.required());
        assert_eq!(open.access(&headers(None)), Some(Access::Full));
        assert_eq!(open.access(&headers(Some("Bearer x"))), Some(Access::Full));
    }
}
