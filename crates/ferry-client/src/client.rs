//! `A2aClient`: every operation over either binding, with retries and timeouts.

use crate::error::ClientError;
use crate::retry::RetryPolicy;
use crate::stream::EventStream;
use ferry_proto::{
    A2aError, AgentCard, BINDING_HTTP_JSON, BINDING_JSONRPC,
    ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse,
    SendMessageRequest, SendMessageResponse, Task, TaskPushNotificationConfig,
};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::time::Duration;

/// The binding a client speaks to an interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    /// JSON-RPC 2.0.
    JsonRpc,
    /// HTTP+JSON (REST).
    HttpJson,
}

impl Binding {
    /// The card's name for it.
    pub fn card_name(self) -> &'static str {
        match self {
            Binding::JsonRpc => BINDING_JSONRPC,
            Binding::HttpJson => BINDING_HTTP_JSON,
        }
    }
}

/// One interface of a card, chosen to call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The binding.
    pub binding: Binding,
    /// The interface URL.
    pub url: String,
    /// The tenant the interface names ("" for none).
    pub tenant: String,
}

impl Endpoint {
    /// The first interface of `card` that speaks a 1.x version over a binding this client
    /// knows, or the first of `prefer` when given.
    pub fn select(card: &AgentCard, prefer: Option<Binding>) -> Result<Self, ClientError> {
        let usable = card.supported_interfaces.iter().filter_map(|i| {
            let binding = match i.protocol_binding.as_str() {
                BINDING_JSONRPC => Binding::JsonRpc,
                BINDING_HTTP_JSON => Binding::HttpJson,
                _ => return None,
            };
            let v1 = i.protocol_version.split('.').next() == Some("1");
            v1.then(|| Endpoint {
                binding,
                url: i.url.trim_end_matches('/').to_owned(),
                tenant: i.tenant.clone(),
            })
        });
        let mut usable: Vec<Endpoint> = usable.collect();
        if let Some(p) = prefer {
            usable.retain(|e| e.binding == p);
        }
        usable.into_iter().next().ok_or_else(|| {
            let offered: Vec<String> = card
                .supported_interfaces
                .iter()
                .map(|i| format!("{} {}", i.protocol_binding, i.protocol_version))
                .collect();
            ClientError::NoInterface(offered.join(", "))
        })
    }
}

/// Options for a client.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Preferred binding (default: the card's first usable interface).
    pub prefer: Option<Binding>,
    /// Headers sent with every call (auth, API keys, custom).
    pub headers: HeaderMap,
    /// Extension URIs to activate (`A2A-Extensions`).
    pub extensions: Vec<String>,
    /// Per-call timeout (not applied to open streams).
    pub timeout: Duration,
    /// Retries.
    pub retry: RetryPolicy,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            prefer: None,
            headers: HeaderMap::new(),
            extensions: Vec::new(),
            timeout: Duration::from_secs(60),
            retry: RetryPolicy::default(),
        }
    }
}

impl ClientOptions {
    /// Adds `Authorization: Bearer <token>`.
    pub fn bearer(mut self, token: &str) -> Result<Self, ClientError> {
        let mut v = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| ClientError::Decode("the token is not a valid header value".into()))?;
        v.set_sensitive(true);
        self.headers.insert(reqwest::header::AUTHORIZATION, v);
        Ok(self)
    }
}

/// A client for one agent interface. Cheap to clone.
#[derive(Debug, Clone)]
pub struct A2aClient {
    http: reqwest::Client,
    endpoint: Endpoint,
    headers: HeaderMap,
    timeout: Duration,
    retry: RetryPolicy,
}

/// The well-known card path.
const CARD_PATH: &str = "/.well-known/agent-card.json";

impl A2aClient {
    /// Resolves the card at `base_url` (or the card URL itself) and connects to its chosen
    /// interface.
    pub async fn connect(
        http: reqwest::Client,
        base_url: &str,
        options: ClientOptions,
    ) -> Result<(Self, AgentCard), ClientError> {
        let card_url = if base_url.ends_with(".json") {
            base_url.to_owned()
        } else {
            format!("{}{CARD_PATH}", base_url.trim_end_matches('/'))
        };
        let response = http
            .get(&card_url)
            .headers(options.headers.clone())
            .timeout(options.timeout)
            .send()
            .await
            .map_err(ClientError::from_reqwest)?;
        let status = response.status().as_u16();
        let bytes = response.bytes().await.map_err(ClientError::from_reqwest)?;
        if status != 200 {
            return Err(ClientError::Http {
                status,
                body: snippet(&bytes),
            });
        }
        let card: AgentCard = serde_json::from_slice(&bytes)
            .map_err(|e| ClientError::Decode(format!("agent card: {e}")))?;
        let endpoint = Endpoint::select(&card, options.prefer)?;
        Ok((Self::new(http, endpoint, options), card))
    }

    /// A client for a known endpoint.
    pub fn new(http: reqwest::Client, endpoint: Endpoint, options: ClientOptions) -> Self {
        let mut headers = options.headers;
        headers.insert(
            HeaderName::from_static("a2a-version"),
            HeaderValue::from_static("1.0"),
        );
        if !options.extensions.is_empty()
            && let Ok(v) = HeaderValue::from_str(&options.extensions.join(", "))
        {
            headers.insert(HeaderName::from_static("a2a-extensions"), v);
        }
        Self {
            http,
            endpoint,
            headers,
            timeout: options.timeout,
            retry: options.retry,
        }
    }

    /// The interface this client calls.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// `SendMessage`. Retried only when the request never reached the server.
    pub async fn send_message(
        &self,
        mut req: SendMessageRequest,
    ) -> Result<SendMessageResponse, ClientError> {
        req.tenant.clone_from(&self.endpoint.tenant);
        self.call(
            "SendMessage",
            reqwest::Method::POST,
            "/message:send",
            &req,
            false,
        )
        .await
    }

    /// `GetTask`.
    pub async fn get_task(
        &self,
        id: &str,
        history_length: Option<i32>,
    ) -> Result<Task, ClientError> {
        let mut params = json!({"id": id});
        let mut path = format!("/tasks/{}", encode(id));
        if let Some(h) = history_length {
            params["historyLength"] = h.into();
            path.push_str(&format!("?historyLength={h}"));
        }
        self.with_tenant(&mut params);
        self.call("GetTask", reqwest::Method::GET, &path, &params, true)
            .await
    }

    /// `ListTasks` (one page).
    pub async fn list_tasks(
        &self,
        req: &ListTasksRequest,
    ) -> Result<ListTasksResponse, ClientError> {
        let mut params =
            serde_json::to_value(req).map_err(|e| ClientError::Decode(e.to_string()))?;
        self.with_tenant(&mut params);
        let mut query = Vec::new();
        if let Some(obj) = params.as_object() {
            for (k, v) in obj {
                if k == "tenant" {
                    continue;
                }
                let v = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                query.push(format!("{}={}", encode(k), encode(&v)));
            }
        }
        let path = if query.is_empty() {
            "/tasks".to_owned()
        } else {
            format!("/tasks?{}", query.join("&"))
        };
        self.call("ListTasks", reqwest::Method::GET, &path, &params, true)
            .await
    }

    /// Every task matching `req`, following `nextPageToken`.
    pub async fn list_all_tasks(&self, req: &ListTasksRequest) -> Result<Vec<Task>, ClientError> {
        let mut req = req.clone();
        let mut all = Vec::new();
        loop {
            let page = self.list_tasks(&req).await?;
            all.extend(page.tasks);
            if page.next_page_token.is_empty() {
                return Ok(all);
            }
            req.page_token = page.next_page_token;
        }
    }

    /// `CancelTask`.
    pub async fn cancel_task(&self, id: &str) -> Result<Task, ClientError> {
        let mut params = json!({"id": id});
        self.with_tenant(&mut params);
        let path = format!("/tasks/{}:cancel", encode(id));
        self.call("CancelTask", reqwest::Method::POST, &path, &params, true)
            .await
    }

    /// `CreateTaskPushNotificationConfig`.
    pub async fn create_push_config(
        &self,
        mut config: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, ClientError> {
        config.tenant.clone_from(&self.endpoint.tenant);
        let path = format!("/tasks/{}/pushNotificationConfigs", encode(&config.task_id));
        self.call(
            "CreateTaskPushNotificationConfig",
            reqwest::Method::POST,
            &path,
            &config,
            true,
        )
        .await
    }

    /// `GetTaskPushNotificationConfig`.
    pub async fn get_push_config(
        &self,
        task_id: &str,
        id: &str,
    ) -> Result<TaskPushNotificationConfig, ClientError> {
        let mut params = json!({"taskId": task_id, "id": id});
        self.with_tenant(&mut params);
        let path = format!(
            "/tasks/{}/pushNotificationConfigs/{}",
            encode(task_id),
            encode(id)
        );
        self.call(
            "GetTaskPushNotificationConfig",
            reqwest::Method::GET,
            &path,
            &params,
            true,
        )
        .await
    }

    /// `ListTaskPushNotificationConfigs` (one page).
    pub async fn list_push_configs(
        &self,
        task_id: &str,
    ) -> Result<ListTaskPushNotificationConfigsResponse, ClientError> {
        let mut params = json!({"taskId": task_id});
        self.with_tenant(&mut params);
        let path = format!("/tasks/{}/pushNotificationConfigs", encode(task_id));
        self.call(
            "ListTaskPushNotificationConfigs",
            reqwest::Method::GET,
            &path,
            &params,
            true,
        )
        .await
    }

    /// `DeleteTaskPushNotificationConfig`; a second delete of the same id also succeeds.
    pub async fn delete_push_config(&self, task_id: &str, id: &str) -> Result<(), ClientError> {
        let mut params = json!({"taskId": task_id, "id": id});
        self.with_tenant(&mut params);
        let path = format!(
            "/tasks/{}/pushNotificationConfigs/{}",
            encode(task_id),
            encode(id)
        );
        // `{}`, `null` or no result at all all mean success.
        let _: Value = self
            .call(
                "DeleteTaskPushNotificationConfig",
                reqwest::Method::DELETE,
                &path,
                &params,
                true,
            )
            .await?;
        Ok(())
    }

    /// `GetExtendedAgentCard` (needs the credentials the public card asks for).
    pub async fn extended_card(&self) -> Result<AgentCard, ClientError> {
        let mut params = json!({});
        self.with_tenant(&mut params);
        self.call(
            "GetExtendedAgentCard",
            reqwest::Method::GET,
            "/extendedAgentCard",
            &params,
            true,
        )
        .await
    }

    /// `SendStreamingMessage`: the task's events as they happen; a dropped connection is
    /// resumed with `SubscribeToTask` (and `Last-Event-ID`).
    pub async fn send_streaming(
        &self,
        mut req: SendMessageRequest,
    ) -> Result<EventStream, ClientError> {
        req.tenant.clone_from(&self.endpoint.tenant);
        let response = self
            .open_stream("SendStreamingMessage", "/message:stream", &req, None)
            .await?;
        Ok(EventStream::new(self.clone(), response, None))
    }

    /// `SubscribeToTask`.
    pub async fn subscribe(&self, id: &str) -> Result<EventStream, ClientError> {
        let response = self.open_subscription(id, None).await?;
        Ok(EventStream::new(
            self.clone(),
            response,
            Some(id.to_owned()),
        ))
    }

    /// Opens a subscription, resuming after `last_event_id` when given.
    pub(crate) async fn open_subscription(
        &self,
        id: &str,
        last_event_id: Option<&str>,
    ) -> Result<reqwest::Response, ClientError> {
        let mut params = json!({"id": id});
        self.with_tenant(&mut params);
        let path = format!("/tasks/{}:subscribe", encode(id));
        self.open_stream("SubscribeToTask", &path, &params, last_event_id)
            .await
    }

    fn with_tenant(&self, params: &mut Value) {
        if !self.endpoint.tenant.is_empty() {
            params["tenant"] = self.endpoint.tenant.clone().into();
        }
    }

    /// The binding this client speaks.
    pub fn binding(&self) -> Binding {
        self.endpoint.binding
    }

    fn rest_url(&self, path: &str) -> String {
        if self.endpoint.tenant.is_empty() {
            format!("{}{path}", self.endpoint.url)
        } else {
            format!(
                "{}/{}{path}",
                self.endpoint.url,
                encode(&self.endpoint.tenant)
            )
        }
    }

    fn build(
        &self,
        method: &str,
        verb: reqwest::Method,
        path: &str,
        params: &impl Serialize,
    ) -> Result<reqwest::RequestBuilder, ClientError> {
        let builder = match self.endpoint.binding {
            Binding::JsonRpc => {
                let body = json!({"jsonrpc": "2.0", "id": uuid::Uuid::new_v4().to_string(), "method": method, "params": params});
                self.http.post(&self.endpoint.url).json(&body)
            }
            Binding::HttpJson => {
                let url = self.rest_url(path);
                match verb {
                    reqwest::Method::GET => self.http.get(url),
                    reqwest::Method::DELETE => self.http.delete(url),
                    _ => {
                        let mut body = serde_json::to_value(params)
                            .map_err(|e| ClientError::Decode(e.to_string()))?;
                        if let Some(obj) = body.as_object_mut() {
                            obj.remove("tenant");
                            if path.contains(":cancel") {
                                obj.remove("id");
                            }
                        }
                        self.http.post(url).json(&body)
                    }
                }
            }
        };
        Ok(builder.headers(self.headers.clone()))
    }

    /// One call with retries: transient failures are retried when `idempotent` (or when the
    /// request never reached the server).
    async fn call<R: DeserializeOwned>(
        &self,
        method: &str,
        verb: reqwest::Method,
        path: &str,
        params: &impl Serialize,
        idempotent: bool,
    ) -> Result<R, ClientError> {
        let mut attempt = 0;
        loop {
            let outcome = self.call_once(method, verb.clone(), path, params).await;
            match outcome {
                Ok(r) => return Ok(r),
                Err((e, retry_after)) => {
                    let reached = !matches!(e, ClientError::Unreachable(_));
                    let safe = idempotent || !reached || retry_after.is_some();
                    if attempt >= self.retry.retries || !e.is_transient() || !safe {
                        return Err(e);
                    }
                    tokio::time::sleep(self.retry.wait(attempt, retry_after)).await;
                    attempt += 1;
                }
            }
        }
    }

    async fn call_once<R: DeserializeOwned>(
        &self,
        method: &str,
        verb: reqwest::Method,
        path: &str,
        params: &impl Serialize,
    ) -> Result<R, (ClientError, Option<Duration>)> {
        let request = self
            .build(method, verb, path, params)
            .map_err(|e| (e, None))?;
        let response = request
            .timeout(self.timeout)
            .send()
            .await
            .map_err(|e| (ClientError::from_reqwest(e), None))?;
        let status = response.status().as_u16();
        let retry_after = retry_after(response.headers());
        let bytes = response
            .bytes()
            .await
            .map_err(|e| (ClientError::from_reqwest(e), None))?;
        decode_answer(self.endpoint.binding, status, &bytes).map_err(|e| (e, retry_after))
    }

    async fn open_stream(
        &self,
        method: &str,
        path: &str,
        params: &impl Serialize,
        last_event_id: Option<&str>,
    ) -> Result<reqwest::Response, ClientError> {
        let mut request = self
            .build(method, reqwest::Method::POST, path, params)?
            .header("accept", "text/event-stream");
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id);
        }
        let response = request.send().await.map_err(ClientError::from_reqwest)?;
        let is_sse = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if response.status().is_success() && is_sse {
            return Ok(response);
        }
        let status = response.status().as_u16();
        let bytes = response.bytes().await.map_err(ClientError::from_reqwest)?;
        match decode_answer::<Value>(self.endpoint.binding, status, &bytes) {
            Ok(_) => Err(ClientError::Decode(
                "the agent answered a stream request without a stream".into(),
            )),
            Err(e) => Err(e),
        }
    }
}

/// Decodes a unary answer of either binding into `R` or the error it carries.
pub(crate) fn decode_answer<R: DeserializeOwned>(
    binding: Binding,
    status: u16,
    bytes: &[u8],
) -> Result<R, ClientError> {
    if status == 401 || status == 403 {
        return Err(ClientError::Auth { status });
    }
    if status == 200 && bytes.trim_ascii().is_empty() {
        // An empty success (a Go server's DeleteTaskPushNotificationConfig) is a null result.
        return serde_json::from_value(Value::Null).map_err(|e| ClientError::Decode(e.to_string()));
    }
    let body: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(_) if status != 200 => {
            return Err(ClientError::Http {
                status,
                body: snippet(bytes),
            });
        }
        Err(e) => return Err(ClientError::Decode(format!("not JSON: {e}"))),
    };
    if let Some(error) = body.get("error") {
        return Err(A2aError::from_wire(error)
            .map(ClientError::Protocol)
            .unwrap_or_else(|| ClientError::Http {
                status,
                body: snippet(bytes),
            }));
    }
    if status != 200 {
        return Err(ClientError::Http {
            status,
            body: snippet(bytes),
        });
    }
    let result = match binding {
        Binding::JsonRpc => body.get("result").cloned().unwrap_or(Value::Null),
        Binding::HttpJson => body,
    };
    serde_json::from_value(result).map_err(|e| ClientError::Decode(e.to_string()))
}

fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let secs: u64 = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_secs(secs))
}

fn snippet(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned()
}

/// Percent-encodes a path segment or query value.
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
