//! Putting it together: the router, the shared state, and a server that drains on shutdown.

use crate::card::{ServedCard, WELL_KNOWN_CARD_PATH, build_card};
use crate::config::ServerConfig;
use crate::handler::RequestHandler;
use crate::store::{InMemoryTaskStore, TaskStore};
use crate::{jsonrpc, rest};
use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::{any, get, post};
use ferry_agent::AgentExecutor;
use std::future::{Future, IntoFuture};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// How long in-flight requests may run after shutdown begins.
pub const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

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

impl A2aServer {
    /// Binds `config.bind` and prepares to serve `executor` with an in-memory store.
    pub async fn bind(
        executor: Arc<dyn AgentExecutor>,
        config: ServerConfig,
    ) -> std::io::Result<Self> {
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
        let config = Arc::new(config);
        let handler = RequestHandler::new(executor, store, config.clone());
        let card = build_card(handler.description(), &config, &base_url);
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

    /// Serves until `shutdown` resolves, then stops accepting, ends open streams, and gives
    /// in-flight requests up to [`DRAIN_TIMEOUT`] to finish.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let store = self.state.handler.store().clone();
        let sweeper = tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tick.tick().await;
                store.sweep();
            }
        });
        let closing = self.state.closing.clone();
        let mut closed = closing.subscribe();
        let app = router(self.state);
        let signal = async move {
            shutdown.await;
            tracing::info!("shutting down: closing streams, draining requests");
            closing.send_replace(true);
        };
        let serve = axum::serve(self.listener, app).with_graceful_shutdown(signal);
        let deadline = async move {
            let _ = closed.wait_for(|c| *c).await;
            tokio::time::sleep(DRAIN_TIMEOUT).await;
        };
        let result = tokio::select! {
            r = serve.into_future() => r,
            () = deadline => {
                tracing::warn!("drain timeout reached; aborting what still runs");
                Ok(())
            }
        };
        sweeper.abort();
        result
    }
}

/// The routes: the card (at the root and under each interface), JSON-RPC, and REST.
pub fn router(state: Arc<AppState>) -> Router {
    let rpc = state.config.jsonrpc_path.clone();
    let rest = state.config.rest_path.clone();
    let limit = state.config.max_body_bytes;
    Router::new()
        .route(WELL_KNOWN_CARD_PATH, get(card))
        .route(&format!("{rpc}{WELL_KNOWN_CARD_PATH}"), get(card))
        .route(&format!("{rest}{WELL_KNOWN_CARD_PATH}"), get(card))
        .route(&rpc, post(jsonrpc::handle))
        // Clients that join the interface URL with "/" (httpx base_url does) post here.
        .route(&format!("{rpc}/"), post(jsonrpc::handle))
        .route(&format!("{rest}/{{*path}}"), any(rest::handle))
        .layer(DefaultBodyLimit::max(limit))
        .with_state(state)
}

async fn card(State(app): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    app.card.respond(&headers)
}
