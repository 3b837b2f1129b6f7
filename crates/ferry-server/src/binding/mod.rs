//! The bindings: how A2A calls look on the wire. JSON-RPC and HTTP+JSON (REST) over HTTP with
//! SSE streams, A2A v0.3's two, and gRPC.
//!
//! Each binding is one [`Codec`]: it reads a call (its operation's request, and what its
//! answer needs, such as JSON-RPC's id) and writes an answer, a stream and an error. [`run`]
//! is the one path every call takes between the two: activate the extensions, build the
//! core's view of the call, take a stream slot, dispatch to the request handler, encode,
//! label the call for the metrics. The endpoints (which codec serves which request, how the
//! bytes are read) are each binding's entry function; the semantics are the request
//! handler's.

pub mod decode;
pub(crate) mod deliveries;
#[cfg(feature = "grpc")]
pub(crate) mod grpc;
pub(crate) mod jsonrpc;
pub(crate) mod rest;
pub(crate) mod rest_query;
pub(crate) mod sse;
#[cfg(feature = "v03")]
pub(crate) mod v03;

use crate::core::answer::Answer;
use crate::core::live::ENCODING_SLOTS;
#[cfg(any(feature = "grpc", feature = "v03"))]
use crate::core::live::EncodingSlot;
use crate::core::stream::TaskStream;
use crate::edge::call;
use crate::edge::front_door::StreamPermit;
use crate::edge::metrics::{CallLabel, Method};
use crate::edge::params;
use crate::edge::request_id::RequestId;
use crate::edge::response::with_extensions;
use crate::edge::service::AgentService;
use axum::http::request::Parts;
use axum::response::Response;
use ferry_proto::{A2aError, A2aRequest, Operation};

/// Where each binding that writes events in a form of its own keeps it, once per event for
/// every subscriber.
#[cfg(feature = "grpc")]
pub(crate) const GRPC_EVENTS: EncodingSlot = EncodingSlot(0);
/// v0.3 JSON-RPC's event (the `result` of each SSE envelope).
#[cfg(feature = "v03")]
pub(crate) const V03_JSONRPC_EVENTS: EncodingSlot = EncodingSlot(1);
/// v0.3 REST's event.
#[cfg(feature = "v03")]
pub(crate) const V03_REST_EVENTS: EncodingSlot = EncodingSlot(2);
const _: () = assert!(
    ENCODING_SLOTS == 3,
    "one slot per binding's own event encoding"
);

/// A call a codec read: what its answer needs, and the operation's request.
#[derive(Debug)]
pub(crate) struct Decoded<Call> {
    /// What the codec keeps for the answer.
    pub call: Call,
    /// The request the handler runs.
    pub request: A2aRequest,
}

/// A call a codec could not read: the error, with what it had learned by then (the
/// answer's form needs it: a JSON-RPC error carries the request's id) and the operation,
/// when it knew it (for the metrics).
#[derive(Debug)]
pub(crate) struct Refused<Call> {
    /// What the codec had read of the call, if anything.
    pub call: Option<Call>,
    /// The operation, once it was known.
    pub operation: Option<Operation>,
    /// Why.
    pub error: A2aError,
}

impl<Call> Refused<Call> {
    /// A refusal before the call was known.
    pub(crate) fn early(error: A2aError) -> Self {
        Self {
            call: None,
            operation: None,
            error,
        }
    }
}

/// One binding's wire format.
pub(crate) trait Codec: Send + Sync {
    /// What a call is read from (the body, a parsed envelope, a route…).
    type Input<'a>;
    /// What the codec keeps of a call for its answer.
    type Call: Send + 'static;
    /// True for A2A v0.3 (the metrics count calls by version).
    const V03: bool = false;

    /// Reads a call (`parts`: the request's head, for its service parameters).
    fn decode(
        &self,
        service: &AgentService,
        parts: &Parts,
        input: Self::Input<'_>,
    ) -> Result<Decoded<Self::Call>, Refused<Self::Call>>;

    /// Writes a unary answer.
    fn encode(
        &self,
        service: &AgentService,
        call: &Self::Call,
        answer: Answer,
    ) -> Result<Response, A2aError>;

    /// Writes an answer that is a stream of the task's events; `permit` holds the stream's
    /// slot until it ends.
    fn stream(
        &self,
        service: &AgentService,
        call: Self::Call,
        stream: TaskStream,
        permit: StreamPermit,
    ) -> Response;

    /// Writes an error; `call` is what the codec had read, if anything.
    fn error(
        &self,
        call: Option<&Self::Call>,
        error: &A2aError,
        rid: Option<&RequestId>,
    ) -> Response;

    /// Echoes the activated extensions on the answer (`A2A-Extensions`).
    fn echo(&self, response: Response, active: &[String]) -> Response {
        with_extensions(response, active)
    }
}

/// Runs one call through `codec`: decode, then the steps every binding shares, then the
/// codec's answer or error, labelled for the metrics.
pub(crate) async fn run<C: Codec>(
    codec: &C,
    service: &AgentService,
    parts: &Parts,
    input: C::Input<'_>,
) -> Response {
    let rid = parts.extensions.get::<RequestId>();
    let (response, operation, ok) = match codec.decode(service, parts, input) {
        Err(refused) => (
            codec.error(refused.call.as_ref(), &refused.error, rid),
            refused.operation,
            false,
        ),
        Ok(Decoded { call, request }) => {
            let operation = request.operation();
            match answer(codec, service, parts, &call, request).await {
                Ok(Answered::Unary(response)) => (response, Some(operation), true),
                Ok(Answered::Stream(stream, permit, active)) => {
                    let response = codec.stream(service, call, stream, permit);
                    (codec.echo(response, &active), Some(operation), true)
                }
                Err(e) => (codec.error(Some(&call), &e, rid), Some(operation), false),
            }
        }
    };
    labelled(response, operation, ok, C::V03)
}

/// A call refused before its codec could read it (the body, its type, its envelope): the
/// codec's error, labelled as naming no operation.
pub(crate) fn refuse<C: Codec>(codec: &C, parts: &Parts, error: &A2aError) -> Response {
    let rid = parts.extensions.get::<RequestId>();
    labelled(codec.error(None, error, rid), None, false, C::V03)
}

/// `response`, labelled for the metrics: the operation (if the call named one), whether it
/// succeeded, its protocol version.
pub(crate) fn labelled(
    mut response: Response,
    operation: Option<Operation>,
    ok: bool,
    v03: bool,
) -> Response {
    response.extensions_mut().insert(CallLabel {
        method: operation.map_or(Method::Other, Method::Operation),
        ok,
        v03,
    });
    response
}

/// A unary answer in A2A v1.0's ProtoJSON (what JSON-RPC's `result` and REST's body hold),
/// written into `out`.
pub(crate) fn json_answer(answer: &Answer, out: &mut Vec<u8>) -> Result<(), A2aError> {
    let written = match answer {
        Answer::Sent(sent) => serde_json::to_writer(&mut *out, sent),
        Answer::Task(task) => serde_json::to_writer(&mut *out, &task.view()),
        Answer::Tasks(page) => serde_json::to_writer(&mut *out, page),
        Answer::Card(card) => serde_json::to_writer(&mut *out, &**card),
        Answer::PushConfig(config) => serde_json::to_writer(&mut *out, config),
        Answer::PushConfigs(page) => serde_json::to_writer(&mut *out, page),
        Answer::Deleted => {
            out.extend_from_slice(b"{}");
            Ok(())
        }
        Answer::Stream(_) => {
            return Err(A2aError::internal("a stream is no unary answer"));
        }
    };
    written.map_err(|e| A2aError::internal(format!("writing the answer: {e}")))
}

/// What the handler's answer became: a whole response, or a stream to frame.
enum Answered {
    Unary(Response),
    Stream(TaskStream, StreamPermit, Vec<String>),
}

/// The shared steps: the extensions the call activates, the core's view of the call, a
/// stream slot for a streaming operation (before its work starts), the handler, the answer.
async fn answer<C: Codec>(
    codec: &C,
    service: &AgentService,
    parts: &Parts,
    call: &C::Call,
    request: A2aRequest,
) -> Result<Answered, A2aError> {
    let active = params::activate_extensions(
        &parts.headers,
        &service.declared_extensions,
        &service.required_extensions,
    )?;
    let mut context = call::call_context(request.tenant().to_owned(), active, parts);
    context.v03 = C::V03;
    let operation = request.operation();
    let permit = operation
        .is_streaming()
        .then(|| service.stream_permit())
        .transpose()?;
    // Boxed: the handler's future is the largest part of a call's state, and axum moves the
    // route's future into a box of its own; kept apart, that move copies a small future.
    let answer = Box::pin(service.handler.dispatch(&context, request)).await?;
    match (answer, permit) {
        (Answer::Stream(stream), Some(permit)) => {
            Ok(Answered::Stream(stream, permit, context.extensions))
        }
        (Answer::Stream(_), None) => Err(A2aError::internal(format!(
            "{} answered with a stream",
            operation.name()
        ))),
        (answer, _) => {
            let response = codec.encode(service, call, answer)?;
            Ok(Answered::Unary(codec.echo(response, &context.extensions)))
        }
    }
}
