//! The one seam through which extensions plug into the server (A2A §3.2 "extensions").
//!
//! A [`ServerExtension`] contributes three things, and the server core knows none of them by
//! name:
//!
//! 1. its entry in the card's `capabilities.extensions` (URI, description, `required`);
//! 2. routes of its own, mounted behind the same front door as the bindings: the token,
//!    `Host`/`Origin` checks, limits, request ids and metrics apply to them unchanged;
//! 3. typed data for each turn of the agent ([`TurnDataSource`]), which the agent reads with
//!    `ctx.extension::<T>()`.
//!
//! Extension routes answer errors with [`error_response`] and read bodies with [`read_body`],
//! so that they look and behave like the rest of the server.
//!
//! ```
//! use ferry_proto::AgentExtension;
//! use ferry_server::ServerExtension;
//! use std::sync::Arc;
//!
//! /// Declares `urn:example:trace:v1` and serves `GET /ext/trace`.
//! #[derive(Debug)]
//! struct Trace;
//!
//! impl ServerExtension for Trace {
//!     fn card_entry(&self) -> AgentExtension {
//!         AgentExtension {
//!             uri: "urn:example:trace:v1".into(),
//!             description: "Traces.".into(),
//!             required: false,
//!             params: None,
//!         }
//!     }
//!
//!     fn routes(self: Arc<Self>, _limits: ferry_server::decode::BodyLimits) -> axum::Router {
//!         axum::Router::new().route("/ext/trace", axum::routing::get(|| async { "[]" }))
//!     }
//! }
//! ```

use crate::binding::decode::BodyLimits;
use crate::core::turn_data::TurnDataSource;
use ferry_proto::{A2aError, AgentExtension, ErrorTable};
use std::sync::Arc;

pub use crate::edge::request_id::RequestId;
pub use crate::edge::response::{json as json_response, read_body};

/// A server extension: a card entry, routes behind the front door, data for each turn.
pub trait ServerExtension: std::fmt::Debug + Send + Sync + 'static {
    /// Its entry in the card's `capabilities.extensions`.
    fn card_entry(&self) -> AgentExtension;

    /// Its routes (absolute paths, e.g. `/ext/cdp-config`), mounted behind the front door.
    /// `limits` are the server's body limits, for bodies the routes read. None by default.
    fn routes(self: Arc<Self>, limits: BodyLimits) -> axum::Router {
        let _ = limits;
        axum::Router::new()
    }

    /// What each turn of the agent should see from this extension. None by default.
    fn turn_data(self: Arc<Self>) -> Option<Arc<dyn TurnDataSource>> {
        None
    }
}

/// The error response of an extension's route: an AIP-193 body with the status of the
/// error's kind and the request id, as every refusal of the server.
pub fn error_response(
    error: &A2aError,
    request_id: Option<&RequestId>,
) -> axum::response::Response {
    crate::edge::response::rest_error(error, ErrorTable::V1_0_1, request_id)
}
