//! Putting it together: the router, the shared state, the accept loop (with the header read
//! timeout and the client address), and a shutdown that drains.

use crate::config::ServerConfig;
use crate::core::handler::RequestHandler;
use crate::core::store::{InMemoryTaskStore, TaskStore};
use crate::core::stream::TaskStream;
use crate::http::card::{ServedCard, WELL_KNOWN_CARD_PATH, build_card};
use crate::http::front_door::{self, FrontDoor};
use crate::http::metrics::{CallLabel, Metrics};
use crate::http::request_id::ClientAddr;
use crate::http::signing::{self, JWKS_PATH, SigningError};
use crate::http::sse::{SseFraming, sse_response};
use crate::{http::jsonrpc, http::probes, http::rest};
use axum::Router;
use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::{any, get, post};
use ferry_agent::AgentExecutor;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::OwnedSemaphorePermit;
use tower::ServiceExt;

/// State shared by every request.
#[derive(Debug)]
pub struct AppState {
    /// The protocol semantics.
    pub handler: RequestHandler,
    /// The configuration.
    pub config: Arc<ServerConfig>,
    /// The public card.
    pub card: ServedCard,
    /// Extension URIs the card declares.
    pub declared_extensions: Vec<String>,
    /// Extension URIs the card marks required.
    pub required_extensions: Vec<String>,
    /// Turns true when the server begins to shut down; open streams end on it.
    pub closing: tokio::sync::watch::Sender<bool>,
    /// Auth, Host/Origin checks, limits.
    pub front_door: FrontDoor,
    /// Counters for `/metrics`.
    pub metrics: Metrics,
    /// The published key set (`/.well-known/jwks.json`), when the card is signed.
    pub jwks: Option<bytes::Bytes>,
}

impl AppState {
    /// Takes a slot for one more open stream, or refuses with 503 `TOO_MANY_STREAMS`. Taken
    /// before the stream's work starts; held until its body ends.
    pub fn stream_permit(&self) -> Result<OwnedSemaphorePermit, ferry_proto::A2aError> {
        self.front_door
            .streams
            .clone()
            .try_acquire_owned()
            .map_err(|_| front_door::too_many_streams())
    }

    /// The SSE response for `stream` with this server's keep-alive and shutdown signal.
    pub fn sse<F: SseFraming>(
        &self,
        stream: TaskStream,
        framing: F,
        permit: OwnedSemaphorePermit,
    ) -> Response {
        sse_response(
            stream,
            framing,
            self.config.sse_keepalive(),
            self.closing.subscribe(),
            permit,
        )
    }
}

/// An A2A server for one agent, bound to a socket and ready to run.
pub struct A2aServer {
    listener: TcpListener,
    state: Arc<AppState>,
    local_addr: SocketAddr,
}

impl std::fmt::Debug for A2aServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aServer")
            .field("local_addr", &self.local_addr)
            .finish_non_exhaustive()
    }
}

/// The host part of a URL (`http://h:p/x` → `h`), for the Host check.
fn url_host(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    (!host.is_empty()).then(|| host.to_owned())
}

impl A2aServer {
    /// Binds `config.bind` and prepares to serve `executor` with an in-memory store. Refuses a
    /// non-loopback address without a token.
    pub async fn bind(
        executor: Arc<dyn AgentExecutor>,
        config: ServerConfig,
    ) -> std::io::Result<Self> {
        config
            .validate()
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        let listener = TcpListener::bind(config.bind).await?;
        let local_addr = listener.local_addr()?;
        let store: Arc<dyn TaskStore> = Arc::new(InMemoryTaskStore::new(
            config.task_capacity,
            config.task_ttl(),
        ));
        let base_url = config
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://{local_addr}"));
        let front_door = FrontDoor::new(&config, config.public_url.as_deref().and_then(url_host));
        let config = Arc::new(config);
        let handler = RequestHandler::new(executor, store, config.clone());
        let card = build_card(handler.description(), &config, &base_url);
        let invalid =
            |e: SigningError| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string());
        let keys = config
            .signing_keys
            .iter()
            .map(signing::load_signing_key)
            .collect::<Result<Vec<_>, _>>()
            .map_err(invalid)?;
        let announced = config
            .announced_keys
            .iter()
            .map(|k| signing::load_public_key(&k.key, &k.kid))
            .collect::<Result<Vec<_>, _>>()
            .map_err(invalid)?;
        let extended = match &config.extended_card {
            Some(path) => {
                let ext = signing::extended_card(&card, path).map_err(invalid)?;
                Some(signing::sign(ext, &keys).map_err(invalid)?)
            }
            None => None,
        };
        let handler = handler.with_extended_card(extended);
        let card = signing::sign(card, &keys).map_err(invalid)?;
        let jwks = if keys.is_empty() && announced.is_empty() {
            None
        } else {
            let set = signing::jwks(&keys, &announced).map_err(invalid)?;
            Some(bytes::Bytes::from(
                serde_json::to_vec(&set).unwrap_or_default(),
            ))
        };
        let declared_extensions = card
            .capabilities
            .extensions
            .iter()
            .map(|e| e.uri.clone())
            .collect();
        let required_extensions = card
            .capabilities
            .extensions
            .iter()
            .filter(|e| e.required)
            .map(|e| e.uri.clone())
            .collect();
        let card = ServedCard::new(card, config.card_max_age_secs);
        let (closing, _) = tokio::sync::watch::channel(false);
        let state = Arc::new(AppState {
            handler,
            config,
            card,
            declared_extensions,
            required_extensions,
            closing,
            front_door,
            metrics: Metrics::default(),
            jwks,
        });
        Ok(Self {
            listener,
            state,
            local_addr,
        })
    }

    /// The address actually bound (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The URL of the agent card.
    pub fn card_url(&self) -> String {
        let base = self
            .state
            .config
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://{}", self.local_addr));
        format!("{}{WELL_KNOWN_CARD_PATH}", base.trim_end_matches('/'))
    }

    /// The shared state (the card, the handler).
    pub fn state(&self) -> &Arc<AppState> {
        &self.state
    }

    /// Serves until `shutdown` resolves. Then it stops accepting connections, turns `/readyz`
    /// to 503, refuses new tasks (503 `SHUTTING_DOWN`), ends open streams cleanly, and gives
    /// in-flight requests up to `drain_timeout_secs` to finish before returning.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let Self {
            listener, state, ..
        } = self;
        let store = state.handler.store().clone();
        let sweeper = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tick.tick().await;
                store.sweep();
            }
        });
        let mut http = hyper::server::conn::http1::Builder::new();
        http.timer(TokioTimer::new())
            .header_read_timeout(Duration::from_secs(
                state.config.header_read_timeout_secs.max(1),
            ));
        let graceful = GracefulShutdown::new();
        // Connections live in a set so that those still open after the drain are closed with
        // it, not left running after `run` returns.
        let mut connections = tokio::task::JoinSet::new();
        let app = router(state.clone());
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let (stream, peer) = match accepted {
                        Ok(a) => a,
                        Err(e) => {
                            // Out of file descriptors and the like: wait a little, keep serving.
                            tracing::warn!(error = %e, "accept failed");
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            continue;
                        }
                    };
                    let _ = stream.set_nodelay(true);
                    let service = app.clone().map_request(move |mut request: Request<hyper::body::Incoming>| {
                        request.extensions_mut().insert(ClientAddr(peer));
                        request
                    });
                    let connection = http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
                    let connection = graceful.watch(connection);
                    while connections.try_join_next().is_some() {}
                    connections.spawn(async move {
                        if let Err(e) = connection.await {
                            tracing::debug!(error = %e, %peer, "connection ended with an error");
                        }
                    });
                }
                () = &mut shutdown => break,
            }
        }
        drop(listener);
        tracing::info!("shutting down: refusing new tasks, closing streams, draining requests");
        state.handler.begin_shutdown();
        state.closing.send_replace(true);
        let drain = Duration::from_secs(state.config.drain_timeout_secs);
        tokio::select! {
            () = graceful.shutdown() => tracing::info!("drained"),
            () = tokio::time::sleep(drain) => tracing::warn!("drain timeout reached; aborting what still runs"),
        }
        state.handler.abort_running();
        connections.shutdown().await;
        sweeper.abort();
        Ok(())
    }
}

/// The routes: probes (outside the front door), then behind it the card (at the root and under
/// each interface), JSON-RPC, and REST.
pub fn router(state: Arc<AppState>) -> Router {
    let rpc = state.config.jsonrpc_path.clone();
    let rest = state.config.rest_path.clone();
    let guarded = Router::new()
        .route(WELL_KNOWN_CARD_PATH, get(card))
        .route(&format!("{rpc}{WELL_KNOWN_CARD_PATH}"), get(card))
        .route(&format!("{rest}{WELL_KNOWN_CARD_PATH}"), get(card))
        .route(&rpc, post(jsonrpc::handle))
        // Clients that join the interface URL with "/" (httpx base_url does) post here.
        .route(&format!("{rpc}/"), post(jsonrpc::handle))
        .route(&format!("{rest}/{{*path}}"), any(rest::handle))
        .route("/metrics", get(metrics_text))
        .route(crate::cdp_config::CDP_CONFIG_PATH, any(cdp_config_route))
        .route(JWKS_PATH, get(jwks))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            front_door::guard,
        ));
    Router::new()
        .route("/healthz", get(probes::healthz))
        .route("/readyz", get(probes::readyz))
        .merge(guarded)
        .layer(axum::middleware::from_fn(front_door::tag))
        .with_state(state)
}

async fn card(State(app): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    let mut response = app.card.respond(&headers);
    let label = CallLabel {
        method: crate::http::metrics::Method::AgentCard,
        ok: true,
    };
    response.extensions_mut().insert(label);
    response
}

/// `GET /.well-known/jwks.json`: the keys that sign the card (404 when the card is unsigned).
async fn jwks(State(app): State<Arc<AppState>>) -> Response {
    let mut response = match &app.jwks {
        Some(body) => crate::http::response::json(axum::http::StatusCode::OK, body.clone()),
        None => crate::http::response::json(axum::http::StatusCode::NOT_FOUND, &br#"{"error":{"code":404,"status":"NOT_FOUND","message":"this server does not sign its card"}}"#[..]),
    };
    response.headers_mut().insert(
        axum::http::header::CACHE_CONTROL,
        axum::http::HeaderValue::from_static("public, max-age=300"),
    );
    response
}

/// `/ext/cdp-config`, when the extension is on (else 404).
async fn cdp_config_route(State(app): State<Arc<AppState>>, request: Request) -> Response {
    if app.config.cdp_config {
        crate::cdp_config::handle(State(app), request).await
    } else {
        let e = ferry_proto::A2aError::new(
            ferry_proto::ErrorKind::MethodNotFound,
            "the cdp-config/v1 extension is not enabled on this server",
        );
        crate::http::response::plain_error(axum::http::StatusCode::NOT_FOUND, &e, None)
    }
}

/// `GET /metrics`: Prometheus text (behind the front door: a token is needed when one is set).
async fn metrics_text(State(app): State<Arc<AppState>>) -> Response {
    let streams = &app.front_door.streams;
    let open = app
        .config
        .max_streams
        .max(1)
        .saturating_sub(streams.available_permits());
    let body = app.metrics.render(open, app.handler.store().as_ref());
    let mut response = Response::new(axum::body::Body::from(body));
    response.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    response
}
