//! `ferry serve`: run a built-in agent behind the A2A server.

use anyhow::Context;
use clap::{Args, ValueEnum};
use ferry_agents::EchoAgent;
use ferry_server::{A2aServer, ServerConfig};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// The built-in agents.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum AgentName {
    /// The forms agent: fills web forms in headless Chromium (the default).
    Forms,
    /// Completes each task with an artifact echoing the message's text and data parts.
    Echo,
    /// Plays the official conformance kit's messageId-prefix scenarios (and `ferry-turns-3`)
    /// and the ACTS behaviours named by the message's first words.
    Conformance,
}

/// Flags of `ferry serve`. Server settings come from, in rising precedence: defaults, the
/// `--config` file, `FERRY_*` environment variables, flags.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Which built-in agent to serve [default: forms]. A config file with `[[agents]]`
    /// serves several instead (see the book, "Several agents on one server").
    #[arg(long, value_enum, conflicts_with_all = ["exec", "proxy"])]
    agent: Option<AgentName>,
    /// Serve a command as the agent: each turn runs it with the message's text on stdin and
    /// streams its stdout back (no shell: the line is split into words; see the book, "Any
    /// command as an agent").
    #[arg(long, value_name = "'CMD ARGS'", conflicts_with = "proxy")]
    exec: Option<String>,
    /// Serve a gateway to the remote A2A agent at URL: its card is fetched and verified at
    /// start-up, every call is forwarded to it behind this server's front door.
    #[arg(long, value_name = "URL")]
    proxy: Option<String>,
    /// The remote card must have this digest (`sha256:…`, as `ferry card URL` prints).
    #[arg(long, requires = "proxy", value_name = "DIGEST")]
    proxy_card_digest: Option<String>,
    /// One of the remote card's signatures must verify with this public key (PEM or JWK,
    /// inline or a file).
    #[arg(long, requires = "proxy", value_name = "KEY")]
    proxy_card_key: Option<String>,
    /// One of the remote card's signatures must verify with a key of this JWKS (https URL,
    /// inline, or a file).
    #[arg(long, requires = "proxy", value_name = "JWKS")]
    proxy_jwks: Option<String>,
    /// Bearer token sent to the remote agent.
    #[arg(
        long,
        requires = "proxy",
        env = "FERRY_PROXY_TOKEN",
        hide_env_values = true,
        value_name = "TOKEN"
    )]
    proxy_token: Option<String>,
    /// Serve only this agent of the config file's `[[agents]]` (repeatable; replaces the
    /// file's `exposed`). The others answer 404.
    #[arg(long = "expose", value_name = "ID")]
    expose: Vec<String>,
    /// The forms agent's settings.
    #[command(flatten)]
    forms: crate::forms_args::FormsArgs,
    /// A TOML file with any ServerConfig fields (`${ENV}` interpolated; unknown keys are errors).
    #[arg(long, env = "FERRY_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,
    /// Print the effective configuration (secrets redacted) and exit.
    #[arg(long)]
    print_config: bool,
    /// Print the ACTS behaviour declaration of the conformance agent (what
    /// `acts/sut-behaviors.yaml` holds) and exit.
    #[arg(long)]
    print_acts_behaviors: bool,
    /// Set the conformance agent up for one of ACTS's passes: main (extended card for the
    /// token itk-valid-token), auth (every call needs it) or reduced (no streaming, no
    /// extended card). a2a-itk's ITK_ACTS_AUTH=1 / ITK_ACTS_REDUCED_CAPABILITIES=1 choose
    /// auth / reduced too. Loopback binds only.
    #[arg(long, value_enum, value_name = "PASS")]
    acts_pass: Option<crate::acts_pass::ActsPass>,
    /// Log format (RUST_LOG sets the level; default info).
    #[arg(long, value_enum, default_value = "text")]
    log_format: crate::telemetry::LogFormat,
    /// Worker threads (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Address to listen on [default: 127.0.0.1:8765; port 0 picks a free port].
    #[arg(long, env = "FERRY_BIND")]
    bind: Option<SocketAddr>,
    /// Base URL the agent card advertises [default: http://<bound address>].
    #[arg(long, env = "FERRY_PUBLIC_URL")]
    public_url: Option<String>,
    /// Bearer token every A2A call must carry; required to bind a non-loopback address.
    /// Prefer FERRY_TOKEN: command lines are visible to other users of the machine.
    #[arg(long, env = "FERRY_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// A bearer token that may only read tasks (GetTask, ListTasks, SubscribeToTask); other
    /// operations answer 403 (repeatable; needs --token). FERRY_READ_ONLY_TOKENS takes a
    /// comma-separated list.
    #[arg(
        long = "read-only-token",
        env = "FERRY_READ_ONLY_TOKENS",
        hide_env_values = true,
        value_delimiter = ',',
        value_name = "TOKEN"
    )]
    read_only_tokens: Vec<String>,
    /// Let callers without a token call every operation but GetExtendedAgentCard (needs
    /// --token; a wrong token is still refused).
    #[arg(long)]
    allow_anonymous: bool,
    /// Accept access tokens of this OpenID Connect provider (its issuer URL) besides any
    /// static token; needs --oidc-audience. The config file's [auth.oidc] says more.
    #[arg(long, value_name = "URL", requires = "oidc_audience")]
    oidc_issuer: Option<String>,
    /// The audience (`aud`) the provider's tokens must name: this server at the provider.
    #[arg(long, value_name = "AUD")]
    oidc_audience: Option<String>,
    /// A PEM file of root certificates to trust for the provider (a private CA).
    #[arg(long, value_name = "FILE")]
    oidc_ca: Option<PathBuf>,
    /// Allow a provider on a loopback or private address, over http too (tests, intranets).
    #[arg(long)]
    oidc_allow_private: bool,
    /// Allow push webhooks on loopback, private and link-local addresses (plain http to
    /// loopback names too): tests and intranets. Metadata addresses stay refused.
    #[arg(long)]
    push_allow_private: bool,
    /// Attempts of one push delivery before it is dead (default 10).
    #[arg(long, value_name = "N")]
    push_max_attempts: Option<u32>,
    /// Seconds after its first attempt when a failing push delivery is dead (default 86400;
    /// 0: only the attempts count).
    #[arg(long, value_name = "SECS")]
    push_max_age: Option<u64>,
    /// Seconds one push attempt may take (default 10).
    #[arg(long, value_name = "SECS")]
    push_timeout: Option<u64>,
    /// How far below the request path the push deliverer's thread runs, as a nice increment
    /// 0-19 (default 10; 0: the server's priority). Under a saturated CPU, requests first.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=19))]
    push_nice: Option<u8>,
    /// With several replicas on one PostgreSQL database: seconds between two readings of
    /// every task followed here, whatever the database's notifications said (default 5).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    replica_safety_poll: Option<u64>,
    /// With several replicas: seconds a replica's lease on a running task holds without
    /// renewal, the longest a dead replica's task stays WORKING (default 15).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    replica_lease: Option<u64>,
    /// With several replicas: seconds between two renewals of a replica's leases (default 5;
    /// well below --replica-lease).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..))]
    replica_heartbeat: Option<u64>,
    /// With several replicas: the URL the other replicas reach this one at (its internal
    /// address), where they forward the requests of the forms conversations and MCP sessions
    /// it holds (default: http:// and the bound address; required with a wildcard bind).
    #[arg(long, value_name = "URL", env = "FERRY_REPLICA_URL")]
    replica_url: Option<String>,
    /// Serve TLS with this certificate chain (PEM; needs --tls-key). Read again when it
    /// changes.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Accept client certificates of this CA (PEM; mutual TLS): a certificate's subject CN,
    /// else its first DNS or URI name, is the caller `cert:NAME`.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_client_ca: Option<PathBuf>,
    /// Whether the handshake requires a client certificate [default: required].
    #[arg(long, value_name = "MODE", requires = "tls_client_ca", value_parser = ["required", "optional"])]
    tls_client_auth: Option<String>,
    /// Accept this Host header besides loopback names and the --public-url host (repeatable).
    #[arg(long = "allowed-host", value_name = "HOST")]
    allowed_hosts: Vec<String>,
    /// Let web pages of this origin (`https://app.example.com`) call the server from a browser,
    /// besides the server's own origin (repeatable).
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    allowed_origins: Vec<String>,
    /// Where tasks are kept: memory, sqlite:PATH or postgres://user:password@host/db
    /// [default: memory]. Prefer FERRY_STORE for a URL with a password.
    #[arg(
        long,
        env = "FERRY_STORE",
        hide_env_values = true,
        value_name = "STORE"
    )]
    store: Option<String>,
    /// Maximum number of tasks the memory store keeps; only finished ones are evicted
    /// [default: 10000].
    #[arg(long, env = "FERRY_TASK_CAPACITY")]
    task_capacity: Option<usize>,
    /// Approximate bytes the memory store keeps; 503 with Retry-After above it
    /// [default: 1073741824].
    #[arg(long, env = "FERRY_MAX_STORE_BYTES")]
    max_store_bytes: Option<usize>,
    /// Seconds a finished task stays retrievable [default: 3600].
    #[arg(long, env = "FERRY_TASK_TTL")]
    task_ttl: Option<u64>,
    /// Seconds a task that is not finished (waiting for input, or working without progress)
    /// is kept without any event before it is forgotten [default: 3600].
    #[arg(long, env = "FERRY_IDLE_TTL")]
    idle_ttl: Option<u64>,
    /// Messages a task's history may hold [default: 1000].
    #[arg(long, env = "FERRY_MAX_HISTORY_MESSAGES")]
    max_history_messages: Option<usize>,
    /// Approximate bytes a task's artifacts may hold together [default: 67108864].
    #[arg(long, env = "FERRY_MAX_ARTIFACT_BYTES")]
    max_artifact_bytes: Option<usize>,
    /// Largest request body in bytes; 413 above it, before any of it is read [default: 1048576].
    #[arg(long, env = "FERRY_MAX_BODY_BYTES")]
    max_body_bytes: Option<usize>,
    /// Deepest nesting of arrays and objects in a request body; -32602/400 deeper [default: 64].
    #[arg(long, env = "FERRY_MAX_JSON_DEPTH")]
    max_json_depth: Option<usize>,
    /// Requests served at once; 503 with Retry-After above it [default: 1024].
    #[arg(long, env = "FERRY_MAX_IN_FLIGHT")]
    max_in_flight: Option<usize>,
    /// SSE streams open at once; 503 with Retry-After above it [default: 256].
    #[arg(long, env = "FERRY_MAX_STREAMS")]
    max_streams: Option<usize>,
    /// Requests per second per client address; 429 with Retry-After above it [default: 0 = off].
    #[arg(long, env = "FERRY_RATE_LIMIT")]
    rate_limit: Option<u32>,
    /// Seconds a request may take to produce its response; 503 after it [default: 120].
    #[arg(long, env = "FERRY_REQUEST_TIMEOUT")]
    request_timeout: Option<u64>,
    /// Seconds a client has to send its request headers [default: 10].
    #[arg(long, env = "FERRY_HEADER_TIMEOUT")]
    header_timeout: Option<u64>,
    /// Seconds in-flight requests get to finish on shutdown [default: 10].
    #[arg(long, env = "FERRY_DRAIN_TIMEOUT")]
    drain_timeout: Option<u64>,
    /// Seconds to remember SendMessage answers for idempotent retries (same caller, messageId
    /// and content get the first answer) [default: 0 = off].
    #[arg(long, env = "FERRY_DEDUP_TTL")]
    dedup_ttl: Option<u64>,
    /// Sign the served card with this PKCS#8 PEM private key (more keys: `signing_keys` in the
    /// config file); its public key is published at /.well-known/jwks.json.
    #[arg(long, requires = "sign_kid", value_name = "KEY.pem")]
    sign_key: Option<PathBuf>,
    /// Key id of --sign-key.
    #[arg(long, requires = "sign_key", value_name = "KID")]
    sign_kid: Option<String>,
    /// A JSON file whose members extend the public card in the extended agent card served to
    /// authenticated callers (needs a token).
    #[arg(long, env = "FERRY_EXTENDED_CARD", value_name = "FILE")]
    extended_card: Option<PathBuf>,
    /// Serve the cdp-config/v1 extension at /ext/cdp-config (orchestrators register the browser
    /// endpoints an agent must use).
    #[arg(long)]
    cdp_config: bool,
    /// Mark cdp-config/v1 as required in the card.
    #[arg(long, requires = "cdp_config")]
    cdp_config_required: bool,
    /// Reject requests without an A2A-Version header (the spec reads a missing one as 0.3).
    #[arg(long)]
    strict_version: bool,
    /// Do not serve A2A v0.3 (its JSON-RPC methods and its card members); v1.0 only.
    #[arg(long)]
    no_v03: bool,
    /// Do not serve the gRPC binding (served by default on the same port, HTTP/2 cleartext)
    /// and leave it off the card.
    #[arg(long)]
    no_grpc: bool,
    /// Serve gRPC but leave it off the card (`grpc_on_card = false`): for callers such as
    /// Google ADK that refuse a card naming an interface that is not http(s) on its origin.
    #[arg(long)]
    grpc_off_card: bool,
    /// Use the A2A v1.0.0 HTTP status table for REST errors (409/415/502) instead of v1.0.1.
    #[arg(long)]
    v1_0_0_errors: bool,
    /// Mark an extension URI as required in the card (repeatable).
    #[arg(long = "require-extension", value_name = "URI")]
    required_extensions: Vec<String>,
}

impl ServeArgs {
    /// The TLS flags over the file's `[tls]`: a certificate flag sets up TLS (keeping the
    /// file's other settings), the client flags amend it.
    fn apply_tls(&self, tls: &mut Option<ferry_server::TlsConfig>) {
        if let (Some(cert), Some(key)) = (&self.tls_cert, &self.tls_key) {
            match tls {
                Some(t) => {
                    t.cert = cert.clone();
                    t.key = key.clone();
                }
                None => *tls = Some(ferry_server::TlsConfig::new(cert.clone(), key.clone())),
            }
        }
        let Some(tls) = tls.as_mut() else {
            return;
        };
        if let Some(ca) = &self.tls_client_ca {
            tls.client_ca = Some(ca.clone());
        }
        match self.tls_client_auth.as_deref() {
            Some("optional") => tls.client_auth = ferry_server::ClientAuth::Optional,
            Some(_) => tls.client_auth = ferry_server::ClientAuth::Required,
            None => {}
        }
    }

    /// The push flags over the file's `[push]`.
    fn apply_push(&self, push: &mut ferry_server::PushSettings) {
        push.allow_private |= self.push_allow_private;
        if let Some(n) = self.push_max_attempts {
            push.max_attempts = n;
        }
        if let Some(secs) = self.push_max_age {
            push.max_age_secs = secs;
        }
        if let Some(secs) = self.push_timeout {
            push.timeout_secs = secs;
        }
        if let Some(nice) = self.push_nice {
            push.nice = nice;
        }
    }

    /// The replica flags over the file's `[replicas]`.
    fn apply_replicas(&self, replicas: &mut ferry_server::ReplicaSettings) {
        if let Some(secs) = self.replica_safety_poll {
            replicas.safety_poll_secs = secs;
        }
        if let Some(secs) = self.replica_lease {
            replicas.lease_secs = secs;
        }
        if let Some(secs) = self.replica_heartbeat {
            replicas.heartbeat_secs = secs;
        }
        if let Some(url) = &self.replica_url {
            replicas.url = Some(url.clone());
        }
    }

    /// The provider flags over the file's `[auth.oidc]`: an issuer flag sets up a provider
    /// (keeping the file's other settings), the others amend it.
    fn apply_oidc(&self, auth: &mut ferry_server::AuthConfig) {
        if let Some(issuer) = &self.oidc_issuer {
            auth.oidc.get_or_insert_with(Default::default).issuer = issuer.clone();
        }
        let Some(oidc) = auth.oidc.as_mut() else {
            return;
        };
        if let Some(audience) = &self.oidc_audience {
            oidc.audience = audience.clone();
        }
        if let Some(ca) = &self.oidc_ca {
            oidc.ca_file = Some(ca.clone());
        }
        oidc.allow_private |= self.oidc_allow_private;
    }

    /// The effective configuration of the server and of the forms agent: defaults, then the
    /// file (the forms agent's settings in its `[forms]` table), then environment and flags.
    fn configs(&self) -> anyhow::Result<Configs> {
        // The forms agent's `[forms]` table and the cdp-config extension's keys are not the
        // server's: they are set aside before the rest is read as a ServerConfig.
        let (mut c, sections) = match &self.config {
            Some(path) => ServerConfig::from_toml_file_with_sections(
                path,
                &[
                    &["forms", "cdp_config", "cdp_config_required"][..],
                    &crate::hosting::SECTIONS[..],
                ]
                .concat(),
            )?,
            None => (ServerConfig::default(), toml::Table::new()),
        };
        let file_flag = |key: &str| -> anyhow::Result<bool> {
            match sections.get(key) {
                None => Ok(false),
                Some(toml::Value::Boolean(b)) => Ok(*b),
                Some(other) => anyhow::bail!("{key} must be true or false, not {other}"),
            }
        };
        let mut cdp = CdpSettings {
            enabled: file_flag("cdp_config")?,
            required: file_flag("cdp_config_required")?,
        };
        let shown = self
            .config
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let forms_file = crate::forms_args::FormsFile::from_table(sections.get("forms"), &shown)?;
        let mut hosting = crate::hosting::Hosting::from_sections(&sections, &shown)?;
        match &mut hosting {
            Some(_) if self.agent.is_some() || self.exec.is_some() || self.proxy.is_some() => {
                anyhow::bail!(
                    "{shown} lists [[agents]]: --agent, --exec and --proxy serve one agent instead; drop them, or the [[agents]] entries"
                )
            }
            Some(hosting) => {
                hosting.expose(&self.expose)?;
                hosting.check_scoped_tokens(&c)?;
            }
            None if !self.expose.is_empty() => {
                anyhow::bail!("--expose chooses among the config file's [[agents]]; there are none")
            }
            None if !c.scoped_tokens.is_empty() => {
                anyhow::bail!(
                    "scoped_tokens limit tokens to some of the [[agents]]; there are none"
                )
            }
            None => {}
        }
        let forms = self.forms.config(forms_file)?;
        fn set<T: Clone>(slot: &mut T, value: &Option<T>) {
            if let Some(v) = value {
                *slot = v.clone();
            }
        }
        set(&mut c.bind, &self.bind);
        if let Some(url) = &self.public_url {
            c.public_url = Some(url.trim_end_matches('/').to_owned());
        }
        if let Some(token) = self.token.as_ref().filter(|t| !t.is_empty()) {
            c.token = Some(token.clone());
        }
        c.read_only_tokens.extend(
            self.read_only_tokens
                .iter()
                .filter(|t| !t.is_empty())
                .cloned(),
        );
        c.allow_anonymous |= self.allow_anonymous;
        self.apply_oidc(&mut c.auth);
        self.apply_push(&mut c.push);
        self.apply_replicas(&mut c.replicas);
        self.apply_tls(&mut c.tls);
        c.allowed_hosts.extend(self.allowed_hosts.iter().cloned());
        c.allowed_origins
            .extend(self.allowed_origins.iter().cloned());
        set(&mut c.store, &self.store);
        set(&mut c.task_capacity, &self.task_capacity);
        set(&mut c.max_store_bytes, &self.max_store_bytes);
        set(&mut c.task_ttl_secs, &self.task_ttl);
        set(&mut c.idle_ttl_secs, &self.idle_ttl);
        set(&mut c.max_history_messages, &self.max_history_messages);
        set(&mut c.max_artifact_bytes, &self.max_artifact_bytes);
        set(&mut c.max_body_bytes, &self.max_body_bytes);
        set(&mut c.max_json_depth, &self.max_json_depth);
        set(&mut c.max_in_flight, &self.max_in_flight);
        set(&mut c.max_streams, &self.max_streams);
        set(&mut c.rate_limit_per_sec, &self.rate_limit);
        set(&mut c.request_timeout_secs, &self.request_timeout);
        set(&mut c.header_read_timeout_secs, &self.header_timeout);
        set(&mut c.drain_timeout_secs, &self.drain_timeout);
        set(&mut c.dedup_ttl_secs, &self.dedup_ttl);
        if let Some(path) = &self.extended_card {
            c.extended_card = Some(path.clone());
        }
        if let (Some(key), Some(kid)) = (&self.sign_key, &self.sign_kid) {
            c.signing_keys.push(ferry_server::SigningKeyConfig {
                key: key.clone(),
                kid: kid.clone(),
                alg: None,
            });
        }
        c.strict_version |= self.strict_version;
        c.grpc &= !self.no_grpc;
        c.grpc_on_card &= !self.grpc_off_card;
        c.v03 &= !self.no_v03;
        let byob = matches!(forms.browser, ferry_forms::BrowserSource::Cdp { .. });
        cdp.enabled |= self.cdp_config || (byob && self.serves_forms(hosting.as_ref()));
        cdp.required |= self.cdp_config_required;
        if self.v1_0_0_errors {
            c.error_table = ferry_proto::ErrorTable::V1_0_0;
        }
        c.required_extensions
            .extend(self.required_extensions.iter().cloned());
        let acts = match self.agent {
            Some(AgentName::Conformance) => crate::acts_pass::ActsPass::chosen(self.acts_pass)?,
            _ if self.acts_pass.is_some() => {
                anyhow::bail!("--acts-pass is the conformance agent's: add --agent conformance")
            }
            _ => None,
        };
        let single = self.single_agent()?;
        if let Some(pass) = acts {
            pass.apply(&mut c);
        }
        Ok(Configs {
            acts,
            server: c,
            forms,
            cdp,
            hosting,
            single,
        })
    }

    /// What one agent to serve, when the file has no `[[agents]]`.
    fn single_agent(&self) -> anyhow::Result<SingleAgent> {
        if let Some(line) = &self.exec {
            let config = ferry_agents::ExecConfig::from_command_line(line).context("--exec")?;
            return Ok(SingleAgent::Exec(config));
        }
        if let Some(url) = &self.proxy {
            let mut config = ferry_agents::ProxyConfig::new(url.clone());
            config.card_digest = self.proxy_card_digest.clone();
            config.card_key = self.proxy_card_key.clone();
            config.jwks = self.proxy_jwks.clone();
            config.token = self.proxy_token.clone().filter(|t| !t.is_empty());
            return Ok(SingleAgent::Proxy(Box::new(config)));
        }
        Ok(SingleAgent::Builtin(self.agent.unwrap_or(AgentName::Forms)))
    }

    /// Whether a forms agent is served (the cdp-config extension is then on by default with
    /// a browser the orchestrator brings).
    fn serves_forms(&self, hosting: Option<&crate::hosting::Hosting>) -> bool {
        match hosting {
            Some(h) => h
                .exposed()
                .any(|e| e.kind == crate::hosting::AgentKind::Forms),
            None => {
                self.exec.is_none()
                    && self.proxy.is_none()
                    && matches!(self.agent, None | Some(AgentName::Forms))
            }
        }
    }
}

/// The agent of a server of one agent.
enum SingleAgent {
    /// A built-in agent (`--agent`).
    Builtin(AgentName),
    /// `--exec`.
    Exec(ferry_agents::ExecConfig),
    /// `--proxy` and its pins.
    Proxy(Box<ferry_agents::ProxyConfig>),
}

/// Everything `ferry serve` runs with.
struct Configs {
    /// The ACTS pass the conformance agent is set up for.
    acts: Option<crate::acts_pass::ActsPass>,
    server: ServerConfig,
    forms: ferry_forms::FormsConfig,
    cdp: CdpSettings,
    /// The `[[agents]]` of the file, if any: a server of several agents.
    hosting: Option<crate::hosting::Hosting>,
    /// Otherwise, the one agent.
    single: SingleAgent,
}

/// The cdp-config/v1 extension's settings (top-level keys of the config file, and flags).
#[derive(Debug, Clone, Copy, Default)]
struct CdpSettings {
    /// Serve the extension.
    enabled: bool,
    /// Mark it required in the card.
    required: bool,
}

/// Runs the server until Ctrl-C or SIGTERM.
pub(crate) fn run(args: ServeArgs, otlp: &crate::telemetry::OtlpSettings) -> anyhow::Result<()> {
    if args.print_acts_behaviors {
        if !matches!(args.agent, Some(AgentName::Conformance)) {
            anyhow::bail!(
                "--print-acts-behaviors is the conformance agent's: add --agent conformance"
            );
        }
        print!("{}", ferry_agents::ConformanceAgent::acts_behaviors_yaml());
        return Ok(());
    }
    let configs = args.configs()?;
    if args.print_config {
        let (config, forms, cdp) = (&configs.server, &configs.forms, configs.cdp);
        print!("{}", config.to_redacted_toml());
        println!(
            "cdp_config = {}\ncdp_config_required = {}",
            cdp.enabled, cdp.required
        );
        if let Some(hosting) = &configs.hosting {
            print!("\n{}", hosting.to_redacted_toml()?);
        }
        if args.serves_forms(configs.hosting.as_ref()) {
            let mut table = toml::Table::new();
            table.insert(
                "forms".into(),
                toml::Value::try_from(crate::forms_args::FormsFile::of(forms))?,
            );
            print!("\n{}", toml::to_string_pretty(&table)?);
        }
        return Ok(());
    }
    // Dropped after the runtime: the spans of the last requests are exported on the way out.
    let _telemetry = crate::telemetry::init(args.log_format, otlp, crate::telemetry::Role::Server)?;
    // A multi-thread runtime even for one worker: measured, a current-thread runtime serving
    // 32 connections was three times slower (it polls the I/O driver far more often).
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    runtime.enable_all();
    if let Some(n) = args.threads {
        runtime.worker_threads(n.max(1));
    }
    let runtime = runtime.build().context("starting the async runtime")?;
    runtime.block_on(serve(args, configs))
}

async fn serve(args: ServeArgs, configs: Configs) -> anyhow::Result<()> {
    let Configs {
        acts,
        server: config,
        forms: forms_config,
        cdp,
        hosting,
        single,
    } = configs;
    let cdp_extension = || Arc::new(ferry_cdp_config::CdpConfig::new(cdp.required));
    let stores = crate::stores::open_stores(&config.store).await?;
    let profiles = stores.as_ref().map(|s| s.profiles.clone());
    // Each forms agent, with the id it is hosted under (None: the server's only agent); each
    // also answers MCP (`/mcp`, or `/mcp/{id}` on a server of several agents).
    let mut forms: Vec<(Option<String>, ferry_forms::FormsAgent)> = Vec::new();
    let mut new_forms = |config: ferry_forms::FormsConfig, id: Option<String>| {
        let mut agent = ferry_forms::FormsAgent::new(config);
        if let Some(profiles) = &profiles {
            agent = agent.with_profiles(profiles.clone());
        }
        announce_forms(agent.config());
        forms.push((id, agent.clone()));
        Arc::new(agent)
    };
    let mut builder = match &hosting {
        None => {
            let agent: Arc<dyn ferry_agent::AgentExecutor> = match single {
                SingleAgent::Builtin(AgentName::Echo) => Arc::new(EchoAgent),
                SingleAgent::Builtin(AgentName::Conformance) => {
                    Arc::new(acts.map(|p| p.agent()).unwrap_or_default())
                }
                SingleAgent::Builtin(AgentName::Forms) => new_forms(forms_config, None),
                SingleAgent::Exec(exec) => Arc::new(crate::hosting::exec_agent(exec)?),
                SingleAgent::Proxy(proxy) => Arc::new(crate::hosting::proxy_agent(*proxy).await?),
            };
            let builder = A2aServer::builder(agent);
            if cdp.enabled {
                builder.extension(cdp_extension())
            } else {
                builder
            }
        }
        Some(hosting) => {
            let mut builder = A2aServer::hosting();
            for entry in hosting.exposed() {
                let mount = if entry.kind == crate::hosting::AgentKind::Forms {
                    let config = args.forms.config(entry.forms_file()?)?;
                    let mount = entry.mount_of(new_forms(config, Some(entry.id.clone())));
                    if cdp.enabled {
                        mount.extension(cdp_extension())
                    } else {
                        mount
                    }
                } else {
                    entry.mount().await?
                };
                builder = builder.agent(mount);
            }
            if let Some(id) = hosting.default_agent() {
                builder = builder.default_agent(id);
            }
            builder
        }
    };
    let approving: Vec<ferry_forms::FormsAgent> = forms
        .iter()
        .filter(|(_, agent)| agent.config().approval.human().is_some())
        .map(|(_, agent)| agent.clone())
        .collect();
    if !approving.is_empty() {
        builder = builder.capability_routes(
            crate::approvals::PREFIX,
            crate::approvals::routes(approving.clone()),
        );
    }
    for (id, agent) in &forms {
        let path = id
            .as_ref()
            .map_or_else(|| "/mcp".to_owned(), |id| format!("/mcp/{id}"));
        let max_body = config.max_body_bytes;
        builder = builder.session_routes(
            crate::mcp::routes(&path, agent.clone(), id.clone(), max_body),
            axum::http::HeaderName::from_static("mcp-session-id"),
        );
    }
    builder = builder.config(config);
    if let Some(stores) = stores {
        builder = builder.store(stores.tasks);
    }
    let server = builder.bind().await.map_err(with_fix)?;
    for agent in &approving {
        agent.serve_approvals_at(server.base_url());
    }
    // Before the card line: a script may send SIGTERM as soon as it reads that line.
    let shutdown = shutdown_signal().context("installing the signal handlers")?;
    let ids: Vec<String> = server.agent_ids().into_iter().map(str::to_owned).collect();
    tracing::info!(addr = %server.local_addr(), agents = ?ids, "listening");
    // The root card first (a script reads the first card line), then each agent's.
    if ids.is_empty()
        || hosting
            .as_ref()
            .is_some_and(|h| h.default_agent().is_some())
    {
        println!("agent card: {}", server.card_url());
    }
    for id in &ids {
        if let Some(url) = server.agent_card_url(id) {
            println!("agent card: {url}");
        }
    }
    server.run(shutdown).await?;
    for (_, forms) in forms {
        forms.pool().shutdown().await;
    }
    tracing::info!("stopped");
    Ok(())
}

/// A server error with what the operator can do about it: the library says what is wrong,
/// the binary names the flag.
fn with_fix(e: ferry_server::ServerError) -> anyhow::Error {
    use ferry_server::ServerError;
    let fix = match &e {
        ServerError::TokenRequired { .. } => Some("set --token or FERRY_TOKEN, or bind 127.0.0.1"),
        ServerError::ExtendedCardNeedsToken => {
            Some("set a token (--token or FERRY_TOKEN) or drop extended_card")
        }
        ServerError::NeedsToken { .. } => Some("set a token (--token or FERRY_TOKEN)"),
        _ => None,
    };
    match fix {
        Some(fix) => anyhow::anyhow!("{e}; {fix}"),
        None => anyhow::Error::new(e),
    }
}

/// Start-up notes of the forms agent: the browser, human approval, and a warning without an
/// allowlist.
fn announce_forms(config: &ferry_forms::FormsConfig) {
    if config.allow_domains.is_empty() {
        tracing::warn!(
            "forms agent: no --allow-domain set; pages may reach any public address (loopback, private and metadata addresses stay blocked)"
        );
    } else {
        tracing::info!(domains = ?config.allow_domains, "forms agent: allowlist");
    }
    if config.allow_private_networks {
        tracing::warn!(
            "forms agent: --allow-private-networks: pages may reach loopback and private addresses"
        );
    }
    if let Some(human) = config.approval.human() {
        tracing::info!(
            ttl_secs = human.ttl.as_secs(),
            approver_token = human.approver_token.is_some(),
            "forms agent: a person approves each submit on a review page under /approvals"
        );
    }
    if let ferry_forms::BrowserSource::Launch = config.browser {
        match ferry_browser::find_chromium(config.chrome_path.as_deref()) {
            Ok(path) => {
                tracing::info!(chromium = %path.display(), isolation = ?config.isolation, "forms agent: browser")
            }
            Err(e) => {
                tracing::warn!(error = %e, "forms agent: no browser; the readiness probe reports not ready")
            }
        }
    }
}

/// Installs the Ctrl-C and SIGTERM handlers now, and returns a future that resolves on either.
///
/// The handlers must exist before the card line is printed: tokio registers a handler only when
/// asked, and until then SIGTERM has its default action, so a signal sent right after the line
/// killed the process (exit by signal, not the clean exit 0).
fn shutdown_signal() -> std::io::Result<impl Future<Output = ()> + Send + 'static> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        Ok(async move {
            tokio::select! {
                _ = interrupt.recv() => {},
                _ = terminate.recv() => {},
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}
