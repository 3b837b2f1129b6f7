//! Reading A2A payloads that did not arrive over this client's own connection (a recorded
//! answer, one relayed by another agent, a conformance corpus's golden response) with exactly
//! the decoders the client uses for its calls, so that what they accept and refuse is what a
//! call would.

use crate::client::{decode_answer, typed_card};
use crate::endpoint::Binding;
use crate::error::ClientError;
use ferry_proto::{AgentCard, OperationType};
use ferry_trust::strict::{self, Limits};

/// Reads the unary answer of operation `O` as `binding` carries it: a JSON-RPC response
/// envelope (`result` or `error`), or an HTTP+JSON body (the message itself, or an AIP-193
/// error). An error answer comes back as the [`ClientError`] a call would return.
///
/// ```
/// use ferry_client::{Binding, ClientError, parse};
/// use ferry_proto::ops;
///
/// let task = parse::answer::<ops::GetTask>(
///     Binding::JsonRpc,
///     br#"{"jsonrpc":"2.0","id":1,"result":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}"#,
/// )?;
/// assert_eq!(&*task.id, "t");
/// let refused = parse::answer::<ops::GetTask>(
///     Binding::JsonRpc,
///     br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found"}}"#,
/// );
/// assert!(matches!(refused, Err(ClientError::Protocol(e)) if e.kind.code() == -32001));
/// # Ok::<(), ClientError>(())
/// ```
pub fn answer<O: OperationType>(binding: Binding, body: &[u8]) -> Result<O::Response, ClientError> {
    decode_answer(binding, 200, body)
}

/// Reads an agent card document as [`A2aClient::connect`](crate::A2aClient::connect) does
/// after fetching it: strict JSON (no duplicate members, no lone surrogates, bounded size and
/// depth), then the typed card.
pub fn card(body: &[u8]) -> Result<AgentCard, ClientError> {
    let value = strict::parse_with(body, &Limits::default())
        .map_err(|e| ClientError::Decode(format!("agent card: {e}")))?;
    typed_card(value)
}
