//! Putting it together: the builder, the router, the accept loop (with the header read
//! timeout and the client address), and a shutdown that drains.

pub(crate) mod mount;
mod preface;
mod probes;

use crate::binding::decode::BodyLimits;
#[cfg(feature = "grpc")]
use crate::binding::grpc;
use crate::binding::{jsonrpc, rest};
use crate::card::{self, ServedCard, WELL_KNOWN_CARD_PATH, build_card};
use crate::clock::{Clock, TokioClock};
use crate::config::ServerConfig;
use crate::core::handler::RequestHandler;
use crate::core::manager::{TaskLimits, TaskManager};
use crate::edge::front_door::{self, AgentGate, AgentScope, FrontDoor};
use crate::edge::metrics::{CallLabel, Metrics};
use crate::edge::request_id::ClientAddr;
use crate::edge::response::json;
use crate::edge::service::{AgentService, ServerState};
use crate::error::ServerError;
use crate::extension::ServerExtension;
use crate::signing::{self, JWKS_PATH};
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
use mount::{AgentMount, check_agent_id};
use preface::UntilPreface;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// An A2A server, bound to a socket and ready to run: one agent at the root, or several
/// under `/agents/{id}`.
pub struct A2aServer {
    listener: TcpListener,
    server: Arc<ServerState>,
    routes: Router,
    local_addr: SocketAddr,
}

impl std::fmt::Debug for A2aServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aServer")
            .field("local_addr", &self.local_addr)
            .finish_non_exhaustive()
    }
}

/// Builds an [`A2aServer`]: the agent (or, with [`A2aServer::hosting`], the agents), then in
/// any order the configuration (default: [`ServerConfig::default`], a loopback server), the
/// task store (default: a [`MemoryStore`] bounded by `task_capacity`, `max_store_bytes` and
/// `max_events_per_task`) and the extensions; [`A2aServerBuilder::bind`] last.
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
///
/// Several agents, each under `/agents/{id}` with its own card, interfaces, tasks and limits,
/// one of them also at the root:
///
/// ```no_run
/// use ferry_agents::{ConformanceAgent, EchoAgent};
/// use ferry_server::{A2aServer, AgentMount};
/// use std::sync::Arc;
///
/// # async fn run() -> Result<(), ferry_server::ServerError> {
/// let server = A2aServer::hosting()
///     .agent(AgentMount::new("echo", Arc::new(EchoAgent)))
///     .agent(AgentMount::new("tck", Arc::new(ConformanceAgent::default())).max_in_flight(8))
///     .default_agent("echo")
///     .bind()
///     .await?;
/// println!("{}", server.agent_card_url("tck").unwrap_or_default());
/// # Ok(()) }
/// ```
pub struct A2aServerBuilder {
    agents: Vec<AgentMount>,
    /// Whether agents are served under `/agents/{id}` ([`A2aServer::hosting`]).
    several: bool,
    default_agent: Option<String>,
    config: ServerConfig,
    store: Option<Arc<dyn TaskStore>>,
    extensions: Vec<Arc<dyn ServerExtension>>,
    /// Routes of the server's own that are not A2A (an agent's other face, such as MCP).
    routes: Router,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for A2aServerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aServerBuilder")
            .field("agents", &self.agents)
            .field("default_agent", &self.default_agent)
            .field("bind", &self.config.bind)
            .field("extensions", &self.extensions)
            .finish_non_exhaustive()
    }
}

/// What every agent of one server shares while the server is built.
struct Shared<'a> {
    config: &'a Arc<ServerConfig>,
    manager: &'a Arc<TaskManager>,
    clock: &'a Arc<dyn Clock>,
    front_door: &'a Arc<FrontDoor>,
    closing: &'a Arc<tokio::sync::watch::Sender<bool>>,
    keys: &'a [ferry_trust::keys::SigningKey],
    limits: BodyLimits,
    base_url: &'a str,
    /// The server's own extensions (every agent has them).
    extensions: &'a [Arc<dyn ServerExtension>],
}

impl A2aServerBuilder {
    /// The server's configuration.
    pub fn config(mut self, config: ServerConfig) -> Self {
        self.config = config;
        self
    }

    /// Where tasks are kept (default: in memory). A durable store's tasks that a previous
    /// process left SUBMITTED or WORKING are failed when the server binds (their turns died
    /// with it); one store serves one server at a time. The agents of a server share it,
    /// each in its own namespace.
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
    /// data. On a server of several agents every agent gets it (and its routes are served
    /// once, at the root); [`AgentMount::extension`] adds one to a single agent.
    pub fn extension(mut self, extension: Arc<dyn ServerExtension>) -> Self {
        self.extensions.push(extension);
        self
    }

    /// Adds routes that are not A2A and no extension of it (another face of an agent, such
    /// as the forms agent's MCP endpoint), served at the root behind the same front door as
    /// the bindings: the token, `Host`/`Origin` checks, limits, request ids and metrics apply
    /// to them unchanged, and the front door's [`front_door::Caller`] and
    /// [`front_door::AgentScope`] are in each request's extensions. They add nothing to the
    /// card.
    pub fn routes(mut self, routes: Router) -> Self {
        self.routes = self.routes.merge(routes);
        self
    }

    /// Adds an agent to a server of several ([`A2aServer::hosting`]); on a server of one
    /// agent, [`A2aServerBuilder::bind`] refuses it.
    pub fn agent(mut self, mount: AgentMount) -> Self {
        self.agents.push(mount);
        self
    }

    /// Also serves the agent `id` at the root (`/.well-known/agent-card.json`, `/jsonrpc`,
    /// `/rest`, gRPC), for clients that know only the server's address.
    pub fn default_agent(mut self, id: impl Into<String>) -> Self {
        self.default_agent = Some(id.into());
        self
    }

    /// Validates the configuration, loads the signing keys, builds the cards, fails the tasks
    /// a previous process left unfinished in the store, and binds `config.bind`. Refuses a
    /// non-loopback address without a token, invalid or repeated agent ids, and a default
    /// agent that is not hosted.
    pub async fn bind(self) -> Result<A2aServer, ServerError> {
        let Self {
            agents,
            several,
            default_agent,
            config,
            store,
            extensions,
            routes: own_routes,
            clock,
        } = self;
        config.validate()?;
        check_agents(&agents, several, default_agent.as_deref(), &config)?;
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
            .unwrap_or_else(|| format!("http://{local_addr}"))
            .trim_end_matches('/')
            .to_owned();
        let metrics = Arc::new(Metrics::default());
        let front_door = FrontDoor::new(
            &config,
            config.public_url.as_deref().and_then(url_host),
            public_paths(&config),
            metrics.clone(),
            clock.clone(),
        );
        #[cfg(feature = "grpc")]
        let front_door = front_door.with_grpc_refusal(crate::binding::grpc::status::refusal);
        let front_door = Arc::new(front_door);
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
        let jwks = if keys.is_empty() && announced.is_empty() {
            None
        } else {
            let set = signing::jwks(&keys, &announced)?;
            Some(bytes::Bytes::from(
                serde_json::to_vec(&set).unwrap_or_default(),
            ))
        };
        let config = Arc::new(config);
        let closing = Arc::new(tokio::sync::watch::channel(false).0);
        let shared = Shared {
            config: &config,
            manager: &manager,
            clock: &clock,
            front_door: &front_door,
            closing: &closing,
            keys: &keys,
            limits: BodyLimits::of(&config),
            base_url: &base_url,
            extensions: &extensions,
        };
        let mut hosted = Vec::with_capacity(agents.len());
        let mut agent_routes = Vec::with_capacity(agents.len());
        for mount in agents {
            let is_default = !several || default_agent.as_deref() == Some(mount.id.as_str());
            let (state, routes) = build_agent(mount, &shared, several, is_default)?;
            hosted.push(state);
            agent_routes.push(routes);
        }
        let default = if several {
            default_agent.and_then(|id| {
                hosted
                    .iter()
                    .find(|a| a.agent_id() == Some(id.as_str()))
                    .cloned()
            })
        } else {
            hosted.first().cloned()
        };
        let mut server_routes = own_routes;
        for extension in &extensions {
            server_routes = server_routes.merge(extension.clone().routes(shared.limits));
        }
        let server = Arc::new(ServerState {
            agents: hosted,
            default,
            several,
            manager,
            config,
            front_door,
            metrics,
            closing,
            jwks,
            base_url,
        });
        let routes = router(&server, agent_routes, server_routes);
        Ok(A2aServer {
            listener,
            server,
            routes,
            local_addr,
        })
    }
}

/// Checks the agents before anything is bound: a server of one agent has exactly that one;
/// on a server of several, ids are valid and unique, the default is one of them, and scoped
/// tokens name hosted agents (a warning: the others may be configured but not exposed).
fn check_agents(
    agents: &[AgentMount],
    several: bool,
    default_agent: Option<&str>,
    config: &ServerConfig,
) -> Result<(), ServerError> {
    if !several {
        if agents.len() != 1 {
            return Err(ServerError::Agents(
                "a server of one agent hosts exactly one: use A2aServer::hosting() for several"
                    .into(),
            ));
        }
        return Ok(());
    }
    if agents.is_empty() {
        return Err(ServerError::Agents("no agent to serve".into()));
    }
    for (i, mount) in agents.iter().enumerate() {
        check_agent_id(&mount.id)?;
        if agents[..i].iter().any(|m| m.id == mount.id) {
            return Err(ServerError::Agents(format!(
                "agent id {:?} is used twice",
                mount.id
            )));
        }
    }
    if let Some(id) = default_agent
        && !agents.iter().any(|m| m.id == id)
    {
        return Err(ServerError::Agents(format!(
            "the default agent {id:?} is not one of the hosted agents"
        )));
    }
    for scoped in &config.scoped_tokens {
        for id in &scoped.agents {
            if !agents.iter().any(|m| m.id == *id) {
                tracing::warn!(agent = %id, "a scoped token names an agent this server does not host");
            }
        }
    }
    Ok(())
}

/// One agent's state and routes: its handler (in its own task namespace on a server of
/// several), its card (under `/agents/{id}`, signed), its extensions.
fn build_agent(
    mount: AgentMount,
    shared: &Shared<'_>,
    several: bool,
    is_default: bool,
) -> Result<(Arc<AgentService>, Router), ServerError> {
    let AgentMount {
        id,
        executor,
        extensions,
        limits,
    } = mount;
    // gRPC routes by method path alone, so only the agent at the root can have it.
    let config = if several && !is_default && shared.config.serves_grpc() {
        Arc::new(ServerConfig {
            grpc: false,
            ..(**shared.config).clone()
        })
    } else {
        shared.config.clone()
    };
    let mut handler = RequestHandler::new(
        executor,
        shared.manager.clone(),
        config.clone(),
        shared.clock.clone(),
    );
    let card_base = if several {
        handler = handler.with_namespace(&id);
        format!("{}/agents/{id}", shared.base_url)
    } else {
        shared.base_url.to_owned()
    };
    let mut entries = Vec::new();
    let mut extension_routes = Router::new();
    for extension in shared.extensions.iter().chain(&extensions) {
        entries.push(extension.card_entry());
        if let Some(source) = extension.clone().turn_data() {
            handler = handler.with_turn_data(source);
        }
    }
    for extension in &extensions {
        extension_routes = extension_routes.merge(extension.clone().routes(shared.limits));
    }
    let card = build_card(handler.description(), &config, &card_base, &entries);
    let extended = match card::extended_card(&card, handler.description(), &config)? {
        Some(extended) => Some(signing::sign(extended, shared.keys)?),
        None => None,
    };
    let handler = handler.with_extended_card(extended);
    let card = signing::sign(card, shared.keys)?;
    let extension_uris = |required_only: bool| {
        card.capabilities
            .extensions
            .iter()
            .filter(|e| !required_only || e.required)
            .map(|e| e.uri.clone())
            .collect()
    };
    let (declared_extensions, required_extensions) = (extension_uris(false), extension_uris(true));
    let card = ServedCard::new(card, config.card_max_age_secs, config.serves_v03());
    let gate = several.then(|| Arc::new(AgentGate::new(&id, limits)));
    let state = Arc::new(AgentService {
        handler,
        config,
        card,
        declared_extensions,
        required_extensions,
        closing: shared.closing.clone(),
        front_door: shared.front_door.clone(),
        gate,
    });
    let routes = agent_routes(&state).merge(extension_routes);
    Ok((state, routes))
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
    /// Starts building a server for `executor`, served at the root.
    pub fn builder(executor: Arc<dyn AgentExecutor>) -> A2aServerBuilder {
        A2aServerBuilder {
            agents: vec![AgentMount::new(String::new(), executor)],
            several: false,
            default_agent: None,
            config: ServerConfig::default(),
            store: None,
            extensions: Vec::new(),
            routes: Router::new(),
            clock: Arc::new(TokioClock),
        }
    }

    /// Starts building a server of several agents, each under `/agents/{id}`
    /// ([`A2aServerBuilder::agent`]); `GET /agents` lists them.
    pub fn hosting() -> A2aServerBuilder {
        A2aServerBuilder {
            agents: Vec::new(),
            several: true,
            default_agent: None,
            config: ServerConfig::default(),
            store: None,
            extensions: Vec::new(),
            routes: Router::new(),
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

    /// The URL of the agent card at the root (on a server of several agents without a
    /// default, nothing is served there: see [`A2aServer::agent_card_url`]).
    pub fn card_url(&self) -> String {
        format!("{}{WELL_KNOWN_CARD_PATH}", self.server.base_url)
    }

    /// The URL of the card of the hosted agent `id`, if it is hosted.
    pub fn agent_card_url(&self, id: &str) -> Option<String> {
        self.server
            .agents
            .iter()
            .any(|a| a.agent_id() == Some(id))
            .then(|| agent_card_url(&self.server.base_url, id))
    }

    /// The ids of the hosted agents, in the order they were added (none on a server of one
    /// agent).
    pub fn agent_ids(&self) -> Vec<&str> {
        self.server
            .agents
            .iter()
            .filter_map(|a| a.agent_id())
            .collect()
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
            server,
            routes,
            ..
        } = self;
        let manager = server.manager.clone();
        let sweeper = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tick.tick().await;
                if let Err(e) = manager.sweep().await {
                    tracing::warn!(error = %e, "expiring tasks failed; retrying");
                }
            }
        });
        let config = &server.config;
        // HTTP/1.1, and HTTP/2 with prior knowledge (h2c: gRPC, or any client that speaks it),
        // told apart by the connection preface.
        let mut http = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
        let header_timeout = Duration::from_secs(config.header_read_timeout_secs.max(1));
        http.http1()
            .timer(TokioTimer::new())
            .header_read_timeout(header_timeout);
        // One connection may carry as many calls as the server serves at once: the front
        // door refuses what is over its limits (a stream cap at the in-flight limit would
        // queue calls in the client instead of answering them).
        let per_connection = config
            .max_in_flight
            .saturating_add(config.max_streams)
            .max(1);
        http.http2()
            .timer(TokioTimer::new())
            .max_concurrent_streams(u32::try_from(per_connection).unwrap_or(u32::MAX))
            .max_header_list_size(64 * 1024)
            .keep_alive_interval(config.sse_keepalive())
            .keep_alive_timeout(Duration::from_secs(20));
        let graceful = GracefulShutdown::new();
        // Connections live in a set so that those still open after the drain are closed with
        // it, not left running after `run` returns.
        let mut connections = tokio::task::JoinSet::new();
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
                    let service = routes.clone().map_request(move |mut request: Request<hyper::body::Incoming>| {
                        request.extensions_mut().insert(ClientAddr(peer));
                        request
                    });
                    // The header timeout runs from the accept, not only once hyper reads a head.
                    let stream = UntilPreface::new(stream, header_timeout);
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
        for agent in &server.agents {
            agent.handler.begin_shutdown();
        }
        server.closing.send_replace(true);
        let drain = Duration::from_secs(server.config.drain_timeout_secs);
        tokio::select! {
            () = graceful.shutdown() => tracing::info!("drained"),
            () = tokio::time::sleep(drain) => tracing::warn!("drain timeout reached; aborting what still runs"),
        }
        server.manager.abort_running();
        connections.shutdown().await;
        sweeper.abort();
        Ok(())
    }
}

/// The card URL of agent `id` on the server at `base`.
fn agent_card_url(base: &str, id: &str) -> String {
    format!("{base}/agents/{id}{WELL_KNOWN_CARD_PATH}")
}

/// One agent's bindings: its card (at its root and under each interface), JSON-RPC, REST,
/// and gRPC when its configuration serves it.
fn agent_routes(state: &Arc<AgentService>) -> Router {
    let rpc = state.config.jsonrpc_path.as_str();
    let rest = state.config.rest_path.as_str();
    let routes = Router::new()
        .route(WELL_KNOWN_CARD_PATH, get(card))
        .route(&format!("{rpc}{WELL_KNOWN_CARD_PATH}"), get(card))
        .route(&format!("{rest}{WELL_KNOWN_CARD_PATH}"), get(card))
        .route(rpc, post(jsonrpc::handle))
        // Clients that join the interface URL with "/" (httpx base_url does) post here.
        .route(&format!("{rpc}/"), post(jsonrpc::handle))
        .route(&format!("{rest}/{{*path}}"), any(rest::handle));
    // Clients given only the base URL post JSON-RPC to it (the official SDKs' servers answer
    // there), whatever path the card names.
    let routes = if rpc.trim_end_matches('/').is_empty() {
        routes
    } else {
        routes.route("/", post(jsonrpc::handle))
    };
    #[cfg(feature = "grpc")]
    let routes = if state.config.serves_grpc() {
        routes.route(grpc::ROUTE, post(grpc::handle))
    } else {
        routes
    };
    routes.with_state(state.clone())
}

/// The routes: probes (outside the front door), then behind it the server's own (metrics,
/// the key set, the list of agents, the server's extensions) and each agent's: at the root on
/// a server of one agent, under `/agents/{id}` (behind the agent's gate) on a server of
/// several, and the default agent's at the root as well.
fn router(
    server: &Arc<ServerState>,
    agent_routes: Vec<Router>,
    extension_routes: Router,
) -> Router {
    let mut guarded = Router::new()
        .route("/metrics", get(metrics_text))
        .route(JWKS_PATH, get(jwks));
    if server.several {
        guarded = guarded.route("/agents", get(list_agents));
    }
    let mut guarded = guarded.with_state(server.clone()).merge(extension_routes);
    for (state, routes) in server.agents.iter().zip(agent_routes) {
        match &state.gate {
            None => guarded = guarded.merge(routes),
            Some(gate) => {
                let routes = routes.layer(axum::middleware::from_fn_with_state(
                    gate.clone(),
                    front_door::agent_gate,
                ));
                if server
                    .default
                    .as_ref()
                    .is_some_and(|d| Arc::ptr_eq(d, state))
                {
                    guarded = guarded.merge(routes.clone());
                }
                guarded = guarded.nest(&format!("/agents/{}", gate.id()), routes);
            }
        }
    }
    let guarded = guarded.layer(axum::middleware::from_fn_with_state(
        server.front_door.clone(),
        front_door::guard,
    ));
    Router::new()
        .route("/healthz", get(probes::healthz))
        .route("/readyz", get(probes::readyz))
        .with_state(server.clone())
        .merge(guarded)
        .layer(axum::middleware::from_fn(front_door::tag))
}

async fn card(State(app): State<Arc<AgentService>>, headers: HeaderMap) -> Response {
    let speaks_v03 = crate::edge::params::states_v03(&headers);
    let mut response = app.card.respond(speaks_v03, &headers);
    let label = CallLabel {
        method: crate::edge::metrics::Method::AgentCard,
        ok: true,
        v03: false,
    };
    response.extensions_mut().insert(label);
    response
}

/// `GET /.well-known/jwks.json`: the keys that sign the card (404 when the card is unsigned).
async fn jwks(State(server): State<Arc<ServerState>>) -> Response {
    let mut response = match &server.jwks {
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

/// A 403 for a caller whose token reaches only some agents, at a route of the whole server.
fn scoped_refusal(what: &str) -> Response {
    let error = ferry_proto::A2aError::new(
        ferry_proto::ErrorKind::PermissionDenied,
        format!("this token may call only some agents, not read {what}"),
    )
    .with_reason("AGENT_NOT_ALLOWED");
    crate::edge::response::rest_error(&error, ferry_proto::ErrorTable::V1_0_1, None)
}

/// `GET /metrics`: Prometheus text (behind the front door: a token is needed when one is set;
/// a token scoped to some agents is refused: the counters are the whole server's).
async fn metrics_text(
    State(server): State<Arc<ServerState>>,
    scope: Option<axum::Extension<AgentScope>>,
) -> Response {
    if scope.is_some_and(|s| !s.is_all()) {
        return scoped_refusal("the server's metrics");
    }
    let open = server.front_door.open_streams(server.config.max_streams);
    let counts = server.manager.count_by_state().await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "counting tasks for the metrics failed");
        Vec::new()
    });
    let body = server
        .metrics
        .render(open, &counts, server.manager.live_count());
    let mut response = Response::new(axum::body::Body::from(body));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    response
}

/// One entry of `GET /agents`.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ListedAgent<'a> {
    id: &'a str,
    name: &'a str,
    description: &'a str,
    default: bool,
    card_url: String,
}

/// `GET /agents`: the hosted agents the caller's token may reach, with their card URLs:
/// `{"agents":[{"id","name","description","default","cardUrl"}]}`.
async fn list_agents(
    State(server): State<Arc<ServerState>>,
    scope: Option<axum::Extension<AgentScope>>,
) -> Response {
    #[derive(serde::Serialize)]
    struct Listed<'a> {
        agents: Vec<ListedAgent<'a>>,
    }
    let scope = scope.map(|s| s.0).unwrap_or_default();
    let agents = server
        .agents
        .iter()
        .filter_map(|agent| {
            let id = agent.agent_id()?;
            let description = agent.handler.description();
            scope.allows(id).then(|| ListedAgent {
                id,
                name: &description.name,
                description: &description.description,
                default: server
                    .default
                    .as_ref()
                    .is_some_and(|d| Arc::ptr_eq(d, agent)),
                card_url: agent_card_url(&server.base_url, id),
            })
        })
        .collect();
    json(
        StatusCode::OK,
        serde_json::to_vec(&Listed { agents }).unwrap_or_default(),
    )
}
