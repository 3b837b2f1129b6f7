//! The A2A semantics, with no HTTP in them: the request handler, tasks (the manager over the store,
//! and the live parts of followed tasks), agent turns and the streams subscribers read. The bindings in [`crate::binding`]
//! translate to and from this layer; nothing here imports them.

pub(crate) mod answer;
pub(crate) mod call;
pub(crate) mod dedup;
pub(crate) mod forward;
pub(crate) mod handler;
pub(crate) mod live;
pub(crate) mod manager;
pub(crate) mod owner;
pub(crate) mod replica_metrics;
pub(crate) mod replicas;
pub(crate) mod stream;
pub(crate) mod turn;
pub(crate) mod turn_data;

/// The target of the core's spans (`a2a.operation`, `a2a.turn`), both at DEBUG: what a span
/// exporter enables (`RUST_LOG=a2a=debug` shows them in the log too).
pub const SPAN_TARGET: &str = "a2a";
