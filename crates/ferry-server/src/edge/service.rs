//! What the bindings share: the request handler, the configuration, the card, the front
//! door's stream permits and the shutdown signal — one [`AgentService`] per agent — and what
//! the server's own routes (probes, metrics, the key set, the list of agents) read:
//! [`ServerState`].

use crate::card::ServedCard;
use crate::config::ServerConfig;
use crate::core::handler::RequestHandler;
use crate::core::manager::TaskManager;
use crate::edge::front_door::{self, AgentGate, FrontDoor, StreamPermit};
use crate::edge::metrics::Metrics;
use std::sync::Arc;

/// State shared by every request to one agent.
#[derive(Debug)]
pub(crate) struct AgentService {
    /// The protocol semantics.
    pub(crate) handler: RequestHandler,
    /// The configuration.
    pub(crate) config: Arc<ServerConfig>,
    /// The public card.
    pub(crate) card: ServedCard,
    /// Extension URIs the card declares.
    pub(crate) declared_extensions: Vec<String>,
    /// Extension URIs the card marks required.
    pub(crate) required_extensions: Vec<String>,
    /// Turns true when the server begins to shut down; open streams end on it.
    pub(crate) closing: Arc<tokio::sync::watch::Sender<bool>>,
    /// Auth, Host/Origin checks, limits.
    pub(crate) front_door: Arc<FrontDoor>,
    /// The agent's id and own limits, on a server of several agents.
    pub(crate) gate: Option<Arc<AgentGate>>,
}

impl AgentService {
    /// Takes a slot for one more open stream, or refuses with 503 `TOO_MANY_STREAMS`. Taken
    /// before the stream's work starts; held until its body ends.
    pub(crate) fn stream_permit(&self) -> Result<StreamPermit, ferry_proto::A2aError> {
        let server = self
            .front_door
            .streams
            .clone()
            .try_acquire_owned()
            .map_err(|_| front_door::too_many_streams())?;
        let agent = match &self.gate {
            Some(gate) => gate.stream_permit()?,
            None => None,
        };
        Ok(StreamPermit::new(server, agent))
    }

    /// The agent's id on a server of several agents.
    pub(crate) fn agent_id(&self) -> Option<&str> {
        self.gate.as_ref().map(|g| g.id())
    }
}

/// What the server's own routes read: every hosted agent, the shared front door and
/// counters, the key set.
#[derive(Debug)]
pub(crate) struct ServerState {
    /// The agents, in the order they were added (one, without an id, on a server of one
    /// agent).
    pub(crate) agents: Vec<Arc<AgentService>>,
    /// The agent also served at the root, if any.
    pub(crate) default: Option<Arc<AgentService>>,
    /// Whether agents are served under `/agents/{id}` (a server of several agents).
    pub(crate) several: bool,
    /// The task manager the agents share.
    pub(crate) manager: Arc<TaskManager>,
    /// The configuration.
    pub(crate) config: Arc<ServerConfig>,
    /// Auth, Host/Origin checks, limits.
    pub(crate) front_door: Arc<FrontDoor>,
    /// Counters for `/metrics`.
    pub(crate) metrics: Arc<Metrics>,
    /// Turns true when the server begins to shut down.
    pub(crate) closing: Arc<tokio::sync::watch::Sender<bool>>,
    /// The published key set (`/.well-known/jwks.json`), when the cards are signed.
    pub(crate) jwks: Option<bytes::Bytes>,
    /// The advertised base URL (no trailing slash).
    pub(crate) base_url: String,
    /// Push notifications, when offered.
    pub(crate) push: Option<Arc<crate::push::PushService>>,
}
