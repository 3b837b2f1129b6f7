//! The v0.3 JSON-RPC binding: `message/send` and the other v0.3 methods at the same endpoint
//! as v1.0's, translated by `ferry_proto::v03` into the operations of the one request
//! handler and back. Same limits, front door, store and extensions as v1.0; only the shapes
//! differ. The envelope, content type and body limits were checked by [`super::jsonrpc`].

use crate::binding::decode::RpcEnvelope;
use crate::binding::sse::{self, SseFraming};
use crate::binding::v03::{Answer, answer, check_version, to_vec, with_x_extensions};
use crate::core::handler::Outcome;
use crate::core::stream::StreamItem;
use crate::edge::request_id::RequestId;
use crate::edge::response::{
    json, jsonrpc_error, jsonrpc_error_as, unexpected_stream, with_extensions,
};
use crate::edge::service::AppState;
use crate::edge::{call, params};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use bytes::{BufMut, BytesMut};
use ferry_proto::v03::{self, Method, convert};
use ferry_proto::{A2aError, A2aRequest, ErrorKind, GetExtendedAgentCardRequest, JsonRpcSuccess};
use serde_json::Value;

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
    jsonrpc_error_as(id, e, rid, v03::error_body)
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
    let call = call::call_context(String::new(), extensions, parts);
    let op = method.operation();
    let permit = op.is_streaming().then(|| app.stream_permit()).transpose()?;
    let id = &envelope.id;
    let response = match (app.handler.dispatch(&call, request).await?, permit) {
        (Outcome::Document(doc), _) => {
            let result = result(answer(method, &doc, app)?)?;
            json(StatusCode::OK, JsonRpcSuccess::new(id).wrap(&result))
        }
        (Outcome::Stream(stream), Some(permit)) => {
            sse::respond(app, stream, Framing::new(id), permit)
        }
        (Outcome::Stream(_), None) => return Err(unexpected_stream(method.name())),
    };
    let response = with_extensions(response, &call.extensions);
    Ok(with_x_extensions(response, &call.extensions))
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

/// A unary answer as v0.3 JSON-RPC's `result`.
fn result(answer: Answer) -> Result<Vec<u8>, A2aError> {
    match answer {
        Answer::Sent(event) => to_vec(&event),
        Answer::Task(task) => to_vec(&task),
        Answer::PushConfig(config) => to_vec(&config),
        // v0.3's JSON-RPC list has no pages: the array alone.
        Answer::PushConfigs(configs, _) => to_vec(&configs),
        Answer::Deleted => Ok(b"null".to_vec()),
        Answer::Card(card) => to_vec(&card),
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
