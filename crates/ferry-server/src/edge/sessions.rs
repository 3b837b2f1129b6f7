//! Routes whose requests belong to a session that lives in one replica's process (the forms
//! agent's MCP sessions: a browser each), named by a header (`Mcp-Session-Id`): with
//! replicas, each such request is served by the replica holding its session.
//!
//! The same registry as the A2A conversations (`core::forward`): a response that opens a
//! session (it carries the header) claims the session for this replica; a request naming a
//! session another live replica holds is proxied there as it is, through that replica's
//! front door (the server's token, the caller named in headers), and the answer streamed
//! back; a session whose replica is gone is answered 404, which tells a client of the
//! Streamable HTTP transport to open a new session, and the body says why.

use crate::core::call::TaskReach;
use crate::core::forward::{Granted, forwarding_headers};
use crate::core::manager::TaskManager;
use crate::edge::call::access_of;
use crate::edge::front_door::{AgentScope, Caller, Forwarded};
use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use ferry_store::replicas::Claim;
use std::sync::Arc;
use std::time::Duration;

/// Headers that describe one hop, never passed on (RFC 9110 §7.6.1), and those the proxy
/// sets itself.
const NOT_PASSED_ON: [HeaderName; 7] = [
    header::CONNECTION,
    header::HOST,
    header::TRANSFER_ENCODING,
    header::CONTENT_LENGTH,
    header::AUTHORIZATION,
    header::TE,
    header::UPGRADE,
];

/// How long connecting to another replica may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Sessions held by replicas, for routes whose sessions a header names.
#[derive(Debug)]
pub(crate) struct HeldSessions {
    manager: Arc<TaskManager>,
    /// The header naming a request's session.
    header: HeaderName,
    http: reqwest::Client,
    /// The server's token, which every replica's front door accepts.
    token: Option<String>,
    /// The largest request body passed on.
    max_body_bytes: usize,
}

impl HeldSessions {
    /// Sessions named by `header`, over `manager`'s store.
    pub(crate) fn new(
        manager: Arc<TaskManager>,
        header: HeaderName,
        token: Option<String>,
        max_body_bytes: usize,
    ) -> Self {
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .unwrap_or_default();
        Self {
            manager,
            header,
            http,
            token,
            max_body_bytes,
        }
    }

    /// `routes`, each request served by the replica holding its session.
    pub(crate) fn around(self: Arc<Self>, routes: Router) -> Router {
        routes.layer(axum::middleware::from_fn(move |request, next| {
            let held = self.clone();
            async move { held.route(request, next).await }
        }))
    }

    async fn route(&self, request: Request, next: Next) -> Response {
        let Some(replicas) = self.manager.store().replicas() else {
            return next.run(request).await;
        };
        if request.extensions().get::<Forwarded>().is_some() {
            return next.run(request).await;
        }
        let path = request.uri().path().to_owned();
        let Some(session) = request
            .headers()
            .get(&self.header)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
        else {
            let response = next.run(request).await;
            if let Some(opened) = response
                .headers()
                .get(&self.header)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
            {
                self.claim_opened(&path, &opened).await;
            }
            return response;
        };
        let now = self.manager.now_ms();
        let live_since = now.saturating_sub(self.manager.lease_ms());
        match replicas
            .claim(&session_key(&path, &session), now, live_since)
            .await
        {
            Ok(Claim::Here { moved_from: None }) => next.run(request).await,
            Ok(Claim::Here {
                moved_from: Some(replica),
            }) => {
                self.manager.replica_counters.moved();
                gone(&replica)
            }
            Ok(Claim::Elsewhere { replica, url }) => {
                self.manager.replica_counters.forwarded();
                self.proxy(request, &replica, &url).await
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not read which replica holds a session");
                unavailable(
                    "the store that says which server process holds this session did not answer; send the request again",
                )
            }
        }
    }

    /// Claims the session a response opened for this replica.
    async fn claim_opened(&self, path: &str, session: &str) {
        let Some(replicas) = self.manager.store().replicas() else {
            return;
        };
        let now = self.manager.now_ms();
        if let Err(e) = replicas.claim(&session_key(path, session), now, now).await {
            tracing::warn!(error = %e, "could not record a new session in the store; other replicas will not forward to it");
        }
    }

    /// Passes `request` on to the replica at `url` and streams its answer back.
    async fn proxy(&self, request: Request, replica: &str, url: &str) -> Response {
        let (parts, body) = request.into_parts();
        let body = match axum::body::to_bytes(body, self.max_body_bytes).await {
            Ok(body) => body,
            Err(_) => {
                return (
                    StatusCode::PAYLOAD_TOO_LARGE,
                    "the request body is over the server's limit",
                )
                    .into_response();
            }
        };
        let target = format!(
            "{}{}",
            url.trim_end_matches('/'),
            parts.uri.path_and_query().map_or("/", |p| p.as_str())
        );
        let by = self.manager.replica_id().unwrap_or_default();
        let granted = Granted {
            caller: parts.extensions.get::<Caller>().map(Caller::as_str),
            access: access_of(&parts.extensions),
            agents: parts
                .extensions
                .get::<AgentScope>()
                .and_then(AgentScope::agents),
            reach: parts
                .extensions
                .get::<TaskReach>()
                .copied()
                .unwrap_or_default(),
        };
        let mut outgoing = self.http.request(parts.method.clone(), &target).body(body);
        for (name, value) in &parts.headers {
            if !NOT_PASSED_ON.contains(name) {
                outgoing = outgoing.header(name, value);
            }
        }
        for (name, value) in forwarding_headers(by, granted, self.token.as_deref()) {
            outgoing = outgoing.header(name, value);
        }
        let answer = match outgoing.send().await {
            Ok(answer) => answer,
            Err(e) => {
                let lease_secs = self.manager.lease_ms().div_ceil(1000);
                tracing::warn!(%replica, %url, error = %e, "the replica holding a session did not answer");
                return unavailable(&format!(
                    "the server process holding this session (replica {replica}) did not answer; if it is gone, the session ends within {lease_secs} s and a new one can be opened"
                ));
            }
        };
        let mut response = Response::builder().status(answer.status());
        for (name, value) in answer.headers() {
            if !NOT_PASSED_ON.contains(name) {
                response = response.header(name, value);
            }
        }
        response
            .body(Body::from_stream(answer.bytes_stream()))
            .unwrap_or_else(|_| StatusCode::BAD_GATEWAY.into_response())
    }
}

/// The store's key of a session: its route's path and its id.
fn session_key(path: &str, session: &str) -> String {
    format!("session\u{1f}{path}\u{1f}{session}")
}

/// The answer for a session whose replica is gone: 404, which tells the client to open a
/// new session, and a JSON-RPC error that says why.
fn gone(replica: &str) -> Response {
    json_rpc_error(
        StatusCode::NOT_FOUND,
        &format!(
            "this session was held by another server process (replica {replica}) that is gone, with its browser and what it had filled; open a new session (initialize) to start afresh"
        ),
    )
}

fn unavailable(message: &str) -> Response {
    let mut response = json_rpc_error(StatusCode::SERVICE_UNAVAILABLE, message);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// A JSON-RPC error without a request id (the transport's own answer, as MCP servers give).
fn json_rpc_error(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32001, "message": message},
    });
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}
