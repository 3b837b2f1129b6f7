//! The routes: each agent's bindings and card, the server's own (metrics, the key set, the
//! list of agents), the probes, and the front door around them.

use super::probes;
#[cfg(feature = "grpc")]
use crate::binding::grpc;
use crate::binding::{deliveries, jsonrpc, rest};
use crate::card::WELL_KNOWN_CARD_PATH;
use crate::edge::front_door::{self, AgentScope};
use crate::edge::metrics::CallLabel;
use crate::edge::response::json;
use crate::edge::service::{AgentService, ServerState};
use crate::signing::JWKS_PATH;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use axum::routing::{any, get, post};
use std::sync::Arc;

/// The card URL of agent `id` on the server at `base`.
pub(super) fn agent_card_url(base: &str, id: &str) -> String {
    format!("{base}/agents/{id}{WELL_KNOWN_CARD_PATH}")
}

/// One agent's bindings: its card (at its root and under each interface), JSON-RPC, REST,
/// and gRPC when its configuration serves it.
pub(super) fn agent_routes(state: &Arc<AgentService>) -> Router {
    let rpc = state.config.jsonrpc_path.as_str();
    let rest = state.config.rest_path.as_str();
    let routes = Router::new()
        .route(WELL_KNOWN_CARD_PATH, get(card))
        .route(&format!("{rpc}{WELL_KNOWN_CARD_PATH}"), get(card))
        .route(&format!("{rest}{WELL_KNOWN_CARD_PATH}"), get(card))
        .route(rpc, post(jsonrpc::handle))
        // Clients that join the interface URL with "/" (httpx base_url does) post here.
        .route(&format!("{rpc}/"), post(jsonrpc::handle))
        .route(
            &format!("{rest}/tasks/{{task}}/pushNotificationDeliveries"),
            get(deliveries::list),
        )
        .route(
            &format!("{rest}/tasks/{{task}}/pushNotificationDeliveries/{{delivery}}/redeliver"),
            post(deliveries::redeliver),
        )
        .route(&format!("{rest}/{{*path}}"), any(rest::handle));
    // Clients given only the base URL post JSON-RPC to it (the official SDKs' servers answer
    // there), whatever path the card names.
    let routes = if rpc.trim_end_matches('/').is_empty() {
        routes
    } else {
        routes.route("/", post(jsonrpc::handle))
    };
    #[cfg(feature = "grpc")]
    let routes = if state.config.serves_grpc() {
        routes.route(grpc::ROUTE, post(grpc::handle))
    } else {
        routes
    };
    routes.with_state(state.clone())
}

/// The routes: probes (outside the front door), then behind it the server's own (metrics,
/// the key set, the list of agents, the server's extensions) and each agent's: at the root on
/// a server of one agent, under `/agents/{id}` (behind the agent's gate) on a server of
/// several, and the default agent's at the root as well.
pub(super) fn router(
    server: &Arc<ServerState>,
    agent_routes: Vec<Router>,
    extension_routes: Router,
) -> Router {
    let mut guarded = Router::new()
        .route("/metrics", get(metrics_text))
        .route(JWKS_PATH, get(jwks));
    if server.several {
        guarded = guarded.route("/agents", get(list_agents));
    }
    let mut guarded = guarded.with_state(server.clone()).merge(extension_routes);
    for (state, routes) in server.agents.iter().zip(agent_routes) {
        match &state.gate {
            None => guarded = guarded.merge(routes),
            Some(gate) => {
                let routes = routes.layer(axum::middleware::from_fn_with_state(
                    gate.clone(),
                    front_door::agent_gate,
                ));
                if server
                    .default
                    .as_ref()
                    .is_some_and(|d| Arc::ptr_eq(d, state))
                {
                    guarded = guarded.merge(routes.clone());
                }
                guarded = guarded.nest(&format!("/agents/{}", gate.id()), routes);
            }
        }
    }
    let guarded = guarded.layer(axum::middleware::from_fn_with_state(
        server.front_door.clone(),
        front_door::guard,
    ));
    Router::new()
        .route("/healthz", get(probes::healthz))
        .route("/readyz", get(probes::readyz))
        .with_state(server.clone())
        .merge(guarded)
        .layer(axum::middleware::from_fn(front_door::tag))
}

async fn card(State(app): State<Arc<AgentService>>, headers: HeaderMap) -> Response {
    let speaks_v03 = crate::edge::params::states_v03(&headers);
    let mut response = app.card.respond(speaks_v03, &headers);
    let label = CallLabel {
        method: crate::edge::metrics::Method::AgentCard,
        ok: true,
        v03: false,
    };
    response.extensions_mut().insert(label);
    response
}

/// `GET /.well-known/jwks.json`: the keys that sign the card (404 when the card is unsigned).
async fn jwks(State(server): State<Arc<ServerState>>) -> Response {
    let mut response = match &server.jwks {
        Some(body) => json(StatusCode::OK, body.clone()),
        None => json(
            StatusCode::NOT_FOUND,
            &br#"{"error":{"code":404,"status":"NOT_FOUND","message":"this server does not sign its card"}}"#[..],
        ),
    };
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    response
}

/// A 403 for a caller whose token reaches only some agents, at a route of the whole server.
fn scoped_refusal(what: &str) -> Response {
    let error = ferry_proto::A2aError::new(
        ferry_proto::ErrorKind::PermissionDenied,
        format!("this token may call only some agents, not read {what}"),
    )
    .with_reason("AGENT_NOT_ALLOWED");
    crate::edge::response::rest_error(&error, ferry_proto::ErrorTable::V1_0_1, None)
}

/// `GET /metrics`: Prometheus text (behind the front door: a token is needed when one is set;
/// a token scoped to some agents is refused: the counters are the whole server's).
async fn metrics_text(
    State(server): State<Arc<ServerState>>,
    scope: Option<axum::Extension<AgentScope>>,
) -> Response {
    if scope.is_some_and(|s| !s.is_all()) {
        return scoped_refusal("the server's metrics");
    }
    let open = server.front_door.open_streams(server.config.max_streams);
    let counts = server.manager.count_by_state().await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "counting tasks for the metrics failed");
        Vec::new()
    });
    let mut body = server
        .metrics
        .render(open, &counts, server.manager.live_count());
    if let (Some(push), Some(outbox)) = (&server.push, server.manager.store().push()) {
        let counts = outbox.count_deliveries().await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "counting push deliveries for the metrics failed");
            Default::default()
        });
        push.metrics.render(&mut body, counts.pending, counts.dead);
    }
    if let Some(replicas) = server.manager.store().replicas() {
        let manager = &server.manager;
        manager
            .replica_counters
            .render(&mut body, replicas.fenced_writes());
        let held = manager.leases_held();
        let _ = std::fmt::Write::write_fmt(
            &mut body,
            format_args!(
                "# HELP ferry_replica_leases_held Tasks whose lease this replica holds now (turns running here).\n# TYPE ferry_replica_leases_held gauge\nferry_replica_leases_held {held}\n"
            ),
        );
    }
    let mut response = Response::new(axum::body::Body::from(body));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    response
}

/// One entry of `GET /agents`.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ListedAgent<'a> {
    id: &'a str,
    name: &'a str,
    description: &'a str,
    default: bool,
    card_url: String,
}

/// `GET /agents`: the hosted agents the caller's token may reach, with their card URLs:
/// `{"agents":[{"id","name","description","default","cardUrl"}]}`.
async fn list_agents(
    State(server): State<Arc<ServerState>>,
    scope: Option<axum::Extension<AgentScope>>,
) -> Response {
    #[derive(serde::Serialize)]
    struct Listed<'a> {
        agents: Vec<ListedAgent<'a>>,
    }
    let scope = scope.map(|s| s.0).unwrap_or_default();
    let agents = server
        .agents
        .iter()
        .filter_map(|agent| {
            let id = agent.agent_id()?;
            let description = agent.handler.description();
            scope.allows(id).then(|| ListedAgent {
                id,
                name: &description.name,
                description: &description.description,
                default: server
                    .default
                    .as_ref()
                    .is_some_and(|d| Arc::ptr_eq(d, agent)),
                card_url: agent_card_url(&server.base_url, id),
            })
        })
        .collect();
    json(
        StatusCode::OK,
        serde_json::to_vec(&Listed { agents }).unwrap_or_default(),
    )
}
