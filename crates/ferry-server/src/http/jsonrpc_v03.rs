//! The v0.3 JSON-RPC binding: `message/send` and the other v0.3 methods at the same endpoint
//! as v1.0's, translated by `ferry_proto::v03` into the operations of the one request
//! handler and back. Same limits, front door, store and extensions as v1.0; only the shapes
//! differ. The envelope, content type and body limits were checked by [`super::jsonrpc`].

use crate::core::doc::JsonDoc;
use crate::core::handler::Outcome;
use crate::core::stream::StreamItem;
use crate::http::decode::RpcEnvelope;
use crate::http::params::{self, VERSION};
use crate::http::request_id::RequestId;
use crate::http::response::{json, jsonrpc_error, with_extensions};
use crate::http::sse::SseFraming;
use crate::http::state::AppState;
use axum::http::request::Parts;
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use bytes::{BufMut, BytesMut};
use ferry_proto::v03::{self, Method, convert};
use ferry_proto::{
    A2aError, A2aRequest, AgentCard, ErrorKind, GetExtendedAgentCardRequest, JsonRpcSuccess,
    ListTaskPushNotificationConfigsResponse, SendMessageResponse, Task, TaskPushNotificationConfig,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// v0.3's extensions header, echoed next to v1.0's.
const X_EXTENSIONS: HeaderName = HeaderName::from_static(v03::EXTENSIONS_HEADER);

/// Answers a v0.3 method; the flag is true when it succeeded.
pub(crate) async fn handle(
    app: &AppState,
    method: Method,
    envelope: &RpcEnvelope<'_>,
    parts: &Parts,
    rid: Option<&RequestId>,
) -> (Response, bool) {
    // A request that states a v1.0 version is answered as v1.0 answers.
    if let Err(e) = check_version(parts, method) {
        return (jsonrpc_error(&envelope.id, &e, rid), false);
    }
    match dispatch(app, method, envelope, parts).await {
        Ok(response) => (response, true),
        Err(e) => (error_response(&envelope.id, &e, rid), false),
    }
}

/// A v0.3 JSON-RPC error: the status and headers v1.0's would have, v0.3's `error` object.
pub(crate) fn error_response(id: &Value, e: &A2aError, rid: Option<&RequestId>) -> Response {
    let mut response = jsonrpc_error(id, e, rid);
    let e = match rid {
        Some(rid) => e.clone().with_meta("requestId", rid.as_str()),
        None => e.clone(),
    };
    *response.body_mut() = v03::error_body(id, &e).into();
    response
}

/// A v0.3 request states no version or `0.3`: a `1.x` header belongs to v1.0's methods.
fn check_version(parts: &Parts, method: Method) -> Result<(), A2aError> {
    let requested = parts
        .headers
        .get(VERSION)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty());
    match requested {
        None => Ok(()),
        Some(v) if v03::is_v03(v) => Ok(()),
        Some(v) => {
            let v1_name = method.operation().name();
            Err(A2aError::new(
                ErrorKind::VersionNotSupported,
                format!(
                    "{} is a v0.3 method, A2A-Version {v} asks for another version; \
                     v1.0 calls it {v1_name}",
                    method.name()
                ),
            )
            .with_meta("requestedVersion", v)
            .with_meta("supportedVersions", v03::VERSION))
        }
    }
}

async fn dispatch(
    app: &AppState,
    method: Method,
    envelope: &RpcEnvelope<'_>,
    parts: &Parts,
) -> Result<Response, A2aError> {
    let request = request(method, envelope)?;
    let extensions = params::activate_extensions(
        &parts.headers,
        &app.declared_extensions,
        &app.required_extensions,
    )?;
    let call = params::call_context(String::new(), extensions, parts);
    let op = method.operation();
    let permit = op.is_streaming().then(|| app.stream_permit()).transpose()?;
    let id = &envelope.id;
    let response = match (app.handler.dispatch(&call, request).await?, permit) {
        (Outcome::Document(doc), _) => {
            let result = result(method, &doc, app)?;
            json(StatusCode::OK, JsonRpcSuccess::new(id).wrap(&result))
        }
        (Outcome::Stream(stream), Some(permit)) => app.sse(stream, Framing::new(id), permit),
        (Outcome::Stream(_), None) => {
            return Err(A2aError::internal(format!(
                "{} answered with a stream",
                method.name()
            )));
        }
    };
    let mut response = with_extensions(response, &call.extensions);
    if !call.extensions.is_empty()
        && let Ok(v) = HeaderValue::from_str(&call.extensions.join(", "))
    {
        response.headers_mut().insert(X_EXTENSIONS, v);
    }
    Ok(response)
}

/// The v1.0 request a v0.3 method's params stand for (v0.3 has no tenants).
fn request(method: Method, envelope: &RpcEnvelope<'_>) -> Result<A2aRequest, A2aError> {
    let invalid = |e: convert::ConvertError| A2aError::new(ErrorKind::InvalidParams, e.0);
    let tenant = "";
    Ok(match method {
        Method::MessageSend => A2aRequest::SendMessage(
            convert::send_params_to_v1(tenant, envelope.params()?).map_err(invalid)?,
        ),
        Method::MessageStream => A2aRequest::SendStreamingMessage(
            convert::send_params_to_v1(tenant, envelope.params()?).map_err(invalid)?,
        ),
        Method::TasksGet => {
            A2aRequest::GetTask(convert::get_task_to_v1(tenant, envelope.params()?))
        }
        Method::TasksCancel => {
            A2aRequest::CancelTask(convert::cancel_to_v1(tenant, envelope.params()?))
        }
        Method::TasksResubscribe => {
            A2aRequest::SubscribeToTask(convert::resubscribe_to_v1(tenant, envelope.params()?))
        }
        Method::PushConfigSet => A2aRequest::CreateTaskPushNotificationConfig(
            convert::set_push_config_to_v1(tenant, envelope.params()?),
        ),
        Method::PushConfigGet => A2aRequest::GetTaskPushNotificationConfig(
            convert::push_config_ref_to_v1(tenant, envelope.params()?),
        ),
        Method::PushConfigList => A2aRequest::ListTaskPushNotificationConfigs(
            convert::list_push_configs_to_v1(tenant, envelope.params()?),
        ),
        Method::PushConfigDelete => A2aRequest::DeleteTaskPushNotificationConfig(
            convert::push_config_ref_to_v1(tenant, envelope.params()?),
        ),
        Method::GetAuthenticatedExtendedCard => {
            A2aRequest::GetExtendedAgentCard(GetExtendedAgentCardRequest::default())
        }
    })
}

/// Reads back the handler's v1.0 answer (which it serialized itself).
fn read<T: DeserializeOwned>(doc: &JsonDoc) -> Result<T, A2aError> {
    serde_json::from_slice(&doc.0)
        .map_err(|e| A2aError::internal(format!("reading the answer for v0.3: {e}")))
}

fn to_vec<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, A2aError> {
    serde_json::to_vec(value)
        .map_err(|e| A2aError::internal(format!("writing the v0.3 answer: {e}")))
}

/// The v0.3 result of a unary method, from the v1.0 answer.
fn result(method: Method, doc: &JsonDoc, app: &AppState) -> Result<Vec<u8>, A2aError> {
    match method {
        Method::MessageSend => to_vec(&convert::send_result_from_v1(&read::<SendMessageResponse>(
            doc,
        )?)),
        Method::TasksGet | Method::TasksCancel => {
            to_vec(&convert::task_from_v1(&read::<Task>(doc)?))
        }
        Method::PushConfigSet | Method::PushConfigGet => {
            to_vec(&convert::push_config_from_v1(&read::<
                TaskPushNotificationConfig,
            >(doc)?))
        }
        Method::PushConfigList => {
            let page = read::<ListTaskPushNotificationConfigsResponse>(doc)?;
            let configs: Vec<_> = page
                .configs
                .iter()
                .map(convert::push_config_from_v1)
                .collect();
            to_vec(&configs)
        }
        Method::PushConfigDelete => Ok(b"null".to_vec()),
        Method::GetAuthenticatedExtendedCard => {
            let card = read::<AgentCard>(doc)?;
            let mut served = match serde_json::to_value(&card) {
                Ok(Value::Object(m)) => m,
                _ => return Err(A2aError::internal("the extended card is not an object")),
            };
            v03::add_card_members(&mut served, &card, app.card.v03_url());
            to_vec(&served)
        }
        Method::MessageStream | Method::TasksResubscribe => Err(A2aError::internal(format!(
            "{} answered with one document",
            method.name()
        ))),
    }
}

/// Each stream event as a v0.3 JSON-RPC response carrying the request id (the envelope
/// serialized once per stream, as v1.0's).
struct Framing {
    id: Value,
    envelope: JsonRpcSuccess,
}

impl Framing {
    fn new(id: &Value) -> Self {
        Self {
            id: id.clone(),
            envelope: JsonRpcSuccess::new(id),
        }
    }
}

impl SseFraming for Framing {
    fn event(&self, item: &StreamItem, out: &mut BytesMut) {
        out.put_slice(self.envelope.prefix());
        let event = convert::event_from_v1(item.event());
        if serde_json::to_writer(out.writer(), &event).is_err() {
            out.put_slice(b"null");
        }
        out.put_slice(self.envelope.suffix());
    }

    fn error(&self, error: &A2aError, out: &mut BytesMut) {
        out.put_slice(&v03::error_body(&self.id, error));
    }
}
