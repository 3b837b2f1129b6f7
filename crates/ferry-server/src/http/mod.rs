//! Serving the core over HTTP: the JSON-RPC and REST bindings (thin translators over the
//! operation table and the request handler), SSE framing, strict body decoding, the front
//! door, the agent card, probes, metrics, and the server that puts them together (one agent,
//! or several mounted under `/agents/{id}`).

pub(crate) mod card;
pub mod decode;
pub mod front_door;
pub(crate) mod jsonrpc;
pub(crate) mod jsonrpc_v03;
pub mod metrics;
pub(crate) mod mount;
pub(crate) mod params;
pub(crate) mod preface;
pub(crate) mod probes;
pub(crate) mod request_id;
pub(crate) mod response;
pub(crate) mod rest;
pub(crate) mod rest_query;
pub(crate) mod rest_v03;
pub(crate) mod server;
pub(crate) mod signing;
pub(crate) mod sse;
pub(crate) mod state;
pub(crate) mod trace_context;
pub(crate) mod v03;
