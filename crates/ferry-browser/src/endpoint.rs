//! Browsers someone else runs: the DevTools endpoints an orchestrator registers (through the
//! `cdp-config/v1` extension of the server) for an agent to connect to instead of launching
//! its own Chromium.

use std::collections::BTreeMap;
use std::sync::Arc;

/// A browser's DevTools endpoint: where it is, and the headers (often a credential) needed to
/// reach it.
#[derive(Clone, PartialEq, Eq)]
pub struct CdpEndpoint {
    /// The registered name (`chromium`, `chromium-buyer`).
    pub name: String,
    /// The HTTP endpoint (`/json/version` lives under it).
    pub http_url: String,
    /// The WebSocket endpoint.
    pub ws_url: String,
    /// Headers to send when connecting.
    pub headers: BTreeMap<String, String>,
    /// Free-form metadata given at registration.
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
}

impl std::fmt::Debug for CdpEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // URLs and header values often carry credentials: never in logs.
        f.debug_struct("CdpEndpoint")
            .field("name", &self.name)
            .field("has_headers", &!self.headers.is_empty())
            .finish_non_exhaustive()
    }
}

/// The endpoints one turn of an agent sees: a snapshot, so later registrations do not change
/// a running turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CdpEndpoints(pub Arc<BTreeMap<String, CdpEndpoint>>);

/// Why [`CdpEndpoints::pick`] found no endpoint to use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NoEndpoint {
    /// None is registered.
    #[error("no CDP endpoint is registered (register one with the cdp-config/v1 extension)")]
    NoneRegistered,
    /// None has the name asked for.
    #[error(
        "no CDP endpoint named {name:?} is registered (register it with the cdp-config/v1 extension)"
    )]
    UnknownName {
        /// The name asked for.
        name: String,
    },
    /// Several are registered and no name says which.
    #[error("{count} CDP endpoints are registered; name the one to use")]
    Ambiguous {
        /// How many.
        count: usize,
    },
}

impl NoEndpoint {
    /// A stable dotted code: `cdp.no_endpoint` or `cdp.ambiguous`.
    pub fn code(&self) -> &'static str {
        match self {
            NoEndpoint::NoneRegistered | NoEndpoint::UnknownName { .. } => "cdp.no_endpoint",
            NoEndpoint::Ambiguous { .. } => "cdp.ambiguous",
        }
    }
}

impl CdpEndpoints {
    /// The endpoint named `name`, or the only one when `name` is `None`.
    ///
    /// ```
    /// use ferry_browser::{CdpEndpoints, NoEndpoint};
    /// assert_eq!(CdpEndpoints::default().pick(None), Err(NoEndpoint::NoneRegistered));
    /// ```
    pub fn pick(&self, name: Option<&str>) -> Result<&CdpEndpoint, NoEndpoint> {
        match name {
            Some(n) => self
                .0
                .get(n)
                .ok_or_else(|| NoEndpoint::UnknownName { name: n.into() }),
            None => match (self.0.len(), self.0.values().next()) {
                (1, Some(only)) => Ok(only),
                (0, _) | (_, None) => Err(NoEndpoint::NoneRegistered),
                (count, Some(_)) => Err(NoEndpoint::Ambiguous { count }),
            },
        }
    }

    /// How many are registered.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when none is.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}
