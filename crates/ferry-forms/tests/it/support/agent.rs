//! The forms agent behind a real A2A server on 127.0.0.1, called over JSON-RPC.

use ferry_forms::{FormsAgent, FormsConfig};
use ferry_server::{A2aServer, ServerConfig, ServerExtension};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::oneshot;

/// A running server with the forms agent.
pub(crate) struct FormsServer {
    base: String,
    http: reqwest::Client,
    agent: FormsAgent,
    next_id: AtomicU64,
    _stop: oneshot::Sender<()>,
}

impl FormsServer {
    /// Serves a forms agent with `config` on 127.0.0.1:0.
    pub(crate) async fn start(config: FormsConfig) -> FormsServer {
        Self::start_with(config, ServerConfig::default()).await
    }

    /// Serves a forms agent with `config`, and the server with `server` (its bind address
    /// replaced by 127.0.0.1:0).
    pub(crate) async fn start_with(config: FormsConfig, server: ServerConfig) -> FormsServer {
        Self::start_with_extensions(config, server, Vec::new()).await
    }

    /// [`FormsServer::start_with`], with server extensions (cdp-config for bring-your-own-browser).
    pub(crate) async fn start_with_extensions(
        config: FormsConfig,
        server: ServerConfig,
        extensions: Vec<Arc<dyn ServerExtension>>,
    ) -> FormsServer {
        let agent = FormsAgent::new(config);
        let mut builder = A2aServer::builder(Arc::new(agent.clone())).config(ServerConfig {
            bind: "127.0.0.1:0".parse().expect("addr"),
            ..server
        });
        for extension in extensions {
            builder = builder.extension(extension);
        }
        let server = builder.bind().await.expect("bind");
        let base = format!("http://{}", server.local_addr());
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(server.run(async move {
            let _ = stopped.await;
        }));
        FormsServer {
            base,
            http: reqwest::Client::new(),
            agent,
            next_id: AtomicU64::new(1),
            _stop: stop,
        }
    }

    /// The agent (its pool, for checks).
    pub(crate) fn agent(&self) -> &FormsAgent {
        &self.agent
    }

    /// `http://127.0.0.1:PORT` + `path`.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A JSON-RPC call; returns the whole response object.
    pub(crate) async fn rpc(&self, method: &str, params: Value) -> Value {
        let response = self.post_rpc(method, params).await;
        response.json().await.expect("a JSON-RPC response")
    }

    /// POSTs a JSON-RPC request to `/jsonrpc`.
    async fn post_rpc(&self, method: &str, params: Value) -> reqwest::Response {
        self.post_rpc_as(None, method, params).await
    }

    /// POSTs a JSON-RPC request to `/jsonrpc` with the bearer `token`, if any.
    async fn post_rpc_as(
        &self,
        token: Option<&str>,
        method: &str,
        params: Value,
    ) -> reqwest::Response {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut request = self
            .http
            .post(self.url("/jsonrpc"))
            .header("A2A-Version", "1.0")
            .json(&body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send().await.expect("the server answers")
    }

    /// SendMessage with one data part as the caller of `token`; the whole JSON-RPC response.
    pub(crate) async fn send_as(&self, token: &str, context: &str, data: Value) -> Value {
        self.send_with(Some(token), context, data).await
    }

    /// SendMessage with one data part and no credentials; the whole JSON-RPC response.
    pub(crate) async fn send_anonymous(&self, context: &str, data: Value) -> Value {
        self.send_with(None, context, data).await
    }

    async fn send_with(&self, token: Option<&str>, context: &str, data: Value) -> Value {
        let message = self.message(context, None, data_part(data));
        let response = self
            .post_rpc_as(token, "SendMessage", json!({"message": message}))
            .await;
        response.json().await.expect("a JSON-RPC response")
    }

    /// A user message with one `part` in `context` (in `task` when given).
    fn message(&self, context: &str, task: Option<&str>, part: Value) -> Value {
        let mut message = json!({
            "messageId": format!("m-{}", self.next_id.fetch_add(1, Ordering::Relaxed)),
            "role": "ROLE_USER",
            "contextId": context,
            "parts": [part]
        });
        if let Some(task) = task {
            message["taskId"] = json!(task);
        }
        message
    }

    /// SendMessage with one data part in `context` (continuing `task` when given); returns
    /// the `result` (`{"task": …}` or `{"message": …}`), panicking on a JSON-RPC error.
    pub(crate) async fn send(&self, context: &str, task: Option<&str>, data: Value) -> Value {
        let response = self.send_raw(context, task, data).await;
        match response.get("result") {
            Some(result) => result.clone(),
            None => panic!("SendMessage failed: {response}"),
        }
    }

    /// SendMessage with one data part; the whole JSON-RPC response.
    pub(crate) async fn send_raw(&self, context: &str, task: Option<&str>, data: Value) -> Value {
        let message = self.message(context, task, data_part(data));
        self.rpc("SendMessage", json!({"message": message})).await
    }

    /// [`FormsServer::send`] routed to `tenant`.
    pub(crate) async fn send_in(
        &self,
        tenant: &str,
        context: &str,
        task: Option<&str>,
        data: Value,
    ) -> Value {
        let message = self.message(context, task, data_part(data));
        let response = self
            .rpc("SendMessage", json!({"tenant": tenant, "message": message}))
            .await;
        match response.get("result") {
            Some(result) => result.clone(),
            None => panic!("SendMessage failed: {response}"),
        }
    }

    /// POSTs `body` to the cdp-config/v1 endpoint; returns the status.
    pub(crate) async fn register_cdp(&self, body: Value) -> u16 {
        self.http
            .post(self.url("/ext/cdp-config"))
            .json(&body)
            .send()
            .await
            .expect("the server answers")
            .status()
            .as_u16()
    }

    /// SendMessage over plain HTTP for checks of the status line: `(status, Retry-After,
    /// body)`.
    pub(crate) async fn http_post_jsonrpc_send(
        &self,
        context: &str,
        data: Value,
    ) -> (u16, Option<String>, String) {
        let message = self.message(context, None, data_part(data));
        let response = self
            .post_rpc("SendMessage", json!({"message": message}))
            .await;
        let status = response.status().as_u16();
        let retry = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        (status, retry, response.text().await.unwrap_or_default())
    }

    /// SendMessage with one text part; the `result`.
    pub(crate) async fn send_text(&self, context: &str, text: &str) -> Value {
        let message = self.message(context, None, json!({"text": text}));
        let response = self.rpc("SendMessage", json!({"message": message})).await;
        response["result"].clone()
    }
}

/// A JSON data part.
fn data_part(data: Value) -> Value {
    json!({"data": data, "mediaType": "application/json"})
}

/// The task's state name (`TASK_STATE_COMPLETED`, …).
pub(crate) fn state(result: &Value) -> &str {
    result["task"]["status"]["state"].as_str().unwrap_or("")
}

/// The status message's text.
pub(crate) fn status_text(result: &Value) -> String {
    result["task"]["status"]["message"]["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["text"].as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `data` artifact's JSON.
pub(crate) fn report(result: &Value) -> Value {
    result["task"]["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["artifactId"] == "data")
        .map(|a| a["parts"][0]["data"].clone())
        .unwrap_or(Value::Null)
}

/// The task id.
pub(crate) fn task_id(result: &Value) -> String {
    result["task"]["id"].as_str().unwrap_or_default().to_owned()
}
