//! What decoding refuses, and the field path it names (the one the JSON parser would).

use super::fixtures::{card, task, user_message};
use ferry_proto::grpc::pb;
use ferry_proto::*;
use prost::Message as _;
use std::collections::BTreeMap;

/// Asserts `e` is an InvalidParams refusal with one violation at `path` whose description
/// contains `why`.
#[track_caller]
fn refused_at(e: A2aError, path: &str, why: &str) {
    assert_eq!(e.kind, ErrorKind::InvalidParams, "{e}");
    assert_eq!(e.field_violations.len(), 1, "{e:?}");
    let (field, description) = &e.field_violations[0];
    assert_eq!(field, path, "{e:?}");
    assert!(description.contains(why), "{description:?} lacks {why:?}");
    assert_eq!(e.message, format!("invalid {path}: {description}"));
}

fn pb_message() -> pb::Message {
    let m: Message = serde_json::from_value(user_message()).expect("parses");
    pb::Message::from(&m)
}

fn pb_task() -> pb::Task {
    let t: Task = serde_json::from_value(task()).expect("parses");
    pb::Task::from(&t)
}

fn pb_send(message: pb::Message) -> pb::SendMessageRequest {
    pb::SendMessageRequest {
        message: Some(message),
        ..Default::default()
    }
}

#[test]
fn a_part_without_content_is_refused_where_it_is() {
    let mut message = pb_message();
    message.parts[2].content = None;
    // Through the bytes a client would send.
    let bytes = pb_send(message).encode_to_vec();
    let decoded = pb::SendMessageRequest::decode(bytes.as_slice()).expect("prost reads it");
    let e = SendMessageRequest::try_from(decoded).expect_err("no content");
    refused_at(
        e,
        "message.parts[2]",
        "a part needs exactly one of text, raw, url or data",
    );
    let mut task = pb_task();
    task.artifacts[0].parts[5].content = None;
    refused_at(
        Task::try_from(task).expect_err("no content"),
        "artifacts[0].parts[5]",
        "exactly one of",
    );
    let mut task = pb_task();
    task.history[1].parts[0].content = None;
    refused_at(
        StreamResponse::try_from(pb::StreamResponse {
            payload: Some(pb::stream_response::Payload::Task(task)),
        })
        .expect_err("no content"),
        "task.history[1].parts[0]",
        "exactly one of",
    );
}

#[test]
fn a_missing_required_message_is_refused() {
    let e = SendMessageRequest::try_from(pb::SendMessageRequest::default()).expect_err("empty");
    refused_at(e, "message", "required");

    let mut task = pb_task();
    task.status = None;
    refused_at(
        Task::try_from(task.clone()).expect_err("status"),
        "status",
        "required",
    );
    refused_at(
        SendMessageResponse::try_from(pb::SendMessageResponse {
            payload: Some(pb::send_message_response::Payload::Task(task.clone())),
        })
        .expect_err("status"),
        "task.status",
        "required",
    );
    refused_at(
        ListTasksResponse::try_from(pb::ListTasksResponse {
            tasks: vec![pb_task(), task],
            ..Default::default()
        })
        .expect_err("status"),
        "tasks[1].status",
        "required",
    );

    use pb::stream_response::Payload;
    let e = StreamResponse::try_from(pb::StreamResponse {
        payload: Some(Payload::StatusUpdate(pb::TaskStatusUpdateEvent::default())),
    })
    .expect_err("status");
    refused_at(e, "statusUpdate.status", "required");
    let e = StreamResponse::try_from(pb::StreamResponse {
        payload: Some(Payload::ArtifactUpdate(
            pb::TaskArtifactUpdateEvent::default(),
        )),
    })
    .expect_err("artifact");
    refused_at(e, "artifactUpdate.artifact", "required");
    let e = TaskArtifactUpdateEvent::try_from(pb::TaskArtifactUpdateEvent::default())
        .expect_err("artifact");
    refused_at(e, "artifact", "required");
}

#[test]
fn an_answer_or_event_with_no_payload_is_refused() {
    let e = StreamResponse::try_from(pb::StreamResponse::default()).expect_err("no payload");
    assert_eq!(e.kind, ErrorKind::InvalidParams);
    assert!(
        e.message
            .contains("exactly one of task, message, statusUpdate or artifactUpdate")
    );
    assert!(
        e.field_violations.is_empty(),
        "the whole message is wrong: {e:?}"
    );
    let e =
        SendMessageResponse::try_from(pb::SendMessageResponse::default()).expect_err("no payload");
    assert_eq!(e.kind, ErrorKind::InvalidParams);
    assert!(e.message.contains("exactly one of task or message"));
}

#[test]
fn enum_numbers_the_protocol_does_not_define_are_refused() {
    let mut message = pb_message();
    message.role = 3;
    refused_at(
        SendMessageRequest::try_from(pb_send(message)).expect_err("role"),
        "message.role",
        "unknown Role number 3",
    );
    let mut message = pb_message();
    message.role = -1;
    refused_at(Message::try_from(message).expect_err("role"), "role", "-1");

    let mut task = pb_task();
    if let Some(status) = task.status.as_mut() {
        status.state = 9;
    }
    refused_at(
        Task::try_from(task).expect_err("state"),
        "status.state",
        "unknown TaskState number 9",
    );
    let mut task = pb_task();
    if let Some(message) = task.status.as_mut().and_then(|s| s.message.as_mut()) {
        message.role = 42;
    }
    refused_at(
        Task::try_from(task).expect_err("role"),
        "status.message.role",
        "42",
    );
    refused_at(
        ListTasksRequest::try_from(pb::ListTasksRequest {
            status: 100,
            ..Default::default()
        })
        .expect_err("status"),
        "status",
        "unknown TaskState number 100",
    );
    // 0 is the UNSPECIFIED value of both enums, which ferry-proto has too.
    let mut message = pb_message();
    message.role = 0;
    assert_eq!(
        Message::try_from(message).expect("decodes").role,
        Role::Unspecified
    );
    let request = ListTasksRequest::try_from(pb::ListTasksRequest::default()).expect("decodes");
    assert_eq!(request.status, TaskState::Unspecified);
}

fn number(x: f64) -> prost_types::Value {
    prost_types::Value {
        kind: Some(prost_types::value::Kind::NumberValue(x)),
    }
}

#[test]
fn numbers_json_cannot_hold_are_refused() {
    for (x, shown) in [
        (f64::NAN, "NaN"),
        (f64::INFINITY, "inf"),
        (f64::NEG_INFINITY, "-inf"),
    ] {
        let mut message = pb_message();
        if let Some(md) = message.metadata.as_mut() {
            md.fields.insert("bad".into(), number(x));
        }
        refused_at(
            SendMessageRequest::try_from(pb_send(message)).expect_err("not finite"),
            "message.metadata.bad",
            shown,
        );
    }
    let mut message = pb_message();
    // parts[3] is the data part; its `list` member is [1, "two", [3.25], {"x": null}, []].
    let Some(pb::part::Content::Data(data)) = message.parts[3].content.as_mut() else {
        panic!("the data part");
    };
    let Some(prost_types::value::Kind::StructValue(object)) = data.kind.as_mut() else {
        panic!("an object");
    };
    let Some(prost_types::value::Kind::ListValue(list)) =
        object.fields.get_mut("list").and_then(|v| v.kind.as_mut())
    else {
        panic!("a list");
    };
    let Some(prost_types::value::Kind::ListValue(inner)) = list.values[2].kind.as_mut() else {
        panic!("a nested list");
    };
    inner.values.push(number(f64::NAN));
    refused_at(
        Message::try_from(message).expect_err("NaN"),
        "parts[3].data.list[2][1]",
        "JSON has no NaN or infinity",
    );
    let params = pb::AgentExtension {
        params: Some(prost_types::Struct {
            fields: BTreeMap::from([("level".to_owned(), number(f64::INFINITY))]),
        }),
        ..Default::default()
    };
    refused_at(
        AgentExtension::try_from(params).expect_err("inf"),
        "params.level",
        "inf",
    );
}

#[test]
fn timestamps_out_of_range_are_refused() {
    let mut task = pb_task();
    if let Some(status) = task.status.as_mut() {
        status.timestamp = Some(prost_types::Timestamp {
            seconds: i64::MAX,
            nanos: 0,
        });
    }
    refused_at(
        StreamResponse::try_from(pb::StreamResponse {
            payload: Some(pb::stream_response::Payload::Task(task)),
        })
        .expect_err("year"),
        "task.status.timestamp",
        "outside the supported range",
    );
    for nanos in [-1, 1_000_000_000] {
        let request = pb::ListTasksRequest {
            status_timestamp_after: Some(prost_types::Timestamp { seconds: 0, nanos }),
            ..Default::default()
        };
        refused_at(
            ListTasksRequest::try_from(request).expect_err("nanos"),
            "statusTimestampAfter",
            "nanos",
        );
    }
    // jiff's last instant (9999-12-30T22:00:00.999999999Z, which leaves room for any UTC
    // offset) is the last one accepted.
    let at = |seconds, nanos| pb::ListTasksRequest {
        status_timestamp_after: Some(prost_types::Timestamp { seconds, nanos }),
        ..Default::default()
    };
    let request = ListTasksRequest::try_from(at(253_402_207_200, 999_999_999)).expect("in range");
    assert_eq!(
        request
            .status_timestamp_after
            .map(|t| t.to_string())
            .as_deref(),
        Some("9999-12-30T22:00:00.999Z")
    );
    refused_at(
        ListTasksRequest::try_from(at(253_402_207_201, 0)).expect_err("a second later"),
        "statusTimestampAfter",
        "outside the supported range",
    );
}

fn pb_card() -> pb::AgentCard {
    let card: AgentCard = serde_json::from_value(card()).expect("parses");
    pb::AgentCard::from(&card)
}

#[test]
fn card_oneofs_and_required_members_are_checked() {
    let mut card = pb_card();
    card.capabilities = None;
    refused_at(
        AgentCard::try_from(card).expect_err("capabilities"),
        "capabilities",
        "required",
    );

    let mut card = pb_card();
    card.security_schemes
        .insert("broken".into(), pb::SecurityScheme { scheme: None });
    refused_at(
        AgentCard::try_from(card).expect_err("no scheme"),
        "securitySchemes.broken",
        "a security scheme needs exactly one scheme member",
    );

    use pb::security_scheme::Scheme;
    let mut card = pb_card();
    if let Some(Some(Scheme::Oauth2SecurityScheme(oauth))) = card
        .security_schemes
        .get_mut("device")
        .map(|s| s.scheme.as_mut())
    {
        oauth.flows = Some(pb::OAuthFlows { flow: None });
    }
    refused_at(
        AgentCard::try_from(card).expect_err("no flow"),
        "securitySchemes.device.oauth2SecurityScheme.flows",
        "exactly one of authorizationCode, clientCredentials, implicit, password or deviceCode",
    );

    let mut card = pb_card();
    if let Some(Some(Scheme::Oauth2SecurityScheme(oauth))) = card
        .security_schemes
        .get_mut("client")
        .map(|s| s.scheme.as_mut())
    {
        oauth.flows = None;
    }
    refused_at(
        AgentCard::try_from(card).expect_err("no flows"),
        "securitySchemes.client.oauth2SecurityScheme.flows",
        "required",
    );

    let mut card = pb_card();
    if let Some(params) = card
        .capabilities
        .as_mut()
        .and_then(|c| c.extensions[0].params.as_mut())
    {
        params.fields.insert("bad".into(), number(f64::NAN));
    }
    refused_at(
        AgentCard::try_from(card).expect_err("NaN"),
        "capabilities.extensions[0].params.bad",
        "NaN",
    );
}

#[test]
fn push_configs_are_checked_inside_requests() {
    let config = pb::TaskPushNotificationConfig {
        url: "https://h.example.com".into(),
        ..Default::default()
    };
    let request = pb::SendMessageRequest {
        configuration: Some(pb::SendMessageConfiguration {
            task_push_notification_config: Some(config),
            ..Default::default()
        }),
        metadata: Some(prost_types::Struct {
            fields: BTreeMap::from([("n".to_owned(), number(f64::NAN))]),
        }),
        ..pb_send(pb_message())
    };
    refused_at(
        SendMessageRequest::try_from(request).expect_err("NaN"),
        "metadata.n",
        "NaN",
    );
}
