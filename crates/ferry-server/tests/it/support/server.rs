//! A real server in the test's runtime: bound to 127.0.0.1:0, served by `A2aServer::run`, and
//! stopped through a oneshot so shutdown itself can be tested.

use super::agents::{Remote, ScriptedAgent};
use ferry_agent::AgentExecutor;
use ferry_server::{A2aServer, ServerConfig};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// How long `run` may take to return after shutdown begins (well under the server's 10 s
/// drain timeout, so a pass means streams really closed).
const SHUTDOWN_LIMIT: Duration = Duration::from_secs(5);

/// A running server and a client for it.
#[derive(Debug)]
pub(crate) struct TestServer {
    base: String,
    addr: SocketAddr,
    token: Option<String>,
    http: reqwest::Client,
    grpc: tonic::transport::Channel,
    next_id: AtomicU64,
    /// Where the A2A calls of [`super::calls`] go, under the root: empty, or an agent's
    /// `/agents/{id}` on a server of several.
    prefix: Mutex<String>,
    stop: Mutex<Option<oneshot::Sender<()>>>,
    running: Option<JoinHandle<Result<(), ferry_server::ServerError>>>,
}

impl TestServer {
    /// Serves `agent` with the default configuration.
    pub(crate) async fn start(agent: impl AgentExecutor) -> Self {
        Self::with_config(agent, ServerConfig::default()).await
    }

    /// Serves `agent` with `config` (its `bind` is replaced by 127.0.0.1:0). When `config` has
    /// a token, the A2A calls of [`super::calls`] present it unless told otherwise.
    pub(crate) async fn with_config(agent: impl AgentExecutor, config: ServerConfig) -> Self {
        Self::with_clock(agent, config, Arc::new(ferry_server::clock::TokioClock)).await
    }

    /// [`TestServer::with_config`] with the clock TTLs and rate limits are measured with.
    pub(crate) async fn with_clock(
        agent: impl AgentExecutor,
        config: ServerConfig,
        clock: Arc<dyn ferry_server::clock::Clock>,
    ) -> Self {
        Self::with_parts(agent, config, clock, None).await
    }

    /// [`TestServer::with_clock`] over `store` (default: a new memory store).
    pub(crate) async fn with_parts(
        agent: impl AgentExecutor,
        config: ServerConfig,
        clock: Arc<dyn ferry_server::clock::Clock>,
        store: Option<Arc<dyn ferry_server::TaskStore>>,
    ) -> Self {
        let bind = "127.0.0.1:0".parse().expect("a loopback socket address");
        let token = config.token.clone();
        let mut builder = A2aServer::builder(Arc::new(agent))
            .config(ServerConfig { bind, ..config })
            .clock(clock);
        if let Some(store) = store {
            builder = builder.store(store);
        }
        Self::from_builder(builder, token).await
    }

    /// Binds `builder` (its configuration's `bind` must be 127.0.0.1:0) and serves it; the
    /// A2A calls present `token` unless told otherwise.
    pub(crate) async fn from_builder(
        builder: ferry_server::A2aServerBuilder,
        token: Option<String>,
    ) -> Self {
        let server = builder.bind().await.expect("bind 127.0.0.1:0");
        let addr = server.local_addr();
        let base = format!("http://{addr}");
        let (stop, stopped) = oneshot::channel::<()>();
        let running = tokio::spawn(server.run(async move {
            let _ = stopped.await;
        }));
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("a reqwest client");
        let grpc = tonic::transport::Endpoint::from_shared(base.clone())
            .expect("a gRPC endpoint")
            .connect_lazy();
        Self {
            base,
            addr,
            token,
            http,
            grpc,
            next_id: AtomicU64::new(1),
            prefix: Mutex::new(String::new()),
            stop: Mutex::new(Some(stop)),
            running: Some(running),
        }
    }

    /// Serves a streaming [`ScriptedAgent`] and returns the handle that drives it.
    pub(crate) async fn scripted() -> (Self, Remote) {
        Self::scripted_with(ServerConfig::default()).await
    }

    /// Serves a streaming [`ScriptedAgent`] with `config`.
    pub(crate) async fn scripted_with(config: ServerConfig) -> (Self, Remote) {
        let (agent, remote) = ScriptedAgent::new();
        (Self::with_config(agent, config).await, remote)
    }

    /// `http://127.0.0.1:port` followed by `path`.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Sends the A2A calls that follow to the agent under `prefix` (`/agents/echo`; empty:
    /// the root). gRPC calls always go to the root.
    pub(crate) fn at(&self, prefix: &str) -> &Self {
        *self.prefix.lock().expect("the prefix lock") = prefix.to_owned();
        self
    }

    /// The URL of `path` under the current prefix (see [`TestServer::at`]).
    pub(crate) fn binding_url(&self, path: &str) -> String {
        let prefix = self.prefix.lock().expect("the prefix lock");
        format!("{}{}{path}", self.base, *prefix)
    }

    /// The socket address served (for raw connections).
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The bearer token the server requires, if any.
    pub(crate) fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// A gRPC channel to the server (HTTP/2 cleartext; connects on first use).
    pub(crate) fn grpc_channel(&self) -> tonic::transport::Channel {
        self.grpc.clone()
    }

    /// The HTTP client (redirects off).
    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// Sends a hand-made request, for tests of the HTTP surface itself: exactly `headers` (no
    /// `A2A-Version` unless listed) and `body`.
    pub(crate) async fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> reqwest::Response {
        let mut request = self
            .http
            .request(method, self.url(path))
            .body(body.to_owned());
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request
            .send()
            .await
            .expect("the request reaches the server")
    }

    /// Sends a hand-made request whose answer must be JSON; returns the status and the body.
    pub(crate) async fn request_json(
        &self,
        method: reqwest::Method,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> (u16, Value) {
        let response = self.request(method, path, headers, body).await;
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok());
        assert!(
            content_type.is_some_and(|ct| ct.starts_with("application/json")),
            "{path} answered {status} with {content_type:?}"
        );
        (status, response.json().await.expect("the body is JSON"))
    }

    /// A fresh JSON-RPC id: numbers and strings alternate, so both kinds are always exercised.
    pub(crate) fn next_rpc_id(&self) -> Value {
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        if n.is_multiple_of(2) {
            json!(n)
        } else {
            json!(format!("req-{n}"))
        }
    }

    /// Begins shutdown and waits for `run` to return; panics if it takes longer than
    /// [`SHUTDOWN_LIMIT`] or fails.
    pub(crate) async fn shutdown(self) {
        self.begin_shutdown();
        self.stopped(SHUTDOWN_LIMIT).await;
    }

    /// Resolves the shutdown future given to `run` (the signal handler's part), without
    /// waiting for `run` to return.
    pub(crate) fn begin_shutdown(&self) {
        let stop = self
            .stop
            .lock()
            .expect("the stop lock is not poisoned")
            .take()
            .expect("shutdown begins once");
        stop.send(())
            .expect("the server is still waiting for shutdown");
    }

    /// Waits for `run` to return after [`Self::begin_shutdown`]; panics if that takes longer
    /// than `limit` or `run` fails.
    pub(crate) async fn stopped(mut self, limit: Duration) {
        let running = self.running.take().expect("the server is running");
        tokio::time::timeout(limit, running)
            .await
            .unwrap_or_else(|_| panic!("run() did not return within {limit:?} of shutdown"))
            .expect("the server task did not panic")
            .expect("run() ends without an I/O error");
    }
}

/// A user message with a fresh `messageId` and one text part.
pub(crate) fn message(text: &str) -> Value {
    json!({"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER", "parts": [{"text": text}]})
}

/// `SendMessageRequest` params holding [`message`]`(text)`.
pub(crate) fn send_params(text: &str) -> Value {
    json!({"message": message(text)})
}
