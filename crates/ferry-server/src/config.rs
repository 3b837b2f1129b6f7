//! `ServerConfig`: every knob of the server in one serde struct with documented defaults.

use ferry_proto::ErrorTable;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::time::Duration;

/// Server configuration. Every field has a default; `ServerConfig::default()` is a safe
/// loopback server.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// Address to listen on. Default `127.0.0.1:8765` (loopback only).
    pub bind: SocketAddr,
    /// Base URL the agent card advertises (scheme, host, port, optional path), without a
    /// trailing slash. Default: derived from the bound address.
    pub public_url: Option<String>,
    /// Path of the JSON-RPC endpoint under the public URL. Default `/jsonrpc`.
    pub jsonrpc_path: String,
    /// Path of the HTTP+JSON (REST) base under the public URL. Default `/rest`.
    pub rest_path: String,
    /// Serve the gRPC binding (HTTP/2 cleartext on the same port, at
    /// `/lf.a2a.v1.A2AService/*`) and list it on the card as `GRPC` at `host:port`. Default
    /// true; without the crate's `grpc` feature there is no gRPC to serve.
    pub grpc: bool,
    /// List the gRPC interface on the card (when gRPC is served). Default true: the spec's
    /// `host:port` entry, which the SDKs' gRPC clients and the conformance kit find it by.
    /// False serves gRPC without naming it on the card, for callers that refuse a card with
    /// an interface URL that is not `http(s)` on the card's own origin (Google ADK's
    /// `RemoteA2aAgent` is one); a gRPC client then needs the address from elsewhere.
    pub grpc_on_card: bool,
    /// Serve A2A v0.3 next to v1.0: its JSON-RPC methods (`message/send`, …) at the JSON-RPC
    /// endpoint, and its members on the card. Default true; without the crate's `v03`
    /// feature there is no v0.3 to serve.
    pub v03: bool,
    /// Where tasks are kept: `memory` (the default: bounded, lost on restart), `sqlite:PATH`
    /// or `postgres://user:password@host/db` (durable). Read by whoever builds the server (the
    /// `ferry` binary opens it); a library user hands the builder a `TaskStore` instead.
    /// Shown with its password replaced by `***`.
    #[serde(serialize_with = "redacted_store")]
    pub store: String,
    /// Maximum number of tasks the memory store keeps. Only terminal tasks are evicted to make
    /// room; when every task is still active, new tasks are refused (503, `TASK_STORE_FULL`,
    /// with `Retry-After`). Default 10 000.
    pub task_capacity: usize,
    /// Approximate bytes the memory store keeps (snapshots and the events kept for resuming
    /// streams), refused like `task_capacity` when passed. Default 1 GiB.
    pub max_store_bytes: usize,
    /// How long a terminal task stays retrievable, in seconds. Default 3600.
    pub task_ttl_secs: u64,
    /// How long a task that is not terminal stays without any event before it is forgotten,
    /// in seconds: INPUT_REQUIRED / AUTH_REQUIRED waiting for an answer, WORKING without
    /// progress (its turn is aborted). Default 3600.
    pub idle_ttl_secs: u64,
    /// Messages a task's history may hold; a follow-up past it is refused, an agent's status
    /// message past it fails the task. Default 1000.
    pub max_history_messages: usize,
    /// Approximate bytes a task's artifacts may hold together; an artifact event past it
    /// fails the task. Default 64 MiB.
    pub max_artifact_bytes: usize,
    /// Events the memory store keeps per task for resuming streams; older ones are dropped
    /// (a resume point before them starts from the snapshot). Default 1024.
    pub max_events_per_task: usize,
    /// Interval of `: keep-alive` comments on idle SSE streams, in seconds. Default 15.
    pub sse_keepalive_secs: u64,
    /// Maximum request body size in bytes. Default 1 MiB. A declared `Content-Length` above
    /// it is refused (413) before any of the body is read.
    pub max_body_bytes: usize,
    /// Deepest nesting of arrays and objects in a request body (free-form `metadata` and
    /// `data` parts included). Default 64.
    pub max_json_depth: usize,
    /// Reject requests without `A2A-Version` (-32009) instead of treating them as 1.0.
    /// Default false: a missing header is accepted as 1.0 (a documented leniency).
    pub strict_version: bool,
    /// Which HTTP status table REST errors follow. Default the v1.0.1 table.
    #[serde(with = "error_table")]
    pub error_table: ErrorTable,
    /// `max-age` of the agent card's `Cache-Control`, in seconds. Default 300.
    pub card_max_age_secs: u64,
    /// Extension URIs the card marks `required: true`; requests that do not activate them get
    /// ExtensionSupportRequiredError (-32008).
    pub required_extensions: Vec<String>,
    /// Tenants served. Empty (the default): any tenant value is accepted and tasks are kept
    /// apart per tenant. Otherwise an unknown tenant is refused.
    pub tenants: Vec<String>,
    /// Bearer token every A2A call must carry (`Authorization: Bearer …`). Required when `bind`
    /// is not a loopback address. Never serialized, never logged, never in the card.
    #[serde(skip_serializing)]
    pub token: Option<String>,
    /// Bearer tokens that may only read tasks: `GetTask`, `ListTasks`, `SubscribeToTask` and
    /// the webhook configs' Get and List, of every caller (a dashboard). Anything else
    /// answers 403 (PERMISSION_DENIED). Needs `token`. Never serialized, never logged, never in the card.
    #[serde(skip_serializing)]
    pub read_only_tokens: Vec<String>,
    /// Bearer tokens limited to some of the agents of a server of several agents: elsewhere
    /// they are answered 403 (PERMISSION_DENIED), and `GET /agents` lists only theirs. A
    /// scoped token alone turns authentication on, as `token` does. Never serialized, never
    /// logged, never in a card.
    #[serde(skip_serializing)]
    pub scoped_tokens: Vec<ScopedToken>,
    /// Let every caller see every task of its tenant (what each caller's tasks are otherwise
    /// kept apart from: ListTasks, GetTask, CancelTask, SubscribeToTask and messages to a
    /// task show a caller only its own tasks, and another's is not found). Default false.
    /// In a server of several agents, each `[[agents]]` entry may say so for its agent.
    pub shared_tasks: bool,
    /// Let callers without credentials call every operation except `GetExtendedAgentCard`,
    /// which stays for holders of `token` (a public agent with a partners' card). A token that
    /// is presented must still be valid. The card then declares the bearer scheme without
    /// requiring it. Needs `token`. Default false.
    pub allow_anonymous: bool,
    /// Host names (or `host:port`) accepted in the `Host` header besides loopback names and the
    /// host of `public_url` (DNS-rebinding defence).
    pub allowed_hosts: Vec<String>,
    /// Web origins (`https://app.example.com`, `http://localhost:3000`) whose pages may call
    /// the server from a browser, besides the server's own origin (that of the `Host` it was
    /// called at, or of `public_url`). A request from any other origin (`null` included) is
    /// refused with 403; allowed ones get CORS headers and their preflights are answered.
    pub allowed_origins: Vec<String>,
    /// Seconds a client has to send a request's headers before the connection is closed
    /// (slowloris defence). Default 10.
    pub header_read_timeout_secs: u64,
    /// Seconds a request may take to produce its response (for a stream: its first event);
    /// then 503. Default 120.
    pub request_timeout_secs: u64,
    /// Requests served at once; more get 503 with `Retry-After`. Default 1024.
    pub max_in_flight: usize,
    /// SSE streams open at once; more get 503 with `Retry-After`. Default 256.
    pub max_streams: usize,
    /// Requests per second one client address may send (token bucket; 0 = no limit, the
    /// default); more get 429 with `Retry-After`.
    pub rate_limit_per_sec: u32,
    /// Burst size of the per-client token bucket (0 = twice the rate).
    pub rate_limit_burst: u32,
    /// Seconds in-flight requests get to finish after shutdown begins. Default 10.
    pub drain_timeout_secs: u64,
    /// Seconds a `SendMessage` answer is remembered for idempotent retries (same caller,
    /// messageId and content get the first answer). 0 (the default) turns this off.
    pub dedup_ttl_secs: u64,
    /// Answers remembered for idempotent retries at most. Default 10 000.
    pub dedup_capacity: usize,
    /// Private keys that sign the served card, one signature each (several for rotation).
    /// Their public keys are published at `/.well-known/jwks.json`.
    pub signing_keys: Vec<SigningKeyConfig>,
    /// Public keys (PEM or JWK files) published in the JWKS without signing, e.g. the next key
    /// of a rotation.
    pub announced_keys: Vec<AnnouncedKeyConfig>,
    /// A JSON file whose members replace the public card's (more skills, a longer description…)
    /// in the extended agent card served to authenticated callers (`GetExtendedAgentCard`).
    /// Needs a token.
    pub extended_card: Option<std::path::PathBuf>,
    /// Identity from a provider besides the static tokens (`[auth.oidc]`).
    pub auth: AuthConfig,
    /// TLS served by ferry itself (`[tls]`); plain HTTP without it.
    pub tls: Option<TlsConfig>,
    /// Push notifications (`[push]`): limits of configs and how deliveries are made.
    pub push: PushSettings,
    /// Several replicas on one shared store (`[replicas]`, PostgreSQL): how they follow each
    /// other.
    pub replicas: ReplicaSettings,
}

/// Several replicas of a server on one PostgreSQL database (`[replicas]`). A replica hears
/// of the others' writes through the database's notifications; these settings bound what a
/// lost notification can cost.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReplicaSettings {
    /// Seconds between two readings of every task followed here (by a subscriber or a
    /// waiting caller) whatever the notifications said: the longest a subscriber waits for
    /// another replica's event if its notification was lost. Default 5.
    pub safety_poll_secs: u64,
    /// Seconds a replica's lease on a task holds without renewal: how long a task whose
    /// replica died (or froze) stays WORKING before another replica ends it. Default 15.
    pub lease_secs: u64,
    /// Seconds between two renewals of this replica's leases, which are also its looks for
    /// leases that ran out; keep it well below `lease_secs`. Default 5.
    pub heartbeat_secs: u64,
    /// The URL the other replicas reach this one at (its internal address, such as a pod's
    /// `http://10.0.3.7:8765`): where they forward the requests of the conversations this
    /// replica holds (the forms agent's browsers, MCP sessions). Unset: `http://` and the
    /// address the server is bound to, which will not do for a wildcard bind (`0.0.0.0`).
    pub url: Option<String>,
}

impl Default for ReplicaSettings {
    fn default() -> Self {
        Self {
            safety_poll_secs: 5,
            lease_secs: 15,
            heartbeat_secs: 5,
            url: None,
        }
    }
}

/// Push notifications (`[push]`): what a config may hold, and how its deliveries are sent and
/// retried. Push is offered when the store keeps configs (every store ferry has) and
/// `enabled` is on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PushSettings {
    /// Offer push notifications (`capabilities.pushNotifications`). Default true.
    pub enabled: bool,
    /// Allow webhooks on loopback, private and link-local addresses (plain http to loopback
    /// names too): tests and intranets. Cloud metadata addresses stay refused. Default false.
    pub allow_private: bool,
    /// Configs one task may keep. Default 10.
    pub max_configs_per_task: usize,
    /// The longest webhook URL, in bytes. Default 2048.
    pub max_url_bytes: usize,
    /// The longest token, and the longest `scheme credentials` of `authentication`, in bytes.
    /// Default 4096.
    pub max_header_bytes: usize,
    /// Attempts of one delivery before it is dead. Default 10.
    pub max_attempts: u32,
    /// Seconds after its first attempt when a delivery that still fails is dead; 0: no limit
    /// but the attempts. Default 86 400 (a day).
    pub max_age_secs: u64,
    /// Seconds one attempt may take, connecting included. Default 10.
    pub timeout_secs: u64,
    /// The longest wait between two attempts, in seconds (the backoff doubles up to it; a
    /// receiver's `Retry-After` may ask for up to an hour). Default 300.
    pub max_backoff_secs: u64,
    /// Deliveries sent at once, over every task. Default 64.
    pub max_in_flight: usize,
    /// Seconds between two looks at the outbox when nothing woke the deliverer (deliveries
    /// that came due, rows of another process). Default 1.
    pub poll_secs: u64,
    /// How much lower than the request path the deliverer's thread runs, as a nice
    /// increment (0 to 19; Linux; 0 runs it at the server's priority). When the CPU is
    /// saturated, requests come first and deliveries wait, durable, in the outbox; when it
    /// is not, the nice value costs deliveries nothing. Default 10.
    pub nice: u8,
}

impl Default for PushSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            allow_private: false,
            max_configs_per_task: 10,
            max_url_bytes: 2048,
            max_header_bytes: 4096,
            max_attempts: 10,
            max_age_secs: 86_400,
            timeout_secs: 10,
            max_backoff_secs: 300,
            max_in_flight: 64,
            poll_secs: 1,
            nice: 10,
        }
    }
}

/// TLS served by ferry (`[tls]`), for a server without a proxy in front: every binding on
/// the one port, HTTP/2 offered by ALPN, the files read again when they change. With
/// `client_ca`, clients may authenticate with a certificate of that CA (mutual TLS): its
/// subject's common name, else its first DNS or URI name, becomes the caller `cert:NAME`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsConfig {
    /// The server's certificate chain (PEM), leaf first.
    pub cert: std::path::PathBuf,
    /// Its private key (PEM: PKCS#8, PKCS#1 or SEC1).
    pub key: std::path::PathBuf,
    /// The CA (PEM) whose client certificates are accepted; none asks for no certificate.
    #[serde(default)]
    pub client_ca: Option<std::path::PathBuf>,
    /// Whether a client certificate is required at the handshake (needs `client_ca`).
    /// Default required.
    #[serde(default)]
    pub client_auth: ClientAuth,
    /// Seconds between two looks at the files for a change. Default 10.
    #[serde(default = "default_tls_reload_secs")]
    pub reload_secs: u64,
}

fn default_tls_reload_secs() -> u64 {
    10
}

impl TlsConfig {
    /// TLS with the certificate chain `cert` and its key `key`, no client certificates.
    pub fn new(cert: std::path::PathBuf, key: std::path::PathBuf) -> Self {
        Self {
            cert,
            key,
            client_ca: None,
            client_auth: ClientAuth::default(),
            reload_secs: default_tls_reload_secs(),
        }
    }
}

/// Whether clients must present a certificate (`[tls] client_auth`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClientAuth {
    /// The handshake fails without a certificate of the client CA (probes need one too).
    #[default]
    Required,
    /// A certificate is asked for but may be missing: then a token is needed, as on a server
    /// without mutual TLS, on every route but the probes. A certificate of another CA still
    /// fails the handshake.
    Optional,
}

/// Who may call besides the holders of the static tokens (`[auth]` in the configuration
/// file).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuthConfig {
    /// Access tokens of an OpenID Connect / OAuth 2 provider (`[auth.oidc]`).
    pub oidc: Option<OidcConfig>,
}

/// An OpenID Connect / OAuth 2 provider whose JWT access tokens the server accepts
/// (`[auth.oidc]`). A token is accepted when its signature verifies with one of the
/// provider's published keys, `iss` is `issuer`, `aud` names `audience`, and it has not
/// expired; its subject becomes the caller `oidc:SUB`. Static tokens keep working beside it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OidcConfig {
    /// The issuer URL (`https://login.example.com/realms/agents`); its discovery document is
    /// `{issuer}/.well-known/openid-configuration`.
    pub issuer: String,
    /// The audience the tokens must name (`aud`): this server's identifier at the provider.
    pub audience: String,
    /// A PEM file of further root certificates to trust for the provider (a private CA).
    pub ca_file: Option<std::path::PathBuf>,
    /// Allow a provider on a loopback or private address, over plain http too (tests,
    /// intranets). Default false: public https only.
    pub allow_private: bool,
    /// Each agent of a server of several needs the scope `{agent_scope_prefix}ID` (403
    /// elsewhere). Default false: a valid token reaches every agent.
    pub agent_scopes: bool,
    /// The scope that makes a token read-only. Default `a2a:read`.
    pub read_scope: String,
    /// The scope that lets a token see every caller's tasks. Default `a2a:admin`.
    pub admin_scope: String,
    /// The prefix of the agent scopes (`agent_scopes`). Default `a2a:agent:`.
    pub agent_scope_prefix: String,
    /// Seconds of clock difference allowed for `exp`, `nbf` and `iat`. Default 60.
    pub leeway_secs: u64,
    /// Seconds after which the provider's keys are fetched again. Default 600.
    pub refresh_secs: u64,
    /// The fewest seconds between two fetches of the keys for tokens naming an unknown key
    /// (a rotation). Default 30.
    pub refetch_min_secs: u64,
}

impl Default for OidcConfig {
    fn default() -> Self {
        Self {
            issuer: String::new(),
            audience: String::new(),
            ca_file: None,
            allow_private: false,
            agent_scopes: false,
            read_scope: "a2a:read".into(),
            admin_scope: "a2a:admin".into(),
            agent_scope_prefix: "a2a:agent:".into(),
            leeway_secs: 60,
            refresh_secs: 600,
            refetch_min_secs: 30,
        }
    }
}

/// A bearer token that reaches only the agents it names (`[[scoped_tokens]]` in the
/// configuration file).
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScopedToken {
    /// The token.
    pub token: String,
    /// The ids of the agents it may call (at least one).
    pub agents: Vec<String>,
    /// Whether it may only read tasks, as a read-only token. Default false.
    #[serde(default)]
    pub read_only: bool,
    /// The caller's name, as agents see it (`RequestContext::caller`: the forms agent keeps
    /// saved profiles per caller) and as the owner of the tasks it creates (tokens naming the
    /// same caller share them). Default: the token's fingerprint (`token:` and 16 hex digits
    /// of its SHA-256), which names the token without revealing it. Not `anonymous`, and
    /// not starting with `token:`, `oidc:` or `cert:` (the names ferry derives itself).
    #[serde(default)]
    pub caller: Option<String>,
    /// Whether it sees every caller's tasks (an admin), not only its own. Default false.
    #[serde(default)]
    pub admin: bool,
}

impl std::fmt::Debug for ScopedToken {
    /// The token is never shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScopedToken")
            .field("token", &"<redacted>")
            .field("agents", &self.agents)
            .field("read_only", &self.read_only)
            .field("caller", &self.caller)
            .field("admin", &self.admin)
            .finish()
    }
}

/// A private key that signs the served card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SigningKeyConfig {
    /// A PKCS#8 PEM private key (`-----BEGIN PRIVATE KEY-----`).
    pub key: std::path::PathBuf,
    /// The key id put in the signature's protected header and in the JWKS.
    pub kid: String,
    /// `ES256`, `ES384`, `EdDSA`, `RS256` or `PS256`; guessed from the key when absent (RSA
    /// keys default to `RS256`).
    #[serde(default)]
    pub alg: Option<String>,
}

/// A public key published in the JWKS but not used to sign.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnnouncedKeyConfig {
    /// A PEM `PUBLIC KEY` or a JWK file.
    pub key: std::path::PathBuf,
    /// Its key id.
    pub kid: String,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from(([127, 0, 0, 1], 8765)),
            public_url: None,
            jsonrpc_path: "/jsonrpc".into(),
            rest_path: "/rest".into(),
            store: "memory".into(),
            task_capacity: 10_000,
            max_store_bytes: 1 << 30,
            task_ttl_secs: 3600,
            idle_ttl_secs: 3600,
            max_history_messages: 1000,
            grpc: true,
            grpc_on_card: true,
            v03: true,
            max_artifact_bytes: 64 << 20,
            max_events_per_task: 1024,
            sse_keepalive_secs: 15,
            max_body_bytes: 1 << 20,
            max_json_depth: 64,
            strict_version: false,
            error_table: ErrorTable::V1_0_1,
            card_max_age_secs: 300,
            required_extensions: Vec::new(),
            tenants: Vec::new(),
            token: None,
            read_only_tokens: Vec::new(),
            scoped_tokens: Vec::new(),
            shared_tasks: false,
            allow_anonymous: false,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            header_read_timeout_secs: 10,
            request_timeout_secs: 120,
            max_in_flight: 1024,
            max_streams: 256,
            rate_limit_per_sec: 0,
            rate_limit_burst: 0,
            drain_timeout_secs: 10,
            dedup_ttl_secs: 0,
            dedup_capacity: 10_000,
            signing_keys: Vec::new(),
            announced_keys: Vec::new(),
            extended_card: None,
            auth: AuthConfig::default(),
            tls: None,
            push: PushSettings::default(),
            replicas: ReplicaSettings::default(),
        }
    }
}

impl ServerConfig {
    /// The TTL of terminal tasks.
    pub fn task_ttl(&self) -> Duration {
        Duration::from_secs(self.task_ttl_secs)
    }

    /// The TTL of tasks without events that are not terminal.
    pub fn idle_ttl(&self) -> Duration {
        Duration::from_secs(self.idle_ttl_secs)
    }

    /// Whether a static bearer token is set (the token of full access or a scoped one).
    pub(crate) fn has_static_token(&self) -> bool {
        self.token.as_deref().is_some_and(|t| !t.is_empty())
            || self.scoped_tokens.iter().any(|t| !t.token.is_empty())
    }

    /// Whether callers must present credentials: the token of full access or a scoped token
    /// is set (an empty one counts as none), a provider's tokens are accepted, or client
    /// certificates are.
    pub fn has_token(&self) -> bool {
        self.has_static_token() || self.auth.oidc.is_some() || self.accepts_client_certs()
    }

    /// Whether verified client certificates name callers (`[tls] client_ca`).
    pub(crate) fn accepts_client_certs(&self) -> bool {
        self.tls.as_ref().is_some_and(|t| t.client_ca.is_some())
    }

    /// The scheme of the server's own URLs: `https` when it serves TLS.
    pub(crate) fn scheme(&self) -> &'static str {
        if self.tls.is_some() { "https" } else { "http" }
    }

    /// Whether the gRPC binding is served: configured, and compiled in.
    pub(crate) fn serves_grpc(&self) -> bool {
        cfg!(feature = "grpc") && self.grpc
    }

    /// Whether the card lists the gRPC interface: gRPC is served and not kept off the card.
    pub(crate) fn lists_grpc(&self) -> bool {
        self.serves_grpc() && self.grpc_on_card
    }

    /// Whether A2A v0.3 is served: configured, and compiled in.
    pub(crate) fn serves_v03(&self) -> bool {
        cfg!(feature = "v03") && self.v03
    }

    /// Checks the combination of settings: a non-loopback bind needs a token, and so do an
    /// extended card, read-only tokens and anonymous access (without a token everyone already
    /// has full access, so they would mean nothing).
    pub fn validate(&self) -> Result<(), crate::ServerError> {
        let no_token = !self.has_token();
        if !self.bind.ip().is_loopback() && no_token {
            return Err(crate::ServerError::TokenRequired { bind: self.bind });
        }
        if self.extended_card.is_some() && no_token {
            return Err(crate::ServerError::ExtendedCardNeedsToken);
        }
        if no_token && !self.read_only_tokens.is_empty() {
            return Err(crate::ServerError::NeedsToken {
                setting: "read_only_tokens",
            });
        }
        if no_token && self.allow_anonymous {
            return Err(crate::ServerError::NeedsToken {
                setting: "allow_anonymous",
            });
        }
        if let Some(empty) = self
            .scoped_tokens
            .iter()
            .find(|t| t.token.is_empty() || t.agents.is_empty())
        {
            return Err(crate::ServerError::Agents(format!(
                "a scoped token needs a token and at least one agent (agents = {:?})",
                empty.agents
            )));
        }
        if let Some(oidc) = &self.auth.oidc
            && (oidc.issuer.is_empty() || oidc.audience.is_empty())
        {
            return Err(crate::ServerError::Setting {
                setting: "auth.oidc",
                problem: "a provider needs its issuer and the audience its tokens name".into(),
            });
        }
        if let Some(name) = self
            .scoped_tokens
            .iter()
            .filter_map(|t| t.caller.as_deref())
            .find(|name| crate::core::owner::is_reserved_caller(name))
        {
            return Err(crate::ServerError::Setting {
                setting: "scoped_tokens",
                problem: format!(
                    "a caller may not be named {name:?}: `anonymous` and names starting with \
                     `token:`, `oidc:` or `cert:` are the ones ferry gives callers"
                ),
            });
        }
        Ok(())
    }

    /// The SSE keep-alive interval (at least 1 s).
    pub fn sse_keepalive(&self) -> Duration {
        Duration::from_secs(self.sse_keepalive_secs.max(1))
    }
}

/// The store setting with the password of a URL (`user:password@`, `?password=`) replaced by
/// `***`.
pub fn redact_store_url(url: &str) -> String {
    let (url, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let mut shown = redact_user_info(url);
    if let Some(query) = query {
        let params: Vec<String> = query
            .split('&')
            .map(|p| match p.split_once('=') {
                Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                _ => p.to_owned(),
            })
            .collect();
        shown.push('?');
        shown.push_str(&params.join("&"));
    }
    shown
}

fn redact_user_info(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    match authority.rsplit_once('@') {
        Some((user_info, host)) => match user_info.split_once(':') {
            Some((user, _password)) => format!("{scheme}://{user}:***@{host}{path}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

fn redacted_store<S: serde::Serializer>(store: &str, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&redact_store_url(store))
}

mod error_table {
    use ferry_proto::ErrorTable;
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub(super) fn serialize<S: Serializer>(t: &ErrorTable, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match t {
            ErrorTable::V1_0_1 => "v1.0.1",
            ErrorTable::V1_0_0 => "v1.0.0",
        })
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ErrorTable, D::Error> {
        match String::deserialize(d)?.as_str() {
            "v1.0.1" | "1.0.1" => Ok(ErrorTable::V1_0_1),
            "v1.0.0" | "1.0.0" => Ok(ErrorTable::V1_0_0),
            other => Err(D::Error::custom(format!(
                "unknown error table {other:?}; use v1.0.1 or v1.0.0"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::redact_store_url;

    #[test]
    fn a_store_url_loses_only_its_password() {
        assert_eq!(
            redact_store_url("postgres://ferry:s3cret@db:5432/tasks?sslmode=require"),
            "postgres://ferry:***@db:5432/tasks?sslmode=require"
        );
        assert_eq!(
            redact_store_url("postgres://ferry@db/tasks"),
            "postgres://ferry@db/tasks"
        );
        assert_eq!(
            redact_store_url("sqlite:/var/lib/ferry/tasks.db"),
            "sqlite:/var/lib/ferry/tasks.db"
        );
        assert_eq!(redact_store_url("memory"), "memory");
        assert_eq!(
            redact_store_url("postgres://db/tasks?user=ferry&password=s3cret"),
            "postgres://db/tasks?user=ferry&password=***"
        );
    }
}

/// An agent's own limits, inside the server's: a request over either is refused with 503 and
/// `Retry-After`, as at the server's own limits. `None`: only the server's limit applies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AgentLimits {
    /// Requests to this agent in flight at once.
    pub max_in_flight: Option<usize>,
    /// Open streams of this agent.
    pub max_streams: Option<usize>,
}
