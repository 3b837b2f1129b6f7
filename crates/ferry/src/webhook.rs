//! `ferry webhook listen`: a receiver of push notifications, for people testing their agents.
//! It accepts `POST`s on any path, checks what it was told to check — the notification token
//! (`--token`), and the signature (`--agent URL`, or `--jwks FILE|URL` with `--issuer`):
//! signed by the agent's key, for this receiver's URL, not expired, over this body — drops a
//! delivery id it has seen (a retry or a replay: acknowledged, not shown twice), and prints
//! each delivery.

use crate::call::OutputFormat;
use anyhow::Context;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use clap::Args;
use ferry_trust::keys::KeySet;
use ferry_trust::push_signature::{DELIVERY_ID_HEADER, SIGNATURE_HEADER, verify};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The headers a notification token may come in (the SDKs differ).
const TOKEN_HEADERS: [&str; 2] = ["x-a2a-notification-token", "a2a-notification-token"];
/// The clock difference allowed for a signature's times.
const LEEWAY: Duration = Duration::from_secs(60);
/// The largest delivery read.
const MAX_BODY_BYTES: usize = 4 << 20;

/// `ferry webhook …`.
#[derive(Debug, Args)]
pub(crate) struct WebhookArgs {
    #[command(subcommand)]
    action: WebhookAction,
}

#[derive(Debug, clap::Subcommand)]
enum WebhookAction {
    /// Receive push notifications and print them, checking what the flags say.
    Listen(ListenArgs),
}

#[derive(Debug, Args)]
struct ListenArgs {
    /// Where to listen.
    #[arg(long, default_value = "127.0.0.1:9000")]
    bind: SocketAddr,
    /// The notification token every delivery must carry (X-A2A-Notification-Token or
    /// A2A-Notification-Token). Prefer FERRY_WEBHOOK_TOKEN.
    #[arg(long, env = "FERRY_WEBHOOK_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Check signatures against this agent's key set (its card URL is the issuer).
    #[arg(long, value_name = "URL", conflicts_with = "jwks")]
    agent: Option<String>,
    /// Check signatures against this key set (a file, or an http(s) URL); needs --issuer.
    #[arg(long, value_name = "FILE|URL", requires = "issuer")]
    jwks: Option<String>,
    /// The issuer signatures must name (the agent's card URL), with --jwks.
    #[arg(long, value_name = "URL")]
    issuer: Option<String>,
    /// The audience signatures must name [default: this receiver's URL as called:
    /// http://BIND/PATH].
    #[arg(long, value_name = "URL")]
    audience: Option<String>,
    /// Exit non-zero at the first delivery that fails a check.
    #[arg(long)]
    strict: bool,
    /// Allow private and loopback addresses and plain http for --agent/--jwks.
    #[arg(long)]
    insecure_allow_private: bool,
    /// Output: human text, or JSON Lines.
    #[arg(short = 'o', long = "output", value_enum, default_value = "text")]
    output: OutputFormat,
}

/// What signatures must be.
struct Signatures {
    keys: KeySet,
    issuer: String,
}

/// The receiver's settings and what it has seen.
struct Receiver {
    token_digest: Option<String>,
    signatures: Option<Signatures>,
    audience: Option<String>,
    bind: SocketAddr,
    output: OutputFormat,
    strict: bool,
    /// Delivery ids seen, with when their signature expires (then they are forgotten).
    seen: Mutex<HashMap<String, i64>>,
    /// Signalled when a delivery failed a check under `--strict`.
    failed: tokio::sync::Notify,
}

/// Runs `ferry webhook`.
pub(crate) fn run(args: WebhookArgs) -> anyhow::Result<()> {
    let WebhookAction::Listen(args) = args.action;
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?
        .block_on(listen(args))
}

async fn listen(args: ListenArgs) -> anyhow::Result<()> {
    let signatures = signatures(&args).await?;
    let listener = tokio::net::TcpListener::bind(args.bind)
        .await
        .with_context(|| format!("binding {}", args.bind))?;
    let bind = listener.local_addr()?;
    let receiver = Arc::new(Receiver {
        token_digest: args.token.as_deref().filter(|t| !t.is_empty()).map(digest),
        signatures,
        audience: args.audience.clone(),
        bind,
        output: args.output,
        strict: args.strict,
        seen: Mutex::new(HashMap::new()),
        failed: tokio::sync::Notify::new(),
    });
    let app = axum::Router::new()
        .fallback(axum::routing::post(receive))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(receiver.clone());
    crate::out(format_args!("listening: http://{bind}/"))?;
    let strict = receiver.clone();
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                () = strict.failed.notified() => {}
            }
        })
        .await?;
    if args.strict {
        anyhow::bail!("a delivery failed a check (--strict)");
    }
    Ok(())
}

/// The key set and issuer of `--agent` or `--jwks`/`--issuer`.
async fn signatures(args: &ListenArgs) -> anyhow::Result<Option<Signatures>> {
    let (jwks_source, issuer) = match (&args.agent, &args.jwks) {
        (Some(agent), _) => {
            let card = ferry_proto::card_url(agent);
            let url = ferry_net::Url::parse(&card).context("--agent is not a URL")?;
            let jwks = url
                .join(ferry_server::JWKS_PATH)
                .context("--agent: the key set's URL")?;
            (jwks.to_string(), card)
        }
        (None, Some(jwks)) => (jwks.clone(), args.issuer.clone().unwrap_or_default()),
        (None, None) => return Ok(None),
    };
    let bytes = if jwks_source.starts_with("http://") || jwks_source.starts_with("https://") {
        fetch(&jwks_source, args.insecure_allow_private).await?
    } else {
        std::fs::read(PathBuf::from(&jwks_source))
            .with_context(|| format!("reading {jwks_source}"))?
    };
    let keys = KeySet::from_jwks(&bytes).with_context(|| format!("the key set {jwks_source}"))?;
    Ok(Some(Signatures { keys, issuer }))
}

/// GETs a key set through ferry-net's SSRF-safe client.
async fn fetch(url: &str, allow_private: bool) -> anyhow::Result<Vec<u8>> {
    let parsed = ferry_net::Url::parse(url).with_context(|| format!("{url} is not a URL"))?;
    let client = ferry_net::SafeClientBuilder::for_given_url(&parsed, allow_private).build()?;
    let body = ferry_trust::fetch::get_json(
        &client,
        Duration::from_secs(10),
        parsed,
        ferry_trust::fetch::MAX_JWKS_BYTES,
    )
    .await
    .with_context(|| format!("fetching {url}"))?;
    Ok(body)
}

/// One delivery: checked, printed, acknowledged (or refused with why).
async fn receive(
    State(receiver): State<Arc<Receiver>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, String) {
    match receiver.check(&uri, &headers, &body) {
        Ok(Checked::New(delivery)) => {
            receiver.show(&delivery);
            (StatusCode::OK, "{}".into())
        }
        Ok(Checked::Seen(id)) => {
            receiver.show_line(
                json!({"duplicate": id}),
                &format!("duplicate {id}: dropped"),
            );
            (StatusCode::OK, "{}".into())
        }
        Err((status, why)) => {
            receiver.show_line(json!({"refused": why}), &format!("refused: {why}"));
            if receiver.strict {
                receiver.failed.notify_one();
            }
            (status, json!({"error": why}).to_string())
        }
    }
}

/// What a delivery came to.
enum Checked {
    New(Value),
    Seen(String),
}

impl Receiver {
    /// The checks, in order: the token, the body, the signature, the delivery id.
    fn check(
        &self,
        uri: &Uri,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<Checked, (StatusCode, String)> {
        let refuse = |why: &str| (StatusCode::UNAUTHORIZED, why.to_owned());
        if let Some(expected) = &self.token_digest {
            let sent = TOKEN_HEADERS
                .iter()
                .find_map(|h| headers.get(*h).and_then(|v| v.to_str().ok()));
            // Digests are compared, not the tokens: how long a comparison takes says
            // nothing usable about the token.
            if sent.map(digest).as_ref() != Some(expected) {
                return Err(refuse("the notification token is missing or wrong"));
            }
        }
        let event: Value = serde_json::from_slice(body).map_err(|e| {
            (
                StatusCode::BAD_REQUEST,
                format!("the body is not JSON: {e}"),
            )
        })?;
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let mut delivery_id = header(DELIVERY_ID_HEADER).map(str::to_owned);
        let mut expires_at = now() + 3600;
        let mut verified = false;
        if let Some(signatures) = &self.signatures {
            let token = header(SIGNATURE_HEADER).ok_or_else(|| refuse("no signature"))?;
            let audience = self.audience.clone().unwrap_or_else(|| {
                format!(
                    "http://{}{}",
                    self.bind,
                    uri.path_and_query().map_or("/", |p| p.as_str())
                )
            });
            let checked = verify(
                token,
                body,
                &signatures.keys,
                &signatures.issuer,
                &audience,
                now(),
                LEEWAY,
            )
            .map_err(|e| refuse(&e.to_string()))?;
            delivery_id = Some(checked.delivery_id);
            expires_at = checked.expires_at;
            verified = true;
        }
        if let Some(id) = &delivery_id
            && !self.first_time(id, expires_at)
        {
            return Ok(Checked::Seen(id.clone()));
        }
        Ok(Checked::New(json!({
            "deliveryId": delivery_id,
            "signatureVerified": verified,
            "event": event,
        })))
    }

    /// Notes `id` as seen until `expires_at`; false when it was seen already.
    fn first_time(&self, id: &str, expires_at: i64) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let now = now();
        seen.retain(|_, until| *until + LEEWAY.as_secs() as i64 >= now);
        seen.insert(id.to_owned(), expires_at).is_none()
    }

    fn show(&self, delivery: &Value) {
        let event = &delivery["event"];
        let (kind, inner) = event
            .as_object()
            .and_then(|o| o.iter().next())
            .map_or(("?", &Value::Null), |(k, v)| (k.as_str(), v));
        let task = inner["taskId"]
            .as_str()
            .or(inner["id"].as_str())
            .unwrap_or("?");
        let state = inner["status"]["state"].as_str().unwrap_or("");
        let signed = if delivery["signatureVerified"] == true {
            " (signature verified)"
        } else {
            ""
        };
        let id = delivery["deliveryId"].as_str().unwrap_or("-");
        let what = format!("{kind} {state}");
        let line = format!("delivery {id}: task {task}: {}{signed}", what.trim_end());
        self.show_line(delivery.clone(), &line);
    }

    fn show_line(&self, json: Value, text: &str) {
        // A closed stdout ends the program (crate::out); nothing else can fail here.
        let _ = match self.output {
            OutputFormat::Json => crate::out(format_args!("{json}")),
            OutputFormat::Text => crate::out(format_args!("{text}")),
        };
    }
}

/// The SHA-256 digest of a token, as compared.
fn digest(token: &str) -> String {
    ferry_trust::jcs::digest_bytes(token.as_bytes())
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}
