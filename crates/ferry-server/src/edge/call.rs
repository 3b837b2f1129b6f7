//! The core's view of one call, from what the transport and the front door put on the
//! request: its tenant and activated extensions, the caller and its access, the client's
//! address and the stream resume point.

use crate::core::call::TaskReach;
use crate::core::call::{Access, CallContext};
use crate::edge::front_door::{Caller, Forwarded};
use crate::edge::params::last_event_id;
use crate::edge::request_id::ClientAddr;
use axum::http::request::Parts;

/// The core's view of one call over HTTP: its tenant and activated extensions, the client's
/// address and the stream resume point (both bindings build it the same way).
pub(crate) fn call_context(tenant: String, extensions: Vec<String>, parts: &Parts) -> CallContext {
    CallContext {
        tenant,
        extensions,
        caller: caller_of(&parts.extensions),
        access: access_of(&parts.extensions),
        reach: parts
            .extensions
            .get::<TaskReach>()
            .copied()
            .unwrap_or_default(),
        client: parts.extensions.get::<ClientAddr>().map(|c| c.0.ip()),
        resume_after: last_event_id(&parts.headers),
        v03: false,
        forwarded: parts.extensions.get::<Forwarded>().is_some(),
    }
}

/// Who the front door found the request comes from, if anyone.
pub(crate) fn caller_of(extensions: &axum::http::Extensions) -> Option<std::sync::Arc<str>> {
    extensions.get::<Caller>().map(|c| c.0.clone())
}

/// The front door's verdict on the caller's credentials; least privilege for a request it did
/// not see.
pub(crate) fn access_of(extensions: &axum::http::Extensions) -> Access {
    extensions
        .get::<Access>()
        .copied()
        .unwrap_or(Access::Anonymous)
}
