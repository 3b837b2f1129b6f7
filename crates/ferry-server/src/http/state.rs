//! What the bindings share: the request handler, the configuration, the card, the front
//! door's stream permits and the shutdown signal.

use crate::config::ServerConfig;
use crate::core::handler::RequestHandler;
use crate::core::stream::TaskStream;
use crate::http::card::ServedCard;
use crate::http::front_door::{self, FrontDoor};
use crate::http::metrics::Metrics;
use crate::http::sse::{SseFraming, sse_response};
use axum::response::Response;
use std::sync::Arc;
use tokio::sync::OwnedSemaphorePermit;

/// State shared by every request.
#[derive(Debug)]
pub struct AppState {
    /// The protocol semantics.
    pub handler: RequestHandler,
    /// The configuration.
    pub config: Arc<ServerConfig>,
    /// The public card.
    pub card: ServedCard,
    /// Extension URIs the card declares.
    pub declared_extensions: Vec<String>,
    /// Extension URIs the card marks required.
    pub required_extensions: Vec<String>,
    /// Turns true when the server begins to shut down; open streams end on it.
    pub closing: tokio::sync::watch::Sender<bool>,
    /// Auth, Host/Origin checks, limits.
    pub front_door: Arc<FrontDoor>,
    /// Counters for `/metrics`.
    pub metrics: Arc<Metrics>,
    /// The published key set (`/.well-known/jwks.json`), when the card is signed.
    pub jwks: Option<bytes::Bytes>,
}

impl AppState {
    /// Takes a slot for one more open stream, or refuses with 503 `TOO_MANY_STREAMS`. Taken
    /// before the stream's work starts; held until its body ends.
    pub fn stream_permit(&self) -> Result<OwnedSemaphorePermit, ferry_proto::A2aError> {
        self.front_door
            .streams
            .clone()
            .try_acquire_owned()
            .map_err(|_| front_door::too_many_streams())
    }

    /// The SSE response for `stream` with this server's keep-alive and shutdown signal.
    pub fn sse<F: SseFraming>(
        &self,
        stream: TaskStream,
        framing: F,
        permit: OwnedSemaphorePermit,
    ) -> Response {
        sse_response(
            stream,
            framing,
            self.config.sse_keepalive(),
            self.closing.subscribe(),
            permit,
        )
    }
}
