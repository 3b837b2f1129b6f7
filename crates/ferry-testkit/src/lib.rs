//! Test helpers shared by ferry's crates; a dev-dependency only, never shipped.
//!
//! [`TestServer`] serves an agent (with extensions) on `127.0.0.1:0` in the test's runtime,
//! with a client whose redirects are off, and stops it on [`TestServer::shutdown`]. Tests
//! talk to it over real HTTP. [`process::wait_for_exit`] waits for any process to end, as an
//! event (a pidfd), not by polling. [`required_or_skip`] (and, with the `browser` feature,
//! [`chromium_or_skip`]) is the one rule for a test whose prerequisite is missing: a loud skip
//! outside CI, a failure in it.
//!
//! ```no_run
//! # async fn run() {
//! use ferry_testkit::TestServer;
//! let srv = TestServer::serve(ferry_agents::EchoAgent, Default::default(), vec![]).await;
//! let (status, card) = srv.request_json(reqwest::Method::GET, "/.well-known/agent-card.json", &[], "").await;
//! assert_eq!(status, 200);
//! # let _ = card;
//! # }
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod process;
mod skip;

#[cfg(feature = "browser")]
pub use skip::chromium_or_skip;
pub use skip::required_or_skip;

use ferry_agent::AgentExecutor;
use ferry_server::{A2aServer, ServerConfig, ServerError, ServerExtension};
use serde_json::Value;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A running server and an HTTP client for it.
#[derive(Debug)]
pub struct TestServer {
    addr: SocketAddr,
    http: reqwest::Client,
    stop: Mutex<Option<oneshot::Sender<()>>>,
    running: Mutex<Option<JoinHandle<Result<(), ServerError>>>>,
}

impl TestServer {
    /// Serves `agent` with `config` (its `bind` replaced by 127.0.0.1:0) and `extensions`.
    pub async fn serve(
        agent: impl AgentExecutor,
        config: ServerConfig,
        extensions: Vec<Arc<dyn ServerExtension>>,
    ) -> Self {
        let bind = SocketAddr::from(([127, 0, 0, 1], 0));
        let mut builder =
            A2aServer::builder(Arc::new(agent)).config(ServerConfig { bind, ..config });
        for extension in extensions {
            builder = builder.extension(extension);
        }
        let server = builder.bind().await.expect("bind 127.0.0.1:0");
        let addr = server.local_addr();
        let (stop, stopped) = oneshot::channel::<()>();
        let running = tokio::spawn(server.run(async move {
            let _ = stopped.await;
        }));
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("a reqwest client");
        Self {
            addr,
            http,
            stop: Mutex::new(Some(stop)),
            running: Mutex::new(Some(running)),
        }
    }

    /// `http://127.0.0.1:port` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The HTTP client (redirects off).
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// Sends exactly `headers` and `body` to `path`.
    pub async fn request(
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

    /// Sends a request whose answer must be JSON; returns the status and the body.
    pub async fn request_json(
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
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        assert!(
            content_type
                .as_deref()
                .is_some_and(|ct| ct.starts_with("application/json")),
            "{path} answered {status} with {content_type:?}"
        );
        (status, response.json().await.expect("the body is JSON"))
    }

    /// Stops the server and waits for `run` to return.
    pub async fn shutdown(&self) {
        let stop = self.stop.lock().ok().and_then(|mut s| s.take());
        if let Some(stop) = stop {
            let _ = stop.send(());
        }
        let running = self.running.lock().ok().and_then(|mut r| r.take());
        if let Some(running) = running {
            running
                .await
                .expect("the server task did not panic")
                .expect("run() ends without an error");
        }
    }
}
