//! The calls of [`super::calls`] played over gRPC: the JSON params are read as the
//! operation's request type (what a gRPC client builds), sent as its protobuf message at the
//! operation's gRPC path, and the answer comes back as the same ProtoJSON the HTTP bindings
//! give, so one scenario checks all three. Errors become a [`WireError`] whose body mirrors a
//! REST error: the status code, its name, the message and the details (`ErrorInfo`,
//! `BadRequest`, `RetryInfo`) as JSON.

use super::calls::{A2aStream, Answer, Auth, Binding, ServiceParams};
use super::errors::WireError;
use super::server::TestServer;
use ferry_proto::grpc::{GrpcOperation, pb};
use ferry_proto::{StreamResponse, ops};
use reqwest::header::HeaderMap;
use serde_json::{Value, json};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::metadata::{MetadataMap, MetadataValue};
use tonic::{Code, Status};
use tonic_prost::ProstCodec;
use tonic_types::StatusExt;

/// A unary call of `method` over gRPC.
pub(super) async fn unary(
    srv: &TestServer,
    method: &str,
    params: Value,
    sp: ServiceParams<'_>,
) -> Answer {
    match method {
        "SendMessage" => call::<ops::SendMessage>(srv, params, sp).await,
        "GetTask" => call::<ops::GetTask>(srv, params, sp).await,
        "ListTasks" => call::<ops::ListTasks>(srv, params, sp).await,
        "CancelTask" => call::<ops::CancelTask>(srv, params, sp).await,
        "CreateTaskPushNotificationConfig" => {
            call::<ops::CreateTaskPushNotificationConfig>(srv, params, sp).await
        }
        "GetTaskPushNotificationConfig" => {
            call::<ops::GetTaskPushNotificationConfig>(srv, params, sp).await
        }
        "ListTaskPushNotificationConfigs" => {
            call::<ops::ListTaskPushNotificationConfigs>(srv, params, sp).await
        }
        "DeleteTaskPushNotificationConfig" => {
            call::<ops::DeleteTaskPushNotificationConfig>(srv, params, sp).await
        }
        "GetExtendedAgentCard" => call::<ops::GetExtendedAgentCard>(srv, params, sp).await,
        other => panic!("{other} is not a unary gRPC method"),
    }
}

/// Opens a stream of `method` over gRPC.
pub(super) async fn stream(
    srv: &TestServer,
    method: &str,
    params: Value,
    sp: ServiceParams<'_>,
) -> (HeaderMap, Result<A2aStream, WireError>) {
    match method {
        "SendStreamingMessage" => open::<ops::SendStreamingMessage>(srv, params, sp).await,
        "SubscribeToTask" => open::<ops::SubscribeToTask>(srv, params, sp).await,
        other => panic!("{other} is not a streaming gRPC method"),
    }
}

/// `params` as `O`'s request message: what a gRPC client would have built from them.
fn request<O: GrpcOperation>(
    params: Value,
    sp: ServiceParams<'_>,
    srv: &TestServer,
) -> tonic::Request<O::RequestMessage> {
    let params = if params.is_null() { json!({}) } else { params };
    let typed: O::Request = serde_json::from_value(params.clone()).unwrap_or_else(|e| {
        panic!(
            "{} params that protobuf cannot say ({e}): {params}",
            O::OPERATION.name()
        )
    });
    let mut request = tonic::Request::new(O::request_message(&typed));
    *request.metadata_mut() = metadata(sp, srv);
    request
}

/// The service parameters as metadata. The HTTP-only ones (a query string, `Last-Event-ID`)
/// have no gRPC form: a scenario that uses them is not a gRPC scenario.
fn metadata(sp: ServiceParams<'_>, srv: &TestServer) -> MetadataMap {
    assert!(sp.query_version.is_none(), "gRPC has no query string");
    assert!(sp.last_event_id.is_none(), "gRPC has no Last-Event-ID");
    let mut md = MetadataMap::new();
    let value = |v: &str| MetadataValue::try_from(v).expect("an ASCII metadata value");
    match (sp.raw_version, sp.version) {
        (Some(bytes), _) => {
            let raw = MetadataValue::try_from(bytes).expect("metadata bytes");
            md.insert("a2a-version", raw);
        }
        (None, Some(v)) => {
            md.insert("a2a-version", value(v));
        }
        (None, None) => {}
    }
    for line in sp.extensions {
        md.append("a2a-extensions", value(line));
    }
    let bearer = srv.token().map(|t| format!("Bearer {t}"));
    let authorization = match sp.auth {
        Auth::ServerToken => bearer.as_deref(),
        Auth::Anonymous => None,
        Auth::Header(v) => Some(v),
    };
    if let Some(v) = authorization {
        md.insert("authorization", value(v));
    }
    let mut headers = md.into_headers();
    for (name, v) in sp.headers {
        let name = reqwest::header::HeaderName::from_bytes(name.to_ascii_lowercase().as_bytes())
            .expect("a header name");
        headers.append(name, v.parse().expect("a header value"));
    }
    MetadataMap::from_headers(headers)
}

async fn client(srv: &TestServer) -> tonic::client::Grpc<tonic::transport::Channel> {
    let mut grpc = tonic::client::Grpc::new(srv.grpc_channel());
    grpc.ready().await.expect("the gRPC channel connects");
    grpc
}

async fn call<O: GrpcOperation>(srv: &TestServer, params: Value, sp: ServiceParams<'_>) -> Answer {
    let request = request::<O>(params, sp, srv);
    let path = PathAndQuery::from_static(O::OPERATION.grpc_path());
    let codec = ProstCodec::<O::RequestMessage, O::ResponseMessage>::default();
    match client(srv).await.unary(request, path, codec).await {
        Ok(response) => {
            let (metadata, message, _) = response.into_parts();
            let typed = O::response(message).unwrap_or_else(|e| {
                panic!("the {} answer is not valid A2A: {e}", O::OPERATION.name())
            });
            Answer {
                headers: metadata.into_headers(),
                result: Ok(serde_json::to_value(&typed).expect("the answer serializes")),
            }
        }
        Err(status) => Answer {
            headers: status.metadata().clone().into_headers(),
            result: Err(wire_error(&status, false)),
        },
    }
}

async fn open<O>(
    srv: &TestServer,
    params: Value,
    sp: ServiceParams<'_>,
) -> (HeaderMap, Result<A2aStream, WireError>)
where
    O: GrpcOperation<ResponseMessage = pb::StreamResponse>,
{
    let request = request::<O>(params, sp, srv);
    let path = PathAndQuery::from_static(O::OPERATION.grpc_path());
    let codec = ProstCodec::<O::RequestMessage, pb::StreamResponse>::default();
    match client(srv)
        .await
        .server_streaming(request, path, codec)
        .await
    {
        Ok(response) => {
            let headers = response.metadata().clone().into_headers();
            (headers, Ok(A2aStream::grpc(response.into_inner())))
        }
        Err(status) => (
            status.metadata().clone().into_headers(),
            Err(wire_error(&status, false)),
        ),
    }
}

/// The next message of a gRPC stream as ProtoJSON, or its ending status as an error.
pub(super) async fn next_event(
    messages: &mut tonic::Streaming<pb::StreamResponse>,
) -> Option<Result<Value, WireError>> {
    match messages.message().await {
        Ok(Some(message)) => {
            let event = StreamResponse::try_from(message)
                .unwrap_or_else(|e| panic!("a stream event is not valid A2A: {e}"));
            Some(Ok(
                serde_json::to_value(&event).expect("the event serializes")
            ))
        }
        Ok(None) => None,
        Err(status) => Some(Err(wire_error(&status, true))),
    }
}

/// A status as the error body the other bindings' errors have: `code` (the gRPC code's
/// number), `status` (its name), `message`, and `details` in their JSON form.
pub(crate) fn wire_error(status: &Status, in_stream: bool) -> WireError {
    let mut details = Vec::new();
    if let Some(info) = status.get_details_error_info() {
        details.push(json!({
            "@type": ferry_proto::ERROR_INFO_TYPE,
            "reason": info.reason,
            "domain": info.domain,
            "metadata": info.metadata,
        }));
    }
    if let Some(bad) = status.get_details_bad_request() {
        let violations: Vec<Value> = bad
            .field_violations
            .iter()
            .map(|v| json!({"field": v.field, "description": v.description}))
            .collect();
        details
            .push(json!({"@type": ferry_proto::BAD_REQUEST_TYPE, "fieldViolations": violations}));
    }
    if let Some(retry) = status.get_details_retry_info() {
        let secs = retry.retry_delay.map_or(0, |d| d.as_secs());
        details.push(json!({"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": format!("{secs}s")}));
    }
    WireError {
        binding: Binding::Grpc,
        http_status: 200,
        in_stream,
        body: json!({
            "code": status.code() as i32,
            "status": code_name(status.code()),
            "message": status.message(),
            "details": details,
        }),
    }
}

/// The `google.rpc.Code` name of `code`.
pub(crate) fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

impl TestServer {
    /// Sends `body` as the message of `method` (bytes a protobuf encoder may never write),
    /// with `version` as `a2a-version` and the server's token; the answer's bytes or error.
    pub(crate) async fn grpc_raw(
        &self,
        method: &str,
        body: &[u8],
        version: Option<&str>,
    ) -> Result<Vec<u8>, WireError> {
        let path = format!("/lf.a2a.v1.A2AService/{method}");
        self.grpc_raw_at(&path, body, version).await
    }

    /// [`TestServer::grpc_raw`] at any path.
    pub(crate) async fn grpc_raw_at(
        &self,
        path: &str,
        body: &[u8],
        version: Option<&str>,
    ) -> Result<Vec<u8>, WireError> {
        let sp = ServiceParams {
            version,
            ..ServiceParams::default()
        };
        let mut request = tonic::Request::new(body.to_vec());
        *request.metadata_mut() = metadata(sp, self);
        let path = PathAndQuery::try_from(path).expect("a path");
        client(self)
            .await
            .unary(request, path, RawCodec)
            .await
            .map(tonic::Response::into_inner)
            .map_err(|s| wire_error(&s, false))
    }
}

/// A codec of bytes as they are: the message sent is the given bytes, the answer all of its.
#[derive(Debug, Clone, Copy, Default)]
struct RawCodec;

impl tonic::codec::Codec for RawCodec {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = RawCodec;
    type Decoder = RawCodec;

    fn encoder(&mut self) -> RawCodec {
        RawCodec
    }

    fn decoder(&mut self) -> RawCodec {
        RawCodec
    }
}

impl tonic::codec::Encoder for RawCodec {
    type Item = Vec<u8>;
    type Error = Status;

    fn encode(
        &mut self,
        item: Vec<u8>,
        dst: &mut tonic::codec::EncodeBuf<'_>,
    ) -> Result<(), Status> {
        bytes::BufMut::put_slice(dst, &item);
        Ok(())
    }
}

impl tonic::codec::Decoder for RawCodec {
    type Item = Vec<u8>;
    type Error = Status;

    fn decode(&mut self, src: &mut tonic::codec::DecodeBuf<'_>) -> Result<Option<Vec<u8>>, Status> {
        let n = bytes::Buf::remaining(src);
        Ok(Some(bytes::Buf::copy_to_bytes(src, n).to_vec()))
    }
}
