//! Building a server: the agents, configuration, store, clock, extensions and routes, then
//! [`A2aServerBuilder::bind`], which checks them, binds the socket and assembles everything
//! in steps: the task manager over the store, the front door, the signing material, each
//! agent's service and routes, the router.

use super::A2aServer;
use super::mount::{AgentMount, check_agent_id};
use super::routes::{agent_routes, router};
use crate::binding::decode::BodyLimits;
use crate::card::{self, ServedCard, WELL_KNOWN_CARD_PATH, build_card};
use crate::clock::{Clock, TokioClock};
use crate::config::ServerConfig;
use crate::core::handler::RequestHandler;
use crate::core::manager::{TaskLimits, TaskManager};
use crate::edge::front_door::{AgentGate, FrontDoor, is_origin};
use crate::edge::metrics::Metrics;
use crate::edge::service::{AgentService, ServerState};
use crate::edge::sessions::HeldSessions;
use crate::error::ServerError;
use crate::extension::ServerExtension;
use crate::push::PushService;
use crate::push::deliver::Deliverer;
use crate::push::send::Sender;
use crate::signing::{self, JWKS_PATH};
use axum::Router;
use axum::http::HeaderName;
use ferry_agent::AgentExecutor;
use ferry_store::{MemoryLimits, MemoryStore, TaskStore};
use std::sync::Arc;
use tokio::net::TcpListener;

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
    /// Routes of sessions held by one replica each, and the header naming the session.
    session_routes: Vec<(Router, HeaderName)>,
    /// Path prefixes of routes that carry their own authority in the path (capability links).
    capability_prefixes: Vec<String>,
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
    /// Push notifications, when offered.
    push: Option<&'a Arc<PushService>>,
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
    /// to them unchanged, and the front door's [`crate::Caller`] and
    /// [`crate::AgentScope`] are in each request's extensions. They add nothing to the
    /// card.
    pub fn routes(mut self, routes: Router) -> Self {
        self.routes = self.routes.merge(routes);
        self
    }

    /// Adds routes as [`A2aServerBuilder::routes`] does, whose requests belong to sessions
    /// that live in one process, named by `header` (MCP's `Mcp-Session-Id`). With several
    /// replicas on one store, a request is served by the replica whose response opened its
    /// session: the others pass it on there (through its front door, with the server's token)
    /// and stream the answer back; a session whose replica is gone is answered 404 (open a
    /// new one). Alone, the routes are served as they are.
    pub fn session_routes(mut self, routes: Router, header: HeaderName) -> Self {
        self.session_routes.push((routes, header));
        self
    }

    /// Adds routes under `prefix` whose requests carry their own authority in the path: a
    /// capability link, such as the forms agent's review page for a person's approval
    /// (`/approvals/{task}/{secret}`). The front door's `Host`/`Origin` checks, limits, rate,
    /// request ids and metrics apply; credentials are not required (the routes check the
    /// capability, or a token of their own); and the path beyond `prefix` is never logged,
    /// so that the secret it holds stays out of the logs.
    pub fn capability_routes(mut self, prefix: &str, routes: Router) -> Self {
        self.capability_prefixes
            .push(prefix.trim_end_matches('/').to_owned());
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
            session_routes,
            capability_prefixes,
            clock,
        } = self;
        config.validate()?;
        check_origins(&config)?;
        check_agents(&agents, several, default_agent.as_deref(), &config)?;
        let tls = config.tls.as_ref().map(super::tls::Tls::load).transpose()?;
        let (listener, local_addr) = listen(&config).await?;
        let manager = task_manager(&config, store, &clock).await?;
        let base_url = config
            .public_url
            .clone()
            .unwrap_or_else(|| format!("{}://{local_addr}", config.scheme()))
            .trim_end_matches('/')
            .to_owned();
        let metrics = Arc::new(Metrics::default());
        let front_door = front_door(&config, &metrics, &clock, local_addr, capability_prefixes)?;
        let (keys, jwks) = signing_material(&config)?;
        let (push, deliverer) = push_service(&config, &manager)?.unzip();
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
            push: push.as_ref(),
        };
        let (hosted, agent_routes) =
            build_agents(agents, &shared, several, default_agent.as_deref())?;
        let default = default_of(&hosted, several, default_agent.as_deref());
        let mut server_routes = own_routes;
        for (routes, header) in session_routes {
            let held = HeldSessions::new(
                manager.clone(),
                header,
                config.token.clone(),
                config.max_body_bytes,
            );
            server_routes = server_routes.merge(Arc::new(held).around(routes));
        }
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
            push,
        });
        let routes = router(&server, agent_routes, server_routes);
        Ok(A2aServer {
            listener,
            server,
            routes,
            local_addr,
            tls,
            deliverer,
        })
    }
}

impl A2aServer {
    /// Starts building a server for `executor`, served at the root.
    pub fn builder(executor: Arc<dyn AgentExecutor>) -> A2aServerBuilder {
        A2aServerBuilder {
            agents: vec![AgentMount::new(String::new(), executor)],
            ..A2aServerBuilder::empty(false)
        }
    }

    /// Starts building a server of several agents, each under `/agents/{id}`
    /// ([`A2aServerBuilder::agent`]); `GET /agents` lists them.
    pub fn hosting() -> A2aServerBuilder {
        A2aServerBuilder::empty(true)
    }
}

impl A2aServerBuilder {
    /// A builder with no agent yet and every default.
    fn empty(several: bool) -> Self {
        A2aServerBuilder {
            agents: Vec::new(),
            several,
            default_agent: None,
            config: ServerConfig::default(),
            store: None,
            extensions: Vec::new(),
            routes: Router::new(),
            session_routes: Vec::new(),
            capability_prefixes: Vec::new(),
            clock: Arc::new(TokioClock),
        }
    }
}

/// Binds `config.bind`; the listener and the address actually bound.
async fn listen(config: &ServerConfig) -> Result<(TcpListener, std::net::SocketAddr), ServerError> {
    let failed = |source| ServerError::Bind {
        bind: config.bind,
        source,
    };
    let listener = TcpListener::bind(config.bind).await.map_err(failed)?;
    let local_addr = listener.local_addr().map_err(failed)?;
    Ok((listener, local_addr))
}

/// The task manager over `store` (default: a memory store bounded by the configuration),
/// after failing the tasks a previous process left working.
async fn task_manager(
    config: &ServerConfig,
    store: Option<Arc<dyn TaskStore>>,
    clock: &Arc<dyn Clock>,
) -> Result<Arc<TaskManager>, ServerError> {
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
            lease_ttl: std::time::Duration::from_secs(config.replicas.lease_secs.max(1)),
        },
    ));
    let recovered = manager.recover().await.map_err(ServerError::Store)?;
    if recovered > 0 {
        tracing::warn!(
            tasks = recovered,
            "failed the tasks a previous process left working"
        );
    }
    Ok(manager)
}

/// Every `allowed_origins` entry is an origin the front door can match.
fn check_origins(config: &ServerConfig) -> Result<(), ServerError> {
    match config.allowed_origins.iter().find(|o| !is_origin(o)) {
        Some(bad) => Err(ServerError::Setting {
            setting: "allowed_origins",
            problem: format!(
                "{bad:?} is not an origin (scheme://host[:port], http or https, nothing after \
                 the host)"
            ),
        }),
        None => Ok(()),
    }
}

/// The front door for `config`, refusing gRPC calls as gRPC when the server serves it.
fn front_door(
    config: &ServerConfig,
    metrics: &Arc<Metrics>,
    clock: &Arc<dyn Clock>,
    local_addr: std::net::SocketAddr,
    capability_prefixes: Vec<String>,
) -> Result<Arc<FrontDoor>, ServerError> {
    // Its own names are served too: the public URL's host, the URL the other replicas reach
    // it at, and the address it is bound to (an IP literal, which no rebound name can be).
    let mut own_hosts: Vec<String> = config
        .public_url
        .as_deref()
        .and_then(url_host)
        .into_iter()
        .collect();
    own_hosts.extend(config.replicas.url.as_deref().and_then(url_host));
    if !local_addr.ip().is_unspecified() {
        own_hosts.push(local_addr.ip().to_string());
    }
    let front_door = FrontDoor::new(
        config,
        own_hosts,
        public_paths(config),
        metrics.clone(),
        clock.clone(),
    )?
    .with_capability_prefixes(capability_prefixes);
    #[cfg(feature = "grpc")]
    let front_door = front_door.with_grpc_refusal(crate::binding::grpc::status::refusal);
    Ok(Arc::new(front_door))
}

/// The keys that sign the cards, and the key set published beside them (with the announced
/// keys of a rotation), when any is configured.
fn signing_material(
    config: &ServerConfig,
) -> Result<(Vec<ferry_trust::keys::SigningKey>, Option<bytes::Bytes>), ServerError> {
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
    if keys.is_empty() && announced.is_empty() {
        return Ok((keys, None));
    }
    let set = signing::jwks(&keys, &announced)?;
    let jwks = bytes::Bytes::from(serde_json::to_vec(&set).unwrap_or_default());
    Ok((keys, Some(jwks)))
}

/// Push notifications, when the configuration offers them and the store keeps configs: the
/// service the handlers share, and the deliverer that [`A2aServer::run`] starts. Deliveries
/// are signed with the first signing key, if any.
fn push_service(
    config: &ServerConfig,
    manager: &Arc<TaskManager>,
) -> Result<Option<(Arc<PushService>, Deliverer)>, ServerError> {
    if !config.push.enabled || manager.store().push().is_none() {
        return Ok(None);
    }
    let client = crate::push::send::client(&config.push)
        .map_err(|e| ServerError::Push(format!("the delivery client: {e}")))?;
    let key = config
        .signing_keys
        .first()
        .map(signing::load_signing_key)
        .transpose()?;
    let service = Arc::new(PushService {
        settings: config.push.clone(),
        sender: Sender::new(client, key.map(Arc::new)),
        wake: Arc::new(tokio::sync::Notify::new()),
        metrics: Default::default(),
    });
    let clock = manager.clone();
    let deliverer = Deliverer {
        store: manager.store().clone(),
        service: service.clone(),
        now_ms: Arc::new(move || clock.now_ms()),
        lease: uuid::Uuid::new_v4().simple().to_string(),
    };
    Ok(Some((service, deliverer)))
}

/// Each agent's service and routes, in the order they were added.
fn build_agents(
    agents: Vec<AgentMount>,
    shared: &Shared<'_>,
    several: bool,
    default_agent: Option<&str>,
) -> Result<(Vec<Arc<AgentService>>, Vec<Router>), ServerError> {
    let mut hosted = Vec::with_capacity(agents.len());
    let mut routes = Vec::with_capacity(agents.len());
    for mount in agents {
        let is_default = !several || default_agent == Some(mount.id.as_str());
        let (service, agent_routes) = build_agent(mount, shared, several, is_default)?;
        hosted.push(service);
        routes.push(agent_routes);
    }
    Ok((hosted, routes))
}

/// The agent served at the root: the only one, or the named default of several.
fn default_of(
    hosted: &[Arc<AgentService>],
    several: bool,
    default_agent: Option<&str>,
) -> Option<Arc<AgentService>> {
    if !several {
        return hosted.first().cloned();
    }
    let id = default_agent?;
    hosted.iter().find(|a| a.agent_id() == Some(id)).cloned()
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
        shared_tasks,
    } = mount;
    // gRPC routes by method path alone, so only the agent at the root can have it.
    let grpc = shared.config.serves_grpc() && (!several || is_default);
    let shared_tasks = shared_tasks.unwrap_or(shared.config.shared_tasks);
    let config =
        if grpc == shared.config.serves_grpc() && shared_tasks == shared.config.shared_tasks {
            shared.config.clone()
        } else {
            Arc::new(ServerConfig {
                grpc,
                shared_tasks,
                ..(**shared.config).clone()
            })
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
    if let Some(push) = shared.push {
        handler = handler.with_push(push.clone(), ferry_proto::card_url(&card_base));
    }
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
    let mut card = build_card(handler.description(), &config, &card_base, &entries);
    card.capabilities.push_notifications = Some(handler.pushes());
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
