//! The JSON-RPC 2.0 binding (spec §2.2): one POST endpoint, the operations of the operation
//! table by their names, validated in this order: content type, JSON, envelope, protocol
//! version, method, params, extensions. The version comes before the method and params (ACTS
//! VER-NEG-001: an unsupported version with invalid params is -32009, not -32602); the
//! envelope comes before it only because an answer needs the request's id. A v0.3 method name
//! (`message/send`, …) is served by v0.3's codec once the envelope is read.

use crate::binding::decode::{self, BodyLimits, RpcEnvelope};
use crate::binding::sse::{self, JsonRpcFraming};
use crate::binding::{Codec, Decoded, Refused, json_answer, refuse, run};
use crate::core::answer::Answer;
use crate::core::stream::TaskStream;
use crate::edge::front_door::StreamPermit;
use crate::edge::params;
use crate::edge::request_id::RequestId;
use crate::edge::response::{is_json_content_type, json, jsonrpc_error, read_body};
use crate::edge::service::AgentService;
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::Response;
use ferry_proto::{A2aError, A2aRequest, ErrorKind, Operation};
use serde_json::Value;
use std::sync::Arc;

/// The JSON-RPC endpoint: reads the body and its envelope, then runs the call through this
/// binding's codec, or v0.3's for a v0.3 method. Takes the request whole so that nothing of
/// it is copied before it is needed.
pub(crate) async fn handle(State(service): State<Arc<AgentService>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = match read_body(body, service.config.max_body_bytes).await {
        Ok(b) => b,
        Err(e) => return refuse(&JsonRpc, &parts, &e),
    };
    if !is_json_content_type(parts.headers.get(header::CONTENT_TYPE)) {
        let e = A2aError::new(
            ErrorKind::ContentTypeNotSupported,
            "the request content type must be application/json",
        );
        return refuse(&JsonRpc, &parts, &e);
    }
    let envelope = match decode::jsonrpc(&body, BodyLimits::of(&service.config)) {
        Ok(envelope) => envelope,
        Err(refusal) => {
            let rid = parts.extensions.get::<RequestId>();
            return refuse_with(JsonRpc.error(Some(&refusal.id), &refusal.error, rid), false);
        }
    };
    #[cfg(feature = "v03")]
    if let Some(method) = ferry_proto::v03::Method::from_name(&envelope.method) {
        return crate::binding::v03::jsonrpc::handle(&service, &parts, &envelope, method).await;
    }
    run(&JsonRpc, &service, &parts, &envelope).await
}

/// A response labelled as a call that named no operation.
fn refuse_with(response: Response, v03: bool) -> Response {
    crate::binding::labelled(response, None, false, v03)
}

/// The JSON-RPC codec: the envelope's id is what an answer carries back.
#[derive(Debug, Clone, Copy)]
pub(crate) struct JsonRpc;

impl Codec for JsonRpc {
    type Input<'a> = &'a RpcEnvelope<'a>;
    type Call = Value;

    fn decode(
        &self,
        service: &AgentService,
        parts: &Parts,
        envelope: &RpcEnvelope<'_>,
    ) -> Result<Decoded<Value>, Refused<Value>> {
        let id = &envelope.id;
        let refused = |operation, error| Refused {
            call: Some(id.clone()),
            operation,
            error,
        };
        let method = envelope.method.as_ref();
        // The version before the method and its params: a request of another protocol version
        // is answered as such, whatever else is wrong with it.
        params::check_version(&parts.headers, parts.uri.query(), &service.config)
            .map_err(|e| refused(None, e))?;
        let Some(op) = Operation::from_name(method) else {
            let e = A2aError::new(
                ErrorKind::MethodNotFound,
                format!("method {method:?} does not exist"),
            )
            .with_meta("method", method);
            return Err(refused(None, e));
        };
        let request = A2aRequest::decode(op, envelope).map_err(|e| refused(Some(op), e))?;
        Ok(Decoded {
            call: id.clone(),
            request,
        })
    }

    fn encode(
        &self,
        _service: &AgentService,
        id: &Value,
        answer: Answer,
    ) -> Result<Response, A2aError> {
        let mut out = Vec::with_capacity(1024);
        write_success_prefix(&mut out, id);
        json_answer(&answer, &mut out)?;
        out.push(b'}');
        Ok(json(StatusCode::OK, out))
    }

    fn stream(
        &self,
        service: &AgentService,
        id: Value,
        stream: TaskStream,
        permit: StreamPermit,
    ) -> Response {
        sse::respond(service, stream, JsonRpcFraming::v1(id), permit)
    }

    fn error(&self, id: Option<&Value>, error: &A2aError, rid: Option<&RequestId>) -> Response {
        jsonrpc_error(id.unwrap_or(&Value::Null), error, rid)
    }
}

/// `{"jsonrpc":"2.0","id":…,"result":`, written straight into the answer's buffer.
fn write_success_prefix(out: &mut Vec<u8>, id: &Value) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    if serde_json::to_writer(&mut *out, id).is_err() {
        out.extend_from_slice(b"null");
    }
    out.extend_from_slice(b",\"result\":");
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_proto::JsonRpcSuccess;

    #[test]
    fn the_prefix_is_the_envelopes() {
        for id in [serde_json::json!(7), serde_json::json!("a\"b"), Value::Null] {
            let mut out = Vec::new();
            write_success_prefix(&mut out, &id);
            assert_eq!(out, JsonRpcSuccess::new(&id).prefix());
        }
    }
}
