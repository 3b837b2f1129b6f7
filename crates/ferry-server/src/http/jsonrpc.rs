//! The JSON-RPC 2.0 binding (spec §2.2): one POST endpoint, eleven methods, validated in the
//! order the official SDKs use: content type, JSON, envelope, method, params, then the service
//! parameters (version, extensions).

use crate::core::handler::{CallContext, JsonDoc};
use crate::core::stream::StreamItem;
use crate::http::app::AppState;
use crate::http::decode::{self, RpcEnvelope};
use crate::http::metrics::{self, CallLabel};
use crate::http::params;
use crate::http::request_id::{ClientAddr, RequestId};
use crate::http::response::{
    is_json_content_type, json, jsonrpc_error, read_body, with_extensions,
};
use crate::http::sse::SseFraming;
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::Response;
use bytes::{BufMut, BytesMut};
use ferry_proto::{
    A2aError, CancelTaskRequest, ErrorKind, GetExtendedAgentCardRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTasksRequest, SendMessageRequest,
    SubscribeToTaskRequest, TaskPushNotificationConfig, TaskPushNotificationConfigRef,
};
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;

/// The eleven methods of A2A v1.0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    SendMessage,
    SendStreamingMessage,
    GetTask,
    ListTasks,
    CancelTask,
    SubscribeToTask,
    CreateTaskPushNotificationConfig,
    GetTaskPushNotificationConfig,
    ListTaskPushNotificationConfigs,
    DeleteTaskPushNotificationConfig,
    GetExtendedAgentCard,
}

impl Method {
    /// How the metrics name this method.
    fn metric(self) -> metrics::Method {
        match self {
            Self::SendMessage => metrics::Method::SendMessage,
            Self::SendStreamingMessage => metrics::Method::SendStreamingMessage,
            Self::GetTask => metrics::Method::GetTask,
            Self::ListTasks => metrics::Method::ListTasks,
            Self::CancelTask => metrics::Method::CancelTask,
            Self::SubscribeToTask => metrics::Method::SubscribeToTask,
            Self::CreateTaskPushNotificationConfig
            | Self::GetTaskPushNotificationConfig
            | Self::ListTaskPushNotificationConfigs
            | Self::DeleteTaskPushNotificationConfig => metrics::Method::PushConfig,
            Self::GetExtendedAgentCard => metrics::Method::GetExtendedAgentCard,
        }
    }

    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "SendMessage" => Self::SendMessage,
            "SendStreamingMessage" => Self::SendStreamingMessage,
            "GetTask" => Self::GetTask,
            "ListTasks" => Self::ListTasks,
            "CancelTask" => Self::CancelTask,
            "SubscribeToTask" => Self::SubscribeToTask,
            "CreateTaskPushNotificationConfig" => Self::CreateTaskPushNotificationConfig,
            "GetTaskPushNotificationConfig" => Self::GetTaskPushNotificationConfig,
            "ListTaskPushNotificationConfigs" => Self::ListTaskPushNotificationConfigs,
            "DeleteTaskPushNotificationConfig" => Self::DeleteTaskPushNotificationConfig,
            "GetExtendedAgentCard" => Self::GetExtendedAgentCard,
            _ => return None,
        })
    }
}

/// A successful response envelope, serialized without building a `Value`.
#[derive(Serialize)]
struct Success<'a, T: Serialize> {
    jsonrpc: &'static str,
    id: &'a Value,
    result: T,
}

/// Handles a POST to the JSON-RPC endpoint. Takes the request whole so that nothing of it is
/// copied before it is needed.
pub async fn handle(State(app): State<Arc<AppState>>, request: Request) -> Response {
    let null = Value::Null;
    let (parts, body) = request.into_parts();
    let rid = parts.extensions.get::<RequestId>().cloned();
    let error_response = |id: &Value, e: &A2aError| jsonrpc_error(id, e, rid.as_ref());
    let body = match read_body(body, app.config.max_body_bytes).await {
        Ok(b) => b,
        Err(e) => {
            let mut r = error_response(&null, &e);
            *r.status_mut() = StatusCode::PAYLOAD_TOO_LARGE;
            return r;
        }
    };
    if !is_json_content_type(parts.headers.get(header::CONTENT_TYPE)) {
        let e = A2aError::new(
            ErrorKind::ContentTypeNotSupported,
            "the request content type must be application/json",
        );
        return error_response(&null, &e);
    }
    let envelope = match decode::jsonrpc(&body, app.config.body_limits()) {
        Ok(envelope) => envelope,
        Err(refusal) => return error_response(&refusal.id, &refusal.error),
    };
    let (id, method_name) = (&envelope.id, envelope.method.as_ref());
    let Some(method) = Method::parse(method_name) else {
        let e = A2aError::new(
            ErrorKind::MethodNotFound,
            format!("method {method_name:?} does not exist"),
        )
        .with_meta("method", method_name);
        return error_response(id, &e);
    };
    let (mut response, ok) = match dispatch(&app, method, &envelope, &parts).await {
        Ok(r) => (r, true),
        Err(e) => (error_response(id, &e), false),
    };
    response.extensions_mut().insert(CallLabel {
        method: method.metric(),
        ok,
    });
    response
}

async fn dispatch(
    app: &AppState,
    method: Method,
    envelope: &RpcEnvelope<'_>,
    parts: &Parts,
) -> Result<Response, A2aError> {
    let (uri, headers, id) = (&parts.uri, &parts.headers, &envelope.id);
    // Params first (validation order step 4), then the service parameters (step 5).
    let parsed = Parsed::parse(method, envelope)?;
    params::check_version(headers, uri.query(), &app.config)?;
    let extensions =
        params::activate_extensions(headers, &app.declared_extensions, &app.required_extensions)?;
    let mut call = CallContext {
        tenant: parsed.tenant().to_owned(),
        extensions,
        caller: None,
        client: parts.extensions.get::<ClientAddr>().map(|c| c.0.ip()),
    };
    let h = &app.handler;
    let response = match parsed {
        Parsed::Send(req) => ok_doc(id, &h.send_message(&call, req).await?),
        Parsed::Stream(req) => {
            let permit = app.stream_permit()?;
            let stream = h.send_streaming(&call, req).await?;
            app.sse(stream, RpcFraming { id: id.clone() }, permit)
        }
        Parsed::Get(req) => ok_doc(id, &h.get_task(&call, &req)?),
        Parsed::List(req) => ok(id, h.list_tasks(&call, &req)?),
        Parsed::Cancel(req) => ok_doc(id, &h.cancel_task(&call, &req).await?),
        Parsed::Subscribe(req) => {
            let permit = app.stream_permit()?;
            let stream = h.subscribe(&call, &req, params::last_event_id(headers))?;
            app.sse(stream, RpcFraming { id: id.clone() }, permit)
        }
        Parsed::PushConfig(_) => return Err(h.push_config_unsupported()),
        Parsed::ExtendedCard(req) => {
            call.tenant = req.tenant;
            ok(id, h.extended_card()?)
        }
    };
    Ok(with_extensions(response, &call.extensions))
}

/// Params parsed for their method.
enum Parsed {
    Send(SendMessageRequest),
    Stream(SendMessageRequest),
    Get(GetTaskRequest),
    List(ListTasksRequest),
    Cancel(CancelTaskRequest),
    Subscribe(SubscribeToTaskRequest),
    PushConfig(String),
    ExtendedCard(GetExtendedAgentCardRequest),
}

impl Parsed {
    fn parse(method: Method, envelope: &RpcEnvelope<'_>) -> Result<Self, A2aError> {
        let e = envelope;
        Ok(match method {
            Method::SendMessage => Self::Send(e.params()?),
            Method::SendStreamingMessage => Self::Stream(e.params()?),
            Method::GetTask => Self::Get(e.params()?),
            Method::ListTasks => Self::List(e.params()?),
            Method::CancelTask => Self::Cancel(e.params()?),
            Method::SubscribeToTask => Self::Subscribe(e.params()?),
            Method::CreateTaskPushNotificationConfig => {
                Self::PushConfig(e.params::<TaskPushNotificationConfig>()?.tenant)
            }
            Method::GetTaskPushNotificationConfig | Method::DeleteTaskPushNotificationConfig => {
                Self::PushConfig(e.params::<TaskPushNotificationConfigRef>()?.tenant)
            }
            Method::ListTaskPushNotificationConfigs => {
                Self::PushConfig(e.params::<ListTaskPushNotificationConfigsRequest>()?.tenant)
            }
            Method::GetExtendedAgentCard => Self::ExtendedCard(e.params()?),
        })
    }

    fn tenant(&self) -> &str {
        match self {
            Self::Send(r) | Self::Stream(r) => &r.tenant,
            Self::Get(r) => &r.tenant,
            Self::List(r) => &r.tenant,
            Self::Cancel(r) => &r.tenant,
            Self::Subscribe(r) => &r.tenant,
            Self::PushConfig(t) => t,
            Self::ExtendedCard(r) => &r.tenant,
        }
    }
}

fn ok<T: Serialize>(id: &Value, result: T) -> Response {
    let body = serde_json::to_vec(&Success {
        jsonrpc: "2.0",
        id,
        result,
    })
    .unwrap_or_default();
    json(StatusCode::OK, body)
}

/// A success envelope around a pre-serialized result.
fn ok_doc(id: &Value, doc: &JsonDoc) -> Response {
    let mut body = Vec::with_capacity(doc.0.len() + 48);
    body.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    if serde_json::to_writer(&mut body, id).is_err() {
        body.extend_from_slice(b"null");
    }
    body.extend_from_slice(b",\"result\":");
    body.extend_from_slice(&doc.0);
    body.push(b'}');
    json(StatusCode::OK, body)
}

/// Wraps each stream event in a JSON-RPC response envelope carrying the request id.
struct RpcFraming {
    id: Value,
}

impl SseFraming for RpcFraming {
    fn event(&self, item: &StreamItem, out: &mut BytesMut) {
        out.put_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        out.put_slice(&serde_json::to_vec(&self.id).unwrap_or_else(|_| b"null".to_vec()));
        out.put_slice(b",\"result\":");
        out.put_slice(&item.json);
        out.put_u8(b'}');
    }

    fn error(&self, error: &A2aError, out: &mut BytesMut) {
        out.put_slice(&ferry_proto::jsonrpc_error_body(&self.id, error));
    }
}
