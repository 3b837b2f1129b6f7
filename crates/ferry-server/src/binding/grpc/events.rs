//! A task stream as the frames of a gRPC answer: one message per event (each framed once for
//! every subscriber), then the trailers.

use super::frame;
use super::status::trailers_of;
use crate::binding::GRPC_EVENTS;
use crate::core::stream::TaskStream;
use crate::edge::front_door::StreamPermit;
use bytes::Bytes;
use ferry_proto::{A2aError, ErrorKind, ErrorTable};
use futures_util::Stream;
use hyper::body::Frame;
use std::convert::Infallible;
use tokio::sync::watch;

/// The events of `stream` as frames, then OK trailers. An error ends the stream with its
/// status; so does the server's shutdown (`closing`), with UNAVAILABLE: the task goes on and
/// a client subscribes again to follow it. `permit` counts the stream against the
/// open-streams limit until it ends.
pub(super) fn frames(
    stream: TaskStream,
    closing: watch::Receiver<bool>,
    permit: StreamPermit,
    table: ErrorTable,
) -> impl Stream<Item = Result<Frame<Bytes>, Infallible>> + Send + 'static {
    let state = Some((stream, closing, permit));
    futures_util::stream::unfold(state, move |state| async move {
        let (mut stream, mut closing, permit) = state?;
        let next = tokio::select! {
            biased;
            item = stream.next() => item,
            _ = closing.wait_for(|c| *c) => {
                let e = A2aError::new(
                    ErrorKind::Unavailable,
                    "the server is shutting down; subscribe to the task again to follow it",
                )
                .with_reason("SHUTTING_DOWN");
                Some(Err(e))
            }
        };
        // The trailers end the stream: no state is handed back.
        let frame = match next {
            None => return Some((Ok(Frame::trailers(frame::ok_trailers())), None)),
            Some(Err(e)) => return Some((Ok(Frame::trailers(trailers_of(&e, table))), None)),
            Some(Ok(item)) => item.encoded(GRPC_EVENTS, frame::encode_written),
        };
        Some((Ok(Frame::data(frame)), Some((stream, closing, permit))))
    })
}
