//! `ferry serve`: run a built-in agent behind the A2A server.

use anyhow::Context;
use clap::{Args, ValueEnum};
use ferry_server::demo::{ConformanceAgent, EchoAgent};
use ferry_server::{A2aServer, ServerConfig};
use std::net::SocketAddr;
use std::sync::Arc;

/// The built-in agents.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum AgentName {
    /// Completes each task with an artifact echoing the message's text and data parts.
    Echo,
    /// Plays the official conformance kit's messageId-prefix scenarios (and `ferry-turns-3`).
    Conformance,
}

/// Log line format.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Flags of `ferry serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Which agent to serve.
    #[arg(long, value_enum, default_value = "echo")]
    agent: AgentName,
    /// Address to listen on (loopback by default; port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:8765", env = "FERRY_BIND")]
    bind: SocketAddr,
    /// Base URL the agent card advertises (default: http://<bound address>).
    #[arg(long, env = "FERRY_PUBLIC_URL")]
    public_url: Option<String>,
    /// Log format (RUST_LOG sets the level; default info).
    #[arg(long, value_enum, default_value = "text")]
    log_format: LogFormat,
    /// Maximum number of tasks kept in memory (only finished tasks are evicted).
    #[arg(long, default_value_t = ServerConfig::default().task_capacity)]
    task_capacity: usize,
    /// Seconds a finished task stays retrievable.
    #[arg(long, default_value_t = ServerConfig::default().task_ttl_secs)]
    task_ttl: u64,
    /// Reject requests without an A2A-Version header (the spec reads a missing header as 0.3).
    #[arg(long)]
    strict_version: bool,
    /// Use the A2A v1.0.0 HTTP status table for REST errors (409/415/502) instead of v1.0.1.
    #[arg(long)]
    v1_0_0_errors: bool,
    /// Mark an extension URI as required in the card (repeatable).
    #[arg(long = "require-extension", value_name = "URI")]
    required_extensions: Vec<String>,
    /// Worker threads (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Bearer token every A2A call must carry; required to bind a non-loopback address.
    /// Prefer the FERRY_TOKEN environment variable: command lines are visible to other users.
    #[arg(long, env = "FERRY_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Accept this Host header (name or name:port) besides loopback names and the host of
    /// --public-url (repeatable; DNS-rebinding defence).
    #[arg(long = "allowed-host", value_name = "HOST")]
    allowed_hosts: Vec<String>,
    /// Largest request body in bytes (413 above it).
    #[arg(long, default_value_t = ServerConfig::default().max_body_bytes)]
    max_body_bytes: usize,
    /// Requests served at once (503 with Retry-After above it).
    #[arg(long, default_value_t = ServerConfig::default().max_in_flight)]
    max_in_flight: usize,
    /// SSE streams open at once (503 with Retry-After above it).
    #[arg(long, default_value_t = ServerConfig::default().max_streams)]
    max_streams: usize,
    /// Requests per second per client address (0: no limit; 429 with Retry-After above it).
    #[arg(long, default_value_t = 0)]
    rate_limit: u32,
    /// Seconds a request may take to produce its response (503 after it).
    #[arg(long, default_value_t = ServerConfig::default().request_timeout_secs)]
    request_timeout: u64,
    /// Seconds a client has to send its request headers.
    #[arg(long, default_value_t = ServerConfig::default().header_read_timeout_secs)]
    header_timeout: u64,
    /// Seconds in-flight requests get to finish on shutdown.
    #[arg(long, default_value_t = ServerConfig::default().drain_timeout_secs)]
    drain_timeout: u64,
}

/// Runs the server until Ctrl-C or SIGTERM.
pub fn run(args: ServeArgs) -> anyhow::Result<()> {
    init_logging(args.log_format);
    // A multi-thread runtime even for one worker: measured, a current-thread runtime serving
    // 32 connections was three times slower (it polls the I/O driver far more often).
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    runtime.enable_all();
    if let Some(n) = args.threads {
        runtime.worker_threads(n.max(1));
    }
    let runtime = runtime.build().context("starting the async runtime")?;
    runtime.block_on(serve(args))
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let config = ServerConfig {
        bind: args.bind,
        public_url: args.public_url.map(|u| u.trim_end_matches('/').to_owned()),
        task_capacity: args.task_capacity,
        task_ttl_secs: args.task_ttl,
        strict_version: args.strict_version,
        error_table: if args.v1_0_0_errors {
            ferry_proto::ErrorTable::V1_0_0
        } else {
            ferry_proto::ErrorTable::V1_0_1
        },
        required_extensions: args.required_extensions,
        token: args.token.filter(|t| !t.is_empty()),
        allowed_hosts: args.allowed_hosts,
        max_body_bytes: args.max_body_bytes,
        max_in_flight: args.max_in_flight,
        max_streams: args.max_streams,
        rate_limit_per_sec: args.rate_limit,
        request_timeout_secs: args.request_timeout,
        header_read_timeout_secs: args.header_timeout,
        drain_timeout_secs: args.drain_timeout,
        ..ServerConfig::default()
    };
    let agent: Arc<dyn ferry_agent::AgentExecutor> = match args.agent {
        AgentName::Echo => Arc::new(EchoAgent),
        AgentName::Conformance => Arc::new(ConformanceAgent),
    };
    let bind = config.bind;
    let server = A2aServer::bind(agent, config)
        .await
        .with_context(|| format!("binding {bind}"))?;
    tracing::info!(addr = %server.local_addr(), agent = ?args.agent, "listening");
    println!("agent card: {}", server.card_url());
    server.run(shutdown_signal()).await.context("serving")?;
    tracing::info!("stopped");
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}

fn init_logging(format: LogFormat) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}
