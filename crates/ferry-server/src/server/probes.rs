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

/// `GET /readyz`: 200 `{"status":"ready"}` when not shutting down and every agent is ready,
/// else 503 `{"status":"not_ready"}`.
pub(crate) async fn readyz(State(server): State<Arc<ServerState>>) -> Response {
    let agents_ready = server.agents.iter().all(|a| a.handler.executor().ready());
    if !*server.closing.borrow() && agents_ready {
        json(StatusCode::OK, &br#"{"status":"ready"}"#[..])
    } else {
        json(
            StatusCode::SERVICE_UNAVAILABLE,
            &br#"{"status":"not_ready"}"#[..],
        )
    }
}
