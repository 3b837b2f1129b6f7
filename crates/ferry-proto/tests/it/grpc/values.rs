//! Conversions the JSON fixtures cannot show: enums value for value, `Empty`, numbers and
//! timestamps at their edges, what a flow drops, and a shaped task (`Task::view`).

use super::fixtures::task;
use ferry_proto::grpc::pb;
use ferry_proto::*;
use prost::Message as _;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

#[test]
fn enums_map_value_for_value() {
    for role in Role::ALL {
        let number = i32::from(pb::Role::from(role));
        assert_eq!(number, role.number());
        let back = Role::try_from(pb::Role::try_from(number).expect("known")).expect("decodes");
        assert_eq!(back, *role);
    }
    for state in TaskState::ALL {
        let number = i32::from(pb::TaskState::from(state));
        assert_eq!(number, state.number());
        let back =
            TaskState::try_from(pb::TaskState::try_from(number).expect("known")).expect("decodes");
        assert_eq!(back, *state);
        assert_eq!(pb::TaskState::from(*state).as_str_name(), state.as_str());
    }
    assert_eq!(
        pb::Role::from(&Role::Agent).as_str_name(),
        Role::Agent.as_str()
    );
}

#[test]
fn empty_is_the_unit_prost_writes_for_google_protobuf_empty() {
    let unit: () = (&Empty {}).into();
    assert!(unit.encode_to_vec().is_empty());
    assert_eq!(Empty::try_from(unit), Ok(Empty {}));
}

#[test]
fn integral_numbers_come_back_as_integers() {
    let part = |data: Value| Part::data(data);
    let trip = |p: &Part| -> Part {
        let bytes = pb::Part::from(p).encode_to_vec();
        Part::try_from(pb::Part::decode(bytes.as_slice()).expect("decodes")).expect("valid")
    };
    // A float that happens to be integral is an integer on the way back: protobuf has one
    // number type, and `3` must not turn into `3.0`.
    // (`Value` equality tells an integer from a float: `json!(2) != json!(2.0)`.)
    let back = trip(&part(json!([
        2.0,
        -3.0,
        0.5,
        4_503_599_627_370_495.5,
        1e20
    ])));
    assert_eq!(
        back.as_data(),
        Some(&json!([2, -3, 0.5, 4_503_599_627_370_495.5, 1e20]))
    );
    assert_ne!(json!(2), json!(2.0));
    // At 2^53 an f64 no longer holds every integer: the number stays a float.
    let back = trip(&part(json!(9_007_199_254_740_992_u64)));
    assert_eq!(back.as_data(), Some(&json!(9_007_199_254_740_992.0)));
    // -0.0 keeps its sign.
    let back = trip(&part(json!(-0.0)));
    assert_eq!(
        serde_json::to_string(back.as_data().expect("data")).expect("prints"),
        "-0.0"
    );
    // A Value with no kind is null.
    let empty = pb::Part {
        content: Some(pb::part::Content::Data(prost_types::Value { kind: None })),
        ..Default::default()
    };
    assert_eq!(
        Part::try_from(empty).expect("valid").as_data(),
        Some(&Value::Null)
    );
}

#[test]
fn timestamps_keep_nanoseconds_and_normalize_before_1970() {
    let t = Timestamp::from_nanos(1_767_225_600_123_456_789).expect("in range");
    let status = TaskStatus {
        state: TaskState::Working,
        message: None,
        timestamp: Some(t),
    };
    let encoded = pb::TaskStatus::from(&status);
    assert_eq!(
        encoded.timestamp,
        Some(prost_types::Timestamp {
            seconds: 1_767_225_600,
            nanos: 123_456_789
        })
    );
    assert_eq!(TaskStatus::try_from(encoded), Ok(status));
    let before = TaskStatus {
        state: TaskState::Working,
        message: None,
        timestamp: Some(Timestamp::from_millis(-1_500)),
    };
    let encoded = pb::TaskStatus::from(&before);
    assert_eq!(
        encoded.timestamp,
        Some(prost_types::Timestamp {
            seconds: -2,
            nanos: 500_000_000
        }),
        "nanos are never negative"
    );
    assert_eq!(TaskStatus::try_from(encoded), Ok(before));
}

#[test]
fn shared_messages_are_decoded_into_their_own_arcs() {
    let task: Task = serde_json::from_value(task()).expect("parses");
    let back = Task::try_from(pb::Task::from(&task)).expect("decodes");
    assert_eq!(back, task);
    let Some(message) = &back.status.message else {
        panic!("the status has its message");
    };
    assert_eq!(Arc::strong_count(message), 1);
}

#[test]
fn a_flow_keeps_only_the_fields_its_message_has() {
    // ferry-proto's OAuthFlow is the union of every flow's fields; the proto's flow messages
    // are not. What a flow cannot carry is dropped on the way out.
    let flow = OAuthFlow {
        authorization_url: "https://a.example.com/authorize".into(),
        device_authorization_url: "https://a.example.com/device".into(),
        token_url: "https://a.example.com/token".into(),
        refresh_url: String::new(),
        scopes: BTreeMap::new(),
        pkce_required: true,
    };
    let sent = OAuthFlows::ClientCredentials(flow.clone());
    let back = OAuthFlows::try_from(pb::OAuthFlows::from(&sent)).expect("decodes");
    assert_eq!(
        back,
        OAuthFlows::ClientCredentials(OAuthFlow {
            token_url: flow.token_url.clone(),
            ..OAuthFlow::default()
        })
    );
}

#[test]
fn a_task_view_encodes_as_its_json_shows_it() {
    let task: Task = serde_json::from_value(task()).expect("parses");
    assert_eq!(task.history.len(), 2);
    for (history_length, with_artifacts) in [
        (None, true),
        (Some(1), false),
        (Some(0), true),
        (Some(-3), false),
        (Some(50), true),
    ] {
        let view = task.view(history_length, with_artifacts);
        let encoded = pb::Task::from(view);
        assert_eq!(
            encoded,
            pb::Task::from(&task.shaped(history_length, with_artifacts)),
            "{history_length:?} {with_artifacts}"
        );
        assert_eq!(pb::Task::from(&view), encoded);
        let back = Task::try_from(encoded).expect("decodes");
        assert_eq!(
            serde_json::to_value(&back).expect("prints"),
            serde_json::to_value(view).expect("prints"),
            "{history_length:?} {with_artifacts}"
        );
    }
}
