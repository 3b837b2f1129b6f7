//! The JSON-RPC 2.0 binding (spec §2.2): one POST endpoint, the operations of the operation
//! table by their names, validated in this order: content type, JSON, envelope, protocol
//! version, method, params, extensions. The version comes before the method and params (ACTS
//! VER-NEG-001: an unsupported version with invalid params is -32009, not -32602); the
//! envelope comes before it only because an answer needs the request's id. A thin translator:
//! the semantics are the request handler's. A v0.3 method name (`message/send`, …) goes to
//! [`jsonrpc_v03`] once the envelope is read.

use crate::binding::decode::{self, BodyLimits, RpcEnvelope};
use crate::binding::sse::{self, SseFraming};
use crate::binding::v03::jsonrpc as jsonrpc_v03;
use crate::core::doc::JsonDoc;
use crate::core::handler::Outcome;
use crate::core::stream::StreamItem;
use crate::edge::metrics::{CallLabel, Method};
use crate::edge::request_id::RequestId;
use crate::edge::response::{
    is_json_content_type, json, jsonrpc_error, read_body, unexpected_stream, with_extensions,
};
use crate::edge::service::AppState;
use crate::edge::{call, params};
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::Response;
use bytes::{BufMut, BytesMut};
use ferry_proto::{A2aError, A2aRequest, ErrorKind, JsonRpcSuccess, Operation};
use serde_json::Value;
use std::sync::Arc;

/// Handles a POST to the JSON-RPC endpoint. Takes the request whole so that nothing of it is
/// copied before it is needed.
pub(crate) async fn handle(State(app): State<Arc<AppState>>, request: Request) -> Response {
    let null = Value::Null;
    let (parts, body) = request.into_parts();
    let rid = parts.extensions.get::<RequestId>().cloned();
    let error_response = |id: &Value, e: &A2aError| jsonrpc_error(id, e, rid.as_ref());
    let body = match read_body(body, app.config.max_body_bytes).await {
        Ok(b) => b,
        Err(e) => return error_response(&null, &e),
    };
    if !is_json_content_type(parts.headers.get(header::CONTENT_TYPE)) {
        let e = A2aError::new(
            ErrorKind::ContentTypeNotSupported,
            "the request content type must be application/json",
        );
        return error_response(&null, &e);
    }
    let envelope = match decode::jsonrpc(&body, BodyLimits::of(&app.config)) {
        Ok(envelope) => envelope,
        Err(refusal) => return error_response(&refusal.id, &refusal.error),
    };
    let (id, method) = (&envelope.id, envelope.method.as_ref());
    if let Some(v03_method) = ferry_proto::v03::Method::from_name(method) {
        if app.config.v03 {
            let (mut response, ok) =
                jsonrpc_v03::handle(&app, v03_method, &envelope, &parts, rid.as_ref()).await;
            response.extensions_mut().insert(CallLabel {
                method: Method::Operation(v03_method.operation()),
                ok,
                v03: true,
            });
            return response;
        }
        let e = A2aError::new(
            ErrorKind::MethodNotFound,
            format!("method {method:?} is A2A v0.3, which this server does not serve"),
        )
        .with_meta("method", method);
        return error_response(id, &e);
    }
    // The version before the method and its params: a request of another protocol version is
    // answered as such, whatever else is wrong with it (its id is known by now, so the error
    // can carry it).
    if let Err(e) = params::check_version(&parts.headers, parts.uri.query(), &app.config) {
        return error_response(id, &e);
    }
    let Some(op) = Operation::from_name(method) else {
        let e = A2aError::new(
            ErrorKind::MethodNotFound,
            format!("method {method:?} does not exist"),
        )
        .with_meta("method", method);
        return error_response(id, &e);
    };
    let (mut response, ok) = match dispatch(&app, op, &envelope, &parts).await {
        Ok(r) => (r, true),
        Err(e) => (error_response(id, &e), false),
    };
    response.extensions_mut().insert(CallLabel {
        method: Method::Operation(op),
        ok,
        v03: false,
    });
    response
}

async fn dispatch(
    app: &AppState,
    op: Operation,
    envelope: &RpcEnvelope<'_>,
    parts: &Parts,
) -> Result<Response, A2aError> {
    let (headers, id) = (&parts.headers, &envelope.id);
    let request = A2aRequest::decode(op, envelope)?;
    let extensions =
        params::activate_extensions(headers, &app.declared_extensions, &app.required_extensions)?;
    let call = call::call_context(request.tenant().to_owned(), extensions, parts);
    let permit = op.is_streaming().then(|| app.stream_permit()).transpose()?;
    let response = match (app.handler.dispatch(&call, request).await?, permit) {
        (Outcome::Document(doc), _) => ok_doc(id, &doc),
        (Outcome::Stream(stream), Some(permit)) => {
            sse::respond(app, stream, RpcFraming::new(id), permit)
        }
        (Outcome::Stream(_), None) => return Err(unexpected_stream(op.name())),
    };
    Ok(with_extensions(response, &call.extensions))
}

/// A success envelope around a pre-serialized result.
fn ok_doc(id: &Value, doc: &JsonDoc) -> Response {
    json(StatusCode::OK, JsonRpcSuccess::new(id).wrap(&doc.0))
}

/// Wraps each stream event in a JSON-RPC response envelope carrying the request id
/// (serialized once per stream).
struct RpcFraming {
    id: Value,
    envelope: JsonRpcSuccess,
}

impl RpcFraming {
    fn new(id: &Value) -> Self {
        Self {
            id: id.clone(),
            envelope: JsonRpcSuccess::new(id),
        }
    }
}

impl SseFraming for RpcFraming {
    fn event(&self, item: &StreamItem, out: &mut BytesMut) {
        out.put_slice(self.envelope.prefix());
        out.put_slice(&item.json());
        out.put_slice(self.envelope.suffix());
    }

    fn error(&self, error: &A2aError, out: &mut BytesMut) {
        out.put_slice(&ferry_proto::jsonrpc_error_body(&self.id, error));
    }
}
