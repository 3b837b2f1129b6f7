//! Call any A2A v1.0 agent.
//!
//! [`A2aClient::connect`] resolves the agent card from a base URL, picks the first interface
//! whose binding it speaks (JSON-RPC, HTTP+JSON or gRPC; or the one you prefer) and calls it: every
//! operation, `A2A-Version: 1.0` always, `A2A-Extensions` when asked, the interface's tenant on
//! every call. Errors come back as one enum mapped by `ErrorInfo.reason` or JSON-RPC code, never
//! by HTTP status alone. Transient failures are retried with backoff and `Retry-After`; a
//! `SendMessage` only when it never reached the server. A dropped stream is resumed with
//! `SubscribeToTask` and `Last-Event-ID`, so the caller sees one continuous stream.
//! Every call runs in an `a2a.client` span, and its requests carry the W3C trace context
//! (`traceparent`) when the program installed OpenTelemetry; nothing when it did not.

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
