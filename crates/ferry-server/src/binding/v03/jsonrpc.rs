//! The v0.3 JSON-RPC binding: `message/send` and the other v0.3 methods at the same endpoint
//! as v1.0's, translated by `ferry_proto::v03` into the operations of the one request
//! handler and back. Same limits, front door, store and extensions as v1.0; only the shapes
//! differ. The envelope, content type and body limits were checked by [`super::jsonrpc`].

use crate::binding::V03_JSONRPC_EVENTS;
use crate::binding::decode::RpcEnvelope;
use crate::binding::sse::{self, JsonRpcFraming};
use crate::binding::v03::{V03Answer, check_version, json_bytes, to_vec, with_x_extensions};
use crate::binding::{Codec, Decoded, Refused, labelled, run};
use crate::core::answer::Answer;
use crate::core::stream::{StreamItem, TaskStream};
use crate::edge::front_door::StreamPermit;
use crate::edge::request_id::RequestId;
use crate::edge::response::{json, jsonrpc_error, jsonrpc_error_as, with_extensions};
use crate::edge::service::AgentService;
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use bytes::Bytes;
use ferry_proto::v03::{self, Method, convert};
use ferry_proto::{A2aError, A2aRequest, ErrorKind, GetExtendedAgentCardRequest, JsonRpcSuccess};
use serde_json::Value;

/// Answers a v0.3 method at the JSON-RPC endpoint (whose body, type and envelope were read).
pub(crate) async fn handle(
    service: &AgentService,
    parts: &Parts,
    envelope: &RpcEnvelope<'_>,
    method: Method,
) -> Response {
    if !service.config.serves_v03() {
        let name = method.name();
        let e = A2aError::new(
            ErrorKind::MethodNotFound,
            format!("method {name:?} is A2A v0.3, which this server does not serve"),
        )
        .with_meta("method", name);
        let rid = parts.extensions.get::<RequestId>();
        return labelled(jsonrpc_error(&envelope.id, &e, rid), None, false, false);
    }
    run(&JsonRpcV03, service, parts, (envelope, method)).await
}

/// The v0.3 JSON-RPC codec: an answer carries the request's id back, in v0.3's shapes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct JsonRpcV03;

/// What a v0.3 call's answer needs: the request's id and its method, and whether it is
/// answered in v0.3's shapes (a call refused for stating another version is answered in
/// v1.0's).
#[derive(Debug)]
pub(crate) struct Call {
    id: Value,
    method: Method,
    in_v03: bool,
}

impl Codec for JsonRpcV03 {
    type Input<'a> = (&'a RpcEnvelope<'a>, Method);
    type Call = Call;
    const V03: bool = true;

    fn decode(
        &self,
        _service: &AgentService,
        parts: &Parts,
        (envelope, method): (&RpcEnvelope<'_>, Method),
    ) -> Result<Decoded<Call>, Refused<Call>> {
        let call = |in_v03| Call {
            id: envelope.id.clone(),
            method,
            in_v03,
        };
        // A request that states a v1.0 version is answered as v1.0 answers.
        if let Err(error) = check_version(parts, method) {
            return Err(Refused {
                call: Some(call(false)),
                operation: None,
                error,
            });
        }
        match request(method, envelope) {
            Ok(request) => Ok(Decoded {
                call: call(true),
                request,
            }),
            Err(error) => Err(Refused {
                call: Some(call(true)),
                operation: Some(method.operation()),
                error,
            }),
        }
    }

    fn encode(
        &self,
        service: &AgentService,
        call: &Call,
        answer: Answer,
    ) -> Result<Response, A2aError> {
        let result = result(super::answer(call.method, answer, service)?)?;
        Ok(json(
            StatusCode::OK,
            JsonRpcSuccess::new(&call.id).wrap(&result),
        ))
    }

    fn stream(
        &self,
        service: &AgentService,
        call: Call,
        stream: TaskStream,
        permit: StreamPermit,
    ) -> Response {
        sse::respond(
            service,
            stream,
            JsonRpcFraming::new(call.id, v03_event, v03::error_body),
            permit,
        )
    }

    /// A v0.3 JSON-RPC error: the status and headers v1.0's would have, v0.3's `error`
    /// object; before the call was read (a version v0.3 does not speak), v1.0's own error.
    fn error(&self, call: Option<&Call>, error: &A2aError, rid: Option<&RequestId>) -> Response {
        match call {
            Some(call) if call.in_v03 => jsonrpc_error_as(&call.id, error, rid, v03::error_body),
            Some(call) => jsonrpc_error(&call.id, error, rid),
            None => jsonrpc_error(&Value::Null, error, rid),
        }
    }

    fn echo(&self, response: Response, active: &[String]) -> Response {
        with_x_extensions(with_extensions(response, active), active)
    }
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
fn result(answer: V03Answer) -> Result<Vec<u8>, A2aError> {
    match answer {
        V03Answer::Sent(event) => to_vec(&event),
        V03Answer::Task(task) => to_vec(&task),
        V03Answer::Card(card) => to_vec(&card),
        V03Answer::PushConfig(config) => to_vec(&config),
        V03Answer::PushConfigs(configs) => to_vec(&configs),
        V03Answer::Deleted => Ok(b"null".to_vec()),
    }
}

/// A stream event in v0.3's form (made once per event for every subscriber).
fn v03_event(item: &StreamItem) -> Bytes {
    item.encoded(V03_JSONRPC_EVENTS, |event| {
        json_bytes(&convert::event_from_v1(event))
    })
}
