//! Who is calling, and with which service parameters: what a binding tells the core besides
//! the request itself.

/// Filled by the binding from the transport (path, headers, connection).
#[derive(Debug, Clone, Default)]
pub struct CallContext {
    /// Tenant from the REST path prefix or the request's `tenant` field.
    pub tenant: String,
    /// Extensions the client activated and the agent declared.
    pub extensions: Vec<String>,
    /// The authenticated caller, if any.
    pub caller: Option<String>,
    /// The client's address (from the connection), if known.
    pub client: Option<std::net::IpAddr>,
    /// The last event a reconnecting subscriber saw (SSE `Last-Event-ID`).
    pub resume_after: Option<u64>,
}
