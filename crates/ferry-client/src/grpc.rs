//! The gRPC transport: one HTTP/2 channel per client, calls at the operation table's gRPC
//! paths with the messages of `ferry_proto::grpc`, statuses mapped back to A2A errors by
//! their `ErrorInfo.reason`.
//!
//! The channel dials through our own connector: the target is resolved, every address is
//! checked against the client's address policy, and only a checked address is dialled (the
//! same rule as the HTTP bindings' client, on the address actually used).

use crate::error::ClientError;
use ferry_net::IpPolicy;
use ferry_proto::grpc::{GrpcOperation, pb};
use ferry_proto::{A2aError, ERROR_DOMAIN, ErrorKind};
use hyper_util::rt::TokioIo;
use reqwest::header::HeaderMap;
use std::io;
use std::time::Duration;
use tokio::net::TcpStream;
use tonic::codegen::http::uri::PathAndQuery;
use tonic::metadata::MetadataMap;
use tonic::transport::{Channel, Endpoint, Uri};
use tonic::{Code, Status};
use tonic_prost::ProstCodec;
use tonic_types::StatusExt;

/// A channel to one gRPC interface (cheap to clone; connects on first use, reconnects after
/// a drop).
#[derive(Debug, Clone)]
pub(crate) struct GrpcChannel {
    channel: Channel,
    max_response_bytes: usize,
}

impl GrpcChannel {
    /// A channel to `target` (`host:port`, the card's `GRPC` interface URL), over TLS with
    /// `tls` when given (the web's roots and its own), dialling only addresses `policy`
    /// allows (any address when `None`: the caller vouches for the target).
    pub(crate) fn new(
        target: &str,
        tls: Option<&crate::ClientTls>,
        policy: Option<IpPolicy>,
        connect_timeout: Duration,
        max_response_bytes: usize,
    ) -> Result<Self, ClientError> {
        let invalid = |reason: String| ClientError::InvalidUrl {
            url: target.to_owned(),
            reason,
        };
        let bare = target
            .strip_prefix("http://")
            .or_else(|| target.strip_prefix("https://"))
            .unwrap_or(target)
            .trim_end_matches('/');
        let scheme = if tls.is_some() { "https" } else { "http" };
        let mut endpoint = Endpoint::from_shared(format!("{scheme}://{bare}"))
            .map_err(|e| invalid(e.to_string()))?
            .connect_timeout(connect_timeout)
            .http2_keep_alive_interval(Duration::from_secs(30));
        if let Some(tls) = tls {
            endpoint = endpoint
                .tls_config(tls.tonic())
                .map_err(|e| invalid(e.to_string()))?;
        }
        let connector = tower::service_fn(move |uri: Uri| {
            let policy = policy.clone();
            async move { dial(&uri, policy.as_ref()).await }
        });
        Ok(Self {
            channel: endpoint.connect_with_connector_lazy(connector),
            max_response_bytes,
        })
    }

    fn grpc(&self) -> tonic::client::Grpc<Channel> {
        tonic::client::Grpc::new(self.channel.clone())
            .max_decoding_message_size(self.max_response_bytes)
            .max_encoding_message_size(usize::MAX)
    }

    /// One unary call of `O`, with `headers` as its metadata; the error comes with the wait
    /// the server asked for, if any.
    pub(crate) async fn unary<O: GrpcOperation>(
        &self,
        request: &O::Request,
        headers: &HeaderMap,
        timeout: Duration,
    ) -> Result<O::Response, (ClientError, Option<Duration>)> {
        let mut grpc = self.grpc();
        grpc.ready()
            .await
            .map_err(|e| (ClientError::Unreachable(e.to_string()), None))?;
        let mut message = tonic::Request::new(O::request_message(request));
        *message.metadata_mut() =
            MetadataMap::from_headers(crate::trace::outgoing_headers(headers));
        message.set_timeout(timeout);
        let path = PathAndQuery::from_static(O::OPERATION.grpc_path());
        let codec = ProstCodec::<O::RequestMessage, O::ResponseMessage>::default();
        let response = grpc.unary(message, path, codec).await.map_err(|s| {
            let e = error_of(&s);
            let wait = retry_after(&e);
            (e, wait)
        })?;
        O::response(response.into_inner()).map_err(|e| (decode_error(&e), None))
    }

    /// Opens a server stream of `O` (SendStreamingMessage or SubscribeToTask).
    pub(crate) async fn open_stream<O>(
        &self,
        request: &O::Request,
        headers: &HeaderMap,
    ) -> Result<tonic::Streaming<pb::StreamResponse>, ClientError>
    where
        O: GrpcOperation<ResponseMessage = pb::StreamResponse>,
    {
        let mut grpc = self.grpc();
        grpc.ready()
            .await
            .map_err(|e| ClientError::Unreachable(e.to_string()))?;
        let mut message = tonic::Request::new(O::request_message(request));
        *message.metadata_mut() =
            MetadataMap::from_headers(crate::trace::outgoing_headers(headers));
        let path = PathAndQuery::from_static(O::OPERATION.grpc_path());
        let codec = ProstCodec::<O::RequestMessage, pb::StreamResponse>::default();
        let response = grpc
            .server_streaming(message, path, codec)
            .await
            .map_err(|s| error_of(&s))?;
        Ok(response.into_inner())
    }
}

/// Resolves the target of `uri`, checks each address, dials the first allowed one that
/// answers.
async fn dial(uri: &Uri, policy: Option<&IpPolicy>) -> io::Result<TokioIo<TcpStream>> {
    let host = uri
        .host()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the target has no host"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let tls = uri.scheme_str() == Some("https");
    let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
    let mut last = None;
    for addr in tokio::net::lookup_host((host, port)).await? {
        if let Some(refusal) = policy.and_then(|p| p.check(addr.ip()).err()) {
            last = Some(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("refused {host} ({}): {refusal}", addr.ip()),
            ));
            continue;
        }
        match TcpStream::connect(addr).await {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                return Ok(TokioIo::new(stream));
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| {
        io::Error::new(io::ErrorKind::NotFound, format!("{host} has no address"))
    }))
}

/// What a status means to a caller: an A2A error when it carries the A2A `ErrorInfo`
/// (mapped by reason, whichever code the server's table used), else by its code.
pub(crate) fn error_of(status: &Status) -> ClientError {
    if let Some(info) = status.get_details_error_info()
        && info.domain == ERROR_DOMAIN
        && let Some(kind) = ErrorKind::from_reason(&info.reason)
    {
        // Credentials refused are the same class on every binding (HTTP says 401 / 403).
        match kind {
            ErrorKind::Unauthenticated => return auth_refused(401, status.message()),
            ErrorKind::PermissionDenied => return auth_refused(403, status.message()),
            _ => {}
        }
        let mut e = A2aError::new(kind, status.message());
        e.metadata.extend(info.metadata);
        if let Some(bad) = status.get_details_bad_request() {
            e.field_violations = bad
                .field_violations
                .into_iter()
                .map(|v| (v.field, v.description))
                .collect();
        }
        return ClientError::Protocol(e);
    }
    match status.code() {
        Code::Unauthenticated => auth_refused(401, status.message()),
        Code::PermissionDenied => auth_refused(403, status.message()),
        Code::DeadlineExceeded => ClientError::Timeout,
        // tonic's own transport failures (connect, reset) come as UNAVAILABLE or UNKNOWN
        // with a source error.
        Code::Unavailable | Code::Unknown if std::error::Error::source(status).is_some() => {
            ClientError::Unreachable(status.message().to_owned())
        }
        code => ClientError::Grpc {
            code: code_name(code),
            message: status.message().to_owned(),
        },
    }
}

fn retry_after(e: &ClientError) -> Option<Duration> {
    match e {
        ClientError::Protocol(p) => p.retry_after_secs().map(Duration::from_secs),
        _ => None,
    }
}

/// An answer that is valid protobuf but not a valid A2A message.
pub(crate) fn decode_error(e: &A2aError) -> ClientError {
    let fields: Vec<&str> = e.field_violations.iter().map(|(f, _)| f.as_str()).collect();
    if fields.is_empty() {
        ClientError::Decode(e.message.clone())
    } else {
        ClientError::Decode(format!("{} ({})", e.message, fields.join(", ")))
    }
}

fn code_name(code: Code) -> &'static str {
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

/// Credentials refused, with the status's message.
fn auth_refused(status: u16, message: &str) -> ClientError {
    ClientError::Auth {
        status,
        reason: message.to_owned(),
    }
}
