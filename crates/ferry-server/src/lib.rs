//! Serve any [`AgentExecutor`] over A2A v1.0 (JSON-RPC, HTTP+JSON and gRPC, with SSE
//! streams) and, next to it, A2A v0.3.
//!
//! Four layers, and imports only run downwards (the architecture test checks it):
//!
//! - the core (no wire format): one request handler holds the protocol's semantics (task
//!   lifecycle, blocking and `returnImmediately`, history, multi-turn rules, cancel, subscribe,
//!   ListTasks paging) and the agent, over a task manager that applies events to tasks in a
//!   data-only [`TaskStore`] (memory, or SQL in `ferry-store-sql`). It answers every
//!   operation of ferry-proto's operation table with typed values;
//! - the edge, under every binding: the front door (credentials → caller and access,
//!   `Host`/`Origin`, limits), request ids, the service parameters a call carries, metrics,
//!   and each agent's service;
//! - the bindings: each one codec (read a call, write its answer, its stream, its error) run
//!   by one path — JSON-RPC and REST with SSE, gRPC (feature `grpc`), v0.3's JSON-RPC and REST
//!   (feature `v03`); an event is encoded once per form for every subscriber;
//! - the server: [`A2aServerBuilder`], the routes, the accept loop and the drain.
//!
//! Extensions plug in through one seam, [`ServerExtension`]: a card entry, routes behind the
//! front door, typed data for each turn. The server knows none by name.
//!
//! One server may also host several agents ([`A2aServer::hosting`] with [`AgentMount`]s): each
//! under `/agents/{id}` with its own card, interfaces, task namespace and limits, one of them
//! optionally at the root, and tokens that reach only some of them
//! ([`ServerConfig::scoped_tokens`]).
//!
//! ```no_run
//! use ferry_agents::EchoAgent;
//! use ferry_server::{A2aServer, ServerConfig};
//! use std::sync::Arc;
//!
//! # async fn run() -> Result<(), ferry_server::ServerError> {
//! let server = A2aServer::builder(Arc::new(EchoAgent))
//!     .config(ServerConfig::default())
//!     .bind()
//!     .await?;
//! println!("agent card: {}", server.card_url());
//! server.run(async { let _ = tokio::signal::ctrl_c().await; }).await
//! # }
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

mod binding;
mod card;
pub mod clock;
mod config;
mod config_file;
mod core;
mod edge;
mod error;
pub mod extension;
mod histogram;
mod ids;
mod push;
mod server;
mod signing;

pub use crate::core::SPAN_TARGET;
pub use crate::core::call::Access;
pub use crate::core::turn_data::TurnDataSource;
pub use binding::decode;
pub use card::WELL_KNOWN_CARD_PATH;
pub use config::{
    AgentLimits, AnnouncedKeyConfig, AuthConfig, ClientAuth, OidcConfig, PushSettings,
    ReplicaSettings, ScopedToken, ServerConfig, SigningKeyConfig, TlsConfig, redact_store_url,
};
pub use config_file::ConfigError;
pub use edge::front_door::{AgentScope, Caller, Forwarded};
pub use edge::params::{EXTENSIONS_HEADER, VERSION_HEADER};
pub use error::ServerError;
pub use extension::ServerExtension;
pub use ferry_agent::{
    AgentDescription, AgentError, AgentExecutor, AgentFuture, EventSink, RequestContext,
};
pub use ferry_store::{MemoryLimits, MemoryStore, StoreError, TaskStore};
pub use server::mount::{AgentMount, MAX_AGENT_ID_LEN, check_agent_id};
pub use server::{A2aServer, A2aServerBuilder};
pub use signing::{JWKS_PATH, SigningError};
