//! A task stream as a stream of gRPC messages.

use crate::binding::grpc::status::status_of;
use crate::core::stream::TaskStream;
use crate::edge::front_door::StreamPermit;
use ferry_proto::grpc::pb;
use ferry_proto::{A2aError, ErrorKind, ErrorTable};
use futures_util::Stream;
use tokio::sync::watch;

/// The events of `stream` as `StreamResponse` messages. An error ends the stream with its
/// status; so does the server's shutdown (`closing`), with UNAVAILABLE: the task goes on and
/// a client subscribes again to follow it. `permit` counts the stream against the
/// open-streams limit until it ends.
pub(crate) fn messages(
    stream: TaskStream,
    closing: watch::Receiver<bool>,
    permit: StreamPermit,
    table: ErrorTable,
) -> impl Stream<Item = Result<pb::StreamResponse, tonic::Status>> + Send + 'static {
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
        match next? {
            Ok(item) => Some((
                Ok(pb::StreamResponse::from(item.event())),
                Some((stream, closing, permit)),
            )),
            // The error ends the stream: no state is handed back.
            Err(e) => Some((Err(status_of(&e, table)), None)),
        }
    })
}
