//! Serving the core over HTTP: the JSON-RPC and REST bindings (thin translators over the
//! operation table and the request handler), SSE framing, strict body decoding, the front
//! door, the agent card, probes, metrics, and the server that puts them together.

pub mod card;
pub mod decode;
pub mod front_door;
pub mod jsonrpc;
pub mod metrics;
pub mod params;
pub mod probes;
pub mod request_id;
pub mod response;
pub mod rest;
pub mod server;
pub mod signing;
pub mod sse;
pub mod state;
