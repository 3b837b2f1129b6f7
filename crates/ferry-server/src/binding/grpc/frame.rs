//! gRPC's framing over HTTP/2 (the gRPC protocol's "Length-Prefixed-Message"): each message
//! is one byte of compressed-flag, four of big-endian length, then the protobuf bytes; an
//! answer ends with trailers carrying `grpc-status`.
//!
//! A unary call's request is exactly one message. Compression is not offered (no
//! `grpc-accept-encoding`), so a compressed message is refused.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use bytes::{BufMut, Bytes, BytesMut};
use ferry_proto::grpc::WriteProto;
use ferry_proto::{A2aError, ErrorKind};
use futures_util::Stream;
use hyper::body::Frame;
use std::convert::Infallible;

/// The bytes before each message: the compressed-flag and the length.
pub(super) const PREFIX: usize = 5;

/// The one message of a unary call's request `body`, at most `limit` bytes.
pub(super) fn message(body: &[u8], limit: usize) -> Result<&[u8], A2aError> {
    let Some((head, rest)) = body.split_first_chunk::<PREFIX>() else {
        return Err(A2aError::new(
            ErrorKind::InvalidRequest,
            "the call carries no request message",
        ));
    };
    if head[0] != 0 {
        return Err(A2aError::new(
            ErrorKind::UnsupportedOperation,
            "compressed messages are not accepted (this server offers no grpc-encoding)",
        ));
    }
    let length = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
    if length > limit {
        return Err(too_large(limit));
    }
    match rest.len().cmp(&length) {
        std::cmp::Ordering::Equal => Ok(rest),
        std::cmp::Ordering::Less => Err(A2aError::new(
            ErrorKind::ParseError,
            format!(
                "the request message is cut short: {} of {length} bytes",
                rest.len()
            ),
        )),
        std::cmp::Ordering::Greater => Err(A2aError::new(
            ErrorKind::InvalidRequest,
            "a unary call carries exactly one request message",
        )),
    }
}

/// A request message over the size limit: what the other bindings answer with 413.
pub(super) fn too_large(limit: usize) -> A2aError {
    A2aError::new(
        ErrorKind::PayloadTooLarge,
        format!("the request message is larger than the limit of {limit} bytes"),
    )
    .with_meta("limitBytes", limit.to_string())
}

/// `message` as one frame of an answer.
pub(super) fn encode(message: &impl prost::Message) -> Bytes {
    framed(message.encoded_len(), |out| message.encode_raw(out))
}

/// `message`, written straight from ferry's types, as one frame of an answer: what
/// [`encode`] makes of its `pb` twin, without building the twin.
pub(super) fn encode_written(message: &impl WriteProto) -> Bytes {
    framed(message.encoded_len(), |out| message.write(out))
}

/// The prefix for a message of `length` bytes, then the message as `write` puts it.
fn framed(length: usize, write: impl FnOnce(&mut BytesMut)) -> Bytes {
    let mut out = BytesMut::with_capacity(PREFIX + length);
    out.put_u8(0);
    out.put_u32(u32::try_from(length).unwrap_or(u32::MAX));
    write(&mut out);
    out.freeze()
}

/// The trailers of an answer that succeeded.
pub(super) fn ok_trailers() -> HeaderMap {
    let mut trailers = HeaderMap::with_capacity(1);
    trailers.insert("grpc-status", HeaderValue::from_static("0"));
    trailers
}

/// A unary answer: the message, then the trailers.
pub(super) fn unary(message: &impl prost::Message) -> Response {
    unary_frame(encode(message))
}

/// A unary answer of `message`, written straight from ferry's types.
pub(super) fn unary_written(message: &impl WriteProto) -> Response {
    unary_frame(encode_written(message))
}

/// A unary answer of one framed message.
fn unary_frame(message: Bytes) -> Response {
    let frames = [
        Ok::<_, Infallible>(Frame::data(message)),
        Ok(Frame::trailers(ok_trailers())),
    ];
    streaming(futures_util::stream::iter(frames))
}

/// An answer whose body is `frames` (messages, then the trailers).
pub(super) fn streaming<S>(frames: S) -> Response
where
    S: Stream<Item = Result<Frame<Bytes>, Infallible>> + Send + 'static,
{
    let mut response = Response::new(Body::new(http_body_util::StreamBody::new(frames)));
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/grpc"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_proto::grpc::pb;

    #[test]
    fn one_message_is_read_and_anything_else_refused() {
        let message = pb::GetTaskRequest {
            id: "t-1".into(),
            ..Default::default()
        };
        let framed = encode(&message);
        let read = super::message(&framed, 1024).expect("one message");
        assert_eq!(read, &framed[PREFIX..]);
        let kind = |body: &[u8], limit| super::message(body, limit).map(|_| ()).unwrap_err().kind;
        assert_eq!(kind(b"", 1024), ErrorKind::InvalidRequest);
        assert_eq!(kind(&framed, 2), ErrorKind::PayloadTooLarge);
        assert_eq!(
            kind(&framed[..framed.len() - 1], 1024),
            ErrorKind::ParseError
        );
        let mut two = framed.to_vec();
        two.extend_from_slice(&framed);
        assert_eq!(kind(&two, 1024), ErrorKind::InvalidRequest);
        let mut compressed = framed.to_vec();
        compressed[0] = 1;
        assert_eq!(kind(&compressed, 1024), ErrorKind::UnsupportedOperation);
    }
}
