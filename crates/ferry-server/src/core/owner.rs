//! Whose tasks a call sees. Every task belongs to the caller that created it (the name the
//! front door gave it: a scoped token's `caller`, a token's fingerprint, `local` on a server
//! without tokens; `anonymous` for a caller without credentials). A call sees its own tasks
//! and those stored before owners were recorded; an admin, or every call to an agent that
//! shares its tasks, sees all of them. Another caller's task is answered as not found, from
//! the same lookup that would find it, so its existence is never told.

use crate::core::call::{CallContext, TaskReach};
use std::sync::Arc;

/// The owner recorded for tasks created without credentials (where anonymous callers are let
/// in). No configured caller may take this name.
pub(crate) const ANONYMOUS: &str = "anonymous";

/// The prefixes of the caller names ferry derives itself: a token's fingerprint, an OpenID
/// Connect subject, a client certificate's name.
pub(crate) const DERIVED_PREFIXES: [&str; 3] = ["token:", "oidc:", "cert:"];

/// Whether `name` is one a configured caller may not take: it could be confused with a
/// caller ferry names itself, and would own (and see) that caller's tasks.
pub(crate) fn is_reserved_caller(name: &str) -> bool {
    name == ANONYMOUS || DERIVED_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// The owner a task created by `call` is recorded with.
pub(crate) fn owner_of(call: &CallContext) -> Arc<str> {
    call.caller.clone().unwrap_or_else(|| ANONYMOUS.into())
}

/// Whose tasks `call` sees: `None` for every task (an admin, or an agent whose tasks are
/// shared), else the caller's own name (`ferry_store::visible_to`).
pub(crate) fn viewer(call: &CallContext, shared: bool) -> Option<&str> {
    if shared || call.reach == TaskReach::All {
        None
    } else {
        Some(call.caller.as_deref().unwrap_or(ANONYMOUS))
    }
}

/// Whether `call` may list tasks at all: a caller without credentials has no tasks to list
/// (it names no one, so a listing would show strangers' tasks to each other); it reaches
/// the tasks it created by their ids.
pub(crate) fn may_list(call: &CallContext, shared: bool) -> bool {
    call.caller.is_some() || viewer(call, shared).is_none()
}
