#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod client;
mod endpoint;
mod error;
#[cfg(feature = "grpc")]
mod grpc;
pub mod oauth;
pub mod parse;
pub mod push;
mod retry;
pub mod sse;
pub mod tls;
mod trace;
#[cfg(feature = "v03")]
mod v03;

pub use client::stream::EventStream;
pub use client::{A2aClient, ClientOptions};
pub use endpoint::{Binding, Endpoint};
pub use error::ClientError;
pub use ferry_trust::fetch::Expect;
pub use retry::RetryPolicy;
pub use tls::ClientTls;
