//! The proxy agent: a gateway in front of one remote A2A agent.
//!
//! ferry serves it with its own interfaces, security scheme, front door and limits, and its
//! task manager keeps the **local** tasks; the proxy forwards each turn to the remote agent
//! through ferry-client and relays what the remote reports:
//!
//! ```text
//! caller ──A2A──► ferry (front door, local task) ──execute──► ProxyAgent ──A2A──► remote agent
//!        ◄──────── local events ◄──────────── EventSink ◄──── relay ◄──── remote events
//! ```
//!
//! - [`config`]: what it is configured with, and the card pins;
//! - [`ids`]: local ↔ remote task and context ids, and where they are kept;
//! - [`forward`]: one turn sent and followed to its end (stream, resume, poll), and cancel;
//! - [`relay`]: remote events as local ones, marked as the remote's data;
//! - [`error`]: start-up errors and how a failed remote call becomes the turn's error.
//!
//! What the remote sends is data, never instructions: its messages and artifacts reach the
//! local task marked `ferry.proxy/untrusted`, its metadata cannot write the proxy's own keys,
//! and the ids a follow-up continues are read only from places the agent alone writes.

mod config;
mod error;
mod forward;
mod ids;
mod relay;

pub use config::{PreferBinding, ProxyConfig};
pub use error::{Pin, ProxyError};

use error::ErrorMapper;
use ferry_agent::{AgentDescription, AgentExecutor, AgentFuture, EventSink, RequestContext};
use ferry_client::A2aClient;
use ferry_proto::AgentCard;
use ids::IdMap;
use std::fmt;

/// Forwards every turn to one remote A2A agent: ferry keeps the local task, the proxy sends
/// each turn on and relays the remote's events into it, marked as the remote's data.
///
/// ```no_run
/// use ferry_agents::{ProxyAgent, ProxyConfig};
/// use ferry_agent::AgentExecutor;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let mut config = ProxyConfig::new("https://agent.example.com");
/// config.card_digest = Some("sha256:…".into());
/// let proxy = ProxyAgent::connect(config).await?;
/// println!("serving {} for {}", proxy.describe().name, proxy.remote_card().name);
/// # Ok(()) }
/// ```
pub struct ProxyAgent {
    client: A2aClient,
    card: AgentCard,
    streaming: bool,
    ids: IdMap,
    errors: ErrorMapper,
}

impl fmt::Debug for ProxyAgent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProxyAgent")
            .field("remote", &self.errors.url)
            .field("card", &self.card.name)
            .field("binding", &self.client.binding())
            .field("streaming", &self.streaming)
            .finish_non_exhaustive()
    }
}

impl ProxyAgent {
    /// Metadata key: the remote task's id, on every message and artifact the proxy emits.
    pub const REMOTE_TASK_ID: &'static str = ids::REMOTE_TASK_ID;
    /// Metadata key: the remote context's id (when the remote named one).
    pub const REMOTE_CONTEXT_ID: &'static str = ids::REMOTE_CONTEXT_ID;
    /// Metadata key: the remote's id of a relayed message (the local one is fresh).
    pub const REMOTE_MESSAGE_ID: &'static str = ids::REMOTE_MESSAGE_ID;
    /// Metadata key, `true` on everything relayed: the parts and the metadata beside it are
    /// the remote agent's data, not ferry's word.
    pub const UNTRUSTED: &'static str = ids::UNTRUSTED;
    /// Metadata key, `true` on an INPUT_REQUIRED / AUTH_REQUIRED message the proxy wrote
    /// because the remote sent none.
    pub const SYNTHESIZED: &'static str = ids::SYNTHESIZED;

    /// Fetches and verifies the remote agent's card (every pin of `config` must hold) and
    /// connects to the interface it picks. A pin the card fails is a
    /// [`ProxyError::PinMismatch`] naming the pin: serving a card other than the one pinned
    /// would forward callers to someone else.
    pub async fn connect(config: ProxyConfig) -> Result<ProxyAgent, ProxyError> {
        let options = config.client_options()?;
        let key_pins = (config.card_key.is_some(), config.jwks.is_some());
        let (client, card) = A2aClient::connect(&config.url, options)
            .await
            .map_err(|e| ProxyError::of_connect(&config.url, e, key_pins))?;
        let streaming = card.capabilities.streaming.unwrap_or(false);
        Ok(ProxyAgent {
            client,
            card,
            streaming,
            ids: IdMap::default(),
            errors: ErrorMapper {
                url: config.url.clone(),
                token: config.token.clone(),
                timeout_secs: config.timeout_secs,
            },
        })
    }

    /// The remote agent's card, as fetched and verified at [`ProxyAgent::connect`].
    pub fn remote_card(&self) -> &AgentCard {
        &self.card
    }
}

impl AgentExecutor for ProxyAgent {
    /// The remote card's name, description, version, skills, default modes and streaming
    /// capability. Not its extensions (the proxy does not forward their activation) and not
    /// the skills' security requirements (they name the remote's schemes; callers meet
    /// ferry's).
    fn describe(&self) -> AgentDescription {
        let card = &self.card;
        let mut description = AgentDescription::new(card.name.clone(), card.description.clone())
            .with_version(card.version.clone())
            .with_skills(
                card.skills
                    .iter()
                    .cloned()
                    .map(|mut skill| {
                        skill.security_requirements.clear();
                        skill
                    })
                    .collect(),
            );
        description.input_modes = card.default_input_modes.clone();
        description.output_modes = card.default_output_modes.clone();
        description.streaming = self.streaming;
        description
    }

    fn execute(&self, ctx: RequestContext, events: EventSink) -> AgentFuture<'_> {
        Box::pin(async move { self.forward(&ctx, &events).await })
    }

    fn cancel(&self, ctx: RequestContext, events: EventSink) -> AgentFuture<'_> {
        Box::pin(async move { self.cancel_remote(&ctx, &events).await })
    }
}
