//! The gRPC binding (a2a.proto `lf.a2a.v1.A2AService`, spec §2.4): every operation of the
//! operation table at its gRPC path, served over HTTP/2 on the same port as the HTTP bindings
//! (cleartext h2c, told apart by the connection preface; routed by path), behind the same
//! front door.
//!
//! A codec like the others: the message types are generated from our `a2a.proto` (in
//! `ferry-proto`), the methods come from the operation table, and the semantics are the
//! request handler's. gRPC's framing is ours ([`frame`]): a request is one length-prefixed
//! message, a unary answer one message and the trailers, a stream one message per event and
//! the trailers, an error the status alone ("trailers-only"); no compression is offered.
//!
//! Validated in this order: the `a2a-version` metadata (before the message is even read: a
//! request of another protocol version is answered as such, whatever else is wrong with it),
//! the message (size limit, protobuf, then the A2A rules of `ferry-proto`'s conversions), the
//! `a2a-extensions` metadata. Errors are `google.rpc.Status` with the spec's gRPC code and an
//! `ErrorInfo` (see [`status`]). Streams end with OK after the task's last event; when the
//! server shuts down they end with UNAVAILABLE (`SHUTTING_DOWN`), the code a gRPC client
//! retries on.

mod events;
mod frame;
pub(crate) mod status;

use crate::binding::{Codec, Decoded, Refused, labelled, run};
use crate::core::answer::{Answer, Sent};
use crate::core::stream::TaskStream;
use crate::edge::front_door::StreamPermit;
use crate::edge::params;
use crate::edge::request_id::RequestId;
use crate::edge::response::read_body;
use crate::edge::service::AgentService;
use axum::extract::{Request, State};
use axum::http::HeaderValue;
use axum::http::request::Parts;
use axum::response::Response;
use bytes::Bytes;
use ferry_proto::grpc::{SendMessageAnswer, pb};
use ferry_proto::{A2aError, ErrorTable, Operation};
use std::sync::Arc;

/// The route of every method: `/lf.a2a.v1.A2AService/{method}`.
pub(crate) const ROUTE: &str = "/lf.a2a.v1.A2AService/{method}";

/// Handles one gRPC call: the method by its path, the version before the message is read,
/// then the codec.
pub(crate) async fn handle(State(service): State<Arc<AgentService>>, request: Request) -> Response {
    let table = service.config.error_table;
    let (parts, body) = request.into_parts();
    let Some(op) = Operation::from_grpc_path(parts.uri.path()) else {
        let status = tonic::Status::unimplemented(format!(
            "{} is not a method of {}",
            parts.uri.path(),
            ferry_proto::grpc::SERVICE_NAME
        ));
        return labelled(status::response_of(status), None, false, false);
    };
    let refuse = |e: &A2aError| labelled(status::refusal_in(e, table), Some(op), false, false);
    if let Err(e) = params::check_version(&parts.headers, None, &service.config) {
        return refuse(&e);
    }
    let limit = service.config.max_body_bytes;
    let body = match read_body(body, limit.saturating_add(frame::PREFIX)).await {
        Ok(body) => body,
        Err(_) => return refuse(&frame::too_large(limit)),
    };
    run(&Grpc(table), &service, &parts, (op, body)).await
}

/// The gRPC codec; its statuses take their codes from the configured error table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Grpc(ErrorTable);

impl Codec for Grpc {
    type Input<'a> = (Operation, Bytes);
    type Call = Operation;

    fn decode(
        &self,
        service: &AgentService,
        _parts: &Parts,
        (op, body): (Operation, Bytes),
    ) -> Result<Decoded<Operation>, Refused<Operation>> {
        let refused = |error| Refused {
            call: Some(op),
            operation: Some(op),
            error,
        };
        let message = frame::message(&body, service.config.max_body_bytes).map_err(refused)?;
        let request = ferry_proto::grpc::decode_request(op, message).map_err(refused)?;
        Ok(Decoded { call: op, request })
    }

    fn encode(
        &self,
        _service: &AgentService,
        op: &Operation,
        answer: Answer,
    ) -> Result<Response, A2aError> {
        Ok(match answer {
            Answer::Sent(sent) => frame::unary_written(&sent_message(&sent)),
            Answer::Task(task) => frame::unary_written(&task.view()),
            Answer::Tasks(page) => frame::unary(&pb::ListTasksResponse::from(&page)),
            Answer::Card(card) => frame::unary(&pb::AgentCard::from(&*card)),
            Answer::PushConfig(config) => {
                frame::unary(&pb::TaskPushNotificationConfig::from(&config))
            }
            Answer::PushConfigs(page) => {
                frame::unary(&pb::ListTaskPushNotificationConfigsResponse::from(&page))
            }
            Answer::Deleted => frame::unary(&()),
            Answer::Stream(_) => {
                return Err(A2aError::internal(format!(
                    "{} answered with a stream",
                    op.name()
                )));
            }
        })
    }

    fn stream(
        &self,
        service: &AgentService,
        _op: Operation,
        stream: TaskStream,
        permit: StreamPermit,
    ) -> Response {
        let closing = service.closing.subscribe();
        frame::streaming(events::frames(stream, closing, permit, self.0))
    }

    fn error(
        &self,
        _op: Option<&Operation>,
        error: &A2aError,
        _rid: Option<&RequestId>,
    ) -> Response {
        status::refusal_in(error, self.0)
    }

    /// Echoes the activated extensions in the response metadata (`a2a-extensions`).
    fn echo(&self, mut response: Response, active: &[String]) -> Response {
        if !active.is_empty()
            && let Ok(value) = HeaderValue::from_str(&active.join(", "))
        {
            response.headers_mut().insert(params::EXTENSIONS, value);
        }
        response
    }
}

/// `SendMessage`'s answer as its message: the shaped task (written from the view: nothing
/// is copied to shape it) or the reply.
fn sent_message(sent: &Sent) -> SendMessageAnswer<'_> {
    match sent {
        Sent::Task(task) => SendMessageAnswer::Task(task.view()),
        Sent::Message(message) => SendMessageAnswer::Message(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_proto::{Message, Part, Task, TaskState, TaskStatus};

    #[test]
    fn a_sent_task_is_the_wire_types_message() {
        let mut task = Task::new("t-1", "c-1", TaskStatus::now(TaskState::Completed, None));
        task.history = vec![Arc::new(Message::user("m-1", vec![Part::text("hi")]))];
        let sent = Sent::Task(crate::core::answer::Shaped::new(
            Arc::new(task),
            Some(0),
            true,
        ));
        let wire = pb::SendMessageResponse::from(&sent.to_response());
        let written = frame::encode_written(&sent_message(&sent));
        assert_eq!(written, frame::encode(&wire));
    }
}
