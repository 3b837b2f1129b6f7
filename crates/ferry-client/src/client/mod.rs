//! `A2aClient`: every operation of the operation table over either binding, with retries,
//! timeouts and bounded bodies; [`A2aClient::connect`] is the safe way in.

use crate::endpoint::{Binding, Endpoint};
use crate::error::ClientError;
#[cfg(feature = "grpc")]
use crate::grpc::GrpcChannel;
use crate::retry::RetryPolicy;
use ferry_net::{SafeClientBuilder, Url};
use ferry_proto::{
    A2aError, AgentCard, CancelTaskRequest, GetExtendedAgentCardRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, Operation, PathParams, RestCarrier, SendMessageRequest,
    SendMessageResponse, SubscribeToTaskRequest, Task, TaskPushNotificationConfig,
    TaskPushNotificationConfigRef, ops,
};
use ferry_trust::fetch::{CardFetcher, Expect};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use stream::{EventStream, Source, StreamKind};
use tracing::Instrument;

pub(crate) mod stream;

/// What a call of the client is generic over: an operation of the table, and with the `grpc`
/// feature its gRPC messages too.
#[cfg(feature = "grpc")]
trait CallOperation: ferry_proto::grpc::GrpcOperation {}
#[cfg(feature = "grpc")]
impl<T: ferry_proto::grpc::GrpcOperation> CallOperation for T {}
/// What a call of the client is generic over: an operation of the table.
#[cfg(not(feature = "grpc"))]
trait CallOperation: ferry_proto::OperationType {}
#[cfg(not(feature = "grpc"))]
impl<T: ferry_proto::OperationType> CallOperation for T {}

/// Options for a client. The defaults are the safe ones: public https agents only (plus the
/// user's own loopback machine when the URL given to [`A2aClient::connect`] names it), a card
/// of at most 256 KiB, answers of at most [`ClientOptions::DEFAULT_MAX_RESPONSE_BYTES`].
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
    /// What the card must satisfy besides strict parsing: a pinned digest, a trusted key, a
    /// JWKS (default: nothing more).
    pub expect: Expect,
    /// The largest card read (default 256 KiB).
    pub max_card_bytes: usize,
    /// The largest answer body read, for every call that is not a stream (default 8 MiB).
    pub max_response_bytes: usize,
    /// **Danger:** also reach private and loopback networks, and plain http anywhere (an
    /// intranet agent). With this, a card can point the client at any host of the local
    /// network; the cloud metadata addresses stay refused. Default false.
    pub danger_allow_private: bool,
    /// A private CA to trust and a client certificate to present, on every binding.
    pub tls: crate::ClientTls,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            prefer: None,
            headers: HeaderMap::new(),
            extensions: Vec::new(),
            timeout: Duration::from_secs(60),
            retry: RetryPolicy::default(),
            expect: Expect::default(),
            max_card_bytes: ferry_trust::strict::Limits::CARD_MAX_BYTES,
            max_response_bytes: Self::DEFAULT_MAX_RESPONSE_BYTES,
            danger_allow_private: false,
            tls: crate::ClientTls::default(),
        }
    }
}

impl ClientOptions {
    /// The default limit of an answer body: 8 MiB.
    pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 8 << 20;

    /// Adds `Authorization: Bearer <token>`.
    pub fn bearer(mut self, token: &str) -> Result<Self, ClientError> {
        self.headers
            .insert(reqwest::header::AUTHORIZATION, bearer_value(token)?);
        Ok(self)
    }
}

/// A client for one agent interface. Cheap to clone.
#[derive(Debug, Clone)]
pub struct A2aClient {
    http: reqwest::Client,
    /// The channel, when the binding is gRPC.
    #[cfg(feature = "grpc")]
    grpc: Option<GrpcChannel>,
    endpoint: Endpoint,
    /// The interface's host and port, as each call's span names the peer.
    peer: Arc<(String, Option<u16>)>,
    headers: HeaderMap,
    timeout: Duration,
    retry: RetryPolicy,
    max_response_bytes: usize,
    /// True when the agent speaks A2A v0.3 (see [`A2aClient::speaking_v03`]).
    v03: bool,
}

impl A2aClient {
    /// Resolves the card at `base_url` (or the card URL itself) and connects to its chosen
    /// interface, safely:
    ///
    /// 1. the card is fetched over ferry-net's SSRF-safe client: every address checked, no
    ///    redirects, https only, public addresses only; a `base_url` that names the user's
    ///    own machine (`http://127.0.0.1:8765`, `http://localhost`) may use loopback and plain
    ///    http, and nothing else local;
    /// 2. it is parsed strictly and checked by ferry-trust (256 KiB, `options.expect`);
    /// 3. the interface URL the card names is held to the same address policy as the card's
    ///    own URL, so a card cannot send the client to an address its URL could not reach.
    ///
    /// ```no_run
    /// use ferry_client::{A2aClient, ClientOptions};
    ///
    /// # async fn run() -> Result<(), ferry_client::ClientError> {
    /// let (client, card) = A2aClient::connect("http://127.0.0.1:8765", ClientOptions::default()).await?;
    /// println!("{} via {:?}", card.name, client.binding());
    /// # Ok(()) }
    /// ```
    pub async fn connect(
        base_url: &str,
        options: ClientOptions,
    ) -> Result<(Self, AgentCard), ClientError> {
        let card_url = ferry_proto::card_url(base_url);
        let parsed = Url::parse(&card_url).map_err(|e| ClientError::InvalidUrl {
            url: card_url.clone(),
            reason: e.to_string(),
        })?;
        let net = options.tls.apply(
            SafeClientBuilder::for_given_url(&parsed, options.danger_allow_private)
                .timeout(options.timeout),
        );
        let safe = net.clone().build().map_err(ClientError::from_net)?;
        let fetcher = CardFetcher::builder()
            .net(net)
            .timeout(options.timeout)
            .max_card_bytes(options.max_card_bytes)
            .build()
            .map_err(|e| ClientError::from_fetch(e, &card_url))?;
        let verified = fetcher
            .fetch(&card_url, &options.expect)
            .await
            .map_err(|e| ClientError::from_fetch(e, &card_url))?;
        // A v0.3-only card (a top-level `url`, no `supportedInterfaces`) reads as the v1.0
        // card it stands for, its interfaces at version 0.3.
        let card_json = verified.card();
        let card =
            typed_card(ferry_proto::v03::card_to_v1(card_json).unwrap_or(card_json.clone()))?;
        let (endpoint, v03) = match Endpoint::select(&card, options.prefer) {
            Ok(endpoint) => (endpoint, false),
            #[cfg(feature = "v03")]
            Err(e) if matches!(options.prefer, None | Some(Binding::JsonRpc)) => {
                (Endpoint::select_v03(&card).ok_or(e)?, true)
            }
            Err(e) => return Err(e),
        };
        // A gRPC interface is `host:port`; it is reached with the scheme the card came over.
        let interface_url = match endpoint.binding {
            Binding::Grpc => format!("{}://{}", parsed.scheme(), endpoint.url),
            Binding::JsonRpc | Binding::HttpJson => endpoint.url.clone(),
        };
        let interface = Url::parse(&interface_url).map_err(|e| ClientError::InvalidUrl {
            url: endpoint.url.clone(),
            reason: e.to_string(),
        })?;
        safe.check_url(&interface)
            .map_err(|e| ClientError::blocked(&endpoint.url, &e))?;
        #[cfg(feature = "grpc")]
        let tls = options.tls.clone();
        let mut client = Self::with_http(safe.http().clone(), endpoint, options);
        if v03 {
            client = client.speaking_v03();
        }
        #[cfg(feature = "grpc")]
        if client.endpoint.binding == Binding::Grpc {
            client.grpc = Some(GrpcChannel::new(
                &client.endpoint.url,
                (interface.scheme() == "https").then_some(&tls),
                Some(safe.policy().clone()),
                client.timeout,
                client.max_response_bytes,
            )?);
        }
        Ok((client, card))
    }

    /// A client for a known endpoint over `http` (or, for a gRPC endpoint, its own plaintext
    /// HTTP/2 channel), with no address checks of its own: the caller vouches for the
    /// endpoint (tests, an endpoint from configuration). Prefer [`A2aClient::connect`].
    pub fn with_http(http: reqwest::Client, endpoint: Endpoint, options: ClientOptions) -> Self {
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
        #[cfg(feature = "grpc")]
        let grpc = (endpoint.binding == Binding::Grpc)
            .then(|| {
                GrpcChannel::new(
                    &endpoint.url,
                    endpoint.url.starts_with("https://").then_some(&options.tls),
                    None,
                    options.timeout,
                    options.max_response_bytes,
                )
                .ok()
            })
            .flatten();
        Self {
            http,
            #[cfg(feature = "grpc")]
            grpc,
            peer: Arc::new(peer_of(&endpoint)),
            endpoint,
            headers,
            timeout: options.timeout,
            retry: options.retry,
            max_response_bytes: options.max_response_bytes,
            v03: false,
        }
    }

    /// The same client, sending `Authorization: Bearer <token>` (a token got after the card
    /// was read, such as one from the provider its card names: see [`crate::oauth`]).
    pub fn with_bearer(mut self, token: &str) -> Result<Self, ClientError> {
        self.headers
            .insert(reqwest::header::AUTHORIZATION, bearer_value(token)?);
        Ok(self)
    }

    /// The same client, speaking A2A v0.3 JSON-RPC (`message/send`, …) to a v0.3 agent: each
    /// call is translated to v0.3 and each answer back, so the caller sees the same v1.0
    /// types. `A2A-Version: 0.3` is sent, and the extensions in v0.3's header as well.
    /// [`A2aClient::connect`] picks this itself for a card that offers only v0.3. `ListTasks`
    /// does not exist in v0.3 and is refused with UnsupportedOperation.
    pub fn speaking_v03(mut self) -> Self {
        self.v03 = true;
        self.headers.insert(
            HeaderName::from_static("a2a-version"),
            HeaderValue::from_static(ferry_proto::v03::VERSION),
        );
        if let Some(v) = self.headers.get("a2a-extensions").cloned() {
            self.headers.insert(
                HeaderName::from_static(ferry_proto::v03::EXTENSIONS_HEADER),
                v,
            );
        }
        self
    }

    /// True when this client speaks A2A v0.3 to its agent.
    pub fn speaks_v03(&self) -> bool {
        self.v03
    }

    /// The same client, calling as `tenant` instead of the interface's.
    pub fn with_tenant(mut self, tenant: &str) -> Self {
        tenant.clone_into(&mut self.endpoint.tenant);
        self
    }

    /// The interface this client calls.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The binding this client speaks.
    pub fn binding(&self) -> Binding {
        self.endpoint.binding
    }

    /// `SendMessage`. Retried only when the request never reached the server.
    pub async fn send_message(
        &self,
        req: SendMessageRequest,
    ) -> Result<SendMessageResponse, ClientError> {
        self.call::<ops::SendMessage>(req, false).await
    }

    /// `GetTask`.
    pub async fn get_task(
        &self,
        id: &str,
        history_length: Option<i32>,
    ) -> Result<Task, ClientError> {
        let req = GetTaskRequest {
            tenant: String::new(),
            id: id.to_owned(),
            history_length,
        };
        self.call::<ops::GetTask>(req, true).await
    }

    /// `ListTasks` (one page).
    pub async fn list_tasks(
        &self,
        req: &ListTasksRequest,
    ) -> Result<ListTasksResponse, ClientError> {
        self.call::<ops::ListTasks>(req.clone(), true).await
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
        let req = CancelTaskRequest {
            tenant: String::new(),
            id: id.to_owned(),
            metadata: None,
        };
        self.call::<ops::CancelTask>(req, true).await
    }

    /// `CreateTaskPushNotificationConfig`.
    pub async fn create_push_config(
        &self,
        config: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig, ClientError> {
        self.call::<ops::CreateTaskPushNotificationConfig>(config, true)
            .await
    }

    /// `GetTaskPushNotificationConfig`.
    pub async fn get_push_config(
        &self,
        task_id: &str,
        id: &str,
    ) -> Result<TaskPushNotificationConfig, ClientError> {
        self.call::<ops::GetTaskPushNotificationConfig>(config_ref(task_id, id), true)
            .await
    }

    /// `ListTaskPushNotificationConfigs` (one page).
    pub async fn list_push_configs(
        &self,
        task_id: &str,
    ) -> Result<ListTaskPushNotificationConfigsResponse, ClientError> {
        let req = ListTaskPushNotificationConfigsRequest {
            tenant: String::new(),
            task_id: task_id.to_owned(),
            page_size: 0,
            page_token: String::new(),
        };
        self.call::<ops::ListTaskPushNotificationConfigs>(req, true)
            .await
    }

    /// `DeleteTaskPushNotificationConfig`; a second delete of the same id also succeeds.
    pub async fn delete_push_config(&self, task_id: &str, id: &str) -> Result<(), ClientError> {
        let req = config_ref(task_id, id);
        let op = Operation::DeleteTaskPushNotificationConfig;
        self.traced(op, async {
            #[cfg(feature = "grpc")]
            if let Some(grpc) = &self.grpc {
                let req = self.tenanted::<ops::DeleteTaskPushNotificationConfig>(req);
                self.with_retries(true, || {
                    grpc.unary::<ops::DeleteTaskPushNotificationConfig>(
                        &req,
                        &self.headers,
                        self.timeout,
                    )
                })
                .await?;
                return Ok(());
            }
            // `{}`, `null` or no result at all mean success.
            let _: Value = self.with_retries(true, || self.http_once(op, &req)).await?;
            Ok(())
        })
        .await
    }

    /// The push deliveries of a task, as a ferry server keeps them (ferry's own route on its
    /// HTTP+JSON interface, `GET …/tasks/{id}/pushNotificationDeliveries`): each one's id,
    /// config, event sequence number, status, attempts and last error.
    pub async fn push_deliveries(&self, task_id: &str) -> Result<Value, ClientError> {
        let path = format!("/tasks/{}/pushNotificationDeliveries", encode(task_id));
        self.ferry_route(reqwest::Method::GET, &path).await
    }

    /// Sends a push delivery of a task again (ferry's own route, `POST
    /// …/tasks/{id}/pushNotificationDeliveries/{delivery}/redeliver`): pending at once, its
    /// attempts counted afresh.
    pub async fn redeliver_push(
        &self,
        task_id: &str,
        delivery_id: &str,
    ) -> Result<(), ClientError> {
        let path = format!(
            "/tasks/{}/pushNotificationDeliveries/{}/redeliver",
            encode(task_id),
            encode(delivery_id)
        );
        self.ferry_route(reqwest::Method::POST, &path)
            .await
            .map(drop)
    }

    /// A call of one of ferry's own routes beside the HTTP+JSON binding's.
    async fn ferry_route(&self, method: reqwest::Method, path: &str) -> Result<Value, ClientError> {
        if self.endpoint.binding != Binding::HttpJson {
            return Err(ClientError::Decode(
                "push deliveries are read over the agent's HTTP+JSON interface; connect with that binding"
                    .to_owned(),
            ));
        }
        let request = self
            .http
            .request(method, self.rest_url(path))
            .headers(crate::trace::outgoing_headers(&self.headers))
            .timeout(self.timeout);
        let response = request.send().await.map_err(ClientError::from_reqwest)?;
        let status = response.status().as_u16();
        let bytes = read_capped(response, self.max_response_bytes).await?;
        decode_answer(self.endpoint.binding, status, &bytes)
    }

    /// `GetExtendedAgentCard` (needs the credentials the public card asks for).
    pub async fn extended_card(&self) -> Result<AgentCard, ClientError> {
        let req = GetExtendedAgentCardRequest {
            tenant: String::new(),
        };
        self.call::<ops::GetExtendedAgentCard>(req, true).await
    }

    /// `SendStreamingMessage`: the task's events as they happen; a dropped connection is
    /// resumed with `SubscribeToTask` (and `Last-Event-ID`).
    pub async fn send_streaming(
        &self,
        req: SendMessageRequest,
    ) -> Result<EventStream, ClientError> {
        let op = Operation::SendStreamingMessage;
        let source = self
            .traced(op, async {
                #[cfg(feature = "grpc")]
                if let Some(grpc) = &self.grpc {
                    let req = self.tenanted::<ops::SendStreamingMessage>(req);
                    let messages = grpc
                        .open_stream::<ops::SendStreamingMessage>(&req, &self.headers)
                        .await?;
                    return Ok(Source::Grpc(Box::new(messages)));
                }
                Ok(Source::sse(self.open_stream(op, &req, None).await?))
            })
            .await?;
        Ok(EventStream::new(
            self.clone(),
            source,
            None,
            StreamKind::Send,
        ))
    }

    /// `SubscribeToTask`.
    pub async fn subscribe(&self, id: &str) -> Result<EventStream, ClientError> {
        let response = self.open_subscription(id, None).await?;
        Ok(EventStream::new(
            self.clone(),
            response,
            Some(id.to_owned()),
            StreamKind::Subscribe,
        ))
    }

    /// `SubscribeToTask` resumed after `last_event_id` (an SSE id this task's stream
    /// carried): the events after it, then live ones. A point older than the server keeps
    /// starts with the task's snapshot instead. gRPC has no event ids: there the stream
    /// starts with the snapshot.
    pub async fn subscribe_after(
        &self,
        id: &str,
        last_event_id: &str,
    ) -> Result<EventStream, ClientError> {
        let response = self.open_subscription(id, Some(last_event_id)).await?;
        Ok(EventStream::new(
            self.clone(),
            response,
            Some(id.to_owned()),
            StreamKind::Subscribe,
        ))
    }

    /// The retry policy (streams resume with it).
    pub(crate) fn retry_policy(&self) -> RetryPolicy {
        self.retry
    }

    /// Opens a subscription, resuming after `last_event_id` when given (SSE only).
    pub(crate) async fn open_subscription(
        &self,
        id: &str,
        last_event_id: Option<&str>,
    ) -> Result<Source, ClientError> {
        let req = SubscribeToTaskRequest {
            tenant: String::new(),
            id: id.to_owned(),
        };
        let op = Operation::SubscribeToTask;
        self.traced(op, async {
            #[cfg(feature = "grpc")]
            if let Some(grpc) = &self.grpc {
                let req = self.tenanted::<ops::SubscribeToTask>(req);
                let messages = grpc
                    .open_stream::<ops::SubscribeToTask>(&req, &self.headers)
                    .await?;
                return Ok(Source::Grpc(Box::new(messages)));
            }
            Ok(Source::sse(
                self.open_stream(op, &req, last_event_id).await?,
            ))
        })
        .await
    }

    /// Runs `call`, one call of `op` with its retries, in its own `a2a.client` span: every
    /// request it sends carries that span's trace context (see [`crate::trace`]), and a
    /// failure marks the span failed. A stream's span ends once the stream is open.
    async fn traced<R>(
        &self,
        op: Operation,
        call: impl Future<Output = Result<R, ClientError>>,
    ) -> Result<R, ClientError> {
        let (host, port) = &*self.peer;
        let span = crate::trace::call_span(op.name(), self.endpoint.binding, host, *port);
        let outcome = call.instrument(span.clone()).await;
        if outcome.is_err() {
            crate::trace::failed(&span);
        }
        outcome
    }

    /// `req` of `O` with this interface's tenant (what `build` does to the JSON).
    #[cfg(feature = "grpc")]
    fn tenanted<O: ferry_proto::grpc::GrpcOperation>(&self, mut req: O::Request) -> O::Request {
        O::set_tenant(&mut req, &self.endpoint.tenant);
        req
    }

    /// One unary call of operation `O`, its request carrying this interface's tenant.
    async fn call<O: CallOperation>(
        &self,
        req: O::Request,
        idempotent: bool,
    ) -> Result<O::Response, ClientError> {
        self.traced(O::OPERATION, async {
            #[cfg(feature = "grpc")]
            if let Some(grpc) = &self.grpc {
                let req = self.tenanted::<O>(req);
                return self
                    .with_retries(idempotent, || {
                        grpc.unary::<O>(&req, &self.headers, self.timeout)
                    })
                    .await;
            }
            self.with_retries(idempotent, || self.http_once(O::OPERATION, &req))
                .await
        })
        .await
    }

    /// The HTTP request of `op` with `req` as its message: a JSON-RPC envelope, or the REST
    /// route of the operation table with the path parameters taken from the message's `id`
    /// and `taskId`, the rest in the body or the query string as the route carries it.
    fn build(
        &self,
        op: Operation,
        req: &impl Serialize,
    ) -> Result<reqwest::RequestBuilder, ClientError> {
        let mut params =
            serde_json::to_value(req).map_err(|e| ClientError::Decode(e.to_string()))?;
        if let Some(obj) = params.as_object_mut() {
            obj.remove("tenant");
            if !self.endpoint.tenant.is_empty() {
                obj.insert("tenant".into(), self.endpoint.tenant.clone().into());
            }
        }
        let builder = match self.endpoint.binding {
            #[cfg(feature = "v03")]
            Binding::JsonRpc if self.v03 => {
                let id = uuid::Uuid::new_v4().to_string();
                let method = crate::v03::method(op)?.name();
                let params = crate::v03::params(op, params)?;
                let body = ferry_proto::JsonRpcCall::new(&id, method, &params);
                self.http.post(&self.endpoint.url).json(&body)
            }
            Binding::JsonRpc => {
                let id = uuid::Uuid::new_v4().to_string();
                let body = ferry_proto::JsonRpcCall::new(&id, op.name(), &params);
                self.http.post(&self.endpoint.url).json(&body)
            }
            Binding::HttpJson | Binding::Grpc => {
                let mut fields = match params {
                    Value::Object(m) => m,
                    _ => serde_json::Map::new(),
                };
                // The tenant is the path's prefix in REST.
                fields.remove("tenant");
                let route = op.rest();
                let take = |fields: &mut serde_json::Map<String, Value>, name: &str| {
                    route
                        .path
                        .contains(&format!("{{{name}}}"))
                        .then(|| fields.remove(name))
                        .flatten()
                        .and_then(|v| v.as_str().map(str::to_owned))
                };
                let path_params = PathParams {
                    id: take(&mut fields, "id"),
                    task_id: take(&mut fields, "taskId"),
                };
                let path = op.rest_path(&path_params).ok_or_else(|| {
                    ClientError::Decode(format!("{} needs the ids its path names", op.name()))
                })?;
                let mut url = self.rest_url(&path);
                let verb = match route.verbs[0] {
                    ferry_proto::HttpVerb::Get => reqwest::Method::GET,
                    ferry_proto::HttpVerb::Post => reqwest::Method::POST,
                    ferry_proto::HttpVerb::Delete => reqwest::Method::DELETE,
                };
                match route.carrier {
                    RestCarrier::Body => self.http.request(verb, url).json(&fields),
                    RestCarrier::Query => {
                        let query: Vec<String> = fields
                            .iter()
                            .map(|(k, v)| {
                                let v = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                                format!("{}={}", encode(k), encode(&v))
                            })
                            .collect();
                        if !query.is_empty() {
                            url.push('?');
                            url.push_str(&query.join("&"));
                        }
                        self.http.request(verb, url)
                    }
                }
            }
        };
        Ok(builder.headers(crate::trace::outgoing_headers(&self.headers)))
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

    /// One call with retries: transient failures are retried when `idempotent` (or when the
    /// request never reached the server, or the server asked for a retry after a wait).
    async fn with_retries<R, F, Fut>(&self, idempotent: bool, once: F) -> Result<R, ClientError>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Result<R, (ClientError, Option<Duration>)>>,
    {
        let mut attempt = 0;
        loop {
            let outcome = once().await;
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

    /// One attempt over a JSON binding.
    async fn http_once<R: DeserializeOwned>(
        &self,
        op: Operation,
        req: &impl Serialize,
    ) -> Result<R, (ClientError, Option<Duration>)> {
        let request = self.build(op, req).map_err(|e| (e, None))?;
        let response = request
            .timeout(self.timeout)
            .send()
            .await
            .map_err(|e| (ClientError::from_reqwest(e), None))?;
        let status = response.status().as_u16();
        let retry_after = retry_after(response.headers());
        let bytes = read_capped(response, self.max_response_bytes)
            .await
            .map_err(|e| (e, None))?;
        #[cfg(feature = "v03")]
        if self.v03 {
            let result: Value = decode_answer(self.endpoint.binding, status, &bytes)
                .map_err(|e| (e, retry_after))?;
            let v1 = crate::v03::result(op, result).map_err(|e| (e, None))?;
            return serde_json::from_value(v1)
                .map_err(|e| (ClientError::Decode(e.to_string()), None));
        }
        decode_answer(self.endpoint.binding, status, &bytes).map_err(|e| (e, retry_after))
    }

    async fn open_stream(
        &self,
        op: Operation,
        req: &impl Serialize,
        last_event_id: Option<&str>,
    ) -> Result<reqwest::Response, ClientError> {
        let mut request = self.build(op, req)?.header("accept", "text/event-stream");
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
        let bytes = read_capped(response, self.max_response_bytes).await?;
        match decode_answer::<Value>(self.endpoint.binding, status, &bytes) {
            Ok(_) => Err(ClientError::Decode(
                "the agent answered a stream request without a stream".into(),
            )),
            Err(e) => Err(e),
        }
    }
}

/// The `error.message` of an error body (AIP-193 and JSON-RPC both have one), or nothing.
fn error_message(bytes: &[u8]) -> String {
    serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|v| {
            v["error"]["message"]
                .as_str()
                .map(|m| m.chars().take(300).collect())
        })
        .unwrap_or_default()
}

/// `Bearer <token>`, marked sensitive (kept out of debug output and HTTP/2 header tables).
fn bearer_value(token: &str) -> Result<HeaderValue, ClientError> {
    let mut v = HeaderValue::from_str(&format!("Bearer {token}"))
        .map_err(|_| ClientError::Decode("the token is not a valid header value".into()))?;
    v.set_sensitive(true);
    Ok(v)
}

/// The host and port of an interface URL (`host:port` for gRPC), without anything else the
/// URL carries (user information, path, query).
fn peer_of(endpoint: &Endpoint) -> (String, Option<u16>) {
    let url = if endpoint.url.contains("://") {
        Url::parse(&endpoint.url)
    } else {
        Url::parse(&format!("http://{}", endpoint.url))
    };
    match url {
        Ok(url) => (
            url.host_str().unwrap_or_default().to_owned(),
            url.port_or_known_default(),
        ),
        Err(_) => (String::new(), None),
    }
}

/// The reference of one push config.
fn config_ref(task_id: &str, id: &str) -> TaskPushNotificationConfigRef {
    TaskPushNotificationConfigRef {
        tenant: String::new(),
        task_id: task_id.to_owned(),
        id: id.to_owned(),
    }
}

/// Reads a body of at most `limit` bytes: a declared length over it is refused before
/// reading, a longer body as soon as it is.
pub(crate) async fn read_capped(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<bytes::Bytes, ClientError> {
    let too_large = || ClientError::TooLarge { limit };
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let mut body = bytes::BytesMut::new();
    while let Some(chunk) = response.chunk().await.map_err(ClientError::from_reqwest)? {
        if body.len() + chunk.len() > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

/// The typed card of a card document that passed the strict checks.
pub(crate) fn typed_card(card: Value) -> Result<AgentCard, ClientError> {
    serde_json::from_value(card).map_err(|e| ClientError::Decode(format!("agent card: {e}")))
}

/// Decodes a unary answer of either binding into `R` or the error it carries.
pub(crate) fn decode_answer<R: DeserializeOwned>(
    binding: Binding,
    status: u16,
    bytes: &[u8],
) -> Result<R, ClientError> {
    if status == 401 || status == 403 {
        return Err(ClientError::Auth {
            status,
            reason: error_message(bytes),
        });
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
        Binding::HttpJson | Binding::Grpc => body,
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
