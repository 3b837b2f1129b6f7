//! `ferry mcp`: the forms agent over MCP on stdin/stdout, for a coding agent that starts it
//! (one process is one MCP session, one browser session, one caller); and the `/mcp` routes
//! `ferry serve` mounts behind its front door (Streamable HTTP).

use crate::forms_args::{FormsArgs, FormsFile};
use anyhow::Context;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use clap::Args;
use ferry_proto::{A2aError, ErrorKind};
use ferry_server::Access;
use ferry_server::{AgentScope, Caller};
use std::sync::Arc;

/// `ferry mcp`.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// The forms agent's settings (as `ferry serve --agent forms` takes them).
    #[command(flatten)]
    forms: FormsArgs,
    /// Where saved profiles live: `memory` (gone when the process ends), `sqlite:PATH` or a
    /// `postgres://` URL (the same store `ferry serve --store` uses).
    #[arg(long, env = "FERRY_STORE", default_value = "memory")]
    store: String,
    /// Whose saved profiles the session uses (the caller's name as `ferry serve` would know
    /// it: a scoped token's `caller`, or a token's `token:…` fingerprint).
    #[arg(long, env = "FERRY_MCP_CALLER", default_value = ferry_agent::LOCAL_CALLER)]
    caller: String,
}

/// Runs `ferry mcp` until the client closes stdin. stdout carries the protocol: the log (and,
/// with `--otlp-endpoint`, the export of spans: one `mcp.tool` span per call) goes elsewhere,
/// warnings only by default, as for the calling commands.
pub(crate) fn run(args: McpArgs, otlp: &crate::telemetry::OtlpSettings) -> anyhow::Result<()> {
    let telemetry = crate::telemetry::init(
        crate::telemetry::LogFormat::Text,
        otlp,
        crate::telemetry::Role::Client,
    )?;
    let config = args.forms.config(FormsFile::default())?;
    anyhow::ensure!(
        matches!(config.browser, ferry_forms::BrowserSource::Launch),
        "ferry mcp launches its own browser: --browser cdp needs `ferry serve` (a browser is registered through its cdp-config/v1 extension)"
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let outcome = runtime.block_on(async move {
        let mut agent = ferry_forms::FormsAgent::new(config);
        if let Some(stores) = crate::stores::open_stores(&args.store).await? {
            agent = agent.with_profiles(stores.profiles);
        }
        let caller = Some(args.caller).filter(|c| !c.is_empty());
        let served = ferry_mcp::serve_stdio(agent.clone(), caller).await;
        agent.pool().shutdown().await;
        served.context("serving MCP on stdin/stdout")
    });
    // Reading stdin blocks a thread that cannot be cancelled: do not wait for it.
    runtime.shutdown_background();
    drop(telemetry);
    outcome
}

/// The routes of one forms agent's MCP endpoint at `path`, for `ferry serve`: behind the
/// front door, and then only for tokens that may act (not read-only ones) and that reach
/// agent `agent_id` (when the server hosts several). Request bodies are limited as A2A's
/// are (`max_body_bytes`).
pub(crate) fn routes(
    path: &str,
    agent: ferry_forms::FormsAgent,
    agent_id: Option<String>,
    max_body_bytes: usize,
) -> axum::Router {
    let service = ferry_mcp::http_service(agent, max_body_bytes);
    let agent_id: Arc<Option<String>> = Arc::new(agent_id);
    axum::Router::new()
        .route_service(path, service)
        .layer(axum::middleware::from_fn(move |request, next| {
            admit(agent_id.clone(), request, next)
        }))
}

/// The front door authenticated the request; here its grant is checked against what MCP
/// does (act on pages), and its caller is handed to the MCP service.
async fn admit(agent_id: Arc<Option<String>>, mut request: Request, next: Next) -> Response {
    let access = request
        .extensions()
        .get::<Access>()
        .copied()
        .unwrap_or(Access::Anonymous);
    if access == Access::ReadOnly {
        return refusal(A2aError::new(
            ErrorKind::PermissionDenied,
            "this token may only read tasks; the MCP tools fill and submit forms",
        ));
    }
    if let Some(id) = agent_id.as_deref()
        && request
            .extensions()
            .get::<AgentScope>()
            .is_some_and(|scope| !scope.allows(id))
    {
        return refusal(A2aError::new(
            ErrorKind::PermissionDenied,
            format!("this token may not call the agent {id:?}"),
        ));
    }
    if let Some(caller) = request.extensions().get::<Caller>().cloned() {
        request
            .extensions_mut()
            .insert(ferry_mcp::HttpCaller(caller.as_str().to_owned()));
    }
    next.run(request).await
}

fn refusal(error: A2aError) -> Response {
    ferry_server::extension::error_response(&error, None).into_response()
}
