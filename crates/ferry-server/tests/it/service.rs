//! Service parameters and undeclared capabilities on both bindings (§16 points 55, 60–64):
//! `A2A-Version` (header, query, missing, strict), `A2A-Extensions` (activation, echo, merged
//! lines, required extensions), push-config operations without the capability, and
//! GetExtendedAgentCard without an extended card.

use crate::support::{
    Binding, DECLARED_EXTENSION, EXTENSION_SUPPORT_REQUIRED, PUSH_NOTIFICATION_NOT_SUPPORTED,
    ServiceParams, TASK_NOT_FOUND, TestServer, UNSUPPORTED_OPERATION, VERSION_NOT_SUPPORTED,
    WireError, send_params,
};
use ferry_server::ServerConfig;
use reqwest::header::HeaderMap;
use serde_json::{Value, json};

const REQUIRED: &str = "urn:ferry:test:required";

/// Unary calls that reach every kind of handler; `task` is an existing task id (CancelTask
/// names a missing task so that the calls leave `task` as it is).
fn unary_calls(task: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("SendMessage", send_params("hi")),
        ("GetTask", json!({"id": task})),
        ("ListTasks", json!({})),
        ("CancelTask", json!({"id": "no-such-task"})),
        ("GetExtendedAgentCard", json!({})),
        ("ListTaskPushNotificationConfigs", json!({"taskId": task})),
    ]
}

/// Calls every unary method and opens both kinds of stream with `sp`; returns each outcome
/// (an error, or `None` for success) with the response headers.
async fn every_operation(
    srv: &TestServer,
    b: Binding,
    task: &str,
    sp: ServiceParams<'_>,
) -> Vec<(String, HeaderMap, Option<WireError>)> {
    let mut out = Vec::new();
    for (method, params) in unary_calls(task) {
        let answer = srv.call_with(b, method, params, sp).await;
        out.push((method.to_owned(), answer.headers, answer.result.err()));
    }
    for (method, params) in [
        ("SendStreamingMessage", send_params("hi")),
        ("SubscribeToTask", json!({"id": task})),
    ] {
        let (headers, stream) = srv.stream_with(b, method, params, sp).await;
        out.push((method.to_owned(), headers, stream.err()));
    }
    out
}

/// Point 60: `A2A-Version: 99.0` (and other unsupported versions) is VersionNotSupported on
/// every operation, streams included, whatever else is wrong with the request.
async fn unsupported_version_everywhere(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let task = srv.start_waiting(b, Value::Null).await;
    for version in ["99.0", "0.3", "2.0", "1.0.1"] {
        let sp = ServiceParams {
            version: Some(version),
            ..ServiceParams::default()
        };
        for (method, _, error) in every_operation(&srv, b, &task, sp).await {
            let e = error.unwrap_or_else(|| panic!("{method} accepted A2A-Version {version}"));
            e.assert_is(VERSION_NOT_SUPPORTED);
            assert_eq!(e.meta("requestedVersion"), Some(version), "{method}");
            assert_eq!(e.meta("supportedVersions"), Some("1.0"), "{method}");
        }
        // Checked before the params (ACTS VER-NEG-001): a message without its messageId, or
        // no message at all, still answers with the version. Over gRPC: an empty messageId
        // (what protobuf says for none), and bytes that are not a message at all.
        let invalid = if b == Binding::Grpc {
            let e = srv
                .grpc_raw("SendMessage", b"\xff\xff\xff", Some(version))
                .await
                .expect_err("garbage with a bad version");
            e.assert_is(VERSION_NOT_SUPPORTED);
            let empty_id = json!({"message": {"messageId": "", "role": "ROLE_USER", "parts": [{"text": "hi"}]}});
            vec![("SendMessage", empty_id)]
        } else {
            let no_message_id =
                json!({"message": {"role": "ROLE_USER", "parts": [{"text": "hi"}]}});
            vec![
                ("SendMessage", no_message_id),
                ("SendMessage", json!({"message": 5})),
            ]
        };
        for (method, params) in invalid {
            let sp = ServiceParams {
                version: Some(version),
                ..ServiceParams::default()
            };
            let answer = srv.call_with(b, method, params, sp).await;
            let e = answer
                .result
                .err()
                .unwrap_or_else(|| panic!("{method} without its params accepted"));
            e.assert_is(VERSION_NOT_SUPPORTED);
        }
    }
}

/// An `A2A-Version` of bytes that are not text states no version anyone speaks: refused like
/// an unsupported one on every operation, never read as a missing header (which would run the
/// request as 1.0).
async fn a_version_that_is_not_text_is_refused(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let task = srv.start_waiting(b, Value::Null).await;
    let sp = ServiceParams {
        raw_version: Some(&[0xff, 0xfe]),
        ..ServiceParams::default()
    };
    for (method, _, error) in every_operation(&srv, b, &task, sp).await {
        let e = error.unwrap_or_else(|| panic!("{method} ran with an A2A-Version of bytes"));
        e.assert_is(VERSION_NOT_SUPPORTED);
    }
}

/// Point 61: `1.0` in the header or in `?A2A-Version=` is accepted; a strict server refuses a
/// request with neither; the header wins over the query.
async fn version_header_and_query(b: Binding) {
    let config = ServerConfig {
        strict_version: true,
        ..ServerConfig::default()
    };
    let (srv, _remote) = TestServer::scripted_with(config).await;
    let task = srv.start_waiting(b, Value::Null).await;
    let outcomes = [
        (ServiceParams::default(), None),
        (
            ServiceParams {
                version: None,
                query_version: Some("1.0"),
                ..ServiceParams::default()
            },
            None,
        ),
        (
            ServiceParams {
                version: None,
                ..ServiceParams::default()
            },
            Some(VERSION_NOT_SUPPORTED),
        ),
        (
            ServiceParams {
                version: Some(""),
                ..ServiceParams::default()
            },
            Some(VERSION_NOT_SUPPORTED),
        ),
        (
            ServiceParams {
                version: None,
                query_version: Some("99.0"),
                ..ServiceParams::default()
            },
            Some(VERSION_NOT_SUPPORTED),
        ),
        (
            ServiceParams {
                version: Some("99.0"),
                query_version: Some("1.0"),
                ..ServiceParams::default()
            },
            Some(VERSION_NOT_SUPPORTED),
        ),
        (
            ServiceParams {
                query_version: Some("99.0"),
                ..ServiceParams::default()
            },
            None,
        ),
    ];
    // gRPC has no query string: only the metadata rows apply to it.
    let outcomes = outcomes
        .into_iter()
        .filter(|(sp, _)| b != Binding::Grpc || sp.query_version.is_none());
    for (sp, expected) in outcomes {
        for (method, _, error) in every_operation(&srv, b, &task, sp).await {
            match (method.as_str(), expected, error) {
                (_, Some(expected), Some(e)) => e.assert_is(expected),
                (_, Some(_), None) => panic!("{method} accepted {sp:?}"),
                // Past the version check these three have their own answers.
                ("CancelTask", None, Some(e)) => e.assert_is(TASK_NOT_FOUND),
                ("GetExtendedAgentCard", None, Some(e)) => e.assert_is(UNSUPPORTED_OPERATION),
                (_, None, Some(e)) => panic!("{method} refused {sp:?}: {}", e.body),
                (_, None, None) => {}
            }
        }
    }
}

/// Point 61: by default a request without `A2A-Version` is served as 1.0 (the documented
/// leniency).
async fn missing_version_is_lenient_by_default(b: Binding) {
    let (srv, _remote) = TestServer::scripted().await;
    let sp = ServiceParams {
        version: None,
        ..ServiceParams::default()
    };
    let task = srv
        .call_with(b, "SendMessage", send_params("hello"), sp)
        .await
        .result
        .expect("served");
    assert_eq!(task["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let (_, stream) = srv
        .stream_with(b, "SendStreamingMessage", send_params("hello"), sp)
        .await;
    let events = stream.expect("a stream").remaining().await;
    assert_eq!(events.len(), 4, "{events:?}");
}

/// The `A2A-Extensions` value a response echoed, if any.
fn echoed(headers: &HeaderMap) -> Option<&str> {
    headers
        .get("a2a-extensions")
        .map(|v| v.to_str().expect("an ASCII header"))
}

/// Point 62: a required extension must be activated (-32008 otherwise, on every operation);
/// when it is, the call succeeds and the response echoes it.
async fn required_extension(b: Binding) {
    let config = ServerConfig {
        required_extensions: vec![REQUIRED.into()],
        ..ServerConfig::default()
    };
    let (srv, _remote) = TestServer::scripted_with(config).await;
    let with = ServiceParams {
        extensions: &[REQUIRED],
        ..ServiceParams::default()
    };
    let task = srv
        .call_with(b, "SendMessage", send_params("ask"), with)
        .await
        .result
        .expect("served");
    let task = task["task"]["id"].as_str().expect("an id").to_owned();
    for (method, _, error) in every_operation(&srv, b, &task, ServiceParams::default()).await {
        let e = error.unwrap_or_else(|| panic!("{method} served without the required extension"));
        e.assert_is(EXTENSION_SUPPORT_REQUIRED);
        assert_eq!(e.meta("extension"), Some(REQUIRED), "{method}");
    }
    let answer = srv.call_with(b, "GetTask", json!({"id": task}), with).await;
    assert!(answer.result.is_ok(), "{:?}", answer.result);
    assert_eq!(echoed(&answer.headers), Some(REQUIRED));
    let (headers, stream) = srv
        .stream_with(b, "SubscribeToTask", json!({"id": task}), with)
        .await;
    assert!(stream.is_ok(), "the stream opens with the extension");
    assert_eq!(echoed(&headers), Some(REQUIRED), "streams echo it too");
}

/// Point 63: header values are split on commas and trimmed, repeated lines are merged, unknown
/// URIs are ignored, and only activated (declared) URIs are echoed.
async fn extension_header_parsing(b: Binding) {
    let config = ServerConfig {
        required_extensions: vec![REQUIRED.into()],
        ..ServerConfig::default()
    };
    let (srv, _remote) = TestServer::scripted_with(config).await;
    let required_line = format!("  {REQUIRED}");
    let lines = [
        " urn:unknown:one ,urn:ferry:test:declared ",
        "urn:unknown:two",
        required_line.as_str(),
    ];
    let sp = ServiceParams {
        extensions: &lines,
        ..ServiceParams::default()
    };
    let answer = srv.call_with(b, "ListTasks", json!({}), sp).await;
    assert!(
        answer.result.is_ok(),
        "the required URI on a later line counts: {:?}",
        answer.result
    );
    let activated: Vec<&str> = echoed(&answer.headers)
        .expect("an echo")
        .split(',')
        .map(str::trim)
        .collect();
    assert_eq!(activated, [DECLARED_EXTENSION, REQUIRED]);

    let plain = TestServer::start(crate::support::ScriptedAgent::new().0).await;
    let answer = plain
        .call_with(b, "ListTasks", json!({}), ServiceParams::default())
        .await;
    assert_eq!(
        echoed(&answer.headers),
        None,
        "nothing activated, nothing echoed"
    );
    let sp = ServiceParams {
        extensions: &["urn:unknown:only"],
        ..ServiceParams::default()
    };
    let answer = plain.call_with(b, "ListTasks", json!({}), sp).await;
    assert!(answer.result.is_ok());
    assert_eq!(echoed(&answer.headers), None, "unknown URIs are ignored");
}

/// Point 55: without the push capability (turned off) every push-config operation, and a
/// push config inside SendMessage, is PushNotificationNotSupported.
async fn push_notifications_not_supported(b: Binding) {
    let config = ServerConfig {
        push: ferry_server::PushSettings {
            enabled: false,
            ..Default::default()
        },
        ..ServerConfig::default()
    };
    let (srv, _remote) = TestServer::scripted_with(config).await;
    let task = srv.send_task(b, send_params("ask")).await;
    let task = task["id"].as_str().expect("an id");
    let calls = [
        (
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task, "url": "https://example.com/hook"}),
        ),
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": task, "id": "cfg-1"}),
        ),
        ("ListTaskPushNotificationConfigs", json!({"taskId": task})),
        (
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": task, "id": "cfg-1"}),
        ),
        (
            "CreateTaskPushNotificationConfig",
            json!({"taskId": "no-such-task", "url": "https://example.com/hook"}),
        ),
    ];
    for (method, params) in calls {
        srv.fails(b, method, params)
            .await
            .assert_is(PUSH_NOTIFICATION_NOT_SUPPORTED);
    }
    let mut params = send_params("hello");
    params["configuration"] =
        json!({"taskPushNotificationConfig": {"url": "https://example.com/hook"}});
    srv.fails(b, "SendMessage", params)
        .await
        .assert_is(PUSH_NOTIFICATION_NOT_SUPPORTED);
}

/// Point 64 (first half): without an extended card, GetExtendedAgentCard is
/// UnsupportedOperation.
async fn extended_card_unsupported(b: Binding) {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    srv.fails(b, "GetExtendedAgentCard", json!({}))
        .await
        .assert_is(UNSUPPORTED_OPERATION);
}

scenarios!(per_binding:
    unsupported_version_everywhere,
    a_version_that_is_not_text_is_refused,
    version_header_and_query,
    missing_version_is_lenient_by_default,
    required_extension,
    extension_header_parsing,
    push_notifications_not_supported,
    extended_card_unsupported,
);
