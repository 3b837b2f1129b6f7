//! The gRPC binding (a2a.proto `lf.a2a.v1.A2AService`, spec §2.4): every operation of the
//! operation table at its gRPC path, served over HTTP/2 on the same port as the HTTP bindings
//! (cleartext h2c, told apart by the connection preface; routed by path), behind the same
//! front door.
//!
//! A thin translator, like the other bindings: the message types are generated from our
//! `a2a.proto` (in `ferry-proto`), the methods come from the operation table, and the
//! semantics are the request handler's. Validated in this order: the `a2a-version` metadata
//! (before the message is even read: a request of another protocol version is answered as
//! such, whatever else is wrong with it), the message (size limit, protobuf, then the A2A
//! rules of `ferry-proto`'s conversions), the `a2a-extensions` metadata.
//!
//! Errors are `google.rpc.Status` with the spec's gRPC code and an `ErrorInfo` (see
//! [`crate::binding::grpc::status`]). Streams end with OK after the task's last event; when the server shuts down
//! they end with UNAVAILABLE (`SHUTTING_DOWN`), the code a gRPC client retries on.

mod codec;
mod events;
pub(crate) mod status;

use crate::binding::grpc::codec::A2aCodec;
use crate::core::call::CallContext;
use crate::core::doc::JsonDoc;
use crate::core::handler::Outcome;
use crate::edge::metrics::{CallLabel, Method};
use crate::edge::request_id::ClientAddr;
use crate::edge::service::AppState;
use crate::edge::{call, params};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::HeaderValue;
use axum::response::Response;
use ferry_proto::grpc::{GrpcOperation, pb};
use ferry_proto::{A2aError, A2aRequest, ErrorKind, ErrorTable, Operation};
use std::sync::Arc;
use tonic::server::Grpc;

/// The route of every method: `/lf.a2a.v1.A2AService/{method}`.
pub(crate) const ROUTE: &str = "/lf.a2a.v1.A2AService/{method}";

/// Handles one gRPC call.
pub(crate) async fn handle(State(app): State<Arc<AppState>>, request: Request) -> Response {
    let table = app.config.error_table;
    let Some(op) = Operation::from_grpc_path(request.uri().path()) else {
        let status = tonic::Status::unimplemented(format!(
            "{} is not a method of {}",
            request.uri().path(),
            ferry_proto::grpc::SERVICE_NAME
        ));
        return status::response_of(status);
    };
    let limit = app.config.max_body_bytes;
    let mut response = if let Err(e) = params::check_version(request.headers(), None, &app.config) {
        status::response_of(status::status_of(&e, table))
    } else {
        too_large_as_a2a(call(app, op, request).await, limit, table)
    };
    // A failed call answers "trailers-only": its status is in the headers.
    let ok = response
        .headers()
        .get("grpc-status")
        .is_none_or(|s| s.as_bytes() == b"0");
    response.extensions_mut().insert(CallLabel {
        method: Method::Operation(op),
        ok,
        v03: false,
    });
    response
}

/// tonic refuses a message over the size limit itself, with OUT_OF_RANGE and no details
/// (no A2A error maps to OUT_OF_RANGE, so that code means this); the answer is made an A2A
/// error like the other bindings' 413.
fn too_large_as_a2a(response: Response, limit: usize, table: ErrorTable) -> Response {
    let out_of_range = (tonic::Code::OutOfRange as i32).to_string();
    if response
        .headers()
        .get("grpc-status")
        .is_none_or(|s| s.as_bytes() != out_of_range.as_bytes())
    {
        return response;
    }
    let error = A2aError::new(
        ErrorKind::PayloadTooLarge,
        format!("the request message is larger than the limit of {limit} bytes"),
    )
    .with_meta("limitBytes", limit.to_string());
    status::response_of(status::status_of(&error, table))
}

async fn call(app: Arc<AppState>, op: Operation, request: Request) -> Response {
    use Operation as Op;
    use ferry_proto::ops;
    let app = &app;
    match op {
        Op::SendMessage => unary::<ops::SendMessage>(app, request, A2aRequest::SendMessage).await,
        Op::SendStreamingMessage => {
            let wrap = A2aRequest::SendStreamingMessage;
            streaming::<ops::SendStreamingMessage>(app, request, wrap).await
        }
        Op::GetTask => unary::<ops::GetTask>(app, request, A2aRequest::GetTask).await,
        Op::ListTasks => unary::<ops::ListTasks>(app, request, A2aRequest::ListTasks).await,
        Op::CancelTask => unary::<ops::CancelTask>(app, request, A2aRequest::CancelTask).await,
        Op::SubscribeToTask => {
            let wrap = A2aRequest::SubscribeToTask;
            streaming::<ops::SubscribeToTask>(app, request, wrap).await
        }
        Op::CreateTaskPushNotificationConfig => {
            let wrap = A2aRequest::CreateTaskPushNotificationConfig;
            unary::<ops::CreateTaskPushNotificationConfig>(app, request, wrap).await
        }
        Op::GetTaskPushNotificationConfig => {
            let wrap = A2aRequest::GetTaskPushNotificationConfig;
            unary::<ops::GetTaskPushNotificationConfig>(app, request, wrap).await
        }
        Op::ListTaskPushNotificationConfigs => {
            let wrap = A2aRequest::ListTaskPushNotificationConfigs;
            unary::<ops::ListTaskPushNotificationConfigs>(app, request, wrap).await
        }
        Op::DeleteTaskPushNotificationConfig => {
            let wrap = A2aRequest::DeleteTaskPushNotificationConfig;
            unary::<ops::DeleteTaskPushNotificationConfig>(app, request, wrap).await
        }
        Op::GetExtendedAgentCard => {
            let wrap = A2aRequest::GetExtendedAgentCard;
            unary::<ops::GetExtendedAgentCard>(app, request, wrap).await
        }
    }
}

/// How an operation's request becomes the core's request (its `A2aRequest` variant).
type Wrap<O> = fn(<O as ferry_proto::OperationType>::Request) -> A2aRequest;

/// The handler's answer (a ProtoJSON document) as `O`'s response message.
fn answer<O: GrpcOperation>(doc: &JsonDoc) -> Result<O::ResponseMessage, A2aError> {
    let value: O::Response = doc.parse().map_err(|e| {
        A2aError::internal(format!("the answer does not read back as its type: {e}"))
    })?;
    Ok(O::response_message(&value))
}

/// The codec for one call, with the request size limit of the HTTP bindings.
fn codec<Encode, Decode>(app: &AppState) -> Grpc<A2aCodec<Encode, Decode>>
where
    Encode: prost::Message + Send + 'static,
    Decode: prost::Message + prost::Name + Default + Send + 'static,
{
    Grpc::new(A2aCodec::new(app.config.error_table))
        .max_decoding_message_size(app.config.max_body_bytes)
        .max_encoding_message_size(usize::MAX)
}

/// The core's view of one call: the decoded request, its tenant, the activated extensions
/// and the client's address.
fn prepare<O: GrpcOperation>(
    app: &AppState,
    request: tonic::Request<O::RequestMessage>,
    wrap: Wrap<O>,
) -> Result<(CallContext, A2aRequest), A2aError> {
    let (metadata, extensions, message) = request.into_parts();
    let request = wrap(O::request(message)?);
    let headers = metadata.into_headers();
    let active =
        params::activate_extensions(&headers, &app.declared_extensions, &app.required_extensions)?;
    let call = CallContext {
        tenant: request.tenant().to_owned(),
        extensions: active,
        caller: call::caller_of(&extensions),
        access: call::access_of(&extensions),
        client: extensions.get::<ClientAddr>().map(|c| c.0.ip()),
        resume_after: None,
    };
    Ok((call, request))
}

/// Echoes the activated extensions in the response metadata (`a2a-extensions`).
fn echo_extensions(metadata: &mut tonic::metadata::MetadataMap, active: &[String]) {
    if active.is_empty() {
        return;
    }
    if let Ok(value) = HeaderValue::from_str(&active.join(", ")) {
        metadata.as_mut().insert(params::EXTENSIONS, value);
    }
}

async fn unary<O: GrpcOperation>(app: &Arc<AppState>, request: Request, wrap: Wrap<O>) -> Response {
    let mut grpc = codec::<O::ResponseMessage, O::RequestMessage>(app);
    let table = app.config.error_table;
    let app = app.clone();
    let service = tower::service_fn(move |request: tonic::Request<O::RequestMessage>| {
        let app = app.clone();
        async move {
            let answer = async {
                let (call, request) = prepare::<O>(&app, request, wrap)?;
                match app.handler.dispatch(&call, request).await? {
                    Outcome::Document(doc) => Ok((answer::<O>(&doc)?, call.extensions)),
                    Outcome::Stream(_) => {
                        Err(A2aError::internal("a unary call answered with a stream"))
                    }
                }
            };
            let (message, active) = answer.await.map_err(|e| status::status_of(&e, table))?;
            let mut response = tonic::Response::new(message);
            echo_extensions(response.metadata_mut(), &active);
            Ok::<_, tonic::Status>(response)
        }
    });
    grpc.unary(service, request).await.map(Body::new)
}

async fn streaming<O>(app: &Arc<AppState>, request: Request, wrap: Wrap<O>) -> Response
where
    O: GrpcOperation<ResponseMessage = pb::StreamResponse>,
{
    let mut grpc = codec::<pb::StreamResponse, O::RequestMessage>(app);
    let table = app.config.error_table;
    let app = app.clone();
    let service = tower::service_fn(move |request: tonic::Request<O::RequestMessage>| {
        let app = app.clone();
        async move {
            let answer = async {
                let (call, request) = prepare::<O>(&app, request, wrap)?;
                let permit = app.stream_permit()?;
                match app.handler.dispatch(&call, request).await? {
                    Outcome::Stream(stream) => Ok((stream, permit, call.extensions)),
                    Outcome::Document(_) => Err(A2aError::internal(
                        "a streaming call answered with a document",
                    )),
                }
            };
            let (stream, permit, active) =
                answer.await.map_err(|e| status::status_of(&e, table))?;
            let events = events::messages(stream, app.closing.subscribe(), permit, table);
            let mut response = tonic::Response::new(events);
            echo_extensions(response.metadata_mut(), &active);
            Ok::<_, tonic::Status>(response)
        }
    });
    grpc.server_streaming(service, request).await.map(Body::new)
}
