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
        .map_or(Access::Anonymous, |v| Access::from_header_value(v.as_bytes()));
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
