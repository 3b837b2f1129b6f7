//! The gate in front of one agent of a server of several: after the front door has admitted
//! a request, the agent's gate checks that the caller's token may reach this agent (403
//! otherwise) and holds the agent's own in-flight and stream limits.

use super::{AgentScope, CAPACITY_RETRY_SECS, Dialect, PublicPath, Refusal};
use crate::config::AgentLimits;
use crate::edge::request_id::RequestId;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use ferry_proto::{A2aError, ErrorKind};
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// One agent's id and limits.
#[derive(Debug)]
pub(crate) struct AgentGate {
    id: String,
    in_flight: Option<Arc<Semaphore>>,
    streams: Option<Arc<Semaphore>>,
}

impl AgentGate {
    /// The gate of agent `id` with `limits`.
    pub(crate) fn new(id: &str, limits: AgentLimits) -> Self {
        let semaphore = |n: usize| Arc::new(Semaphore::new(n.max(1)));
        Self {
            id: id.to_owned(),
            in_flight: limits.max_in_flight.map(semaphore),
            streams: limits.max_streams.map(semaphore),
        }
    }

    /// The agent's id.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// A slot for one more open stream of this agent (`None` when it has no limit of its
    /// own), or 503 `TOO_MANY_STREAMS`.
    pub(crate) fn stream_permit(&self) -> Result<Option<OwnedSemaphorePermit>, A2aError> {
        match &self.streams {
            None => Ok(None),
            Some(streams) => streams.clone().try_acquire_owned().map(Some).map_err(|_| {
                A2aError::new(
                    ErrorKind::Unavailable,
                    format!("agent '{}' is at its limit of open streams", self.id),
                )
                .with_reason("TOO_MANY_STREAMS")
                .with_meta("retryAfterSeconds", CAPACITY_RETRY_SECS.to_string())
            }),
        }
    }
}

/// The middleware on an agent's routes. Public paths (the agent's card) pass; everything else
/// needs a scope that names the agent, then a slot of the agent's in-flight limit.
pub(crate) async fn check(
    State(gate): State<Arc<AgentGate>>,
    request: Request,
    next: Next,
) -> Response {
    if request.extensions().get::<PublicPath>().is_some() {
        return next.run(request).await;
    }
    let dialect = request
        .extensions()
        .get::<Dialect>()
        .copied()
        .unwrap_or(Dialect::Rest);
    let rid = request
        .extensions()
        .get::<RequestId>()
        .cloned()
        .unwrap_or_else(|| RequestId::from_headers(request.headers()));
    let allowed = request
        .extensions()
        .get::<AgentScope>()
        .is_some_and(|scope| scope.allows(&gate.id));
    if !allowed {
        let r = Refusal::new(
            ErrorKind::PermissionDenied,
            "AGENT_NOT_ALLOWED",
            format!("this token may not call agent '{}'", gate.id),
        );
        return r.respond(dialect, &rid);
    }
    let _permit = match &gate.in_flight {
        None => None,
        Some(in_flight) => match in_flight.clone().try_acquire_owned() {
            Ok(permit) => Some(permit),
            Err(_) => {
                let r = Refusal::new(
                    ErrorKind::Unavailable,
                    "TOO_MANY_REQUESTS_IN_FLIGHT",
                    format!("agent '{}' is at its limit of requests in flight", gate.id),
                );
                return r.retry_after(CAPACITY_RETRY_SECS).respond(dialect, &rid);
            }
        },
    };
    next.run(request).await
}
