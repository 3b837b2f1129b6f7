//! `ferry send`, `ferry task …` and `ferry push-config …`: call any A2A agent from a terminal
//! or a script. Cards are fetched through the SSRF-safe fetcher (and verified when
//! `--expect-digest` or `--key` is given); calls go to the first interface we speak.
//!
//! Exit codes: 0 the command did its job (whatever state the task reached), 1 failure, 2 usage,
//! 3 unreachable, 4 authentication refused, 5 timeout. Credentials are never printed.
//!
//! Each command logs warnings only to stderr (`RUST_LOG` for more) and, with `--otlp-endpoint`
//! (or the OTEL_* variables), exports its spans: the command's own root span (`ferry.send`,
//! `ferry.task`, `ferry.push-config`) with the client's `a2a.client` call spans in it, whose
//! trace the agent continues.

use crate::telemetry::{OtlpSettings, Role};
use anyhow::{Context, bail};
use clap::{Args, Subcommand, ValueEnum};
use ferry_client::{A2aClient, Binding, ClientOptions, EventStream, RetryPolicy};
use ferry_proto::{
    AgentCard, AuthenticationInfo, ListTasksRequest, Message, Part, PartContent,
    SendMessageConfiguration, SendMessageRequest, SendMessageResponse, StreamResponse, Task,
    TaskPushNotificationConfig, TaskState,
};
use reqwest::header::{HeaderName, HeaderValue};
use std::path::PathBuf;
use std::time::Duration;
use tracing::Instrument;

/// Flags every calling command shares.
#[derive(Debug, Clone, Args)]
pub(crate) struct ClientFlags {
    /// Bearer token for the agent (prefer FERRY_TOKEN: command lines are visible to others).
    #[arg(long, env = "FERRY_TOKEN", hide_env_values = true, global = true)]
    token: Option<String>,
    /// Extra header `Name: value` (repeatable), e.g. an API key.
    #[arg(long = "header", value_name = "K:V", global = true)]
    headers: Vec<String>,
    /// Seconds a call may take.
    #[arg(long, default_value_t = 60, global = true)]
    timeout: u64,
    /// Retries of transient failures (connection errors, 5xx, 429, 503).
    #[arg(long, default_value_t = 2, global = true)]
    retries: u32,
    /// Tenant to use instead of the interface's.
    #[arg(long, global = true)]
    tenant: Option<String>,
    /// Refuse the agent unless its card has this digest.
    #[arg(long, value_name = "sha256:HEX", global = true)]
    expect_digest: Option<String>,
    /// Refuse the agent unless its card is signed by this key (PEM or JWK).
    #[arg(long, value_name = "PUB.pem", global = true)]
    key: Option<PathBuf>,
    /// Also trust the CA certificates of this PEM file (an agent with a private CA), on
    /// every binding.
    #[arg(long, value_name = "FILE", global = true)]
    ca_file: Option<PathBuf>,
    /// Present this client certificate chain (PEM) for mutual TLS; needs --client-key.
    #[arg(long, value_name = "FILE", global = true, requires = "client_key")]
    client_cert: Option<PathBuf>,
    /// The private key of --client-cert (PEM).
    #[arg(long, value_name = "FILE", global = true, requires = "client_cert")]
    client_key: Option<PathBuf>,
    /// Tokens from the agent's OpenID provider.
    #[command(flatten)]
    pub(crate) oauth: crate::tokens::TokenFlags,
    /// Allow private and loopback addresses and plain http (local work).
    #[arg(long, global = true)]
    insecure_allow_private: bool,
    /// The binding to use (default: the card's first one we speak).
    #[arg(long, value_enum, global = true)]
    binding: Option<BindingName>,
    /// Output: human text, or JSON (one document; JSON Lines for streams).
    #[arg(
        short = 'o',
        long = "output",
        value_enum,
        default_value = "text",
        global = true
    )]
    pub(crate) output: OutputFormat,
}

/// Bindings by their CLI names.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum BindingName {
    /// JSON-RPC 2.0.
    Jsonrpc,
    /// HTTP+JSON.
    Rest,
    /// gRPC.
    Grpc,
}

/// Output formats.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub(crate) enum OutputFormat {
    /// Human-readable text.
    Text,
    /// Stable JSON.
    Json,
}

/// `ferry send`.
#[derive(Debug, Args)]
pub(crate) struct SendArgs {
    /// The agent's base URL (or its card URL).
    url: String,
    /// Text of the message (at least one of TEXT, --data and --file is required).
    #[arg(required_unless_present_any = ["data", "file"])]
    text: Option<String>,
    /// A data part: JSON text, or @FILE.
    #[arg(long)]
    data: Option<String>,
    /// A file part (sent inline).
    #[arg(long)]
    file: Option<PathBuf>,
    /// Show progress as it happens (SendStreamingMessage).
    #[arg(long)]
    stream: bool,
    /// Return right after the task is created (returnImmediately).
    #[arg(long = "async", conflicts_with = "stream")]
    asynchronous: bool,
    /// Continue this task.
    #[arg(long)]
    task: Option<String>,
    /// Use this context.
    #[arg(long)]
    context: Option<String>,
    /// At most this many history messages in the answer.
    #[arg(long)]
    history: Option<i32>,
    /// The message's messageId (default: a random UUID). Each message needs a fresh one; some
    /// agents pick their behaviour by it (e.g. the conformance kit's `tck-…` prefixes).
    #[arg(long, value_name = "ID")]
    message_id: Option<String>,
    /// Register this webhook for the task's push notifications with the message (inline, so
    /// that even the task's first event is delivered).
    #[arg(long, value_name = "URL")]
    webhook: Option<String>,
    /// The token the agent sends with each notification to --webhook.
    #[arg(long, value_name = "TOKEN", requires = "webhook")]
    webhook_token: Option<String>,
    #[command(flatten)]
    flags: ClientFlags,
}

/// `ferry task`.
#[derive(Debug, Args)]
pub(crate) struct TaskArgs {
    #[command(subcommand)]
    action: TaskAction,
    #[command(flatten)]
    flags: ClientFlags,
}

#[derive(Debug, Subcommand)]
enum TaskAction {
    /// Show a task.
    Get {
        /// The agent.
        url: String,
        /// The task id.
        id: String,
        /// At most this many history messages.
        #[arg(long)]
        history: Option<i32>,
    },
    /// List tasks.
    List {
        /// The agent.
        url: String,
        /// Only this context.
        #[arg(long)]
        context: Option<String>,
        /// Only this state (e.g. TASK_STATE_WORKING or working).
        #[arg(long)]
        status: Option<String>,
        /// Page size (1..100).
        #[arg(long)]
        page_size: Option<i32>,
        /// Follow every page.
        #[arg(long)]
        all: bool,
    },
    /// Cancel a task.
    Cancel {
        /// The agent.
        url: String,
        /// The task id.
        id: String,
    },
    /// Follow a task's events until it ends (a dropped stream resumes by itself, without a
    /// gap).
    Subscribe {
        /// The agent.
        url: String,
        /// The task id.
        id: String,
        /// Resume after this event id (an SSE `id:` of the task's stream): the events after
        /// it, then live ones; also on a task that has ended since.
        #[arg(long, value_name = "EVENT_ID")]
        after: Option<u64>,
    },
}

/// `ferry push-config`.
#[derive(Debug, Args)]
pub(crate) struct PushArgs {
    #[command(subcommand)]
    action: PushAction,
    #[command(flatten)]
    flags: ClientFlags,
}

#[derive(Debug, Subcommand)]
enum PushAction {
    /// Register a webhook for a task.
    Create {
        /// The agent.
        url: String,
        /// The task id.
        task: String,
        /// The webhook URL.
        #[arg(long = "webhook")]
        webhook: String,
        /// Config id (the server assigns one when absent).
        #[arg(long)]
        id: Option<String>,
        /// Auth scheme the agent uses to call the webhook (e.g. Bearer).
        #[arg(long, requires = "auth_credentials")]
        auth_scheme: Option<String>,
        /// Credentials for that scheme.
        #[arg(long, hide_env_values = true)]
        auth_credentials: Option<String>,
        /// A token the agent sends with every notification (X-A2A-Notification-Token), for
        /// the webhook to check.
        #[arg(long, value_name = "TOKEN")]
        token: Option<String>,
    },
    /// Show one config.
    Get {
        /// The agent.
        url: String,
        /// The task id.
        task: String,
        /// The config id.
        id: String,
    },
    /// List a task's configs.
    List {
        /// The agent.
        url: String,
        /// The task id.
        task: String,
    },
    /// Delete a config (deleting twice is fine).
    Delete {
        /// The agent.
        url: String,
        /// The task id.
        task: String,
        /// The config id.
        id: String,
    },
    /// Show a task's push deliveries on a ferry server: each one's id, config, event, status
    /// (pending, delivered, dead), attempts and last error.
    Deliveries {
        /// The agent.
        url: String,
        /// The task id.
        task: String,
    },
    /// Send a delivery again (a dead one, or one the receiver lost), on a ferry server.
    Redeliver {
        /// The agent.
        url: String,
        /// The task id.
        task: String,
        /// The delivery id (from `deliveries`).
        id: String,
    },
}

/// The CA and client certificate of `--ca-file`, `--client-cert` and `--client-key`.
pub(crate) fn client_tls(flags: &ClientFlags) -> anyhow::Result<ferry_client::ClientTls> {
    let read =
        |path: &PathBuf| std::fs::read(path).with_context(|| format!("reading {}", path.display()));
    let mut tls = ferry_client::ClientTls::default();
    if let Some(ca) = &flags.ca_file {
        tls = tls
            .with_ca_pem(&read(ca)?)
            .with_context(|| format!("--ca-file {}", ca.display()))?;
    }
    if let (Some(cert), Some(key)) = (&flags.client_cert, &flags.client_key) {
        tls = tls
            .with_identity_pem(&read(cert)?, &read(key)?)
            .context("--client-cert/--client-key")?;
    }
    Ok(tls)
}

/// Connects, then runs `work` with the client; where the token came from the agent's
/// provider and the agent refuses it (401), gets a fresh one and runs `work` once more (the
/// agent refused before doing anything).
pub(crate) async fn with_agent<T>(
    flags: &ClientFlags,
    url: &str,
    work: impl AsyncFn(A2aClient) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let (client, _card) = connect_renewing(flags, url, false).await?;
    match work(client).await {
        Err(e) if provider_tokens(flags) && crate::tokens::is_unauthenticated(&e) => {
            tracing::info!("the agent refused the token; getting a fresh one");
            let (client, _card) = connect_renewing(flags, url, true).await?;
            work(client).await
        }
        other => other,
    }
}

/// Whether the token comes from the agent's provider (`--client-id`, no `--token`).
fn provider_tokens(flags: &ClientFlags) -> bool {
    flags.token.as_deref().is_none_or(str::is_empty) && flags.oauth.wants_tokens()
}

/// Connects: the client fetches and checks the card (SSRF-safe, strict, verified when
/// `--expect-digest` or `--key` is given) and the interface URL, then gets the provider's
/// token where `--client-id` asks for one (renewed when `renew`).
async fn connect_renewing(
    flags: &ClientFlags,
    url: &str,
    renew: bool,
) -> anyhow::Result<(A2aClient, AgentCard)> {
    let (client, card) = connect_anonymously(flags, url).await?;
    if !provider_tokens(flags) {
        return Ok((client, card));
    }
    let tls = client_tls(flags)?;
    let Some(tokens) = flags.oauth.tokens(&tls)? else {
        return Ok((client, card));
    };
    let client = crate::tokens::authorize(client, &card, &tokens, renew).await?;
    Ok((client, card))
}

/// Connects without the provider's token (the card is public; `--token` and headers are
/// sent as given).
/// What the library refuses, the binary explains with the flag that lifts it.
pub(crate) async fn connect_anonymously(
    flags: &ClientFlags,
    url: &str,
) -> anyhow::Result<(A2aClient, AgentCard)> {
    let mut options = ClientOptions {
        timeout: Duration::from_secs(flags.timeout.max(1)),
        retry: RetryPolicy {
            retries: flags.retries,
            ..RetryPolicy::default()
        },
        prefer: flags.binding.map(|b| match b {
            BindingName::Jsonrpc => Binding::JsonRpc,
            BindingName::Rest => Binding::HttpJson,
            BindingName::Grpc => Binding::Grpc,
        }),
        ..ClientOptions::default()
    };
    options.expect.digest.clone_from(&flags.expect_digest);
    if let Some(path) = &flags.key {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let key = if bytes.trim_ascii_start().starts_with(b"{") {
            ferry_trust::keys::PublicKey::from_jwk_bytes(&bytes)
        } else {
            ferry_trust::keys::PublicKey::from_pem(&bytes)
        };
        options.expect.public_key =
            Some(key.with_context(|| format!("{} is not a public key", path.display()))?);
    }
    options.danger_allow_private = flags.insecure_allow_private;
    options.tls = client_tls(flags)?;
    if let Some(token) = flags.token.as_deref().filter(|t| !t.is_empty()) {
        options = options.bearer(token)?;
    }
    for h in &flags.headers {
        let (k, v) = h
            .split_once(':')
            .with_context(|| format!("--header {h:?} is not K:V"))?;
        let name = HeaderName::from_bytes(k.trim().as_bytes())
            .with_context(|| format!("bad header name {k:?}"))?;
        let mut value =
            HeaderValue::from_str(v.trim()).with_context(|| format!("bad header value for {k}"))?;
        value.set_sensitive(true);
        options.headers.insert(name, value);
    }
    let (mut client, card) = A2aClient::connect(url, options).await.map_err(|e| {
        let blocked = matches!(e, ferry_client::ClientError::Blocked { .. });
        let error = anyhow::Error::new(e);
        if blocked {
            error.context(
                "private and local addresses, and plain http to hosts other than this machine, \
                 need --insecure-allow-private",
            )
        } else {
            error
        }
    })?;
    if let Some(t) = &flags.tenant {
        client = client.with_tenant(t);
    }
    Ok((client, card))
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// Runs one calling command: sets up the log and the export of spans, runs `command` to its
/// end on a runtime of its own inside the root span `root` makes (made once the subscriber
/// exists; a failed command marks it failed), then exports what is left of the spans.
pub(crate) fn run_command(
    otlp: &OtlpSettings,
    root: impl FnOnce() -> tracing::Span,
    command: impl Future<Output = anyhow::Result<()>>,
) -> anyhow::Result<()> {
    let telemetry = crate::telemetry::init(crate::telemetry::LogFormat::Text, otlp, Role::Client)?;
    let span = root();
    let outcome = runtime()?.block_on(command.instrument(span.clone()));
    if outcome.is_err() {
        span.record("otel.status_code", "ERROR");
    }
    // The root span ends before the exporter flushes, or it would not be exported.
    drop(span);
    drop(telemetry);
    outcome
}

/// Runs `ferry send`.
pub(crate) fn send(args: SendArgs, otlp: &OtlpSettings) -> anyhow::Result<()> {
    let root = || tracing::info_span!("ferry.send", otel.status_code = tracing::field::Empty);
    run_command(otlp, root, async move {
        let req = send_request(&args)?;
        with_agent(&args.flags, &args.url, async |client| {
            if args.stream {
                let stream = client.send_streaming(req.clone()).await?;
                return follow(stream, args.flags.output).await;
            }
            let answer = client.send_message(req.clone()).await?;
            show_answer(&answer, args.flags.output)
        })
        .await
    })
}

/// The request `ferry send` sends.
fn send_request(args: &SendArgs) -> anyhow::Result<SendMessageRequest> {
    let mut parts = Vec::new();
    if let Some(text) = &args.text {
        parts.push(Part::text(text.clone()));
    }
    if let Some(data) = &args.data {
        let text = match data.strip_prefix('@') {
            Some(path) => {
                std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?
            }
            None => data.clone(),
        };
        let value: serde_json::Value = serde_json::from_str(&text).context("--data is not JSON")?;
        parts.push(Part::data(value).with_media_type("application/json"));
    }
    if let Some(path) = &args.file {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        parts.push(
            Part::new(PartContent::Raw(bytes))
                .with_filename(name)
                .with_media_type(media_type(path)),
        );
    }
    if parts.is_empty() {
        bail!("nothing to send: give TEXT, --data or --file");
    }
    let message_id = args
        .message_id
        .clone()
        .filter(|id| !id.is_empty())
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let mut message = Message::user(message_id, parts);
    message.task_id = args.task.clone().unwrap_or_default();
    message.context_id = args.context.clone().unwrap_or_default();
    let push = args.webhook.clone().map(|url| TaskPushNotificationConfig {
        url,
        token: args.webhook_token.clone().unwrap_or_default(),
        ..TaskPushNotificationConfig::default()
    });
    let configuration = SendMessageConfiguration {
        history_length: args.history,
        return_immediately: args.asynchronous,
        task_push_notification_config: push,
        ..SendMessageConfiguration::default()
    };
    Ok(SendMessageRequest {
        tenant: String::new(),
        message,
        configuration: Some(configuration),
        metadata: None,
    })
}

/// Prints the answer to `ferry send`.
fn show_answer(answer: &SendMessageResponse, output: OutputFormat) -> anyhow::Result<()> {
    match output {
        OutputFormat::Json => crate::out(format_args!("{}", serde_json::to_string(answer)?))?,
        OutputFormat::Text => match answer {
            SendMessageResponse::Task(t) => print_task(t)?,
            SendMessageResponse::Message(m) => {
                crate::out(format_args!("message from the agent: {}", m.text()))?
            }
        },
    }
    Ok(())
}

/// Prints a stream's events until it ends.
async fn follow(mut stream: EventStream, output: OutputFormat) -> anyhow::Result<()> {
    while let Some(event) = stream.next().await {
        let event = event?;
        match output {
            OutputFormat::Json => crate::out(format_args!("{}", serde_json::to_string(&event)?))?,
            OutputFormat::Text => match &event {
                StreamResponse::Task(t) => crate::out(format_args!(
                    "task {} (context {}): {}",
                    t.id,
                    t.context_id,
                    state(t.status.state)
                ))?,
                StreamResponse::StatusUpdate(s) => {
                    let text = s
                        .status
                        .message
                        .as_ref()
                        .map(|m| m.text())
                        .unwrap_or_default();
                    crate::out(format_args!(
                        "status {}{}",
                        state(s.status.state),
                        if text.is_empty() {
                            String::new()
                        } else {
                            format!(": {text}")
                        }
                    ))?;
                }
                StreamResponse::ArtifactUpdate(a) => {
                    let verb = if a.append { "+" } else { "artifact" };
                    crate::out(format_args!(
                        "{verb} {}: {}",
                        artifact_name(&a.artifact),
                        parts_text(&a.artifact.parts)
                    ))?;
                }
                StreamResponse::Message(m) => {
                    crate::out(format_args!("message from the agent: {}", m.text()))?
                }
            },
        }
    }
    Ok(())
}

fn state(s: TaskState) -> &'static str {
    s.as_str().strip_prefix("TASK_STATE_").unwrap_or(s.as_str())
}

fn artifact_name(a: &ferry_proto::Artifact) -> &str {
    if a.name.is_empty() {
        &a.artifact_id
    } else {
        &a.name
    }
}

/// Text parts as text, other parts as a short description (text from agents is shown as data,
/// never interpreted).
fn parts_text(parts: &[Part]) -> String {
    let shown: Vec<String> = parts
        .iter()
        .map(|p| match &p.content {
            PartContent::Text(t) => t.clone(),
            PartContent::Data(v) => v.to_string(),
            PartContent::Url(u) => format!("<file {u}>"),
            PartContent::Raw(b) => format!("<{} bytes {}>", b.len(), p.filename),
        })
        .collect();
    shown.join("")
}

fn print_task(t: &Task) -> anyhow::Result<()> {
    crate::out(format_args!(
        "task {} (context {}): {}",
        t.id,
        t.context_id,
        state(t.status.state)
    ))?;
    if let Some(m) = &t.status.message {
        crate::out(format_args!("  status message: {}", m.text()))?;
    }
    for a in &t.artifacts {
        crate::out(format_args!(
            "  artifact {}: {}",
            artifact_name(a),
            parts_text(&a.parts)
        ))?;
    }
    Ok(())
}

fn media_type(path: &std::path::Path) -> &'static str {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("txt") => "text/plain",
        Some("json") => "application/json",
        Some("pdf") => "application/pdf",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("csv") => "text/csv",
        Some("html") => "text/html",
        _ => "application/octet-stream",
    }
}

/// Runs `ferry task …`.
pub(crate) fn task(args: TaskArgs, otlp: &OtlpSettings) -> anyhow::Result<()> {
    let output = args.flags.output;
    let action = match &args.action {
        TaskAction::Get { .. } => "get",
        TaskAction::List { .. } => "list",
        TaskAction::Cancel { .. } => "cancel",
        TaskAction::Subscribe { .. } => "subscribe",
    };
    let root = || {
        tracing::info_span!(
            "ferry.task",
            action,
            otel.status_code = tracing::field::Empty
        )
    };
    run_command(otlp, root, async move {
        match args.action {
            TaskAction::Get { url, id, history } => {
                with_agent(&args.flags, &url, async |client| {
                    show_task(&client.get_task(&id, history).await?, output)
                })
                .await
            }
            TaskAction::Cancel { url, id } => {
                with_agent(&args.flags, &url, async |client| {
                    show_task(&client.cancel_task(&id).await?, output)
                })
                .await
            }
            TaskAction::Subscribe { url, id, after } => {
                with_agent(&args.flags, &url, async |client| {
                    let stream = match after {
                        Some(after) => client.subscribe_after(&id, &after.to_string()).await?,
                        None => client.subscribe(&id).await?,
                    };
                    follow(stream, output).await
                })
                .await
            }
            TaskAction::List {
                url,
                context,
                status,
                page_size,
                all,
            } => {
                let status = match status {
                    None => TaskState::Unspecified,
                    Some(s) => {
                        let upper = s.to_ascii_uppercase().replace('-', "_");
                        TaskState::from_name(&upper)
                            .or_else(|| TaskState::from_name(&format!("TASK_STATE_{upper}")))
                            .with_context(|| format!("unknown state {s:?}"))?
                    }
                };
                let req = ListTasksRequest {
                    context_id: context.unwrap_or_default(),
                    status,
                    page_size,
                    ..ListTasksRequest::default()
                };
                let tasks = with_agent(&args.flags, &url, async |client| {
                    Ok(if all {
                        client.list_all_tasks(&req).await?
                    } else {
                        client.list_tasks(&req).await?.tasks
                    })
                })
                .await?;
                show_tasks(&tasks, output)
            }
        }
    })
}

/// Prints the tasks `ferry task list` found.
fn show_tasks(tasks: &[Task], output: OutputFormat) -> anyhow::Result<()> {
    match output {
        OutputFormat::Json => crate::out(format_args!("{}", serde_json::to_string(tasks)?))?,
        OutputFormat::Text => {
            for t in tasks {
                let when = t
                    .status
                    .timestamp
                    .map(|t| t.to_string())
                    .unwrap_or_default();
                crate::out(format_args!(
                    "{}  {:<15}  {}  {when}",
                    t.id,
                    state(t.status.state),
                    t.context_id
                ))?;
            }
        }
    }
    Ok(())
}

fn show_task(t: &Task, output: OutputFormat) -> anyhow::Result<()> {
    match output {
        OutputFormat::Json => crate::out(format_args!("{}", serde_json::to_string(t)?))?,
        OutputFormat::Text => print_task(t)?,
    }
    Ok(())
}

/// Runs `ferry push-config …`.
pub(crate) fn push(args: PushArgs, otlp: &OtlpSettings) -> anyhow::Result<()> {
    let output = args.flags.output;
    let action = match &args.action {
        PushAction::Create { .. } => "create",
        PushAction::Get { .. } => "get",
        PushAction::List { .. } => "list",
        PushAction::Delete { .. } => "delete",
        PushAction::Deliveries { .. } => "deliveries",
        PushAction::Redeliver { .. } => "redeliver",
    };
    // ferry's delivery routes sit beside the HTTP+JSON binding.
    let mut rest_flags = args.flags.clone();
    rest_flags.binding = Some(BindingName::Rest);
    let root = || {
        tracing::info_span!(
            "ferry.push-config",
            action,
            otel.status_code = tracing::field::Empty
        )
    };
    run_command(otlp, root, async move {
        let print = |v: &dyn erased::Show| -> anyhow::Result<()> {
            match output {
                OutputFormat::Json => crate::out(format_args!("{}", v.json()?))?,
                OutputFormat::Text => crate::out(format_args!("{}", v.text()))?,
            }
            Ok(())
        };
        match args.action {
            PushAction::Create {
                url,
                task,
                webhook,
                id,
                auth_scheme,
                auth_credentials,
                token,
            } => {
                let authentication = auth_scheme.map(|scheme| AuthenticationInfo {
                    scheme,
                    credentials: auth_credentials.unwrap_or_default(),
                });
                let config = TaskPushNotificationConfig {
                    id: id.unwrap_or_default(),
                    task_id: task,
                    url: webhook,
                    token: token.unwrap_or_default(),
                    authentication,
                    ..TaskPushNotificationConfig::default()
                };
                let made = with_agent(&args.flags, &url, async |client| {
                    Ok(client.create_push_config(config.clone()).await?)
                })
                .await?;
                print(&made)
            }
            PushAction::Get { url, task, id } => {
                let got = with_agent(&args.flags, &url, async |client| {
                    Ok(client.get_push_config(&task, &id).await?)
                })
                .await?;
                print(&got)
            }
            PushAction::List { url, task } => {
                let listed = with_agent(&args.flags, &url, async |client| {
                    Ok(client.list_push_configs(&task).await?)
                })
                .await?;
                for c in listed.configs {
                    print(&c)?;
                }
                Ok(())
            }
            PushAction::Delete { url, task, id } => {
                with_agent(&args.flags, &url, async |client| {
                    Ok(client.delete_push_config(&task, &id).await?)
                })
                .await?;
                if output == OutputFormat::Json {
                    crate::out(format_args!("{{}}"))?;
                }
                Ok(())
            }
            PushAction::Deliveries { url, task } => {
                let listed = with_agent(&rest_flags, &url, async |client| {
                    Ok(client.push_deliveries(&task).await?)
                })
                .await?;
                print_deliveries(&listed, output)
            }
            PushAction::Redeliver { url, task, id } => {
                with_agent(&rest_flags, &url, async |client| {
                    Ok(client.redeliver_push(&task, &id).await?)
                })
                .await?;
                match output {
                    OutputFormat::Json => crate::out(format_args!("{{}}"))?,
                    OutputFormat::Text => {
                        crate::out(format_args!("delivery {id} is pending again"))?
                    }
                }
                Ok(())
            }
        }
    })
}

/// A task's deliveries: one line each (or the server's JSON).
fn print_deliveries(listed: &serde_json::Value, output: OutputFormat) -> anyhow::Result<()> {
    if output == OutputFormat::Json {
        return crate::out(format_args!("{listed}"));
    }
    let rows = listed["deliveries"].as_array().cloned().unwrap_or_default();
    if rows.is_empty() {
        return crate::out(format_args!("no deliveries"));
    }
    crate::out(format_args!(
        "{:<32}  {:<36}  {:>4}  {:<9}  {:>8}  last error",
        "delivery", "config", "seq", "status", "attempts"
    ))?;
    for d in rows {
        let text = |k: &str| d[k].as_str().unwrap_or_default().to_owned();
        crate::out(format_args!(
            "{:<32}  {:<36}  {:>4}  {:<9}  {:>8}  {}",
            text("id"),
            text("configId"),
            d["seq"].as_u64().unwrap_or_default(),
            text("status"),
            d["attempts"].as_u64().unwrap_or_default(),
            text("lastError"),
        ))?;
    }
    Ok(())
}

/// Printing push configs without their credentials.
mod erased {
    use ferry_proto::TaskPushNotificationConfig;

    /// Something the push commands print.
    pub(super) trait Show {
        /// As JSON, credentials redacted.
        fn json(&self) -> anyhow::Result<String>;
        /// As a line of text.
        fn text(&self) -> String;
    }

    impl Show for TaskPushNotificationConfig {
        fn json(&self) -> anyhow::Result<String> {
            let mut shown = self.clone();
            if let Some(auth) = &mut shown.authentication
                && !auth.credentials.is_empty()
            {
                auth.credentials = "<redacted>".into();
            }
            if !shown.token.is_empty() {
                shown.token = "<redacted>".into();
            }
            Ok(serde_json::to_string(&shown)?)
        }

        fn text(&self) -> String {
            let scheme = self
                .authentication
                .as_ref()
                .map(|a| a.scheme.as_str())
                .unwrap_or("none");
            format!(
                "{}  task {}  {}  auth {scheme}",
                self.id, self.task_id, self.url
            )
        }
    }
}
