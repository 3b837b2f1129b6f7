//! Requests that one replica of the server forwards to another (the replica that holds the
//! conversation they belong to): who they are really from.
//!
//! The forwarding replica authenticated the caller already, by whatever credentials it
//! presented (a token, a provider's token, a client certificate, none) — credentials it
//! cannot pass on. So it sends the server's own token and names the caller in headers
//! (`core::forward`'s headers: its whole grant); only a request carrying the
//! server's token may speak for a caller this way, and the request is then served as that
//! caller's. On a server without credentials every request is the one local caller, and the
//! headers only mark the request as forwarded.

use super::credentials::{AgentScope, Caller, Credentials, Grant};
use crate::core::call::{Access, TaskReach};
use crate::core::forward::{
    FORWARDED_ACCESS, FORWARDED_AGENTS, FORWARDED_BY, FORWARDED_CALLER, FORWARDED_REACH,
};
use axum::http::HeaderMap;
use std::sync::Arc;

/// On a request that another replica forwarded here: that replica's id. The core runs such a
/// request here, whoever holds its conversation (it is never forwarded again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forwarded(pub Arc<str>);

/// Why a request that says it was forwarded is refused.
#[derive(Debug)]
pub(super) struct NotAReplica;

/// The grant of a request forwarded by a replica (`None` for a request that was not), or a
/// refusal when it says it was forwarded without the server's token.
pub(super) fn grant(
    credentials: &Credentials,
    headers: &HeaderMap,
    own: &Grant,
) -> Result<Option<(Grant, Forwarded)>, NotAReplica> {
    let Some(by) = headers.get(FORWARDED_BY).and_then(|v| v.to_str().ok()) else {
        return Ok(None);
    };
    let forwarded = Forwarded(by.into());
    if !credentials.required() {
        return Ok(Some((own.clone(), forwarded)));
    }
    if !credentials.is_server_token(headers) {
        return Err(NotAReplica);
    }
    let caller = headers
        .get(FORWARDED_CALLER)
        .and_then(|v| v.to_str().ok())
        .filter(|c| !c.is_empty())
        .map(|c| Caller(c.into()));
    let reach = match headers.get(FORWARDED_REACH).map(|v| v.as_bytes()) {
        Some(b"all") => TaskReach::All,
        _ => TaskReach::Own,
    };
    let access = headers
        .get(FORWARDED_ACCESS)
        .map_or(Access::Anonymous, |v| {
            Access::from_header_value(v.as_bytes())
        });
    let scope = match headers.get(FORWARDED_AGENTS).and_then(|v| v.to_str().ok()) {
        Some(agents) => {
            let ids: Vec<String> = agents.split(',').map(str::to_owned).collect();
            AgentScope::only(&ids)
        }
        None => AgentScope::all(),
    };
    let grant = Grant {
        access,
        scope,
        caller,
        reach,
    };
    Ok(Some((grant, forwarded)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ScopedToken, ServerConfig};
    use crate::core::forward::{Granted, forwarding_headers};
    use axum::http::{HeaderName, HeaderValue};

    fn credentials(token: Option<&str>) -> Credentials {
        Credentials::new(&ServerConfig {
            token: token.map(str::to_owned),
            scoped_tokens: vec![ScopedToken {
                token: "alice-token".into(),
                agents: vec!["forms".into()],
                read_only: false,
                caller: Some("alice".into()),
                admin: false,
            }],
            ..ServerConfig::default()
        })
    }

    fn forwarded_by(token: Option<&str>, granted: Granted<'_>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in forwarding_headers("replica-b", granted, token) {
            headers.insert(
                HeaderName::from_static(name),
                HeaderValue::from_str(&value).expect("a header value"),
            );
        }
        headers
    }

    fn alice() -> Granted<'static> {
        static AGENTS: std::sync::LazyLock<Vec<String>> =
            std::sync::LazyLock::new(|| vec!["forms".into()]);
        Granted {
            caller: Some("alice"),
            access: Access::ReadOnly,
            agents: Some(&AGENTS),
            reach: TaskReach::All,
        }
    }

    #[test]
    fn a_request_forwarded_with_the_servers_token_keeps_its_callers_whole_grant() {
        let credentials = credentials(Some("server-token"));
        let headers = forwarded_by(Some("server-token"), alice());
        let own = Grant::everywhere(Access::Full, None);
        let (granted, by) = grant(&credentials, &headers, &own)
            .ok()
            .flatten()
            .expect("a forwarded grant");
        assert_eq!(by, Forwarded("replica-b".into()));
        assert_eq!(granted.caller, Some(Caller("alice".into())));
        assert_eq!(granted.access, Access::ReadOnly);
        assert_eq!(granted.reach, TaskReach::All);
        assert!(granted.scope.allows("forms") && !granted.scope.allows("echo"));
        let anonymous = Granted {
            caller: None,
            access: Access::Anonymous,
            agents: None,
            reach: TaskReach::Own,
        };
        let headers = forwarded_by(Some("server-token"), anonymous);
        let (granted, _) = grant(&credentials, &headers, &own)
            .ok()
            .flatten()
            .expect("a forwarded grant");
        assert_eq!((granted.caller, granted.access), (None, Access::Anonymous));
        assert!(granted.scope.is_all());
    }

    #[test]
    fn only_the_servers_token_may_speak_for_a_caller() {
        let own = Grant::everywhere(Access::Full, None);
        // A caller's own token, and a server without a token of its own: refused.
        for (server, presented) in [
            (Some("server-token"), Some("alice-token")),
            (Some("server-token"), None),
            (None, Some("alice-token")),
        ] {
            let headers = forwarded_by(presented, alice());
            assert!(
                grant(&credentials(server), &headers, &own).is_err(),
                "{server:?} {presented:?}"
            );
        }
        // Not forwarded: nothing to decide.
        let plain = HeaderMap::new();
        assert!(matches!(
            grant(&credentials(Some("server-token")), &plain, &own),
            Ok(None)
        ));
        // A server without credentials: the request is marked, its grant stays the local one.
        let open = Credentials::new(&ServerConfig::default());
        let local = Grant::everywhere(Access::Full, Some(&Caller("local".into())));
        let (granted, _) = grant(&open, &forwarded_by(None, alice()), &local)
            .ok()
            .flatten()
            .expect("marked");
        assert_eq!(granted, local);
    }
}
