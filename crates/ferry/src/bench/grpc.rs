//! The gRPC half of `ferry bench`: each worker has its own channel (one HTTP/2 connection)
//! and keeps one call in flight, like an HTTP/1.1 connection of the JSON-RPC half.

use crate::bench::{BenchMode, ConnectionResult};
use anyhow::Context;
use ferry_proto::grpc::{GrpcOperation, pb};
use ferry_proto::{Message, Part, SendMessageRequest, ops};
use std::time::Instant;
use tonic::codegen::http::uri::PathAndQuery;
use tonic_prost::ProstCodec;

/// The request every call sends.
fn request() -> pb::SendMessageRequest {
    let request = SendMessageRequest {
        tenant: String::new(),
        message: Message::user("bench-1", vec![Part::text("hello ferry")]),
        configuration: None,
        metadata: None,
    };
    <ops::SendMessage as GrpcOperation>::request_message(&request)
}

/// One worker: calls `mode` at `base` (`http://host:port`) until `stop_at`, timing the calls
/// that start after `measure_from`.
pub(crate) async fn worker(
    base: String,
    mode: BenchMode,
    measure_from: Instant,
    stop_at: Instant,
) -> anyhow::Result<ConnectionResult> {
    let channel = tonic::transport::Endpoint::from_shared(base.clone())
        .with_context(|| format!("{base} is not a gRPC target"))?
        .tcp_nodelay(true)
        .connect()
        .await
        .with_context(|| format!("connecting to {base}"))?;
    let mut grpc = tonic::client::Grpc::new(channel);
    let message = request();
    let mut result = ConnectionResult::new();
    loop {
        let now = Instant::now();
        if now >= stop_at {
            break;
        }
        let mut call = tonic::Request::new(message.clone());
        call.metadata_mut().insert(
            "a2a-version",
            tonic::metadata::MetadataValue::from_static("1.0"),
        );
        let ok = grpc.ready().await.is_ok()
            && match mode {
                BenchMode::Stream => stream(&mut grpc, call).await,
                _ => {
                    let path =
                        PathAndQuery::from_static(ferry_proto::Operation::SendMessage.grpc_path());
                    let codec =
                        ProstCodec::<pb::SendMessageRequest, pb::SendMessageResponse>::default();
                    grpc.unary(call, path, codec).await.is_ok()
                }
            };
        result.record(now, measure_from, ok);
    }
    Ok(result)
}

/// One `SendStreamingMessage`, read to its end.
async fn stream(
    grpc: &mut tonic::client::Grpc<tonic::transport::Channel>,
    call: tonic::Request<pb::SendMessageRequest>,
) -> bool {
    let path = PathAndQuery::from_static(ferry_proto::Operation::SendStreamingMessage.grpc_path());
    let codec = ProstCodec::<pb::SendMessageRequest, pb::StreamResponse>::default();
    let Ok(response) = grpc.server_streaming(call, path, codec).await else {
        return false;
    };
    let mut messages = response.into_inner();
    loop {
        match messages.message().await {
            Ok(Some(_)) => {}
            Ok(None) => return true,
            Err(_) => return false,
        }
    }
}
