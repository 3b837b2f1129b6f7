//! The A2A semantics, with no HTTP in them: the request handler, tasks and their event logs,
//! the store, agent turns and the streams subscribers read. The bindings in [`crate::http`]
//! translate to and from this layer; nothing here imports them.

pub(crate) mod call;
pub(crate) mod dedup;
pub(crate) mod doc;
pub(crate) mod handler;
pub(crate) mod record;
pub(crate) mod store;
pub(crate) mod stream;
pub(crate) mod turn;
pub(crate) mod turn_data;
