//! The A2A semantics, with no HTTP in them: the request handler, tasks and their event logs,
//! the store, agent turns and the streams subscribers read. The bindings in [`crate::http`]
//! translate to and from this layer; nothing here imports them.

pub mod call;
pub mod dedup;
pub mod doc;
pub mod handler;
pub mod record;
pub mod store;
pub mod stream;
pub mod turn;
pub mod turn_data;
