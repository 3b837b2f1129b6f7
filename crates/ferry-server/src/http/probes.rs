//! Liveness and readiness probes: no auth, no Host check, a status word as the body.

use crate::http::response::json;
use crate::http::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use std::sync::Arc;

/// `GET /healthz`: 200 `{"status":"ok"}` while the process serves.
pub(crate) async fn healthz() -> Response {
    json(StatusCode::OK, &br#"{"status":"ok"}"#[..])
}

/// `GET /readyz`: 200 `{"status":"ready"}` when not shutting down and the agent is ready,
/// else 503 `{"status":"not_ready"}`.
pub(crate) async fn readyz(State(app): State<Arc<AppState>>) -> Response {
    if !*app.closing.borrow() && app.handler.executor().ready() {
        json(StatusCode::OK, &br#"{"status":"ready"}"#[..])
    } else {
        json(
            StatusCode::SERVICE_UNAVAILABLE,
            &br#"{"status":"not_ready"}"#[..],
        )
    }
}
