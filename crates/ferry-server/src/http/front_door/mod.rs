//! The front door: what every request passes before it reaches the A2A bindings.
//!
//! In order: a request id (echoed or generated), one line at most of each header that must
//! be single (`Authorization`, `Host`, …), the `Host` check (DNS rebinding; absolute-form
//! targets included), the `Origin` check (web pages on this machine), the bearer token
//! (constant-time compare; the agent card stays public), the per-client rate limit, the
//! in-flight limit, and the request timeout. Probes (`/healthz`, `/readyz`) are routed around
//! it. The body limit is the bindings' (they refuse a declared length over it unread).

mod host;
mod rate;
mod token;

pub use host::HostPolicy;
pub use rate::RateLimiter;
pub use token::constant_time_eq;

use crate::http::app::AppState;
use crate::http::card::WELL_KNOWN_CARD_PATH;
use crate::http::metrics::{CallLabel, Method};
use crate::http::request_id::{self, ClientAddr, RequestId};
use crate::http::response::{RefusalReason, jsonrpc_error, plain_error};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use ferry_proto::{A2aError, ErrorKind};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tracing::Instrument;

/// Seconds a client is told to wait when the server is at a capacity limit.
const CAPACITY_RETRY_SECS: u64 = 1;

/// The front door's settings and shared counters.
#[derive(Debug)]
pub struct FrontDoor {
    token: Option<Box<[u8]>>,
    hosts: HostPolicy,
    rate: Option<RateLimiter>,
    in_flight: Arc<Semaphore>,
    /// Permits for open SSE streams (taken by the bindings, held by the stream body).
    pub streams: Arc<Semaphore>,
    request_timeout: Duration,
}

impl FrontDoor {
    /// The front door for `config`; `public_host` is the host of the advertised URL.
    pub fn new(config: &crate::ServerConfig, public_host: Option<String>) -> Self {
        let burst = if config.rate_limit_burst == 0 {
            config.rate_limit_per_sec.saturating_mul(2)
        } else {
            config.rate_limit_burst
        };
        Self {
            token: config
                .token
                .as_deref()
                .filter(|t| !t.is_empty())
                .map(|t| t.as_bytes().into()),
            hosts: HostPolicy::new(&config.allowed_hosts, public_host),
            rate: (config.rate_limit_per_sec > 0)
                .then(|| RateLimiter::new(config.rate_limit_per_sec, burst)),
            in_flight: Arc::new(Semaphore::new(config.max_in_flight.max(1))),
            streams: Arc::new(Semaphore::new(config.max_streams.max(1))),
            request_timeout: Duration::from_secs(config.request_timeout_secs.max(1)),
        }
    }

    /// Whether a token is configured.
    pub fn requires_token(&self) -> bool {
        self.token.is_some()
    }

    /// Checks the bearer token of a request.
    fn authenticated(&self, request: &Request) -> bool {
        let Some(expected) = &self.token else {
            return true;
        };
        let presented = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, t)| t.trim().as_bytes());
        presented.is_some_and(|p| constant_time_eq(p, expected))
    }
}

/// Headers a request may carry once. With two `Authorization` lines, two readers of one
/// request could check different credentials; with two `Host` lines (RFC 9112 §3.2 requires a
/// 400), different authorities; the same for the body's type, the protocol version and the
/// resume point of a stream.
static SINGLETON_HEADERS: [header::HeaderName; 5] = [
    header::HOST,
    header::AUTHORIZATION,
    header::CONTENT_TYPE,
    header::HeaderName::from_static(crate::http::params::VERSION_HEADER),
    header::HeaderName::from_static("last-event-id"),
];

/// The first of [`SINGLETON_HEADERS`] that `headers` holds more than once.
fn repeated_singleton(headers: &axum::http::HeaderMap) -> Option<&'static str> {
    SINGLETON_HEADERS
        .iter()
        .find(|name| headers.get_all(*name).iter().nth(1).is_some())
        .map(|name| name.as_str())
}

/// A refusal at the front door.
struct Refusal {
    status: StatusCode,
    reason: &'static str,
    message: String,
    retry_after: Option<u64>,
}

impl Refusal {
    fn new(status: StatusCode, reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            reason,
            message: message.into(),
            retry_after: None,
        }
    }

    fn retry_after(mut self, secs: u64) -> Self {
        self.retry_after = Some(secs);
        self
    }

    /// Renders the refusal: a JSON-RPC error on the JSON-RPC endpoint, a plain JSON error
    /// elsewhere; 429 and 503 carry `Retry-After` and `retryAfterSeconds`.
    fn respond(self, rpc: bool, rid: &RequestId) -> Response {
        let kind = match self.status {
            StatusCode::BAD_REQUEST => ErrorKind::InvalidRequest,
            StatusCode::TOO_MANY_REQUESTS => ErrorKind::ResourceExhausted,
            StatusCode::SERVICE_UNAVAILABLE => ErrorKind::Unavailable,
            _ => ErrorKind::Internal,
        };
        let mut error = A2aError::new(kind, self.message).with_reason(self.reason);
        if let Some(secs) = self.retry_after {
            error = error.with_meta("retryAfterSeconds", secs.to_string());
        }
        let mut response =
            if rpc && matches!(kind, ErrorKind::ResourceExhausted | ErrorKind::Unavailable) {
                jsonrpc_error(&serde_json::Value::Null, &error, Some(rid))
            } else {
                plain_error(self.status, &error, Some(rid))
            };
        *response.status_mut() = self.status;
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"ferry\""),
            );
        }
        response
    }
}

/// The outermost middleware: gives every request its id (echoed or generated) and every
/// response, probes and 404s included, its `X-Request-Id`.
pub async fn tag(mut request: Request, next: Next) -> Response {
    let rid = RequestId::from_headers(request.headers());
    request.extensions_mut().insert(rid.clone());
    let mut response = next.run(request).await;
    response
        .headers_mut()
        .insert(request_id::HEADER, rid.header_value());
    response
}

/// The middleware: admits or refuses each request, tags it with its id (the one [`tag`] gave
/// it, if any), and bounds its time.
pub async fn guard(State(app): State<Arc<AppState>>, mut request: Request, next: Next) -> Response {
    let rid = match request.extensions().get::<RequestId>() {
        Some(rid) => rid.clone(),
        None => RequestId::from_headers(request.headers()),
    };
    request.extensions_mut().insert(rid.clone());
    let span = tracing::info_span!("request", id = %rid, method = %request.method(), path = %request.uri().path());
    let started = std::time::Instant::now();
    let mut response = admit_and_run(&app, request, next, &rid)
        .instrument(span)
        .await;
    let label = response
        .extensions()
        .get::<CallLabel>()
        .copied()
        .unwrap_or(CallLabel {
            method: Method::Other,
            ok: response.status().is_success(),
        });
    app.metrics.record(label, started.elapsed());
    if let Some(RefusalReason(reason)) = response.extensions().get::<RefusalReason>() {
        app.metrics.refused(reason);
    }
    response
        .headers_mut()
        .insert(request_id::HEADER, rid.header_value());
    response
}

async fn admit_and_run(app: &AppState, request: Request, next: Next, rid: &RequestId) -> Response {
    let door = &app.front_door;
    let path = request.uri().path();
    let rpc = path.trim_end_matches('/') == app.config.jsonrpc_path;
    // The card and the keys that sign it are public: a client needs them before it can call.
    let is_card = path == WELL_KNOWN_CARD_PATH
        || path == crate::http::signing::JWKS_PATH
        || path
            .strip_suffix(WELL_KNOWN_CARD_PATH)
            .is_some_and(|base| base == app.config.jsonrpc_path || base == app.config.rest_path);
    if let Some(name) = repeated_singleton(request.headers()) {
        let r = Refusal::new(
            StatusCode::BAD_REQUEST,
            "DUPLICATE_HEADER",
            format!("the request has several {name} headers; send one"),
        );
        return r.respond(false, rid);
    }
    if !door.hosts.allows(&request) {
        let r = Refusal::new(
            StatusCode::FORBIDDEN,
            "HOST_NOT_ALLOWED",
            "this Host is not served here (DNS rebinding defence); see --allowed-host",
        );
        return r.respond(false, rid);
    }
    if request.headers().contains_key(header::ORIGIN) {
        let r = Refusal::new(
            StatusCode::FORBIDDEN,
            "ORIGIN_NOT_ALLOWED",
            "requests from web pages (with an Origin header) are refused",
        );
        return r.respond(false, rid);
    }
    if !is_card && !door.authenticated(&request) {
        let r = Refusal::new(
            StatusCode::UNAUTHORIZED,
            "UNAUTHENTICATED",
            "a valid bearer token is required (Authorization: Bearer …)",
        );
        return r.respond(false, rid);
    }
    if let (Some(rate), Some(addr)) = (&door.rate, request.extensions().get::<ClientAddr>())
        && let Err(wait) = rate.check(addr.0.ip())
    {
        let r = Refusal::new(
            StatusCode::TOO_MANY_REQUESTS,
            "RATE_LIMITED",
            "too many requests from this client",
        );
        return r.retry_after(wait).respond(rpc, rid);
    }
    let Ok(_permit) = door.in_flight.clone().try_acquire_owned() else {
        let r = Refusal::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "TOO_MANY_REQUESTS_IN_FLIGHT",
            "the server is at its limit of requests in flight",
        );
        return r.retry_after(CAPACITY_RETRY_SECS).respond(rpc, rid);
    };
    match tokio::time::timeout(door.request_timeout, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            let r = Refusal::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "REQUEST_TIMEOUT",
                format!(
                    "the request took longer than {} s",
                    door.request_timeout.as_secs()
                ),
            );
            r.retry_after(CAPACITY_RETRY_SECS).respond(rpc, rid)
        }
    }
}

/// A 503 for a stream refused at the stream limit.
pub fn too_many_streams() -> A2aError {
    A2aError::new(
        ErrorKind::Unavailable,
        "the server is at its limit of open streams",
    )
    .with_reason("TOO_MANY_STREAMS")
    .with_meta("retryAfterSeconds", CAPACITY_RETRY_SECS.to_string())
}
