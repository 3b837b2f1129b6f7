//! `tck-client-parse`: ACTS's client tests. The runner sends a golden wire payload as
//! `{operation, wire_payload}` in a data part; the agent reads it with ferry-client's own
//! decoders (the ones its calls use, through [`ferry_client::parse`]) and returns what they
//! made of it, re-encoded, as the first data part of an artifact. An A2A error in the payload
//! is returned as `{"error": {code, message, data}}`, which is what the client surfaces; a
//! payload the client refuses fails the task with the client's reason.

use ferry_client::{Binding, ClientError, parse};
use ferry_proto::{OperationType, Part, PartContent, ops};
use serde_json::{Value, json};

/// What the agent returns for one request.
#[derive(Debug, PartialEq)]
pub(super) enum Outcome {
    /// What the client parsed (or the A2A error it surfaced), as JSON.
    Parsed(Value),
    /// Why there is nothing to return: no request in the message, an operation the client has
    /// no answer decoder for, or a payload the client refused.
    Refused(String),
}

/// The operations a payload may be an answer of, by the corpus's snake-case names.
pub(super) const OPERATIONS: &[&str] = &[
    "send_message",
    "send_streaming_message",
    "get_task",
    "list_tasks",
    "cancel_task",
    "subscribe_to_task",
    "create_push_config",
    "get_push_config",
    "list_push_configs",
    "delete_push_config",
    "get_extended_agent_card",
    "get_agent_card",
];

/// Parses the `{operation, wire_payload}` request of the message's data parts.
pub(super) fn run(parts: &[Part]) -> Outcome {
    let request = parts.iter().find_map(|p| match &p.content {
        PartContent::Data(Value::Object(m)) => {
            Some((m.get("operation")?.as_str()?, m.get("wire_payload")?))
        }
        _ => None,
    });
    let Some((operation, payload)) = request else {
        return Outcome::Refused(
            "tck-client-parse needs a data part {\"operation\": …, \"wire_payload\": …}".into(),
        );
    };
    let body = payload.to_string();
    match decode(operation, binding_of(payload), body.as_bytes()) {
        Some(Ok(parsed)) => Outcome::Parsed(parsed),
        Some(Err(ClientError::Protocol(e))) => {
            Outcome::Parsed(json!({"error": e.to_jsonrpc_error()}))
        }
        Some(Err(e)) => Outcome::Refused(format!("the client refused the payload: {e}")),
        None => Outcome::Refused(format!(
            "unknown operation {operation:?}; known: {}",
            OPERATIONS.join(", ")
        )),
    }
}

/// A JSON-RPC response envelope, or else an HTTP+JSON body.
fn binding_of(payload: &Value) -> Binding {
    let enveloped = payload
        .as_object()
        .is_some_and(|m| m.contains_key("jsonrpc") || m.contains_key("result"));
    if enveloped {
        Binding::JsonRpc
    } else {
        Binding::HttpJson
    }
}

/// The client's reading of `body` as the answer of `operation`; `None` for an unknown name.
fn decode(operation: &str, binding: Binding, body: &[u8]) -> Option<Result<Value, ClientError>> {
    fn json(parsed: impl serde::Serialize) -> Result<Value, ClientError> {
        serde_json::to_value(parsed).map_err(|e| ClientError::Decode(e.to_string()))
    }
    fn answer<O: OperationType>(binding: Binding, body: &[u8]) -> Result<Value, ClientError> {
        json(parse::answer::<O>(binding, body)?)
    }
    Some(match operation {
        "send_message" => answer::<ops::SendMessage>(binding, body),
        "send_streaming_message" => answer::<ops::SendStreamingMessage>(binding, body),
        "get_task" => answer::<ops::GetTask>(binding, body),
        "list_tasks" => answer::<ops::ListTasks>(binding, body),
        "cancel_task" => answer::<ops::CancelTask>(binding, body),
        "subscribe_to_task" => answer::<ops::SubscribeToTask>(binding, body),
        "create_push_config" => answer::<ops::CreateTaskPushNotificationConfig>(binding, body),
        "get_push_config" => answer::<ops::GetTaskPushNotificationConfig>(binding, body),
        "list_push_configs" => answer::<ops::ListTaskPushNotificationConfigs>(binding, body),
        "delete_push_config" => answer::<ops::DeleteTaskPushNotificationConfig>(binding, body),
        // The public card is a document fetched from the well-known path, not an answer.
        "get_agent_card" if binding == Binding::HttpJson => parse::card(body).and_then(json),
        "get_extended_agent_card" | "get_agent_card" => {
            answer::<ops::GetExtendedAgentCard>(binding, body)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(operation: &str, payload: Value) -> Vec<Part> {
        vec![
            Part::text("tck-client-parse"),
            Part::data(json!({"operation": operation, "wire_payload": payload})),
        ]
    }

    fn parsed(operation: &str, payload: Value) -> Value {
        match run(&request(operation, payload)) {
            Outcome::Parsed(v) => v,
            Outcome::Refused(why) => panic!("refused: {why}"),
        }
    }

    #[test]
    fn a_task_answer_is_the_typed_task_re_encoded() {
        let got = parsed(
            "send_message",
            json!({"jsonrpc": "2.0", "id": "1", "result": {"task": {
                "id": "t", "contextId": "c", "status": {"state": 3},
                "artifacts": [{"artifactId": "a", "parts": [{"text": "hi"}]}],
                "unknownMember": true}}}),
        );
        // Enum integers come out as names, unknown members are gone: the client's reading.
        assert_eq!(got["task"]["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(got["task"]["artifacts"][0]["parts"][0]["text"], "hi");
        assert!(got["task"].get("unknownMember").is_none());
    }

    #[test]
    fn an_error_answer_is_the_error_the_client_surfaces() {
        let got = parsed(
            "get_task",
            json!({"jsonrpc": "2.0", "id": "1",
                   "error": {"code": -32001, "message": "Task not found"}}),
        );
        assert_eq!(got["error"]["code"], -32001);
        assert_eq!(got["error"]["message"], "Task not found");
    }

    #[test]
    fn a_card_document_and_an_http_json_answer() {
        let card = json!({"name": "A", "version": "1", "capabilities": {"streaming": true},
                          "supportedInterfaces": [{"url": "https://a.example/rpc",
                              "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]});
        assert_eq!(
            parsed("get_agent_card", card.clone())["capabilities"]["streaming"],
            true
        );
        assert_eq!(parsed("get_extended_agent_card", card)["name"], "A");
    }

    #[test]
    fn what_the_client_refuses_is_refused_with_its_reason() {
        // A part with no content member is not a v1.0 part.
        let bad = json!({"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"},
                         "artifacts": [{"artifactId": "a", "parts": [{"file": {"bytes": "AA=="}}]}]});
        let Outcome::Refused(why) = run(&request("get_task", bad)) else {
            panic!("accepted a part without content");
        };
        assert!(
            why.contains("exactly one of text, raw, url or data"),
            "{why}"
        );
        assert!(
            matches!(run(&request("frobnicate", json!({}))), Outcome::Refused(w) if w.contains("unknown operation"))
        );
        assert!(matches!(
            run(&[Part::text("tck-client-parse")]),
            Outcome::Refused(_)
        ));
    }
}
