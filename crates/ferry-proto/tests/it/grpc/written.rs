//! The answers written straight from ferry's types ([`WriteProto`]) against prost's encoding
//! of their twins: the same bytes for every fixture of those types (the fixtures set every
//! field and oneof member) and for shaped tasks.

use super::fixtures::{fixtures, task};
use ferry_proto::grpc::{SendMessageAnswer, WriteProto, pb};
use ferry_proto::*;
use prost::Message as _;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// What `message` writes, checked against the length it says it takes.
fn written(message: &impl WriteProto) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    message.write(&mut bytes);
    if bytes.len() == message.encoded_len() {
        Ok(bytes)
    } else {
        Err(format!(
            "wrote {} bytes, said {}",
            bytes.len(),
            message.encoded_len()
        ))
    }
}

/// The fixture `json` of type `T` written directly and through its twin `P`.
fn same<T, P>(json: &Value) -> Result<(), String>
where
    T: DeserializeOwned + WriteProto,
    P: prost::Message + for<'a> From<&'a T>,
{
    let value: T = serde_json::from_value(json.clone()).map_err(|e| format!("parse: {e}"))?;
    let ours = written(&value)?;
    let prost = P::from(&value).encode_to_vec();
    if ours == prost {
        Ok(())
    } else {
        Err(format!(
            "wrote\n  {ours:?}\nwhere prost writes\n  {prost:?}"
        ))
    }
}

/// SendMessage's answer: the fixture's response as a [`SendMessageAnswer`].
fn same_answer(json: &Value) -> Result<(), String> {
    let response: SendMessageResponse =
        serde_json::from_value(json.clone()).map_err(|e| format!("parse: {e}"))?;
    let answer = match &response {
        SendMessageResponse::Task(task) => SendMessageAnswer::Task(task.view(None, true)),
        SendMessageResponse::Message(message) => SendMessageAnswer::Message(message),
    };
    let ours = written(&answer)?;
    let prost = pb::SendMessageResponse::from(&response).encode_to_vec();
    if ours == prost {
        Ok(())
    } else {
        Err(format!(
            "wrote\n  {ours:?}\nwhere prost writes\n  {prost:?}"
        ))
    }
}

/// A check of one fixture's JSON.
type Check = fn(&Value) -> Result<(), String>;

/// The check for fixtures of the message `name`, for the types that are written directly.
fn check_of(name: &str) -> Option<Check> {
    Some(match name.strip_prefix("lf.a2a.v1.")? {
        "Part" => same::<Part, pb::Part>,
        "Message" => same::<Message, pb::Message>,
        "Artifact" => same::<Artifact, pb::Artifact>,
        "TaskStatus" => same::<TaskStatus, pb::TaskStatus>,
        "Task" => same::<Task, pb::Task>,
        "TaskStatusUpdateEvent" => same::<TaskStatusUpdateEvent, pb::TaskStatusUpdateEvent>,
        "TaskArtifactUpdateEvent" => same::<TaskArtifactUpdateEvent, pb::TaskArtifactUpdateEvent>,
        "StreamResponse" => same::<StreamResponse, pb::StreamResponse>,
        "SendMessageResponse" => same_answer,
        _ => return None,
    })
}

#[test]
fn every_fixture_of_a_written_type_is_written_as_prost_writes_its_twin() {
    let mut checked = std::collections::BTreeSet::new();
    let failures: Vec<String> = fixtures()
        .iter()
        .filter_map(|f| {
            let check = check_of(&f.message)?;
            checked.insert(f.message.clone());
            check(&f.json).err().map(|e| format!("{}: {e}", f.label))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(
        checked.len(),
        9,
        "a written type has no fixture: {checked:?}"
    );
}

#[test]
fn a_shaped_task_is_written_as_prost_writes_its_twin() {
    let task: Task = serde_json::from_value(task()).expect("the task fixture");
    assert_eq!(task.history.len(), 2);
    for (history_length, with_artifacts) in [
        (None, true),
        (None, false),
        (Some(1), true),
        (Some(0), false),
        (Some(-1), true),
        (Some(5), false),
    ] {
        let view = task.view(history_length, with_artifacts);
        let ours = written(&view).expect("a consistent length");
        let prost = pb::Task::from(view).encode_to_vec();
        assert_eq!(ours, prost, "{history_length:?}, {with_artifacts}");
        let answer = written(&SendMessageAnswer::Task(view)).expect("a consistent length");
        let wrapped = pb::SendMessageResponse {
            payload: Some(pb::send_message_response::Payload::Task(pb::Task::from(
                view,
            ))),
        };
        assert_eq!(answer, wrapped.encode_to_vec());
    }
}
