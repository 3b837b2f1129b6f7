//! The edge: what every binding runs under, and none of them owns. The front door
//! (credentials → caller and access, `Host`/`Origin`, limits), request ids, the service
//! parameters a call carries (version, extensions, resume point), metrics labels and counters,
//! trace context, the error responses refusals use, and the per-agent service the bindings
//! call into. The bindings (`crate::binding`) and the server (`crate::server`) import it; it
//! imports neither.

pub(crate) mod call;
pub(crate) mod front_door;
pub(crate) mod metrics;
pub(crate) mod params;
pub(crate) mod request_id;
pub(crate) mod response;
pub(crate) mod service;
pub(crate) mod sessions;
pub(crate) mod trace_context;
