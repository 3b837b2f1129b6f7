//! Serve any [`ferry_agent::AgentExecutor`] over A2A v1.0.
//!
//! One [`RequestHandler`] holds the protocol's semantics (task lifecycle, blocking and
//! `returnImmediately`, history, multi-turn rules, cancel, subscribe, ListTasks paging); the
//! JSON-RPC and HTTP+JSON bindings translate to and from it, and SSE streams carry each task's
//! event log with sequence numbers.
//!
//! ```no_run
//! use ferry_agents::EchoAgent;
//! use ferry_server::{A2aServer, ServerConfig};
//! use std::sync::Arc;
//!
//! # async fn run() -> std::io::Result<()> {
//! let server = A2aServer::bind(Arc::new(EchoAgent), ServerConfig::default()).await?;
//! println!("agent card: {}", server.card_url());
//! server.run(async { let _ = tokio::signal::ctrl_c().await; }).await
//! # }
//! ```

mod cdp_config;
mod config;
mod config_file;
mod core;
mod http;

pub use crate::core::handler::{
    CallContext, DEFAULT_PAGE_SIZE, JsonDoc, MAX_PAGE_SIZE, RequestHandler,
};
pub use crate::core::store::{InMemoryTaskStore, StoreError, TaskStore};
pub use crate::core::stream::{StreamItem, TaskStream};
pub use cdp_config::{
    CDP_CONFIG_PATH, CDP_CONFIG_URI, CdpRegistry, parse_registration, parse_removal,
};
pub use config::{AnnouncedKeyConfig, ServerConfig};
pub use config_file::ConfigError;
pub use http::app::{A2aServer, AppState, router};
pub use http::card::{ServedCard, WELL_KNOWN_CARD_PATH, build_card};
pub use http::params::{EXTENSIONS_HEADER, VERSION_HEADER};
pub use http::signing::{JWKS_PATH, SigningError, SigningKeyConfig};
pub use http::{decode, front_door, metrics};
