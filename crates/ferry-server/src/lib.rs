#![doc = include_str!("../README.md")]
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
