//! The JSON-RPC binding's envelope (§16 points 13–20): ids echoed, HTTP 200 and
//! `application/json` for every answer, the standard error codes in the SDKs' validation order
//! (content type, JSON, envelope, method, params, then service parameters), typed `data`
//! details, and which results are wrapped.

use crate::support::{INVALID_PARAMS, TestServer, assert_wire_format, keys, message, send_params};
use ferry_server::ServerConfig;
use serde_json::{Value, json};

/// POSTs `body` to `/jsonrpc` as `content_type` (with `A2A-Version: version` when given) and
/// returns the envelope, checking HTTP 200 and `application/json`.
async fn post(srv: &TestServer, content_type: &str, version: Option<&str>, body: &str) -> Value {
    let mut headers = vec![("content-type", content_type)];
    headers.extend(version.map(|v| ("A2A-Version", v)));
    let (status, envelope) = srv
        .request_json(reqwest::Method::POST, "/jsonrpc", &headers, body)
        .await;
    assert_eq!(
        status, 200,
        "JSON-RPC answers with HTTP 200, errors included"
    );
    assert_eq!(envelope["jsonrpc"], "2.0", "{envelope}");
    envelope
}

/// POSTs a JSON envelope with `A2A-Version: 1.0`.
async fn post_json(srv: &TestServer, envelope: &Value) -> Value {
    post(srv, "application/json", Some("1.0"), &envelope.to_string()).await
}

/// Asserts an error envelope with `code` and `id`, whose `data` is an array of typed details
/// holding an a2a-protocol.org ErrorInfo.
#[track_caller]
fn assert_error(envelope: &Value, code: i64, id: &Value) {
    assert_eq!(&envelope["id"], id, "{envelope}");
    assert!(envelope.get("result").is_none(), "{envelope}");
    assert_eq!(envelope["error"]["code"], code, "{envelope}");
    let data = envelope["error"]["data"]
        .as_array()
        .unwrap_or_else(|| panic!("error.data is an array: {envelope}"));
    assert!(
        data.iter().all(|d| d["@type"].is_string()),
        "every detail has an @type: {envelope}"
    );
    assert!(
        data.iter()
            .any(|d| d["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"
                && d["domain"] == "a2a-protocol.org"),
        "an ErrorInfo detail: {envelope}"
    );
}

fn request(id: Value, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Point 14: a valid request gets the same id back (string or number) and a result.
async fn valid_requests_echo_the_id() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    for id in [json!(7), json!("seven"), json!(0), json!(-1.5)] {
        let envelope = post_json(&srv, &request(id.clone(), "ListTasks", json!({}))).await;
        assert_eq!(envelope["id"], id, "{envelope}");
        assert!(envelope.get("error").is_none(), "{envelope}");
        assert_wire_format(&envelope["result"]);
        assert!(envelope["result"]["tasks"].is_array(), "{envelope}");
    }
}

/// Point 15: invalid JSON is -32700 with a null id (the id cannot be read).
async fn invalid_json_is_a_parse_error() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    for body in [
        "{",
        "not json",
        "",
        r#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"},}"#,
    ] {
        let envelope = post(&srv, "application/json", Some("1.0"), body).await;
        assert_error(&envelope, -32700, &Value::Null);
    }
}

/// Point 16: not a request object, a wrong `jsonrpc`, or no method is -32600.
async fn bad_envelopes_are_invalid_requests() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let unreadable_id = [
        json!("a string"),
        json!(42),
        json!([]),
        json!([{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}]),
        json!(["2.0", 1, "GetTask", {"id": "x"}]),
        json!({"jsonrpc": "2.0", "id": {"not": "scalar"}, "method": "GetTask", "params": {"id": "x"}}),
    ];
    for body in unreadable_id {
        let envelope = post_json(&srv, &body).await;
        assert_error(&envelope, -32600, &Value::Null);
    }
    let readable_id = [
        json!({"jsonrpc": "1.0", "id": 3, "method": "GetTask", "params": {"id": "x"}}),
        json!({"id": 3, "method": "GetTask", "params": {"id": "x"}}),
        json!({"jsonrpc": "2.0", "id": 3, "params": {"id": "x"}}),
    ];
    for body in readable_id {
        let envelope = post_json(&srv, &body).await;
        assert_error(&envelope, -32600, &json!(3));
    }
}

/// Point 17: unknown methods are -32601, with the id echoed; so are v0.3's names on a server
/// that does not serve v0.3. Where it does, a v0.3 name under `A2A-Version: 1.0` is -32009.
async fn unknown_methods_are_not_found() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    for method in ["Foo", "tasks/list", "sendMessage", ""] {
        let envelope = post_json(&srv, &request(json!("m"), method, send_params("hi"))).await;
        assert_error(&envelope, -32601, &json!("m"));
    }
    // Without the `v03` feature the server knows no v0.3 name at all.
    let v03_under_v1 = if cfg!(feature = "v03") {
        -32009
    } else {
        -32601
    };
    for method in ["message/send", "tasks/get"] {
        let envelope = post_json(&srv, &request(json!("m"), method, send_params("hi"))).await;
        assert_error(&envelope, v03_under_v1, &json!("m"));
    }
    let config = ServerConfig {
        v03: false,
        ..ServerConfig::default()
    };
    let v1_only = TestServer::with_config(ferry_agents::EchoAgent, config).await;
    for method in ["message/send", "tasks/get"] {
        let envelope = post_json(&v1_only, &request(json!("m"), method, send_params("hi"))).await;
        assert_error(&envelope, -32601, &json!("m"));
    }
}

/// Point 18: params that do not parse or fail validation are -32602 with typed details.
async fn bad_params_are_invalid_params() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let mut no_parts = message("x");
    no_parts
        .as_object_mut()
        .expect("a message object")
        .remove("parts");
    let cases = [
        ("SendMessage", json!("a string")),
        ("SendMessage", json!(42)),
        ("SendMessage", json!({})),
        ("SendMessage", json!({"message": no_parts})),
        (
            "SendMessage",
            json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}}),
        ),
        (
            "SendMessage",
            json!({"message": {"messageId": "m", "role": "user", "parts": [{"text": "x"}]}}),
        ),
        (
            "SendMessage",
            json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x", "data": 1}]}}),
        ),
        (
            "SendMessage",
            json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{}]}}),
        ),
        (
            "SendMessage",
            json!({"message": {"role": "ROLE_USER", "parts": [{"text": "x"}]}}),
        ),
        ("GetTask", json!({})),
        ("GetTask", json!({"id": 5})),
        ("GetTask", json!(["some-id"])),
        ("ListTasks", json!([])),
        ("ListTasks", json!({"pageSize": "many"})),
        ("ListTasks", json!({"status": "done"})),
    ];
    for (method, params) in cases {
        let envelope = post_json(&srv, &request(json!(1), method, params.clone())).await;
        assert_error(&envelope, -32602, &json!(1));
        let reason = &envelope["error"]["data"][0]["reason"];
        assert_eq!(
            reason, INVALID_PARAMS.reason,
            "{method} {params}: {envelope}"
        );
    }
}

/// The validation order: content type, JSON, envelope, then `A2A-Version` before the method
/// and params (ACTS VER-NEG-001), then method, params.
async fn validation_order() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let envelope = post(&srv, "text/plain", Some("99.0"), "{").await;
    assert_error(&envelope, -32005, &Value::Null);
    let envelope = post(&srv, "application/json", Some("99.0"), "{").await;
    assert_error(&envelope, -32700, &Value::Null);
    let bad = json!({"jsonrpc": "1.0", "id": 1, "method": "Foo", "params": 5}).to_string();
    assert_error(
        &post(&srv, "application/json", Some("99.0"), &bad).await,
        -32600,
        &json!(1),
    );
    // An unknown method, bad params, a SendMessage without messageId: all -32009 first.
    let no_message_id = json!({"message": {"role": "ROLE_USER", "parts": [{"text": "hi"}]}});
    for (method, params) in [
        ("Foo", json!(5)),
        ("GetTask", json!(5)),
        ("SendMessage", no_message_id.clone()),
        ("GetTask", json!({"id": "unknown"})),
    ] {
        let body = request(json!(1), method, params).to_string();
        assert_error(
            &post(&srv, "application/json", Some("99.0"), &body).await,
            -32009,
            &json!(1),
        );
    }
    let unknown = request(json!(1), "Foo", json!(5)).to_string();
    assert_error(
        &post(&srv, "application/json", Some("1.0"), &unknown).await,
        -32601,
        &json!(1),
    );
    let bad = request(json!(1), "SendMessage", no_message_id).to_string();
    assert_error(
        &post(&srv, "application/json", Some("1.0"), &bad).await,
        -32602,
        &json!(1),
    );
    let good = request(json!(1), "GetTask", json!({"id": "unknown"})).to_string();
    assert_error(
        &post(&srv, "application/json", Some("1.0"), &good).await,
        -32001,
        &json!(1),
    );
}

/// Point 13 and the content-type rule: JSON media types are read, anything else is -32005.
async fn content_types() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let body = request(json!(1), "ListTasks", json!({})).to_string();
    for accepted in [
        "application/json",
        "application/a2a+json",
        "application/json; charset=utf-8",
        "Application/JSON",
    ] {
        let envelope = post(&srv, accepted, Some("1.0"), &body).await;
        assert!(envelope["result"].is_object(), "{accepted}: {envelope}");
    }
    for refused in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data",
    ] {
        let envelope = post(&srv, refused, Some("1.0"), &body).await;
        assert_error(&envelope, -32005, &Value::Null);
        assert_eq!(
            envelope["error"]["data"][0]["reason"], "CONTENT_TYPE_NOT_SUPPORTED",
            "{envelope}"
        );
    }
}

/// Point 13: unknown members are ignored at every level.
async fn unknown_fields_are_ignored() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let mut msg = message("hello");
    msg["futureField"] = json!({"x": 1});
    msg["parts"][0]["futurePartField"] = json!(true);
    let mut envelope = request(
        json!(9),
        "SendMessage",
        json!({"message": msg, "futureParam": [1, 2]}),
    );
    envelope["futureEnvelopeField"] = json!("ignored");
    let answer = post_json(&srv, &envelope).await;
    assert_eq!(
        answer["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{answer}"
    );
}

/// Point 20: SendMessage results are wrapped (`task` or `message`); GetTask and CancelTask
/// results are bare tasks.
async fn result_shapes() {
    let (srv, _remote) = TestServer::scripted().await;
    let sent = post_json(
        &srv,
        &request(json!(1), "SendMessage", send_params("hello")),
    )
    .await;
    assert_eq!(keys(&sent["result"]), ["task"], "{sent}");
    let id = sent["result"]["task"]["id"].clone();
    let got = post_json(&srv, &request(json!(2), "GetTask", json!({"id": id}))).await;
    assert_eq!(got["result"]["id"], id, "GetTask is a bare Task: {got}");
    assert!(got["result"]["status"].is_object(), "{got}");

    let reply = post_json(
        &srv,
        &request(json!(3), "SendMessage", send_params("reply")),
    )
    .await;
    assert_eq!(keys(&reply["result"]), ["message"], "{reply}");

    let waiting = srv
        .start_waiting(crate::support::Binding::JsonRpc, Value::Null)
        .await;
    let canceled = post_json(
        &srv,
        &request(json!(4), "CancelTask", json!({"id": waiting})),
    )
    .await;
    assert_eq!(
        canceled["result"]["id"],
        waiting.as_str(),
        "CancelTask is a bare Task: {canceled}"
    );
    assert_eq!(
        canceled["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{canceled}"
    );
}

/// A missing `params` member reads as `{}` (GetExtendedAgentCard is called that way).
async fn missing_params_read_as_empty() {
    let srv = TestServer::start(ferry_agents::EchoAgent).await;
    let envelope = post_json(
        &srv,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks"}),
    )
    .await;
    assert_eq!(envelope["result"]["totalSize"], 0, "{envelope}");
    let envelope = post_json(
        &srv,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": null}),
    )
    .await;
    assert_eq!(envelope["result"]["pageSize"], 50, "{envelope}");
}

scenarios!(once:
    valid_requests_echo_the_id,
    invalid_json_is_a_parse_error,
    bad_envelopes_are_invalid_requests,
    unknown_methods_are_not_found,
    bad_params_are_invalid_params,
    validation_order,
    content_types,
    unknown_fields_are_ignored,
    result_shapes,
    missing_params_read_as_empty,
);
