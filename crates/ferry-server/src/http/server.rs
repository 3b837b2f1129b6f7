//! Putting it together: the builder, the router, the accept loop (with the header read
//! timeout and the client address), and a shutdown that drains.

use crate::clock::{Clock, TokioClock};
use crate::config::ServerConfig;
use crate::core::handler::RequestHandler;
use crate::core::manager::{TaskLimits, TaskManager};
use crate::error::ServerError;
use crate::extension::ServerExtension;
use crate::grpc;
use crate::http::card::{self, ServedCard, WELL_KNOWN_CARD_PATH, build_card};
use crate::http::decode::BodyLimits;
use crate::http::front_door::{self, FrontDoor};
use crate::http::metrics::{CallLabel, Metrics};
use crate::http::request_id::ClientAddr;
use crate::http::response::json;
use crate::http::signing::{self, JWKS_PATH};
use crate::http::state::AppState;
use crate::http::{jsonrpc, probes, rest};
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use axum::routing::{any, get, post};
use ferry_agent::AgentExecutor;
use ferry_store::{MemoryLimits, MemoryStore, TaskStore};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// An A2A server for one agent, bound to a socket and ready to run.
pub struct A2aServer {
    listener: TcpListener,
    state: Arc<AppState>,
    extension_routes: Router,
    local_addr: SocketAddr,
}

impl std::fmt::Debug for A2aServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aServer")
            .field("local_addr", &self.local_addr)
            .finish_non_exhaustive()
    }
}

/// Builds an [`A2aServer`]: the agent (required), then in any order the configuration
/// (default: [`ServerConfig::default`], a loopback server), the task store (default: a
/// [`MemoryStore`] bounded by `task_capacity`, `max_store_bytes` and `max_events_per_task`)
/// and the extensions; [`A2aServerBuilder::bind`] last.
///
/// ```no_run
/// use ferry_agents::EchoAgent;
/// use ferry_server::{A2aServer, ServerConfig};
/// use std::sync::Arc;
///
/// # async fn run() -> Result<(), ferry_server::ServerError> {
/// let server = A2aServer::builder(Arc::new(EchoAgent))
///     .config(ServerConfig::default())
///     .bind()
///     .await?;
/// println!("agent card: {}", server.card_url());
/// server.run(async { let _ = tokio::signal::ctrl_c().await; }).await
/// # }
/// ```
pub struct A2aServerBuilder {
    executor: Arc<dyn AgentExecutor>,
    config: ServerConfig,
    store: Option<Arc<dyn TaskStore>>,
    extensions: Vec<Arc<dyn ServerExtension>>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for A2aServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aServerBuilder")
            .field("agent", &self.executor.describe().name)
            .field("bind", &self.config.bind)
            .field("extensions", &self.extensions)
            .finish_non_exhaustive()
    }
}

impl A2aServerBuilder {
    /// The server's configuration.
    pub fn config(mut self, config: ServerConfig) -> Self {
        self.config = config;
        self
    }

    /// Where tasks are kept (default: in memory). A durable store's tasks that a previous
    /// process left SUBMITTED or WORKING are failed when the server binds (their turns died
    /// with it); one store serves one server at a time.
    pub fn store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// The clock TTLs, dedup windows and rate limits are measured with (default
    /// [`TokioClock`], which a paused test runtime controls).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Adds an extension: its card entry, its routes behind the front door, its per-turn
    /// data.
    pub fn extension(mut self, extension: Arc<dyn ServerExtension>) -> Self {
        self.extensions.push(extension);
        self
    }

    /// Validates the configuration, loads the signing keys, builds the card, fails the tasks
    /// a previous process left unfinished in the store, and binds `config.bind`. Refuses a
    /// non-loopback address without a token.
    pub async fn bind(self) -> Result<A2aServer, ServerError> {
        let Self {
            executor,
            config,
            store,
            extensions,
            clock,
        } = self;
        config.validate()?;
        let listener =
            TcpListener::bind(config.bind)
                .await
                .map_err(|source| ServerError::Bind {
                    bind: config.bind,
                    source,
                })?;
        let local_addr = listener.local_addr().map_err(|source| ServerError::Bind {
            bind: config.bind,
            source,
        })?;
        let store: Arc<dyn TaskStore> = store.unwrap_or_else(|| {
            Arc::new(MemoryStore::new(MemoryLimits {
                max_tasks: config.task_capacity.max(1),
                max_bytes: config.max_store_bytes,
                max_events_per_task: config.max_events_per_task.max(1),
            }))
        });
        let manager = Arc::new(TaskManager::new(
            store,
            clock.clone(),
            TaskLimits {
                terminal_ttl: config.task_ttl(),
                idle_ttl: config.idle_ttl(),
                max_history_messages: config.max_history_messages.max(1),
                max_artifact_bytes: config.max_artifact_bytes,
            },
        ));
        let recovered = manager.recover().await.map_err(ServerError::Store)?;
        if recovered > 0 {
            tracing::warn!(
                tasks = recovered,
                "failed the tasks a previous process left working"
            );
        }
        let base_url = config
            .public_url
            .clone()
            .unwrap_or_else(|| format!("http://{local_addr}"));
        let metrics = Arc::new(Metrics::default());
        let front_door = Arc::new(FrontDoor::new(
            &config,
            config.public_url.as_deref().and_then(url_host),
            public_paths(&config),
            metrics.clone(),
            clock.clone(),
        ));
        let limits = BodyLimits::of(&config);
        let config = Arc::new(config);
        let mut handler = RequestHandler::new(executor, manager, config.clone(), clock);
        let mut entries = Vec::with_capacity(extensions.len());
        let mut extension_routes = Router::new();
        for extension in extensions {
            entries.push(extension.card_entry());
            if let Some(source) = extension.clone().turn_data() {
                handler = handler.with_turn_data(source);
            }
            extension_routes = extension_routes.merge(extension.routes(limits));
        }
        let card = build_card(handler.description(), &config, &base_url, &entries);
        let keys = config
            .signing_keys
            .iter()
            .map(signing::load_signing_key)
            .collect::<Result<Vec<_>, _>>()?;
        let announced = config
            .announced_keys
            .iter()
            .map(|k| signing::load_public_key(&k.key, &k.kid))
            .collect::<Result<Vec<_>, _>>()?;
        let extended = match card::extended_card(&card, handler.description(), &config)? {
            Some(extended) => Some(signing::sign(extended, &keys)?),
            None => None,
        };
        let handler = handler.with_extended_card(extended);
        let card = signing::sign(card, &keys)?;
        let jwks = if keys.is_empty() && announced.is_empty() {
            None
        } else {
            let set = signing::jwks(&keys, &announced)?;
            Some(bytes::Bytes::from(
                serde_json::to_vec(&set).unwrap_or_default(),
            ))
        };
        let extension_uris = |required_only: bool| {
            card.capabilities
                .extensions
                .iter()
                .filter(|e| !required_only || e.required)
                .map(|e| e.uri.clone())
                .collect()
        };
        let (declared_extensions, required_extensions) =
            (extension_uris(false), extension_uris(true));
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
            metrics,
            jwks,
        });
        Ok(A2aServer {
            listener,
            state,
            extension_routes,
            local_addr,
        })
    }
}

/// The host part of a URL (`http://h:p/x` → `h`), for the Host check.
fn url_host(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    (!host.is_empty()).then(|| host.to_owned())
}

/// What the front door serves without the token: the card (at the root and under each
/// interface) and the keys that sign it. A client needs them before it can call.
fn public_paths(config: &ServerConfig) -> Vec<String> {
    vec![
        WELL_KNOWN_CARD_PATH.to_owned(),
        format!("{}{WELL_KNOWN_CARD_PATH}", config.jsonrpc_path),
        format!("{}{WELL_KNOWN_CARD_PATH}", config.rest_path),
        JWKS_PATH.to_owned(),
    ]
}

impl A2aServer {
    /// Starts building a server for `executor`.
    pub fn builder(executor: Arc<dyn AgentExecutor>) -> A2aServerBuilder {
        A2aServerBuilder {
            executor,
            config: ServerConfig::default(),
            store: None,
            extensions: Vec::new(),
            clock: Arc::new(TokioClock),
        }
    }

    /// Binds `config.bind` and prepares to serve `executor` with an in-memory store and no
    /// extensions: `A2aServer::builder(executor).config(config).bind()`.
    pub async fn bind(
        executor: Arc<dyn AgentExecutor>,
        config: ServerConfig,
    ) -> Result<Self, ServerError> {
        Self::builder(executor).config(config).bind().await
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
    ) -> Result<(), ServerError> {
        let Self {
            listener,
            state,
            extension_routes,
            ..
        } = self;
        let manager = state.handler.manager().clone();
        let sweeper = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tick.tick().await;
                if let Err(e) = manager.sweep().await {
                    tracing::warn!(error = %e, "expiring tasks failed; retrying");
                }
            }
        });
        // HTTP/1.1, and HTTP/2 with prior knowledge (h2c: gRPC, or any client that speaks it),
        // told apart by the connection preface.
        let mut http = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
        http.http1()
            .timer(TokioTimer::new())
            .header_read_timeout(Duration::from_secs(
                state.config.header_read_timeout_secs.max(1),
            ));
        // One connection may carry as many calls as the server serves at once: the front
        // door refuses what is over its limits (a stream cap at the in-flight limit would
        // queue calls in the client instead of answering them).
        let per_connection = state
            .config
            .max_in_flight
            .saturating_add(state.config.max_streams)
            .max(1);
        http.http2()
            .timer(TokioTimer::new())
            .max_concurrent_streams(u32::try_from(per_connection).unwrap_or(u32::MAX))
            .max_header_list_size(64 * 1024)
            .keep_alive_interval(state.config.sse_keepalive())
            .keep_alive_timeout(Duration::from_secs(20));
        let graceful = GracefulShutdown::new();
        // Connections live in a set so that those still open after the drain are closed with
        // it, not left running after `run` returns.
        let mut connections = tokio::task::JoinSet::new();
        let app = router(state.clone(), extension_routes);
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
                    let connection = http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service)).into_owned();
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

/// The routes: probes (outside the front door), then behind it the card (at the root and
/// under each interface), JSON-RPC, REST, gRPC, metrics, the key set, and the extensions'
/// routes.
pub fn router(state: Arc<AppState>, extension_routes: Router) -> Router {
    let rpc = state.config.jsonrpc_path.clone();
    let rest = state.config.rest_path.clone();
    let bindings = Router::new()
        .route(WELL_KNOWN_CARD_PATH, get(card))
        .route(&format!("{rpc}{WELL_KNOWN_CARD_PATH}"), get(card))
        .route(&format!("{rest}{WELL_KNOWN_CARD_PATH}"), get(card))
        .route(&rpc, post(jsonrpc::handle))
        // Clients that join the interface URL with "/" (httpx base_url does) post here.
        .route(&format!("{rpc}/"), post(jsonrpc::handle))
        .route(&format!("{rest}/{{*path}}"), any(rest::handle))
        .route("/metrics", get(metrics_text))
        .route(JWKS_PATH, get(jwks));
    let bindings = if state.config.grpc {
        bindings.route(grpc::ROUTE, post(grpc::handle))
    } else {
        bindings
    };
    let bindings = bindings.with_state(state.clone());
    let guarded = bindings
        .merge(extension_routes)
        .layer(axum::middleware::from_fn_with_state(
            state.front_door.clone(),
            front_door::guard,
        ));
    Router::new()
        .route("/healthz", get(probes::healthz))
        .route("/readyz", get(probes::readyz))
        .with_state(state)
        .merge(guarded)
        .layer(axum::middleware::from_fn(front_door::tag))
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
        Some(body) => json(StatusCode::OK, body.clone()),
        None => json(
            StatusCode::NOT_FOUND,
            &br#"{"error":{"code":404,"status":"NOT_FOUND","message":"this server does not sign its card"}}"#[..],
        ),
    };
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    response
}

/// `GET /metrics`: Prometheus text (behind the front door: a token is needed when one is set).
async fn metrics_text(State(app): State<Arc<AppState>>) -> Response {
    let open = app.front_door.open_streams(app.config.max_streams);
    let manager = app.handler.manager();
    let counts = manager.count_by_state().await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "counting tasks for the metrics failed");
        Vec::new()
    });
    let body = app.metrics.render(open, &counts, manager.live_count());
    let mut response = Response::new(axum::body::Body::from(body));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    response
}
