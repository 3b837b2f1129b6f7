//! Who is calling, and with which service parameters: what a binding tells the core besides
//! the request itself.

use ferry_proto::{A2aError, ErrorKind, Operation};

/// Filled by the binding from the transport (path, headers, connection).
#[derive(Debug, Clone, Default)]
pub(crate) struct CallContext {
    /// Tenant from the REST path prefix or the request's `tenant` field.
    pub tenant: String,
    /// Extensions the client activated and the agent declared.
    pub extensions: Vec<String>,
    /// The authenticated caller, if any (see `ferry_agent::RequestContext::caller`).
    pub caller: Option<std::sync::Arc<str>>,
    /// What the caller's credentials allow (the front door's verdict).
    pub access: Access,
    /// Whose tasks the caller reaches besides its own (the front door's verdict).
    pub reach: TaskReach,
    /// The client's address (from the connection), if known.
    pub client: Option<std::net::IpAddr>,
    /// The last event a reconnecting subscriber saw (SSE `Last-Event-ID`).
    pub resume_after: Option<u64>,
    /// The call spoke A2A v0.3 (its push configs get v0.3-shaped deliveries).
    pub v03: bool,
    /// Another replica forwarded the call here (to the replica that holds its
    /// conversation): it runs here, and is never forwarded again.
    pub forwarded: bool,
}

/// What a caller may do, decided by the front door from the credentials it presented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Access {
    /// Every operation: the server's token, or a server that has none.
    #[default]
    Full,
    /// A read-only token: the operations that only read tasks
    /// ([`Operation::reads_tasks_only`]).
    ReadOnly,
    /// No credentials, on a server that lets anonymous callers in: every operation except
    /// `GetExtendedAgentCard`, which is for holders of the token.
    Anonymous,
}

impl Access {
    /// Whether this caller may run `op`: `Err` is the answer when not — 401 (with a
    /// challenge) for an anonymous caller, 403 for a token that is not allowed it.
    pub fn authorize(self, op: Operation) -> Result<(), A2aError> {
        match self {
            Access::Full => Ok(()),
            Access::ReadOnly if op.reads_tasks_only() => Ok(()),
            Access::ReadOnly => Err(A2aError::new(
                ErrorKind::PermissionDenied,
                format!(
                    "this token may only read tasks; {} needs the full token",
                    op.name()
                ),
            )),
            Access::Anonymous if op == Operation::GetExtendedAgentCard => Err(A2aError::new(
                ErrorKind::Unauthenticated,
                "the extended agent card is served to callers with the token (Authorization: Bearer …)",
            )),
            Access::Anonymous => Ok(()),
        }
    }
}

/// Which tasks a caller reaches besides its own (the front door's verdict).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum TaskReach {
    /// Its own tasks (and the unowned).
    #[default]
    Own,
    /// Every caller's tasks: an admin.
    All,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_access_allows_what_it_says() {
        for op in Operation::ALL {
            assert!(Access::Full.authorize(op).is_ok());
            let read = Access::ReadOnly.authorize(op);
            assert_eq!(read.is_ok(), op.reads_tasks_only(), "{op:?}");
            if let Err(e) = read {
                assert_eq!(e.kind, ErrorKind::PermissionDenied);
            }
            let anonymous = Access::Anonymous.authorize(op);
            assert_eq!(
                anonymous.is_ok(),
                op != Operation::GetExtendedAgentCard,
                "{op:?}"
            );
        }
        let refused = Access::Anonymous.authorize(Operation::GetExtendedAgentCard);
        assert!(matches!(refused, Err(e) if e.kind == ErrorKind::Unauthenticated));
        assert!(Access::ReadOnly.authorize(Operation::SendMessage).is_err());
        assert!(Access::ReadOnly.authorize(Operation::GetTask).is_ok());
    }
}
