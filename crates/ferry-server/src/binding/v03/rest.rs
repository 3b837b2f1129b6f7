//! The v0.3 HTTP+JSON binding: `/v1/message:send` and the other v0.3 routes under the REST
//! base path, with v0.3's ProtoJSON bodies (`ferry_proto::v03::rest`), translated into the
//! operations of the one request handler and back. Same limits, front door, store and
//! extensions as v1.0; errors are v1.0's AIP-193 bodies with the same HTTP statuses (as the
//! official SDKs serve v0.3 REST; v0.3 clients read the status).

use crate::binding::V03_REST_EVENTS;
use crate::binding::decode::{self, BodyLimits};
use crate::binding::rest_query::{is_key, page_query, parse_int, query_pairs, segments};
use crate::binding::sse::{self, SseFraming};
use crate::binding::v03::{V03Answer, json_bytes, to_vec, with_x_extensions};
use crate::binding::{Codec, Decoded, Refused, run};
use crate::core::answer::Answer;
use crate::core::stream::{StreamItem, TaskStream};
use crate::edge::front_door::StreamPermit;
use crate::edge::params::states_v03;
use crate::edge::request_id::RequestId;
use crate::edge::response::{is_json_content_type, json, rest_error, with_extensions};
use crate::edge::service::AgentService;
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::Response;
use bytes::{BufMut, Bytes, BytesMut};
use ferry_proto::v03::rest::{self, Route};
use ferry_proto::v03::{Method, convert, wire};
use ferry_proto::{A2aError, A2aRequest, ErrorKind, ErrorTable, GetExtendedAgentCardRequest};
use serde_json::Value;

/// The v0.3 route a request names, when it speaks v0.3 (no `A2A-Version`, or `0.3`).
pub(crate) fn route_of(parts: &Parts, rest_path: &str) -> Option<Route> {
    let segs = segments(rest_path).ok()?;
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    let route = rest::route(parts.method.as_str(), &segs)?;
    states_v03(&parts.headers).then_some(route)
}

/// Answers a v0.3 REST request (its body read).
pub(crate) async fn handle(
    service: &AgentService,
    parts: &Parts,
    route: Route,
    body: Bytes,
) -> Response {
    let codec = RestV03(service.config.error_table);
    run(&codec, service, parts, (route, body)).await
}

/// The v0.3 REST codec: v0.3's ProtoJSON, v1.0's AIP-193 errors.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RestV03(ErrorTable);

impl Codec for RestV03 {
    type Input<'a> = (Route, Bytes);
    type Call = Method;
    const V03: bool = true;

    fn decode(
        &self,
        service: &AgentService,
        parts: &Parts,
        (route, body): (Route, Bytes),
    ) -> Result<Decoded<Method>, Refused<Method>> {
        let method = route.method;
        let refused = |error| Refused {
            call: Some(method),
            operation: Some(method.operation()),
            error,
        };
        if parts.method == axum::http::Method::POST
            && !body.trim_ascii().is_empty()
            && !is_json_content_type(parts.headers.get(header::CONTENT_TYPE))
        {
            return Err(refused(A2aError::new(
                ErrorKind::UnsupportedMediaType,
                "the request content type must be application/json",
            )));
        }
        let query = parts.uri.query().unwrap_or_default();
        let limits = BodyLimits::of(&service.config);
        let request = request(route, query, &body, limits).map_err(refused)?;
        Ok(Decoded {
            call: method,
            request,
        })
    }

    fn encode(
        &self,
        service: &AgentService,
        method: &Method,
        answer: Answer,
    ) -> Result<Response, A2aError> {
        let answer = super::answer(*method, answer, service)?;
        Ok(json(StatusCode::OK, to_vec(&proto_json(answer))?))
    }

    fn stream(
        &self,
        service: &AgentService,
        _method: Method,
        stream: TaskStream,
        permit: StreamPermit,
    ) -> Response {
        sse::respond(service, stream, Framing(self.0), permit)
    }

    fn error(&self, _call: Option<&Method>, error: &A2aError, rid: Option<&RequestId>) -> Response {
        rest_error(error, self.0, rid)
    }

    fn echo(&self, response: Response, active: &[String]) -> Response {
        with_x_extensions(with_extensions(response, active), active)
    }
}

/// The v1.0 request a v0.3 route stands for (v0.3 has no tenants).
fn request(
    route: Route,
    query: &str,
    body: &[u8],
    limits: BodyLimits,
) -> Result<A2aRequest, A2aError> {
    let invalid = |e: convert::ConvertError| A2aError::new(ErrorKind::InvalidParams, e.0);
    let body_value = || -> Result<Value, A2aError> { decode::object::<Value>(body, limits) };
    let tenant = "";
    let task = |id: String| wire::TaskIdParams { id, metadata: None };
    Ok(match route.method {
        Method::MessageSend | Method::MessageStream => {
            let params = rest::send_request_from_rest(body_value()?).map_err(invalid)?;
            let request = convert::send_params_to_v1(tenant, params).map_err(invalid)?;
            if route.method == Method::MessageSend {
                A2aRequest::SendMessage(request)
            } else {
                A2aRequest::SendStreamingMessage(request)
            }
        }
        Method::TasksGet => {
            let history_length = query_pairs(query)
                .find(|(k, _)| is_key(k, "historyLength"))
                .map(|(_, v)| parse_int("historyLength", &v))
                .transpose()?;
            A2aRequest::GetTask(convert::get_task_to_v1(
                tenant,
                wire::TaskQueryParams {
                    id: route.task_id,
                    history_length,
                    metadata: None,
                },
            ))
        }
        Method::TasksCancel => {
            A2aRequest::CancelTask(convert::cancel_to_v1(tenant, task(route.task_id)))
        }
        Method::TasksResubscribe => {
            A2aRequest::SubscribeToTask(convert::resubscribe_to_v1(tenant, task(route.task_id)))
        }
        Method::PushConfigSet => {
            let config =
                rest::push_config_from_rest(&route.task_id, body_value()?).map_err(invalid)?;
            A2aRequest::CreateTaskPushNotificationConfig(convert::set_push_config_to_v1(
                tenant, config,
            ))
        }
        Method::PushConfigGet | Method::PushConfigDelete => {
            let reference = convert::push_config_ref_to_v1(
                tenant,
                wire::PushConfigParams {
                    id: route.task_id,
                    push_notification_config_id: Some(route.config_id),
                    metadata: None,
                },
            );
            if route.method == Method::PushConfigGet {
                A2aRequest::GetTaskPushNotificationConfig(reference)
            } else {
                A2aRequest::DeleteTaskPushNotificationConfig(reference)
            }
        }
        Method::PushConfigList => {
            let mut list = convert::list_push_configs_to_v1(tenant, task(route.task_id));
            page_query(query, &mut list)?;
            A2aRequest::ListTaskPushNotificationConfigs(list)
        }
        Method::GetAuthenticatedExtendedCard => {
            A2aRequest::GetExtendedAgentCard(GetExtendedAgentCardRequest::default())
        }
    })
}

/// A unary answer in v0.3's ProtoJSON (the extended card in its JSON form, as the official
/// SDKs serve `/v1/card`).
fn proto_json(answer: V03Answer) -> Value {
    match answer {
        V03Answer::Sent(event) => rest::event_to_rest(&event),
        V03Answer::Task(task) => rest::task_to_rest(&task),
        V03Answer::Card(card) => Value::Object(card),
        V03Answer::PushConfig(config) => rest::push_config_to_rest(&config),
        V03Answer::PushConfigs(configs) => rest::push_configs_to_rest(&configs, ""),
        V03Answer::Deleted => Value::Object(serde_json::Map::new()),
    }
}

/// Stream events as v0.3 ProtoJSON `StreamResponse`s; errors as AIP-193 bodies.
struct Framing(ErrorTable);

impl SseFraming for Framing {
    fn event(&self, item: &StreamItem, out: &mut BytesMut) {
        out.put_slice(&item.encoded(V03_REST_EVENTS, |event| {
            json_bytes(&rest::event_to_rest(&convert::event_from_v1(event)))
        }));
    }

    fn error(&self, error: &A2aError, out: &mut BytesMut) {
        out.put_slice(&ferry_proto::rest_error_body(error, self.0));
    }
}
