//! Liveness and readiness probes: no auth, no Host check, a status word as the body.

use crate::edge::response::json;
use crate::edge::service::ServerState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use std::sync::Arc;

/// `GET /healthz`: 200 `{"status":"ok"}` while the process serves.
pub(crate) async fn healthz() -> Response {
    json(StatusCode::OK, &br#"{"status":"ok"}"#[..])
}

/// `GET /readyz`: 200 `{"status":"ready"}` when not shutting down, every agent is ready and
/// the task store answers (within [`STORE_PING`]), else 503 `{"status":"not_ready"}` (with a
/// `reason` when it is the store: a load balancer then sends requests to the replicas that
/// reach it).
pub(crate) async fn readyz(State(server): State<Arc<ServerState>>) -> Response {
    let agents_ready = server.agents.iter().all(|a| a.handler.executor().ready());
    if *server.closing.borrow() || !agents_ready {
        return not_ready(&br#"{"status":"not_ready"}"#[..]);
    }
    let ping = tokio::time::timeout(STORE_PING, server.manager.store().ping()).await;
    match ping {
        Ok(Ok(())) => json(StatusCode::OK, &br#"{"status":"ready"}"#[..]),
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "not ready: the task store does not answer");
            not_ready(&br#"{"status":"not_ready","reason":"the task store does not answer"}"#[..])
        }
        Err(_) => {
            not_ready(&br#"{"status":"not_ready","reason":"the task store does not answer"}"#[..])
        }
    }
}

/// How long the readiness probe waits for the task store.
const STORE_PING: std::time::Duration = std::time::Duration::from_secs(1);

fn not_ready(body: &'static [u8]) -> Response {
    json(StatusCode::SERVICE_UNAVAILABLE, body)
}
