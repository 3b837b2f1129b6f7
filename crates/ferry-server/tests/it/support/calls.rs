//! A2A calls written once, in JSON-RPC terms (a method name and its params), and played over
//! either binding: over JSON-RPC as they are, over REST mapped onto the route, query string and
//! body of spec §2.3. Every answer is checked on the way in: the envelope, the content type,
//! and the wire format of whatever succeeded.

use super::errors::WireError;
use super::server::TestServer;
use super::sse::{Frame, SseReader};
use super::wire::assert_wire_format;
use reqwest::header::{CONTENT_TYPE, HeaderMap};
use serde_json::{Map, Value, json};

/// The three bindings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Binding {
    /// JSON-RPC 2.0 at `/jsonrpc`.
    JsonRpc,
    /// HTTP+JSON at `/rest`.
    Rest,
    /// gRPC at `/lf.a2a.v1.A2AService/*` (see [`super::grpc`]).
    Grpc,
}

/// Service parameters of a call (spec §2.1).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ServiceParams<'a> {
    /// The `A2A-Version` header; `None` sends none.
    pub version: Option<&'a str>,
    /// An `A2A-Version` header of raw bytes (sent instead of `version`).
    pub raw_version: Option<&'a [u8]>,
    /// The `?A2A-Version=` query parameter.
    pub query_version: Option<&'a str>,
    /// `A2A-Extensions` header lines, each sent as its own line.
    pub extensions: &'a [&'a str],
    /// The SSE `Last-Event-ID` header (resuming a subscription).
    pub last_event_id: Option<&'a str>,
    /// The `Authorization` header.
    pub auth: Auth<'a>,
    /// Further headers (`Host`, `Origin`, `X-Request-Id`…), sent as given.
    pub headers: &'a [(&'a str, &'a str)],
}

/// The `Authorization` header of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Auth<'a> {
    /// `Bearer <token>` when the server has a token, else none.
    ServerToken,
    /// No `Authorization` header.
    Anonymous,
    /// This header value.
    Header(&'a str),
}

impl Default for ServiceParams<'_> {
    fn default() -> Self {
        Self {
            version: Some("1.0"),
            raw_version: None,
            query_version: None,
            extensions: &[],
            last_event_id: None,
            auth: Auth::ServerToken,
            headers: &[],
        }
    }
}

/// What a call brought back.
#[derive(Debug)]
pub(crate) struct Answer {
    /// The response headers.
    pub headers: HeaderMap,
    /// The result (`result` of JSON-RPC, the body of REST) or the error.
    pub result: Result<Value, WireError>,
}

impl TestServer {
    /// Calls `method` with the default service parameters.
    pub(crate) async fn call(
        &self,
        b: Binding,
        method: &str,
        params: Value,
    ) -> Result<Value, WireError> {
        self.call_with(b, method, params, ServiceParams::default())
            .await
            .result
    }

    /// Calls `method` and expects success.
    pub(crate) async fn ok(&self, b: Binding, method: &str, params: Value) -> Value {
        self.call(b, method, params)
            .await
            .unwrap_or_else(|e| panic!("{method} over {b:?} failed: {}", e.body))
    }

    /// Calls `method` and expects an error.
    pub(crate) async fn fails(&self, b: Binding, method: &str, params: Value) -> WireError {
        match self.call(b, method, params).await {
            Ok(v) => panic!("{method} over {b:?} unexpectedly succeeded: {v}"),
            Err(e) => e,
        }
    }

    /// Calls `method` with explicit service parameters.
    pub(crate) async fn call_with(
        &self,
        b: Binding,
        method: &str,
        params: Value,
        sp: ServiceParams<'_>,
    ) -> Answer {
        if b == Binding::Grpc {
            let answer = super::grpc::unary(self, method, params, sp).await;
            if let Ok(v) = &answer.result {
                assert_wire_format(v);
            }
            return answer;
        }
        let (response, rpc_id) = self.send(b, method, params, sp).await;
        let headers = response.headers().clone();
        let result = json_answer(b, response, &rpc_id, method).await;
        if let Ok(v) = &result {
            assert_wire_format(v);
        }
        Answer { headers, result }
    }

    /// Sends the first message of a new task and returns the task it made.
    pub(crate) async fn send_task(&self, b: Binding, params: Value) -> Value {
        let result = self.ok(b, "SendMessage", params).await;
        assert_eq!(
            super::keys(&result),
            ["task"],
            "SendMessage answered with a task: {result}"
        );
        result["task"].clone()
    }

    /// Starts a `wait` task with `returnImmediately` and returns its id; the agent then
    /// works until the test sends [`super::Step::Complete`].
    pub(crate) async fn start_waiting(&self, b: Binding, extra: Value) -> String {
        let mut params = super::server::send_params("wait");
        params["configuration"] = json!({"returnImmediately": true});
        merge(&mut params, extra);
        let task = self.send_task(b, params).await;
        task["id"].as_str().expect("a task id").to_owned()
    }

    /// Opens a stream (`SendStreamingMessage` or `SubscribeToTask`).
    pub(crate) async fn stream(
        &self,
        b: Binding,
        method: &str,
        params: Value,
    ) -> Result<A2aStream, WireError> {
        self.stream_with(b, method, params, ServiceParams::default())
            .await
            .1
    }

    /// Opens a stream and expects it to open.
    pub(crate) async fn open(&self, b: Binding, method: &str, params: Value) -> A2aStream {
        self.stream(b, method, params)
            .await
            .unwrap_or_else(|e| panic!("{method} over {b:?} refused: {}", e.body))
    }

    /// Opens a stream and expects it to be refused with an ordinary error answer.
    pub(crate) async fn stream_fails(&self, b: Binding, method: &str, params: Value) -> WireError {
        match self.stream(b, method, params).await {
            Ok(_) => panic!("{method} over {b:?} unexpectedly opened a stream"),
            Err(e) => {
                assert!(!e.in_stream, "refused before the stream opened");
                e
            }
        }
    }

    /// Opens a stream with explicit service parameters; errors before the first event come back
    /// as ordinary error responses.
    pub(crate) async fn stream_with(
        &self,
        b: Binding,
        method: &str,
        params: Value,
        sp: ServiceParams<'_>,
    ) -> (HeaderMap, Result<A2aStream, WireError>) {
        if b == Binding::Grpc {
            return super::grpc::stream(self, method, params, sp).await;
        }
        let (response, rpc_id) = self.send(b, method, params, sp).await;
        let headers = response.headers().clone();
        if headers
            .get(CONTENT_TYPE)
            .is_some_and(|v| v == "text/event-stream")
        {
            assert_eq!(response.status(), 200, "a stream opens with 200");
            let stream = A2aStream {
                binding: b,
                rpc_id,
                source: Source::Sse(Box::new(SseReader::new(response))),
                last_seq: None,
                closed_by: None,
            };
            return (headers, Ok(stream));
        }
        match json_answer(b, response, &rpc_id, method).await {
            Ok(v) => panic!("{method} answered a JSON result instead of a stream: {v}"),
            Err(e) => (headers, Err(e)),
        }
    }

    /// Sends a call and returns whatever came back, unchecked, with the JSON-RPC id (null for
    /// REST): for refusals that happen before any binding reads the call.
    pub(crate) async fn send(
        &self,
        b: Binding,
        method: &str,
        params: Value,
        sp: ServiceParams<'_>,
    ) -> (reqwest::Response, Value) {
        let (request, rpc_id) = self.prepare(b, method, params, sp);
        let response = request
            .send()
            .await
            .expect("the request reaches the server");
        (response, rpc_id)
    }

    /// Builds the HTTP request of a call; returns it with the JSON-RPC id (null for REST).
    pub(crate) fn prepare(
        &self,
        b: Binding,
        method: &str,
        params: Value,
        sp: ServiceParams<'_>,
    ) -> (reqwest::RequestBuilder, Value) {
        let query = sp
            .query_version
            .map(|v| format!("A2A-Version={}", encode(v)));
        let (mut request, rpc_id) = match b {
            Binding::JsonRpc => {
                let id = self.next_rpc_id();
                let url = self.binding_url(&with_query("/jsonrpc".to_owned(), query));
                let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
                (self.http().post(url).json(&body), id)
            }
            Binding::Grpc => panic!("a raw HTTP request of a gRPC call: use call_with"),
            Binding::Rest => {
                let route = RestRoute::of(method, params);
                let mut pairs = route.query;
                pairs.extend(query);
                let url = self.binding_url(&with_query(
                    format!("/rest{}", route.path),
                    (!pairs.is_empty()).then(|| pairs.join("&")),
                ));
                let mut request = self.http().request(route.verb, url);
                if let Some(body) = route.body {
                    request = request.json(&body);
                }
                (request, Value::Null)
            }
        };
        match (sp.raw_version, sp.version) {
            (Some(bytes), _) => {
                let value = reqwest::header::HeaderValue::from_bytes(bytes).expect("header bytes");
                request = request.header("A2A-Version", value);
            }
            (None, Some(v)) => request = request.header("A2A-Version", v),
            (None, None) => {}
        }
        for line in sp.extensions {
            request = request.header("A2A-Extensions", *line);
        }
        if let Some(id) = sp.last_event_id {
            request = request.header("Last-Event-ID", id);
        }
        let bearer = self.token().map(|t| format!("Bearer {t}"));
        let authorization = match sp.auth {
            Auth::ServerToken => bearer.as_deref(),
            Auth::Anonymous => None,
            Auth::Header(v) => Some(v),
        };
        if let Some(v) = authorization {
            request = request.header("Authorization", v);
        }
        for (name, value) in sp.headers {
            request = request.header(*name, *value);
        }
        (request, rpc_id)
    }
}

/// A call refused before the A2A semantics saw it (the front door, a limit): the HTTP status,
/// the headers, the whole JSON body and its error. `error.binding` names the error's shape: a
/// JSON-RPC envelope, or an AIP-193 `{"error": …}` body (which the front door also uses on the
/// JSON-RPC endpoint for 401 and 403).
#[derive(Debug)]
pub(crate) struct Refusal {
    /// The HTTP status.
    pub status: u16,
    /// The response headers.
    pub headers: HeaderMap,
    /// The JSON body.
    pub body: Value,
    /// The error it carries.
    pub error: WireError,
}

impl Refusal {
    /// A response header as text.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The `X-Request-Id` header (every response has one).
    pub(crate) fn request_id(&self) -> &str {
        self.header("x-request-id")
            .unwrap_or_else(|| panic!("no X-Request-Id on {} {}", self.status, self.body))
    }

    /// The `Retry-After` header in seconds, checked against `retryAfterSeconds` in the error.
    pub(crate) fn retry_after(&self) -> u64 {
        let header = self
            .header("retry-after")
            .unwrap_or_else(|| panic!("no Retry-After on {} {}", self.status, self.body));
        let secs: u64 = header
            .parse()
            .unwrap_or_else(|_| panic!("Retry-After is a number of seconds, not {header:?}"));
        assert!(secs >= 1, "Retry-After of at least a second: {secs}");
        assert_eq!(
            self.error.meta("retryAfterSeconds"),
            Some(header),
            "retryAfterSeconds (a string) repeats Retry-After: {}",
            self.body
        );
        secs
    }
}

impl TestServer {
    /// Sends a call that must be refused with an HTTP error status and a JSON body.
    pub(crate) async fn refused(
        &self,
        b: Binding,
        method: &str,
        params: Value,
        sp: ServiceParams<'_>,
    ) -> Refusal {
        let (response, rpc_id) = self.send(b, method, params, sp).await;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let content_type = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok());
        assert!(
            content_type.is_some_and(|ct| ct.starts_with("application/json")),
            "{method} over {b:?} answered {status} with {content_type:?}"
        );
        let body: Value = response.json().await.expect("the refusal is JSON");
        assert!(
            status >= 400,
            "{method} over {b:?} was not refused: {status} {body}"
        );
        let error = if body.get("jsonrpc").is_some() {
            assert_eq!(b, Binding::JsonRpc, "a JSON-RPC envelope over REST: {body}");
            assert!(
                body["id"] == rpc_id || body["id"].is_null(),
                "the envelope carries the request id or null: {body}"
            );
            rpc_outcome(&body, &body["id"], status, false)
                .expect_err("a refusal carries an error, not a result")
        } else {
            assert!(body["error"].is_object(), "an AIP-193 error body: {body}");
            WireError {
                binding: Binding::Rest,
                http_status: status,
                in_stream: false,
                body: body["error"].clone(),
            }
        };
        Refusal {
            status,
            headers,
            body,
            error,
        }
    }
}

/// Reads a JSON answer: checks the content type (and HTTP 200 for JSON-RPC) and splits it into
/// result or error.
async fn json_answer(
    b: Binding,
    response: reqwest::Response,
    rpc_id: &Value,
    method: &str,
) -> Result<Value, WireError> {
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    assert!(
        content_type.is_some_and(|ct| ct.starts_with("application/json")),
        "{method} answered {status} with {content_type:?}"
    );
    let body: Value = response.json().await.expect("the answer is JSON");
    match b {
        Binding::JsonRpc => {
            // Capacity and credential refusals keep their HTTP status (clients and proxies
            // act on it), with the JSON-RPC envelope.
            let capacity = matches!(status, 429 | 503) && body["error"]["code"] == -32603;
            let credentials = matches!(status, 401 | 403) && body["error"]["code"] == -32600;
            assert!(
                status == 200 || capacity || credentials,
                "JSON-RPC answers with HTTP 200: {status} {body}"
            );
            rpc_outcome(&body, rpc_id, status, false)
        }
        Binding::Grpc => unreachable!("gRPC answers are read by super::grpc"),
        Binding::Rest if status == 200 => Ok(body),
        Binding::Rest => Err(WireError {
            binding: b,
            http_status: status,
            in_stream: false,
            body: body["error"].clone(),
        }),
    }
}

/// Checks a JSON-RPC response envelope and splits it into result or error.
fn rpc_outcome(
    body: &Value,
    rpc_id: &Value,
    http_status: u16,
    in_stream: bool,
) -> Result<Value, WireError> {
    assert_eq!(body["jsonrpc"], "2.0", "envelope of {body}");
    assert_eq!(
        &body["id"], rpc_id,
        "the response echoes the request id: {body}"
    );
    match (body.get("result"), body.get("error")) {
        (Some(result), None) => Ok(result.clone()),
        (None, Some(error)) => Err(WireError {
            binding: Binding::JsonRpc,
            http_status,
            in_stream,
            body: error.clone(),
        }),
        _ => panic!("a JSON-RPC response has exactly one of result and error: {body}"),
    }
}

/// A JSON-RPC call as a REST request (spec §2.3).
struct RestRoute {
    verb: reqwest::Method,
    path: String,
    query: Vec<String>,
    body: Option<Value>,
}

impl RestRoute {
    fn of(method: &str, params: Value) -> Self {
        let mut params = match params {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            other => panic!("REST calls need object params, not {other}"),
        };
        let tenant = match params.remove("tenant") {
            Some(Value::String(t)) => format!("/{}", encode(&t)),
            _ => String::new(),
        };
        let mut take = |key: &str| match params.remove(key) {
            Some(Value::String(s)) => encode(&s),
            other => panic!("{method} over REST needs a string {key}, got {other:?}"),
        };
        use reqwest::Method as M;
        let (verb, path, body) = match method {
            "SendMessage" => (M::POST, "/message:send".to_owned(), true),
            "SendStreamingMessage" => (M::POST, "/message:stream".to_owned(), true),
            "GetTask" => (M::GET, format!("/tasks/{}", take("id")), false),
            "ListTasks" => (M::GET, "/tasks".to_owned(), false),
            "CancelTask" => (M::POST, format!("/tasks/{}:cancel", take("id")), true),
            "SubscribeToTask" => (M::POST, format!("/tasks/{}:subscribe", take("id")), false),
            "CreateTaskPushNotificationConfig" => (
                M::POST,
                format!("/tasks/{}/pushNotificationConfigs", take("taskId")),
                true,
            ),
            "ListTaskPushNotificationConfigs" => (
                M::GET,
                format!("/tasks/{}/pushNotificationConfigs", take("taskId")),
                false,
            ),
            "GetTaskPushNotificationConfig" | "DeleteTaskPushNotificationConfig" => {
                let verb = if method.starts_with("Get") {
                    M::GET
                } else {
                    M::DELETE
                };
                (
                    verb,
                    format!(
                        "/tasks/{}/pushNotificationConfigs/{}",
                        take("taskId"),
                        take("id")
                    ),
                    false,
                )
            }
            "GetExtendedAgentCard" => (M::GET, "/extendedAgentCard".to_owned(), false),
            other => panic!("no REST route for {other}"),
        };
        let (body, query) = if body {
            (Some(Value::Object(params)), Vec::new())
        } else {
            (
                None,
                params
                    .iter()
                    .map(|(k, v)| format!("{}={}", encode(k), encode(&query_value(v))))
                    .collect(),
            )
        };
        Self {
            verb,
            path: format!("{tenant}{path}"),
            query,
            body,
        }
    }
}

fn query_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn with_query(path: String, query: Option<String>) -> String {
    match query {
        Some(q) => format!("{path}?{q}"),
        None => path,
    }
}

/// Percent-encodes everything but RFC 3986 unreserved characters.
pub(super) fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Merges the members of `extra` (an object or null) into `target`, recursively for objects.
pub(super) fn merge(target: &mut Value, extra: Value) {
    match (target, extra) {
        (Value::Object(t), Value::Object(e)) => {
            for (k, v) in e {
                merge(t.entry(k).or_insert(Value::Null), v);
            }
        }
        (_, Value::Null) => {}
        (t, e) => *t = e,
    }
}

/// An open A2A stream: yields each event's `StreamResponse`, checking on the way that `id:`
/// values increase, that JSON-RPC envelopes carry the request id, that each payload has exactly
/// one member in the wire format, and that nothing follows a terminal state or a message.
#[derive(Debug)]
pub(crate) struct A2aStream {
    binding: Binding,
    rpc_id: Value,
    source: Source,
    last_seq: Option<u64>,
    closed_by: Option<Value>,
}

/// Where a stream's events come from.
#[derive(Debug)]
enum Source {
    Sse(Box<SseReader>),
    Grpc(Box<tonic::Streaming<ferry_proto::grpc::pb::StreamResponse>>),
}

impl A2aStream {
    /// A gRPC server stream.
    pub(super) fn grpc(messages: tonic::Streaming<ferry_proto::grpc::pb::StreamResponse>) -> Self {
        Self {
            binding: Binding::Grpc,
            rpc_id: Value::Null,
            source: Source::Grpc(Box::new(messages)),
            last_seq: None,
            closed_by: None,
        }
    }

    /// The next `StreamResponse`, an error event, or `None` when the server closed the stream.
    pub(crate) async fn next(&mut self) -> Option<Result<Value, WireError>> {
        let reader = match &mut self.source {
            Source::Sse(reader) => reader,
            Source::Grpc(messages) => {
                let payload = super::grpc::next_event(messages).await?;
                self.check(&payload, payload.is_err());
                return Some(payload);
            }
        };
        let event = reader.next_event().await?;
        if let Some(id) = &event.id {
            let seq: u64 = id
                .parse()
                .unwrap_or_else(|_| panic!("an SSE id is the event's sequence number, got {id:?}"));
            assert!(
                self.last_seq.is_none_or(|last| seq > last),
                "SSE ids increase: {seq} after {:?}",
                self.last_seq
            );
            self.last_seq = Some(seq);
        }
        assert!(
            !event.data.contains('\n'),
            "each event is one line of JSON: {:?}",
            event.data
        );
        let data: Value = serde_json::from_str(&event.data).expect("an SSE data line is JSON");
        let is_error = event.event.as_deref() == Some("error");
        let payload = match self.binding {
            Binding::Grpc => unreachable!("a gRPC stream has no SSE events"),
            Binding::JsonRpc => rpc_outcome(&data, &self.rpc_id, 200, true),
            Binding::Rest if data.get("error").is_some() => Err(WireError {
                binding: Binding::Rest,
                http_status: 200,
                in_stream: true,
                body: data["error"].clone(),
            }),
            Binding::Rest => Ok(data),
        };
        self.check(&payload, is_error);
        Some(payload)
    }

    /// What every event must be: an error that ends the stream (marked as one), or a
    /// `StreamResponse` of one member in the wire format; nothing after the end.
    fn check(&mut self, payload: &Result<Value, WireError>, is_error: bool) {
        if let Some(last) = &self.closed_by {
            panic!("an event followed {last}: {payload:?}");
        }
        match payload {
            Err(e) => {
                assert!(
                    is_error,
                    "an error event is marked `event: error`: {:?}",
                    e.body
                );
                self.closed_by = Some(json!({"error": e.body}));
            }
            Ok(response) => {
                assert!(!is_error, "`event: error` carries an error: {response}");
                assert_wire_format(response);
                assert!(
                    matches!(super::keys(response).as_slice(), [m] if ["task", "message", "statusUpdate", "artifactUpdate"].contains(m)),
                    "a StreamResponse has exactly one member: {response}"
                );
                if response.get("message").is_some() || is_terminal(state_of(response)) {
                    self.closed_by = Some(response.clone());
                }
            }
        }
    }

    /// The next event, which must be a `StreamResponse`.
    pub(crate) async fn next_ok(&mut self) -> Value {
        match self.next().await {
            Some(Ok(v)) => v,
            Some(Err(e)) => panic!("the stream sent an error: {}", e.body),
            None => panic!("the stream closed early"),
        }
    }

    /// The binding the stream came over.
    pub(crate) fn binding(&self) -> Binding {
        self.binding
    }

    /// The SSE `id:` of the latest event that had one.
    pub(crate) fn last_seq(&self) -> Option<u64> {
        self.last_seq
    }

    /// Reads the next frame, which must be a comment (such as `: keep-alive`); returns its text.
    pub(crate) async fn next_comment(&mut self) -> String {
        let Source::Sse(reader) = &mut self.source else {
            panic!("a gRPC stream has no comments");
        };
        match reader.next_frame().await {
            Some(Frame::Comment(text)) => text,
            other => panic!("expected a comment, got {other:?}"),
        }
    }

    /// Every remaining event until the server closes the stream (no error events allowed).
    pub(crate) async fn remaining(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        while let Some(item) = self.next().await {
            out.push(item.unwrap_or_else(|e| panic!("the stream sent an error: {}", e.body)));
        }
        out
    }
}

/// The task state a `StreamResponse` reports (`task.status` or `statusUpdate.status`).
pub(crate) fn state_of(response: &Value) -> Option<&str> {
    response
        .get("task")
        .or_else(|| response.get("statusUpdate"))
        .and_then(|v| v["status"]["state"].as_str())
}

/// True for the four terminal states.
pub(super) fn is_terminal(state: Option<&str>) -> bool {
    matches!(
        state,
        Some(
            "TASK_STATE_COMPLETED"
                | "TASK_STATE_FAILED"
                | "TASK_STATE_CANCELED"
                | "TASK_STATE_REJECTED"
        )
    )
}
