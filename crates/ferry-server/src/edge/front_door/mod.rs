//! The front door: what every request passes before it reaches the A2A bindings or an
//! extension's routes.
//!
//! In order: a request id (echoed or generated), one line at most of each header that must
//! be single (`Authorization`, `Host`, …), the `Host` check (DNS rebinding; absolute-form
//! targets included), the `Origin` check (web pages on this machine), the bearer token
//! (constant-time compare; the agent card stays public; the [`Access`] it grants goes on the
//! request for the core to apply per operation), the per-client rate limit, the
//! in-flight limit, and the request timeout. Probes (`/healthz`, `/readyz`) are routed around
//! it. The body limit is the bindings' (they refuse a declared length over it unread). On a
//! server of several agents, each agent's [`AgentGate`] then applies the token's agent scope
//! and the agent's own limits.

mod agent_gate;
mod credentials;
mod forwarded;
mod host;
mod oidc;
mod origin;
mod rate;

pub(crate) use agent_gate::{AgentGate, check as agent_gate};
use credentials::Verdict;
pub use credentials::{AgentScope, Caller};
pub(crate) use credentials::{ClientCertificate, Credentials, Grant};
pub use forwarded::Forwarded;
pub(crate) use host::HostPolicy;
use oidc::{OidcGate, TokenRefused};
pub(crate) use origin::is_origin;
use origin::{OriginPolicy, OriginVerdict};
pub(crate) use rate::RateLimiter;

use crate::config::ServerConfig;
use crate::core::call::Access;
use crate::edge::metrics::{CallLabel, Method, Metrics};
use crate::edge::request_id::{self, ClientAddr, RequestId};
use crate::edge::response::{
    BEARER_ERROR, BEARER_ERROR_DESCRIPTION, RefusalReason, jsonrpc_error, rest_error,
};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use ferry_proto::{A2aError, ErrorKind, ErrorTable};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tracing::Instrument;

/// Seconds a client is told to wait when the server is at a capacity limit.
const CAPACITY_RETRY_SECS: u64 = 1;
/// Seconds a client is told to wait when the identity provider could not be asked.
const PROVIDER_RETRY_SECS: u64 = 5;

/// The front door's settings and shared counters: everything the middleware needs, and
/// nothing of the bindings behind it.
#[derive(Debug)]
pub(crate) struct FrontDoor {
    credentials: Credentials,
    /// The provider whose access tokens are accepted besides the static tokens.
    oidc: Option<OidcGate>,
    hosts: HostPolicy,
    origins: OriginPolicy,
    rate: Option<RateLimiter>,
    in_flight: Arc<Semaphore>,
    /// Permits for open SSE streams (taken by the bindings, held by the stream body).
    pub(crate) streams: Arc<Semaphore>,
    request_timeout: Duration,
    /// The JSON-RPC endpoint (capacity refusals there are JSON-RPC errors).
    rpc_path: String,
    /// Paths served without the token: the agent card and the keys that sign it (matched
    /// against the path under `/agents/{id}` too).
    public_paths: Vec<String>,
    /// Prefixes of paths that carry their own authority (capability links): served without
    /// credentials, and logged without what follows the prefix.
    capability_prefixes: Vec<String>,
    metrics: Arc<Metrics>,
    /// How a refusal of a gRPC call is written, when the server serves gRPC.
    grpc_refusal: Option<RefusalWriter>,
}

/// Writes a refusal in the form of a binding the edge does not know (gRPC's status).
pub(crate) type RefusalWriter = fn(&A2aError) -> Response;

/// True for a gRPC call: its content type is `application/grpc…` (`+proto` included).
fn is_grpc(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/grpc"))
}

impl FrontDoor {
    /// The front door for `config`; `own_hosts` are the server's own names (the host of the
    /// advertised URL, …), `public_paths` what is served without the token.
    pub(crate) fn new(
        config: &ServerConfig,
        own_hosts: Vec<String>,
        public_paths: Vec<String>,
        metrics: Arc<Metrics>,
        clock: Arc<dyn crate::clock::Clock>,
    ) -> Result<Self, crate::ServerError> {
        let burst = if config.rate_limit_burst == 0 {
            config.rate_limit_per_sec.saturating_mul(2)
        } else {
            config.rate_limit_burst
        };
        let oidc = config.auth.oidc.as_ref().map(OidcGate::new).transpose()?;
        Ok(Self {
            credentials: Credentials::new(config),
            oidc,
            hosts: HostPolicy::new(&config.allowed_hosts, own_hosts),
            origins: OriginPolicy::new(&config.allowed_origins, config.public_url.as_deref()),
            rate: (config.rate_limit_per_sec > 0)
                .then(|| RateLimiter::new(config.rate_limit_per_sec, burst, clock)),
            in_flight: Arc::new(Semaphore::new(config.max_in_flight.max(1))),
            streams: Arc::new(Semaphore::new(config.max_streams.max(1))),
            request_timeout: Duration::from_secs(config.request_timeout_secs.max(1)),
            rpc_path: config.jsonrpc_path.clone(),
            public_paths,
            capability_prefixes: Vec::new(),
            metrics,
            grpc_refusal: None,
        })
    }

    /// Serves the paths under `prefixes` without credentials and logs them without what
    /// follows the prefix (see `A2aServerBuilder::capability_routes`).
    pub(crate) fn with_capability_prefixes(mut self, prefixes: Vec<String>) -> Self {
        self.capability_prefixes = prefixes;
        self
    }

    /// The prefix of `path` when it is a capability link's.
    fn capability_prefix(&self, path: &str) -> Option<&str> {
        self.capability_prefixes
            .iter()
            .find(|p| {
                path.strip_prefix(p.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
            })
            .map(String::as_str)
    }

    /// `path` as logs may show it: a capability link's secret left out.
    fn loggable_path<'p>(&'p self, path: &'p str) -> std::borrow::Cow<'p, str> {
        match self.capability_prefix(path) {
            Some(prefix) => format!("{prefix}/…").into(),
            None => path.into(),
        }
    }

    /// Refuses gRPC calls with statuses written by `write` (a server without gRPC answers
    /// them as any other request).
    #[cfg_attr(not(feature = "grpc"), allow(dead_code))]
    pub(crate) fn with_grpc_refusal(mut self, write: RefusalWriter) -> Self {
        self.grpc_refusal = Some(write);
        self
    }

    /// Open SSE streams now.
    pub(crate) fn open_streams(&self, max_streams: usize) -> usize {
        max_streams
            .max(1)
            .saturating_sub(self.streams.available_permits())
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
    crate::edge::params::VERSION,
    crate::edge::params::LAST_EVENT_ID,
];

/// The first of [`SINGLETON_HEADERS`] that `headers` holds more than once.
fn repeated_singleton(headers: &axum::http::HeaderMap) -> Option<&'static str> {
    // As many values as names: no header at all is repeated (the usual case, no lookups).
    if headers.len() == headers.keys_len() {
        return None;
    }
    SINGLETON_HEADERS
        .iter()
        .find(|name| headers.get_all(*name).iter().nth(1).is_some())
        .map(|name| name.as_str())
}

/// Which binding's form a refusal takes (also left on the request for the agent's gate).
#[derive(Debug, Clone, Copy)]
enum Dialect {
    /// A gRPC call (`application/grpc…`) on a server that serves gRPC: a status, written by
    /// the binding's writer.
    Grpc(RefusalWriter),
    /// The JSON-RPC endpoint.
    JsonRpc,
    /// Anything else: an AIP-193 body.
    Rest,
}

/// Marks a request for a public path (a card, the key set): the agent's gate lets it pass.
#[derive(Debug, Clone, Copy)]
struct PublicPath;

/// The part of `path` an agent's router sees: `/agents/{id}/jsonrpc` → `/jsonrpc`; other
/// paths as they are.
fn agent_relative(path: &str) -> &str {
    match path.strip_prefix("/agents/") {
        Some(rest) => rest.find('/').map_or("", |slash| &rest[slash..]),
        None => path,
    }
}

/// A refusal at the front door: the kind (which owns the status), the reason and a message.
struct Refusal(A2aError);

impl Refusal {
    fn new(kind: ErrorKind, reason: &'static str, message: impl Into<String>) -> Self {
        Self(A2aError::new(kind, message).with_reason(reason))
    }

    fn retry_after(self, secs: u64) -> Self {
        Self(self.0.with_meta("retryAfterSeconds", secs.to_string()))
    }

    /// 401 for a presented token that is not valid: RFC 6750's `invalid_token`, and why (the
    /// reason stays `UNAUTHENTICATED`, as for a missing token).
    fn invalid_token(why: String) -> Self {
        let error = A2aError::new(ErrorKind::Unauthenticated, why.clone())
            .with_reason("UNAUTHENTICATED")
            .with_meta(BEARER_ERROR, "invalid_token")
            .with_meta(BEARER_ERROR_DESCRIPTION, why);
        Self(error)
    }

    /// Renders the refusal: a gRPC status to a gRPC call; a JSON-RPC error on the JSON-RPC
    /// endpoint for the capacity conditions (429, 503: what JSON-RPC clients retry on); an
    /// AIP-193 body otherwise (401 with `WWW-Authenticate`).
    fn respond(self, dialect: Dialect, rid: &RequestId) -> Response {
        let Refusal(error) = self;
        let capacity = matches!(
            error.kind,
            ErrorKind::ResourceExhausted | ErrorKind::Unavailable
        );
        match dialect {
            Dialect::Grpc(write) => write(&error),
            Dialect::JsonRpc if capacity => {
                jsonrpc_error(&serde_json::Value::Null, &error, Some(rid))
            }
            Dialect::JsonRpc | Dialect::Rest => rest_error(&error, ErrorTable::V1_0_1, Some(rid)),
        }
    }
}

/// The outermost middleware: gives every request its id (echoed or generated) and every
/// response, probes and 404s included, its `X-Request-Id`.
pub(crate) async fn tag(mut request: Request, next: Next) -> Response {
    let rid = RequestId::from_headers(request.headers());
    request.extensions_mut().insert(rid.clone());
    let mut response = next.run(request).await;
    response
        .headers_mut()
        .insert(request_id::HEADER, rid.header_value());
    response
}

/// The middleware: admits or refuses each request, tags it with its id (the one [`tag`] gave
/// it, if any), counts it, and bounds its time.
pub(crate) async fn guard(
    State(door): State<Arc<FrontDoor>>,
    mut request: Request,
    next: Next,
) -> Response {
    let rid = match request.extensions().get::<RequestId>() {
        Some(rid) => rid.clone(),
        None => RequestId::from_headers(request.headers()),
    };
    request.extensions_mut().insert(rid.clone());
    let span = tracing::info_span!(
        "request",
        id = rid.as_str(),
        method = request.method().as_str(),
        path = %door.loggable_path(request.uri().path())
    );
    // A caller's W3C trace context makes this request part of its trace.
    crate::edge::trace_context::adopt_parent(&span, request.headers());
    let started = std::time::Instant::now();
    let mut response = admit_and_run(&door, request, next, &rid)
        .instrument(span)
        .await;
    let label = response
        .extensions()
        .get::<CallLabel>()
        .copied()
        .unwrap_or(CallLabel {
            method: Method::Other,
            ok: response.status().is_success(),
            v03: false,
        });
    door.metrics.record(label, started.elapsed());
    if let Some(RefusalReason(reason)) = response.extensions().get::<RefusalReason>() {
        door.metrics.refused(reason);
    }
    response
        .headers_mut()
        .insert(request_id::HEADER, rid.header_value());
    response
}

async fn admit_and_run(
    door: &FrontDoor,
    mut request: Request,
    next: Next,
    rid: &RequestId,
) -> Response {
    let dialect = door.classify(&mut request);
    let origin = match door.admit_origin(&request) {
        Ok(origin) => origin,
        Err(refusal) => return refusal.respond(dialect, rid),
    };
    let mut response = match &origin {
        // A browser asks before its call, without credentials.
        Some(origin) if origin::is_preflight(&request) => origin::preflight(origin),
        _ => run_admitted(door, request, next, rid, dialect).await,
    };
    if let Some(origin) = &origin {
        origin::expose(&mut response, origin);
    }
    response
}

/// Runs a request from an accepted origin: its caller admitted, a slot in flight, bounded in
/// time.
async fn run_admitted(
    door: &FrontDoor,
    mut request: Request,
    next: Next,
    rid: &RequestId,
    dialect: Dialect,
) -> Response {
    if let Err(refusal) = door.admit_caller(&mut request).await {
        return refusal.respond(dialect, rid);
    }
    let Ok(_permit) = door.in_flight.clone().try_acquire_owned() else {
        let r = Refusal::new(
            ErrorKind::Unavailable,
            "TOO_MANY_REQUESTS_IN_FLIGHT",
            "the server is at its limit of requests in flight",
        );
        return r.retry_after(CAPACITY_RETRY_SECS).respond(dialect, rid);
    };
    match tokio::time::timeout(door.request_timeout, next.run(request)).await {
        Ok(response) => response,
        // No Retry-After: unlike a capacity refusal, the request was admitted and may have
        // started work (a task that goes on running), so sending it again could run it twice.
        Err(_) => {
            let r = Refusal::new(
                ErrorKind::Unavailable,
                "REQUEST_TIMEOUT",
                format!(
                    "the request took longer than {} s; what it started may still run (GetTask or ListTasks finds it)",
                    door.request_timeout.as_secs()
                ),
            );
            r.respond(dialect, rid)
        }
    }
}

impl FrontDoor {
    /// Which binding's form a refusal of `request` takes, left on it (with whether its path
    /// is public) for the agent's gate.
    fn classify(&self, request: &mut Request) -> Dialect {
        let path = agent_relative(request.uri().path());
        let dialect = match self.grpc_refusal.filter(|_| is_grpc(request.headers())) {
            Some(write) => Dialect::Grpc(write),
            None if path.trim_end_matches('/') == self.rpc_path => Dialect::JsonRpc,
            None => Dialect::Rest,
        };
        // The card and the keys that sign it are public: a client needs them before it can
        // call (each agent's card too: the same paths under `/agents/{id}`).
        let public = self.public_paths.iter().any(|p| p == path)
            || self.capability_prefix(request.uri().path()).is_some();
        request.extensions_mut().insert(dialect);
        if public {
            request.extensions_mut().insert(PublicPath);
        }
        dialect
    }

    /// The checks of where a request comes from: single headers, `Host`, `Origin`. `Some`
    /// names the allowed origin of a browser's call (its answer gets CORS headers).
    fn admit_origin(&self, request: &Request) -> Result<Option<HeaderValue>, Refusal> {
        if let Some(name) = repeated_singleton(request.headers()) {
            return Err(Refusal::new(
                ErrorKind::InvalidRequest,
                "DUPLICATE_HEADER",
                format!("the request has several {name} headers; send one"),
            ));
        }
        if !self.hosts.allows(request) {
            return Err(Refusal::new(
                ErrorKind::PermissionDenied,
                "HOST_NOT_ALLOWED",
                "this Host is not served here (DNS rebinding defence); the server's operator can allow it",
            ));
        }
        match self.origins.check(request) {
            OriginVerdict::Absent => Ok(None),
            OriginVerdict::Allowed(origin) => Ok(Some(origin)),
            OriginVerdict::Refused => Err(Refusal::new(
                ErrorKind::PermissionDenied,
                "ORIGIN_NOT_ALLOWED",
                "requests from this web page's origin are refused; the server serves its own \
                 origin and those its operator allows",
            )),
        }
    }

    /// The checks of who sends a request: credentials (their grant goes on the request) and
    /// the client's rate.
    async fn admit_caller(&self, request: &mut Request) -> Result<(), Refusal> {
        self.authenticate(request).await?;
        if let (Some(rate), Some(addr)) = (&self.rate, request.extensions().get::<ClientAddr>())
            && let Err(wait) = rate.check(addr.0.ip())
        {
            let r = Refusal::new(
                ErrorKind::ResourceExhausted,
                "RATE_LIMITED",
                "too many requests from this client",
            );
            return Err(r.retry_after(wait));
        }
        Ok(())
    }

    /// Puts the grant of the request's credentials on it (access, agent scope, caller). A
    /// public path passes anonymously; anything else without valid credentials is refused
    /// (see [`Self::grant`]).
    async fn authenticate(&self, request: &mut Request) -> Result<(), Refusal> {
        let certified = request.extensions().get::<ClientCertificate>().cloned();
        match self.grant(request.headers(), certified).await {
            Ok(grant) => {
                match forwarded::grant(&self.credentials, request.headers(), &grant) {
                    Ok(Some((grant, by))) => {
                        put_grant(request, grant);
                        request.extensions_mut().insert(by);
                    }
                    Ok(None) => put_grant(request, grant),
                    Err(forwarded::NotAReplica) => {
                        return Err(Refusal::new(
                            ErrorKind::PermissionDenied,
                            "NOT_A_REPLICA",
                            "ferry-forwarded-by is for the server's own replicas: it needs the server's token",
                        ));
                    }
                }
                Ok(())
            }
            // The card and its keys are for everyone, whatever token came along.
            Err(_) if request.extensions().get::<PublicPath>().is_some() => {
                request.extensions_mut().insert(Access::Anonymous);
                Ok(())
            }
            Err(refusal) => Err(refusal),
        }
    }

    /// What the request's credentials give: a bearer token decides where one is sent (a
    /// static token's grant, or a provider's token's once verified); without one, a verified
    /// client certificate names the caller, with full access. Refused: 401 with the bearer
    /// challenge (`invalid_token` and why, for a token that was presented), or 503 when the
    /// provider that would decide could not be asked.
    async fn grant(
        &self,
        headers: &axum::http::HeaderMap,
        certified: Option<ClientCertificate>,
    ) -> Result<Grant, Refusal> {
        if !headers.contains_key(header::AUTHORIZATION)
            && let Some(ClientCertificate(caller)) = certified
        {
            return Ok(Grant::everywhere(Access::Full, Some(&caller)));
        }
        match self.credentials.verdict(headers) {
            Verdict::Granted(grant) => Ok(grant),
            Verdict::Unknown(token) => match &self.oidc {
                Some(oidc) => oidc.grant(token).await.map_err(|refused| match refused {
                    TokenRefused::Invalid(why) => Refusal::invalid_token(why),
                    TokenRefused::ProviderUnavailable(why) => {
                        Refusal::new(ErrorKind::Unavailable, "IDENTITY_PROVIDER_UNAVAILABLE", why)
                            .retry_after(PROVIDER_RETRY_SECS)
                    }
                }),
                None => Err(Refusal::invalid_token(
                    "the bearer token is not one this server accepts".into(),
                )),
            },
            Verdict::Missing => Err(Refusal::new(
                ErrorKind::Unauthenticated,
                "UNAUTHENTICATED",
                "valid credentials are required (Authorization: Bearer …)",
            )),
        }
    }
}

/// Puts what a grant allows on the request, for the core and the agent's gate.
fn put_grant(request: &mut Request, grant: Grant) {
    let Grant {
        access,
        scope,
        caller,
        reach,
    } = grant;
    request.extensions_mut().insert(access);
    request.extensions_mut().insert(scope);
    request.extensions_mut().insert(reach);
    if let Some(caller) = caller {
        request.extensions_mut().insert(caller);
    }
}

/// A slot for one open stream: the server's, and the agent's when it has its own limit.
/// Held by the stream's body until it ends.
#[derive(Debug)]
pub(crate) struct StreamPermit {
    _server: tokio::sync::OwnedSemaphorePermit,
    _agent: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl StreamPermit {
    pub(crate) fn new(
        server: tokio::sync::OwnedSemaphorePermit,
        agent: Option<tokio::sync::OwnedSemaphorePermit>,
    ) -> Self {
        Self {
            _server: server,
            _agent: agent,
        }
    }
}

/// A 503 for a stream refused at the stream limit.
pub(crate) fn too_many_streams() -> A2aError {
    A2aError::new(
        ErrorKind::Unavailable,
        "the server is at its limit of open streams",
    )
    .with_reason("TOO_MANY_STREAMS")
    .with_meta("retryAfterSeconds", CAPACITY_RETRY_SECS.to_string())
}
