//! The bindings: how A2A calls look on the wire. JSON-RPC and HTTP+JSON (REST) over HTTP with
//! SSE streams, A2A v0.3's two, and gRPC; strict body decoding. Each translates a request into
//! the core's operation and its answer back; the semantics are the request handler's.

pub mod decode;
pub(crate) mod grpc;
pub(crate) mod jsonrpc;
pub(crate) mod rest;
pub(crate) mod rest_query;
pub(crate) mod sse;
pub(crate) mod v03;
