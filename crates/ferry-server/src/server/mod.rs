//! Putting it together: the builder ([`builder`]), the routes ([`routes`]), the accept loop
//! and the shutdown ([`serve`]).

mod builder;
pub(crate) mod mount;
mod preface;
mod probes;
mod routes;
mod serve;
mod tls;

pub use builder::A2aServerBuilder;

use crate::card::WELL_KNOWN_CARD_PATH;
use crate::config::ServerConfig;
use crate::edge::service::ServerState;
use crate::error::ServerError;
use axum::Router;
use ferry_agent::AgentExecutor;
use routes::agent_card_url;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;

/// An A2A server, bound to a socket and ready to run: one agent at the root, or several
/// under `/agents/{id}`.
pub struct A2aServer {
    listener: TcpListener,
    server: Arc<ServerState>,
    routes: Router,
    local_addr: SocketAddr,
    /// The TLS setup, on a server that serves TLS.
    tls: Option<Arc<tls::Tls>>,
    /// The push deliverer, started by `run`, when push notifications are offered.
    deliverer: Option<crate::push::deliver::Deliverer>,
}

impl std::fmt::Debug for A2aServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aServer")
            .field("local_addr", &self.local_addr)
            .finish_non_exhaustive()
    }
}

impl A2aServer {
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

    /// The address clients reach the server at: its public URL, else `scheme://` and the
    /// bound address (no trailing slash).
    pub fn base_url(&self) -> &str {
        &self.server.base_url
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
        if let Some(deliverer) = self.deliverer {
            // It stops when the server starts closing; attempts in flight then are left to
            // their lease.
            let nice = deliverer.service.settings.nice;
            crate::push::thread::spawn(deliverer, self.server.closing.subscribe(), nice)
                .map_err(|e| ServerError::Push(format!("the deliverer's thread: {e}")))?;
        }
        serve::serve(self.listener, self.server, self.routes, self.tls, shutdown).await;
        Ok(())
    }
}
